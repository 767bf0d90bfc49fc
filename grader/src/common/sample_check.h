// sample_check.h — what the judge's sample of C, taken after a timed call said it was done and before
// the second clock stamp, decides per position (docs/timing.md). Shared by the judge's kernels
// (judge/device_ops.cu) and the host tests, so the arithmetic is tested without a GPU.
//
// A sampled element passes when it holds its answer: the FP64 product of row r of the call's A with
// column c of its B (beta = 0 in timed calls), computed here in about twice double precision
// (Ogita, Rump and Oishi's compensated dot product, Dot2), within the item's bound (bound.h) times
// kSampleSlack. The NaN poison the judge wrote into C never passes, and neither does anything else
// that is not yet the answer — zeros, or any value a stage wrote first while its real work still ran
// on another stream. The full check after the interval decides correctness; the sample only shows
// whether the work was finished when the done word came.
#pragma once

#include <cmath>
#include <cstdint>

#include "common/bound.h"

namespace gemmlab {

// The sample's bound is this many times the item's own: the sample's answer is exact to about u²,
// while the full check compares with an FP64 GEMM, so an element that passes the full check passes
// here with room to spare; a value that is not the answer (the poison, zeros, a placeholder) is
// off by far more.
constexpr double kSampleSlack = 2.0;

struct SamplePosition {
    uint64_t slot = 0;  // which call of the interval (which M×N matrix)
    int row = 0, col = 0;
};

// Position i of the sample drawn from `secret`: splitmix64 of (secret, i), uniform over the `slots`
// M×N matrices of the interval.
GEMMLAB_HD inline SamplePosition sample_position(uint64_t secret, uint64_t i, int M, int N, int slots) {
    uint64_t x = secret + 0x9E3779B97F4A7C15ull * (i + 1);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    const uint64_t per_slot = static_cast<uint64_t>(M) * static_cast<uint64_t>(N);
    const uint64_t e = x % (per_slot * static_cast<uint64_t>(slots));
    const uint64_t within = e % per_slot;
    SamplePosition p;
    p.slot = e / per_slot;
    p.row = static_cast<int>(within / static_cast<uint64_t>(N));
    p.col = static_cast<int>(within % static_cast<uint64_t>(N));
    return p;
}

// Rounded products and sums that a compiler may not fuse into an FMA (the error terms below rely on
// each being rounded on its own).
GEMMLAB_HD inline double mul_rn(double a, double b) {
#ifdef __CUDA_ARCH__
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}
GEMMLAB_HD inline double add_rn(double a, double b) {
#ifdef __CUDA_ARCH__
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
}

// A partial dot product: hi + lo is the sum of the products so far, with the rounding errors of every
// product and sum kept in lo; gauge = Σ|a||b|, and the sums of |a| and |b| for the FP16 underflow term
// of the bound (bound.h).
struct Dot2 {
    double hi = 0, lo = 0, gauge = 0, abs_a = 0, abs_b = 0;
};

// Adds the rounded value y to (hi, lo) without losing its rounding error (TwoSum).
GEMMLAB_HD inline void two_sum_into(double& hi, double& lo, double y) {
    const double s = add_rn(hi, y);
    const double z = add_rn(s, -hi);
    lo = add_rn(lo, add_rn(add_rn(hi, -add_rn(s, -z)), add_rn(y, -z)));
    hi = s;
}

GEMMLAB_HD inline void dot2_add(Dot2& d, double a, double b) {
    const double p = mul_rn(a, b);
    const double e = fma(a, b, -p);  // the product's rounding error, exactly (TwoProduct)
    two_sum_into(d.hi, d.lo, p);
    d.lo = add_rn(d.lo, e);
    d.gauge = add_rn(d.gauge, mul_rn(fabs(a), fabs(b)));
    d.abs_a = add_rn(d.abs_a, fabs(a));
    d.abs_b = add_rn(d.abs_b, fabs(b));
}

// Two partial dot products of disjoint ranges of k, joined.
GEMMLAB_HD inline Dot2 dot2_merge(Dot2 x, const Dot2& y) {
    two_sum_into(x.hi, x.lo, y.hi);
    x.lo = add_rn(x.lo, y.lo);
    x.gauge = add_rn(x.gauge, y.gauge);
    x.abs_a = add_rn(x.abs_a, y.abs_a);
    x.abs_b = add_rn(x.abs_b, y.abs_b);
    return x;
}

// The share of lane `lane` of `lanes` in row `row` of A (row-major, ld = lda) times column `col` of B
// (row-major, ld = ldb): k = lane, lane + lanes, ... < K.
template <typename T>
GEMMLAB_HD inline Dot2 dot2_share(const T* A, int lda, const T* B, int ldb, int row, int col, int K, int lane, int lanes) {
    Dot2 d;
    const T* a = A + static_cast<size_t>(row) * static_cast<size_t>(lda);
    for (int k = lane; k < K; k += lanes)
        dot2_add(d, static_cast<double>(a[k]), static_cast<double>(B[static_cast<size_t>(k) * static_cast<size_t>(ldb) + col]));
    return d;
}

// True when `got` is the answer d holds, within `threshold` units of u·G' (bound.h: G' adds
// underflow_weight·(Σ|a| + Σ|b|) for FP16 inputs; alpha = 1). NaN is never the answer.
GEMMLAB_HD inline bool sample_holds_answer(double got, const Dot2& d, double u, double threshold, double underflow_weight) {
    // An infinite threshold holds every value, NaN included: the grader's own items (naive, cuBLAS,
    // the calibration's kernel) are held to the judge's poison only, which is counted on its own.
    if (!(threshold <= 1.0e308)) return true;
    const double expected = d.hi + d.lo;
    const double gauge = d.gauge + underflow_weight * (d.abs_a + d.abs_b);
    const double ratio = error_ratio(got, expected, gauge, u);
    return ratio == ratio && within_bound(ratio, threshold);
}

}  // namespace gemmlab
