// checker.h — checks one case (one shape, one alpha/beta) of one stage variant against cuBLAS in
// FP64, with guard bands, NaN poison and input-integrity checks. Runs inside a child process
// (isolation.h): a stage that crashes takes only that process down.
#pragma once

#include "check_result.h"
#include "gemmlab/stages.h"
#include "gpu_context.h"

namespace gemmlab {

template <typename T>
CaseResult check_case(GpuContext& ctx, Operands operands, const StageFns<T>& fns, const Shape& shape);

}  // namespace gemmlab
