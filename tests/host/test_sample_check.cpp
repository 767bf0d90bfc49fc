// Tests of common/sample_check.h: what the judge's sample of C decides per position after a timed
// call said it was done — the same functions the judge's kernel runs (judge/device_ops.cu), here on
// the host: the positions, the compensated dot product, and which values pass.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "common/bound.h"
#include "common/sample_check.h"

using namespace gemmlab;

namespace {

// Row-major A (M×K, ld = lda) and B (K×N, ld = ldb), uniform in (-1, 1] as the judge draws them.
template <typename T>
struct Inputs {
    int M, N, K, lda, ldb;
    std::vector<T> A, B;
    Inputs(int m, int n, int k, unsigned seed) : M(m), N(n), K(k), lda(k + 3), ldb(n + 5) {
        std::mt19937_64 gen(seed);
        std::uniform_real_distribution<double> u(-1.0, 1.0);
        A.resize(size_t(M) * lda);
        B.resize(size_t(K) * ldb);
        for (T& x : A) x = static_cast<T>(u(gen));
        for (T& x : B) x = static_cast<T>(u(gen));
    }
    Dot2 answer(int r, int c, int lanes = 1) const {
        Dot2 d;
        for (int lane = 0; lane < lanes; ++lane) d = dot2_merge(d, dot2_share(A.data(), lda, B.data(), ldb, r, c, K, lane, lanes));
        return d;
    }
    // What an honest kernel computes: a sum in T, k in order, inputs first passed through `round`.
    template <typename Round>
    T honest(int r, int c, Round round) const {
        T acc = 0;
        for (int k = 0; k < K; ++k) acc += round(A[size_t(r) * lda + k]) * round(B[size_t(k) * ldb + c]);
        return acc;
    }
    T honest(int r, int c) const {
        return honest(r, c, [](T x) { return x; });
    }
};

// Rounds x to `bits` significant bits (round to nearest), as TF32 and FP16 keep 11.
float round_to_bits(float x, int bits) {
    if (x == 0.0f) return x;
    int e = 0;
    const double m = std::frexp(static_cast<double>(x), &e);
    return static_cast<float>(std::ldexp(std::nearbyint(std::ldexp(m, bits)), e - bits));
}
// FP16: 11 significant bits, and below 2^-14 a fixed spacing of 2^-24 (subnormals).
float round_to_fp16(float x) {
    if (std::fabs(x) < 0x1p-14f) return static_cast<float>(std::nearbyint(static_cast<double>(x) * 0x1p24) * 0x1p-24);
    return round_to_bits(x, 11);
}

bool passes(double got, const Dot2& d, const ErrorBound& b) {
    return sample_holds_answer(got, d, b.u, b.threshold * kSampleSlack, b.underflow_weight);
}

}  // namespace

TEST_CASE("sample positions cover every call's M×N and only it, drawn from the secret") {
    const int M = 7, N = 5, slots = 4;
    std::set<uint64_t> seen;
    for (uint64_t i = 0; i < 4000; ++i) {
        const SamplePosition p = sample_position(0xC0FFEEull, i, M, N, slots);
        REQUIRE(p.slot < uint64_t(slots));
        REQUIRE(p.row >= 0);
        REQUIRE(p.row < M);
        REQUIRE(p.col >= 0);
        REQUIRE(p.col < N);
        seen.insert((p.slot * M + p.row) * N + p.col);
    }
    CHECK(seen.size() == size_t(M) * N * slots);  // 140 positions, 4000 draws: every one
    // Another secret, other positions; the same secret, the same ones.
    int same = 0;
    for (uint64_t i = 0; i < 64; ++i) {
        const SamplePosition a = sample_position(1, i, 1000, 1000, 1), b = sample_position(2, i, 1000, 1000, 1);
        const SamplePosition c = sample_position(1, i, 1000, 1000, 1);
        same += a.row == b.row && a.col == b.col;
        CHECK((a.row == c.row && a.col == c.col));
    }
    CHECK(same < 3);
    // Large shapes: no overflow of M·N·slots in 64 bits.
    const SamplePosition big = sample_position(99, 5, 16384, 16384, 32);
    CHECK(big.slot < 32u);
    CHECK(big.row < 16384);
}

TEST_CASE("the compensated dot product keeps what plain double sums lose") {
    // 1e17 and -1e17 cancel; the small terms survive only if every rounding error is kept.
    const std::vector<double> a = {1e17, 1.0, -1e17, 0.25, 3.0};
    const std::vector<double> b = {1.0, 1.0, 1.0, 1.0, 0.5};
    double plain = 0;
    for (size_t k = 0; k < a.size(); ++k) plain += a[k] * b[k];
    CHECK(plain != 2.75);  // plain double: the 1.0 and the 0.25 are lost against 1e17
    Dot2 d;
    for (size_t k = 0; k < a.size(); ++k) dot2_add(d, a[k], b[k]);
    CHECK(d.hi + d.lo == 2.75);
    CHECK(d.gauge == doctest::Approx(2e17));
    // A product's own rounding error is kept too: (1 + 2^-30)² = 1 + 2^-29 + 2^-60.
    Dot2 p;
    dot2_add(p, 1.0 + 0x1p-30, 1.0 + 0x1p-30);
    dot2_add(p, -1.0, 1.0);
    CHECK(p.hi + p.lo == 0x1p-29 + 0x1p-60);
}

