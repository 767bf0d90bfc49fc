// bench_verify.h — the verification of a timed interval (docs/timing.md): its sample of C (the
// poison left, values not yet their answer: CallReport) and, where the sample does not settle it, the
// full check of every call's C against the FP64 answer of its inputs (interval_verdict.h decides).
#pragma once

#include <optional>
#include <string>

#include "judge/bench_item.h"
#include "judge/bench_operands.h"
#include "judge/gpu_context.h"
#include "judge/interval_verdict.h"

namespace gemmlab {

template <typename T>
class IntervalVerifier {
public:
    IntervalVerifier(GpuContext& ctx, const ShapeOperands<T>& operands) : ctx_(ctx), operands_(operands) {}

    // The verdict of r's timed interval of n calls that `c` reports: empty when it passes, else the
    // problem of a `failed` item. The grader's own items are held to the poison only. Calls checked in
    // full count in r's verified and max_error_ratio.
    std::string problem(ItemRun& r, const CallReport& c, int n);

private:
    // Checks the outputs of a timed interval's n calls in full, up to the first wrong one (which it returns).
    std::optional<WrongCall> verify(ItemRun& r, int n);

    GpuContext& ctx_;
    const ShapeOperands<T>& operands_;
};

extern template class IntervalVerifier<float>;
extern template class IntervalVerifier<double>;

}  // namespace gemmlab
