// check_command.h — `gemmlab check`: every selected stage × variant × precision checked by the judge
// with a runner process of its own (check_engine.h), progress on the terminal, a verdict per stage
// and a JSON record.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/selection.h"
#include "judge/gpu_context.h"
#include "judge/isolation.h"

namespace gemmlab {

struct CheckOptions {
    Selection selection;
    bool quick = true;
    uint64_t seed = 0;
    bool color = false;
    bool progress = false;   // redraw a progress line (on a terminal)
    ChildLimits limits;
};

// Runs the checks; returns {"seed", "set", "results": [...]} (schema in docs/results-schema.md).
nlohmann::json run_checks(GpuContext& ctx, const CheckOptions& opt);

// The result of one stage run from the judge's case reports and how the runner ended: the cases
// judged, the case that was running when the runner crashed, timed out or exited, and the stage's
// disposition (combine() of the cases). expected_cases is how many the shape set holds: a run that
// ends early, for no reason of its own, has not passed.
nlohmann::json collect_stage_run(const std::string& stage, const std::string& variant, Precision prec,
                                 size_t expected_cases, const ChildOutcome& out);

// Exit status for a set of results: 0 all implemented ones passed, 1 otherwise.
int exit_status(const nlohmann::json& results);

}  // namespace gemmlab
