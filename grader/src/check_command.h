// check_command.h — `gemmlab check`: every selected stage × variant × precision in its own child
// process, progress on the terminal, a verdict per stage and a JSON record.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "isolation.h"
#include "model.h"
#include "sides.h"

namespace gemmlab {

// Which stages a command works on: "tiled" (all its variants), "tiled/16", or "" for all.
struct Selection {
    std::string stage;                       // "" = all
    std::string variant;                     // "" = all (when the stage has several)
    std::vector<Precision> precisions{Precision::f32, Precision::f64};
};

// Parses "tiled", "tiled/16" or "" against the registry; throws std::invalid_argument with a
// message that lists the stages and variants that exist.
Selection parse_selection(Side side, const std::string& stage_arg, const std::string& prec_arg);

struct StageRun {
    const StageInfo* stage;
    const StageVariant* variant;
    Precision precision;
    std::string label() const;  // "tiled/16" or "naive"
};
std::vector<StageRun> expand(Side side, const Selection& sel);

struct CheckOptions {
    Selection selection;
    bool quick = true;
    uint64_t seed = 0;
    bool color = false;
    bool progress = false;   // redraw a progress line (on a terminal)
    ChildLimits limits;
};

// Runs the checks; returns {"seed", "set", "results": [...]} (schema in docs/results-schema.md).
nlohmann::json run_checks(const CheckOptions& opt);

// The result of one stage run from what its child reported and how the child ended: the cases it
// reported, the case it was running when it crashed, timed out or exited, and the stage's
// disposition (combine() of the cases). expected_cases is how many the shape set holds: a child
// that says it is done early, for no reason of its own, has not passed.
nlohmann::json collect_stage_run(const std::string& stage, const std::string& variant, Precision prec,
                                 size_t expected_cases, const ChildOutcome& out);

// The child side: checks one stage run and reports each case on the report channel.
int child_check(Side side, const std::string& stage, const std::string& variant, Precision prec,
                bool quick, uint64_t seed, const ReportChannel& report);

// One case in this process, no isolation (for compute-sanitizer and debugging); prints the result.
int run_single(Side side, const std::string& stage, const std::string& variant, Precision prec,
               const Shape& shape, uint64_t seed, bool color);

// Exit status for a set of results: 0 all implemented ones passed, 1 otherwise.
int exit_status(const nlohmann::json& results);

}  // namespace gemmlab
