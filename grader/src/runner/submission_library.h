// submission_library.h — the submission as gemmlab-stages sees it: a shared library,
// libgemmlab-submission.so, built from the submission's stage files and one trusted file
// (runner/submission_exports.cpp), linked with --no-undefined against the CUDA runtime and the C/C++
// runtime only, and opened with RTLD_LOCAL on the first use of its registry — in a sandboxed runner
// process, after it has read its report key and closed that pipe.
//
// What this buys (docs/ARCHITECTURE.md, "The trust boundary"):
//   - the submission cannot name the grader: nothing of the grader is linked into the library,
//     and a reference the linker cannot resolve in the allowed libraries fails the build;
//   - its definitions cannot replace anything: RTLD_LOCAL keeps its symbols out of the global
//     scope, so a stage that defines clock_gettime, cudaEventRecord or malloc changes only calls
//     made from inside the library itself (and the symbol check rejects such a stage anyway);
//   - its static initializers run in the sandboxed runner, after the report key is gone.
// The library exports exactly one symbol, gemmlab_submission_abi (below).
#pragma once

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

// In gemmlab-stages: the library beside the executable (or GEMMLAB_SUBMISSION_LIBRARY), opened once.
// Throws std::runtime_error saying what to rebuild when it is missing or of another version.
const SubmissionAbi& submission_library();

}  // namespace gemmlab
