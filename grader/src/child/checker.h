// checker.h — checks one case (one shape, one alpha/beta) of one stage variant against cuBLAS in
// FP64, with guard bands, NaN poison and input-integrity checks. Runs inside a child process
// (isolation.h): a stage that crashes takes only that process down.
#pragma once

#include <type_traits>

#include "common/bound.h"
#include "common/check_result.h"
#include "gemmlab/stages.h"
#include "child/gpu_context.h"

namespace gemmlab {

// A stage whose file the build's symbol check refused is not linked into the submission's library
// (child/submission_library.h): its entry points are null, and it is `rejected` with these words.
// The grader's parent replaces them with the check's own (which names the symbol and the rule).
constexpr const char* kNotLinkedProblem =
    "this stage's code is not in the build: the symbol check refused its file (the build printed why; "
    "see docs/student-guide.md, \"What a stage may call\")";

template <typename T>
bool entry_points_linked(Operands operands, const StageFns<T>& fns) {
    if (!fns.gemm) return false;
    return operands != Operands::pitched || (fns.alloc && fns.upload && fns.download);
}

// `bound` is the variant's (bound.h error_bound): what its declared input precision allows.
template <typename T>
CaseResult check_case(GpuContext& ctx, Operands operands, const StageFns<T>& fns, const Shape& shape,
                      const ErrorBound& bound);

// A stage that multiplies in its own precision (the bound of every stage but the tensor ones).
template <typename T>
CaseResult check_case(GpuContext& ctx, Operands operands, const StageFns<T>& fns, const Shape& shape) {
    return check_case<T>(ctx, operands, fns, shape, error_bound(std::is_same_v<T, double>, InputPrecision::full));
}

}  // namespace gemmlab
