// format.h — the one place where the judge's results take their shape: the rows of results files
// (docs/results-schema.md) that are not a verdict (the pipeline's steps make those: pipeline.h), and
// every line and table the judge's steps show on the terminal (the check's verdicts and summary, the
// benchmark's tables, the score).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/bench_plan.h"
#include "common/check_result.h"
#include "common/selection.h"
#include "judge/bench_engine.h"
#include "judge/config.h"
#include "judge/score.h"

namespace gemmlab {

// "1234.5", "12.3x", "45.6%": v with `decimals` decimals.
std::string fixed(double v, int decimals);

// ---- rows of results files -----------------------------------------------------------------------

// The check's row of a run this GPU or build cannot run: unsupported, and why (not scored).
nlohmann::json unsupported_row(const StageRun& run, const std::string& why);

// The row of a run a grade without a GPU could not check: `disposition` no_gpu (or rejected, when the
// build's symbol check left it out), and why.
nlohmann::json not_run_row(const std::string& stage, const std::string& variant, Precision p,
                           const std::string& disposition, const std::string& problem);

// results-schema `reference`: one of the reference's runs with its timings.
nlohmann::json reference_row(const BenchItem& item, Precision p, const std::vector<Timing>& timings);

// results-schema `baselines` for one precision: per shape, naive_gflops and cublas_gflops (and
// cublas_tf32_gflops, cublas_fp16_gflops when the plan timed them).
nlohmann::json baselines_json(const BenchOutcome& out);

// environment.clocks of results files: per precision, the NVML readings at the start and the end
// of its timing process ({"float": {"start": ..., "end": ...}, ...}), from the `device` reports.
nlohmann::json clocks_from_devices(const nlohmann::json& devices);

// results-schema `settings`: the plan settings of [bench] a run timed `shapes` with.
nlohmann::json settings_json(const BenchConfig& cfg, const std::vector<Shape>& shapes, uint64_t seed);

// ---- the terminal --------------------------------------------------------------------------------

// The check: its first line, the progress line it redraws (case c of run i, on a terminal), the verdict
// of each run (the first failing case, and the commands that reproduce and debug it), and its last line.
void print_check_start(size_t runs, bool quick, uint64_t seed);
void print_case_progress(size_t i, size_t runs, const StageRun& run, size_t c, const std::vector<Shape>& shapes);
void clear_progress_line();
void print_verdict(const StageRun& run, const nlohmann::json& r, bool color, bool quick, uint64_t seed);
void print_check_summary(const nlohmann::json& results, bool color, bool quick, uint64_t seed);

// The benchmark: what one precision's plan times (`first`: the first plan of the run), and its table
// per shape (GFLOPS, spread, ratios to naive and cuBLAS, clock, calls verified).
void print_timing_plan(bool first, const BenchPlan& plan, size_t stage_runs, size_t reference_runs,
                       bool tensor_baselines);
void print_bench_table(const BenchOutcome& out, const MessageStyle& style);

// One line per note, after `indent`: "note: <note>".
void print_notes(const std::vector<std::string>& notes, const std::string& indent = "");

// The grade: every stage's points and speeds at the headline shapes, and the total.
void print_score(const Score& score, const std::map<Precision, std::vector<ScoringShape>>& shapes,
                 const CourseConfig& cfg, const MessageStyle& style);

}  // namespace gemmlab
