// bench_verify.cpp — the verification of a timed interval (bench_verify.h).
#include "judge/bench_verify.h"

#include <cmath>

#include "judge/bench_interval.h"
#include "judge/device_ops.h"
#include "judge/reference_gemm.h"

namespace gemmlab {

template <typename T>
std::string IntervalVerifier<T>::problem(ItemRun& r, const CallReport& c, int n) {
    // Poison in the sample is "unwritten" as it stands; otherwise the full check (made after the
    // runner synchronized the device) says whether values that were not yet the answer are wrong or
    // were late. The grader's own items are held to the poison only.
    const bool stage = r.item->kind == BenchItem::Kind::stage;
    IntervalSample sample;
    sample.first_call = r.calls + 1, sample.calls = n;
    sample.sampled = kSamples + kAnswerSamples, sample.poisoned = c.poisoned;
    sample.checked = stage ? kAnswerSamples : 0, sample.unanswered = c.unanswered;
    const std::optional<WrongCall> wrong = stage && full_check_decides(sample) ? verify(r, n) : std::nullopt;
    return interval_problem(sample, wrong);
}

template <typename T>
std::optional<WrongCall> IntervalVerifier<T>::verify(ItemRun& r, int n) {
    const ShapeOperands<T>& ops = operands_;
    const Shape& shape = ops.shape();
    const Layout L = ops.layout(r.pitched);
    for (int i = 0; i < n; ++i) {
        const Reference ref = compute_reference<T>(ctx_, shape, ops.a0() + i * ops.stride_a(), L.lda,
                                                   ops.b0() + i * ops.stride_b(), L.ldb, nullptr, r.bound.underflow_weight);
        const CompareReport cmp =
            compare_with_reference(static_cast<const T*>(ops.c()) + i * ops.stride_c(), L.ldc, ref.value.get(),
                                   ref.gauge.get(), shape.M, shape.N, r.bound.u, nullptr, ctx_.stream, r.bound.threshold);
        ++r.result.verified;
        if (cmp.max_ratio > r.result.max_error_ratio || std::isnan(cmp.max_ratio)) r.result.max_error_ratio = cmp.max_ratio;
        if (cmp.wrong == 0) continue;
        WrongCall w;
        w.call = r.calls + i + 1;
        w.wrong = cmp.wrong, w.elements = int64_t(shape.M) * shape.N;
        w.row = cmp.worst_index / shape.N, w.col = cmp.worst_index % shape.N;
        w.expected = cmp.expected, w.got = cmp.got;
        return w;
    }
    return std::nullopt;
}

template class IntervalVerifier<float>;
template class IntervalVerifier<double>;

}  // namespace gemmlab
