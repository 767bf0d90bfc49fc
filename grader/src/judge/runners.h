// runners.h — the two runner binaries a grader build puts beside `gemmlab` (common/binary_names.h):
// gemmlab-stages runs the submission's stages, gemmlab-baselines the grader's own calls (the reference
// stages, cuBLAS, the judge's calibration). Each runs in a sandboxed process of its own.
#pragma once

#include <string>

#include "judge/sandbox.h"

namespace gemmlab {

enum class RunnerKind { submission, baselines };

// The path of that runner beside this executable. Throws, saying what to rebuild, when it is missing.
std::string runner_executable(RunnerKind kind);

// What the runner's sandbox allows (the grader's own runner may read cuBLAS).
SandboxOptions runner_sandbox(RunnerKind kind);

}  // namespace gemmlab
