// stage_call.h — one call of a stage variant from a registry (the submission's library or the
// reference), on operands given as device pointers. What a runner process does for a stage item.
#pragma once

#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "common/protocol.h"
#include "gemmlab/stages.h"

namespace gemmlab {

// The stage's own CUDA error (stage_api.h GEMMLAB_TRY) from the side that ran it; cleared by the call.
using TakeStageError = cudaError_t (*)();

// Calls stage/variant of `registry` in the problem's precision on A, B, C (the problem's leading
// dimensions). A pitched stage with problem.pitched_flow builds its own operands from A, B and C with
// its pitched_alloc and pitched_upload, multiplies, and downloads the product into C, checking that
// its helpers copy exactly (make check); without pitched_flow it is called on A, B, C as they are
// (the judge laid them out with aligned rows: a timed call).
protocol::CallResult call_stage(const std::vector<StageInfo>& registry, TakeStageError take_error,
                                const std::string& stage, const std::string& variant, const protocol::Problem& p,
                                void* A, void* B, void* C, cudaStream_t stream);

}  // namespace gemmlab
