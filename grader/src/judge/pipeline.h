// pipeline.h — the judge's pipeline: check → bench → score. Each step is a function from what it is
// given to what it makes; the commands call the steps they need (check_command.h: check; bench_command.h:
// check, then bench; grade_command.h: check, bench and score) and write what they make.
//
//   check  every selected stage × variant × precision checked by the judge with a runner process of
//          its own (check_engine.h), its verdict shown as it comes (format.h): the check's rows
//   bench  the rows that passed, timed next to naive and cuBLAS (and the reference's own runs) on the
//          judge's clock (bench_planning.h plans, bench_engine.h times): the rows with their timings
//   score  a grade's results document under course.toml [scoring], as a rescore of it would score it
//          (score_document.h)
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/bench_plan.h"
#include "common/selection.h"
#include "judge/bench_engine.h"
#include "judge/config.h"
#include "judge/gpu_context.h"
#include "judge/isolation.h"
#include "judge/score.h"

namespace gemmlab {

// ---- 1. check --------------------------------------------------------------------------------------

struct CheckStepInput {
    Selection selection;
    bool quick = true;       // the quick shape set, else the full one (the grading set)
    uint64_t seed = 0;
    bool color = false;
    bool progress = false;   // redraw a progress line (on a terminal)
    ChildLimits limits;
};
struct CheckStepResult {
    uint64_t seed = 0;
    bool quick = true;
    nlohmann::json results = nlohmann::json::array();  // one row per stage run (docs/results-schema.md)
    // {"seed", "set", "results"}: what a check's results file holds of the step.
    nlohmann::json to_json() const;
};
CheckStepResult check_step(GpuContext& ctx, const CheckStepInput& in);

// The result of one stage run from the judge's case reports and how the runner ended: the cases
// judged, the case that was running when the runner crashed, timed out or exited, and the stage's
// disposition (combine() of the cases). expected_cases is how many the shape set holds: a run that
// ends early, for no reason of its own, has not passed.
nlohmann::json collect_stage_run(const std::string& stage, const std::string& variant, Precision prec,
                                 size_t expected_cases, const ChildOutcome& out);

// Exit status for a set of results: 0 all implemented ones passed, 1 otherwise.
int exit_status(const nlohmann::json& results);

// ---- 2. bench --------------------------------------------------------------------------------------

// What to time: every checked result that passed, in each precision, next to naive and cuBLAS (and the
// reference's own runs, when given).
struct BenchStepInput {
    std::vector<Precision> precisions;
    std::vector<Shape> shapes;
    std::map<Precision, std::vector<Shape>> shapes_for;  // a precision's own shapes, where given
    BenchConfig config;
    uint64_t seed = 0;
    bool progress = false;
    nlohmann::json checked = nlohmann::json::array();  // the check step's results
    std::vector<StageRun> reference_runs;              // reference stages to time too
};
struct BenchStepResult {
    std::map<Precision, BenchOutcome> outcomes;
    nlohmann::json results = nlohmann::json::array();    // every checked result, with its bench[]
    nlohmann::json reference = nlohmann::json::array();  // the reference's runs, with their bench[]
    nlohmann::json baselines = nlohmann::json::object(), devices = nlohmann::json::object();
    std::vector<std::string> notes;                      // restarts of runners, and why
};
BenchStepResult bench_step(GpuContext& ctx, const BenchStepInput& in);

// A result row of the submission: the check's record plus its timings (results[].bench); a failure
// while timed (wrong values, a crash, an impossible speed) becomes the row's disposition.
nlohmann::json result_with_bench(nlohmann::json check_result, const std::vector<Timing>& timings);

// ---- 3. score --------------------------------------------------------------------------------------

// The score of a grade's results document (kind "grade": graded, or no_gpu) under `cfg`'s rubric,
// from the document itself, as a rescore of it would (score_document.h); recorded in its `score`.
Score score_step(nlohmann::json& document, const CourseConfig& cfg);

}  // namespace gemmlab
