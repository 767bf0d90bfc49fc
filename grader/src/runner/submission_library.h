// submission_library.h — the submission as gemmlab-stages sees it: one shared library per stage,
// libgemmlab-submission-<stage>.so, built from that stage's file, the files it calls into by name (the
// symbol check's closure of it: grader/scripts/scan_symbols.py) and one trusted file
// (runner/submission_exports.cpp), linked with --no-undefined against the CUDA runtime and the C/C++
// runtime only, and opened with RTLD_LOCAL on the first call of that stage — in a sandboxed runner
// process, after it has read its report key and closed that pipe.
//
// What this buys (docs/ARCHITECTURE.md, "The trust boundary"):
//   - the submission cannot name the grader: nothing of the grader is linked into the library,
//     and a reference the linker cannot resolve in the allowed libraries fails the build;
//   - a stage runs only the code its own file reaches by name: another stage's file (its kernels, its
//     static initializers) is not in the library, so no pointer or table a file fills can lead there,
//     and the tensor-core rule, which reads exactly that closure, reads all the code that can run;
//   - its definitions cannot replace anything: RTLD_LOCAL keeps its symbols out of the global
//     scope, so a stage that defines clock_gettime, cudaEventRecord or malloc changes only calls
//     made from inside the library itself (and the symbol check rejects such a stage anyway);
//   - its static initializers run in the sandboxed runner, after the report key is gone.
// The library exports exactly one symbol, gemmlab_submission_abi (below). A runner opens the libraries
// of the stages the judge started it for (`serve --stage S`): one, for every run that is checked or
// timed; the stub probe alone opens several, one after the other in one process, and believes only a
// `not_implemented`, which costs the stage that says it (judge/check_engine.h, find_stubs).
#pragma once

#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "gemmlab/stages.h"

namespace gemmlab {

// Bumped whenever this struct or the stage API changes shape: a library built against another
// version is refused with a message, never called.
constexpr int kSubmissionAbiVersion = 2;

struct SubmissionAbi {
    int version;
    // The submission's stage table. An entry point is null when the stage's file was not linked
    // (the symbol check refused it) or does not define it.
    const std::vector<StageInfo>& (*registry)();
    // The CUDA error GEMMLAB_TRY last kept inside the library (stage_api.h), cleared by the call.
    cudaError_t (*take_stage_error)();
};

extern "C" {
using SubmissionAbiFn = const SubmissionAbi* (*)();
}
constexpr const char* kSubmissionAbiSymbol = "gemmlab_submission_abi";

// In gemmlab-stages: the library of `stage` beside the executable, opened once. Throws
// std::runtime_error saying what to rebuild when it is missing or of another version.
const SubmissionAbi& submission_library(const std::string& stage);

}  // namespace gemmlab
