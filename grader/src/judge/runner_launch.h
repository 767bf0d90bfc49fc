// runner_launch.h — the two runner binaries a grader build puts beside `gemmlab` (common/binary_names.h):
// gemmlab-stages runs the submission's stages, gemmlab-baselines the grader's own calls (the reference
// stages, cuBLAS, the judge's calibration). Each runs in a sandboxed process of its own.
#pragma once

#include <string>
#include <vector>

#include "judge/isolation.h"
#include "judge/sandbox.h"

namespace gemmlab {

enum class RunnerKind { submission, baselines };

// How long a runner may take to start CUDA (and the submission's library) and to map the buffers; how
// long one told to exit may take to do so.
constexpr double kRunnerStartSeconds = 60;
constexpr double kRunnerExitSeconds = 5;

// The path of that runner beside this executable. Throws, saying what to rebuild, when it is missing.
std::string runner_executable(RunnerKind kind);

// The command line of a runner that serves the judge's requests: `serve`, and for the submission's
// runner `--stage S` for each stage whose library it may open (each of them its own,
// runner/submission_library.h). One stage for every run that is checked or timed.
std::vector<std::string> serve_arguments(RunnerKind kind, const std::vector<std::string>& stages);

// What the runner's sandbox allows (the grader's own runner may read cuBLAS; the submission's runner,
// the libraries of `stages` and no other file of the build).
SandboxOptions runner_sandbox(RunnerKind kind, const std::vector<std::string>& stages);

// A runner's next word of a kind ("ready", "mapped", ...): "" when it came; else why not (it ended,
// it said nothing for `seconds` (*timed_out), or its "fatal" error).
std::string await_event(ChildProcess& runner, const char* want, double seconds, bool* timed_out);

}  // namespace gemmlab