TEST_CASE("a dot product split over lanes and joined is the one computed in order") {
    const Inputs<double> op(3, 4, 4099, 7);  // K not a multiple of any lane count
    for (int lanes : {1, 32, 256, 5000}) {
        const Dot2 one = op.answer(2, 3, 1), split = op.answer(2, 3, lanes);
        CHECK(split.hi + split.lo == doctest::Approx(one.hi + one.lo).epsilon(1e-28));
        CHECK(split.gauge == doctest::Approx(one.gauge).epsilon(1e-14));
        CHECK(split.abs_a == doctest::Approx(one.abs_a).epsilon(1e-14));
    }
}

TEST_CASE("an honest result passes the sample, in float and in double, at every K the grader uses") {
    for (int K : {1, 7, 256, 2048, 4096}) {
        const Inputs<float> f(4, 4, K, 11u + K);
        const Inputs<double> d(4, 4, K, 13u + K);
        for (int r = 0; r < 4; ++r)
            for (int c = 0; c < 4; ++c) {
                CHECK(passes(f.honest(r, c), f.answer(r, c, 256), error_bound(false, InputPrecision::full)));
                CHECK(passes(d.honest(r, c), d.answer(r, c, 256), error_bound(true, InputPrecision::full)));
            }
    }
}

TEST_CASE("the tensor stage's rounded inputs pass under the bounds their variants declare") {
    const Inputs<float> op(3, 3, 4096, 21);
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
            const Dot2 ans = op.answer(r, c, 256);
            const float tf32 = op.honest(r, c, [](float x) { return round_to_bits(x, 11); });
            const float fp16 = op.honest(r, c, round_to_fp16);
            CHECK(passes(tf32, ans, error_bound(false, InputPrecision::tf32)));
            CHECK(passes(fp16, ans, error_bound(false, InputPrecision::fp16)));
        }
    // Tiny inputs, deep in FP16's subnormals: the underflow term of the bound is what lets them pass.
    Inputs<float> tiny(8, 1, 512, 23);
    for (float& x : tiny.A) x *= 0x1p-22f;
    const ErrorBound b = error_bound(false, InputPrecision::fp16);
    int fail_without_term = 0;
    for (int r = 0; r < 8; ++r) {
        const Dot2 ans = tiny.answer(r, 0, 32);
        const float fp16 = tiny.honest(r, 0, round_to_fp16);
        CHECK(passes(fp16, ans, b));
        fail_without_term += !sample_holds_answer(fp16, ans, b.u, b.threshold * kSampleSlack, 0.0);
    }
    CHECK(fail_without_term > 0);
}

TEST_CASE("what is not yet the answer does not pass: the poison, zeros, a value just outside the bound") {
    const Inputs<float> f(8, 8, 2048, 31);
    const Inputs<double> d(8, 8, 2048, 37);
    const ErrorBound bf = error_bound(false, InputPrecision::full), bd = error_bound(true, InputPrecision::full);
    const ErrorBound fp16 = error_bound(false, InputPrecision::fp16);  // the loosest bound of any variant
    auto allowed = [](const Dot2& a, const ErrorBound& b) {
        return b.threshold * kSampleSlack * b.u * (a.gauge + b.underflow_weight * (a.abs_a + a.abs_b));
    };
    int zeros_caught_fp16 = 0;
    for (int r = 0; r < 8; ++r)
        for (int c = 0; c < 8; ++c) {
            const Dot2 af = f.answer(r, c, 256), ad = d.answer(r, c, 256);
            const double exact_f = af.hi + af.lo, exact_d = ad.hi + ad.lo;
            CHECK_FALSE(passes(std::numeric_limits<double>::quiet_NaN(), af, bf));
            CHECK_FALSE(passes(std::numeric_limits<double>::quiet_NaN(), ad, bd));
            CHECK_FALSE(passes(std::numeric_limits<double>::quiet_NaN(), af, fp16));
            CHECK_FALSE(passes(0.0, af, bf));
            CHECK_FALSE(passes(0.0, ad, bd));
            zeros_caught_fp16 += !passes(0.0, af, fp16);
            CHECK(passes(exact_f, af, bf));
            CHECK(passes(exact_d, ad, bd));
            CHECK(passes(exact_f + 0.99 * allowed(af, bf), af, bf));
            CHECK_FALSE(passes(exact_f + 1.01 * allowed(af, bf), af, bf));
            CHECK_FALSE(passes(exact_d - 1.01 * allowed(ad, bd), ad, bd));
            CHECK_FALSE(passes(exact_f + 1.01 * allowed(af, fp16), af, fp16));
        }
    // FP16's bound is wide (about 0.4% of the gauge): a zero can pass where the answer is near 0, but
    // most positions catch it, and one of the judge's 64 that does fails the interval.
    CHECK(zeros_caught_fp16 > 32);
    // With an infinite threshold (the grader's own items) only the poison counts, and the poison is
    // counted apart (its exact bits, on the GPU): any value holds here, a NaN included.
    const Dot2 a = f.answer(0, 0);
    CHECK(sample_holds_answer(0.0, a, bf.u, INFINITY, 0.0));
    CHECK(sample_holds_answer(std::numeric_limits<double>::quiet_NaN(), a, bf.u, INFINITY, 0.0));
}

TEST_CASE("an infinite threshold holds every value: the grader's own items answer to the poison only") {
    Dot2 d;
    d.hi = 3.0;
    d.gauge = 3.0;
    CHECK(sample_holds_answer(3.0, d, 0x1p-24, INFINITY, 0));
    CHECK(sample_holds_answer(1e30, d, 0x1p-24, INFINITY, 0));
    CHECK(sample_holds_answer(NAN, d, 0x1p-24, INFINITY, 0));
    CHECK_FALSE(sample_holds_answer(NAN, d, 0x1p-24, 2.0, 0));  // a stage's NaN is no answer
}
