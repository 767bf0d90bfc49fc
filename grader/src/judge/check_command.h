// check_command.h — `gemmlab check`: the pipeline's check step (pipeline.h) on the selected stages,
// each stage run checked by the judge with a runner process of its own, a verdict per stage on the
// terminal, and a JSON record.
#pragma once

#include <string>

#include "judge/gpu_context.h"
#include "judge/pipeline.h"

namespace gemmlab {

struct CheckCommandOptions {
    CheckStepInput check;
    std::string json_out;  // where to write the results (docs/results-schema.md, kind "check"); "" = nowhere
};

// Runs `gemmlab check`; returns the exit status (0 every implemented stage passed, 1 otherwise).
int run_check_command(GpuContext& ctx, const CheckCommandOptions& opt);

}  // namespace gemmlab
