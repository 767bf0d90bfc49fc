// submission_exports.cpp — the one trusted file linked into libgemmlab-submission.so
// (runner/submission_library.h). Compiled with -DGEMMLAB_NS=submission -DGEMMLAB_WEAK_ENTRY_POINTS,
// so the stage table refers to the entry points weakly: a stage file the symbol check refused is
// left out of the link, and its entry points are null here instead of failing the whole build.
#include "runner/submission_library.h"

namespace {

const std::vector<gemmlab::StageInfo>& registry() {
    static const std::vector<gemmlab::StageInfo> table = gemmlab::submission::stage_table();
    return table;
}

cudaError_t take_stage_error() {
    const cudaError_t err = gemmlab::last_stage_error;
    gemmlab::last_stage_error = cudaSuccess;
    return err;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const gemmlab::SubmissionAbi* gemmlab_submission_abi() {
    static const gemmlab::SubmissionAbi abi{gemmlab::kSubmissionAbiVersion, &registry, &take_stage_error};
    return &abi;
}
