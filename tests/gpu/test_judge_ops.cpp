// GPU tests of the judge's own device operations, in the judge's context: canaries, the comparison
// that decides correctness, the GPU's clock and the samples of C after a timed call (poison left, and
// values that are not yet the answer).
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "common/cuda_check.h"
#include "common/sample_check.h"
#include "gpu_test.h"
#include "judge/device_buffer.h"
#include "judge/device_ops.h"

using namespace gemmlab;

GPU_TEST_CASE("canaries catch a write past the last row and say where it landed") {
    GpuContext ctx(1);
    const GuardedLayout g = GuardedLayout::make(10, 7, 9);
    DeviceBuffer<float> buf(g.total());
    paint_canary(buf.get(), g, ctx.stream);
    CHECK(check_canary(buf.get(), g, ctx.stream).changed == 0);
    const float planted = 1.0f;
    const size_t index = g.first() + size_t(10) * 9 + 2;  // row 10, column 2: one row too far
    CUDA_CHECK(cudaMemcpy(buf.get() + index, &planted, sizeof planted, cudaMemcpyHostToDevice));
    const CanaryReport r = check_canary(buf.get(), g, ctx.stream);
    CHECK(r.changed == 1);
    CHECK(g.describe(static_cast<size_t>(r.first)).find("past the last row") != std::string::npos);
}

GPU_TEST_CASE("compare flags a wrong element and NaN, and finds the worst one") {
    GpuContext ctx(2);
    const int M = 4, N = 5;
    std::vector<double> ref(M * N, 1.0), gauge(M * N, 1.0);
    std::vector<float> c(M * N, 1.0f);
    c[2 * N + 3] = 1.5f;  // off by far more than 32 u
    c[3 * N + 4] = NAN;
    DeviceBuffer<double> dref(M * N), dgauge(M * N);
    DeviceBuffer<float> dc(M * N);
    CUDA_CHECK(cudaMemcpy(dref.get(), ref.data(), dref.bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dgauge.get(), gauge.data(), dgauge.bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dc.get(), c.data(), dc.bytes(), cudaMemcpyHostToDevice));
    const CompareReport r = compare_with_reference(dc.get(), N, dref.get(), dgauge.get(), M, N,
                                                   unit_roundoff(Precision::f32), nullptr, ctx.stream);
    CHECK(r.wrong == 2);
    CHECK(r.worst_index == 3 * N + 4);  // NaN ranks as the worst
}

GPU_TEST_CASE("the GPU's clock moves forward across work, in nanoseconds") {
    GpuContext ctx(3);
    DeviceBuffer<uint64_t> stamps(2);
    DeviceBuffer<float> big(size_t(64) << 20);
    stamp_clock(stamps.get(), ctx.stream);
    fill_bits(big.get(), big.size(), 0, ctx.stream);  // 256 MB written: tens of microseconds at least
    stamp_clock(stamps.get() + 1, ctx.stream);
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream));  // the judge's stream is not the legacy stream
    uint64_t h[2];
    CUDA_CHECK(cudaMemcpy(h, stamps.get(), sizeof h, cudaMemcpyDeviceToHost));
    const double us = double(h[1] - h[0]) * 1e-3;
    MESSAGE("256 MB written between two stamps: " << us << " us");
    CHECK(h[1] > h[0]);
    CHECK(us > 20);
    CHECK(us < 100000);
}

GPU_TEST_CASE("the sample check counts the judge's poison left in C, and only its poison") {
    GpuContext ctx(4);
    const int M = 300, N = 200, ldc = 211;
    DeviceBuffer<double> C(size_t(M) * ldc);
    DeviceBuffer<unsigned> count(1);
    auto sample = [&](uint64_t secret) {
        CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
        CUDA_CHECK(cudaMemset(count.get(), 0, sizeof(unsigned)));
        count_unwritten_sample(C.get(), ldc, M, N, 1, 0, secret, 1024, count.get(), ctx.stream);
        CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
        unsigned h = 0;
        CUDA_CHECK(cudaMemcpy(&h, count.get(), sizeof h, cudaMemcpyDeviceToHost));
        return h;
    };
    fill_bits(C.get(), C.size(), quiet_nan_bits64(), ctx.stream);
    CHECK(sample(11) == 1024);  // nothing written: every sampled element is still poison
    fill_bits(C.get(), C.size(), kOneBits64, ctx.stream);
    CHECK(sample(12) == 0);
    // Only the first half of the rows written: about half the samples find poison.
    fill_bits(C.get() + size_t(M / 2) * ldc, size_t(M - M / 2) * ldc, quiet_nan_bits64(), ctx.stream);
    const unsigned half = sample(13);
    CHECK(half > 400);
    CHECK(half < 624);
    // Poison in the padding columns (between N and ldc) is not C: never sampled.
    fill_bits(C.get(), C.size(), kOneBits64, ctx.stream);
    for (int r = 0; r < M; ++r) fill_bits(C.get() + size_t(r) * ldc + N, ldc - N, quiet_nan_bits64(), ctx.stream);
    CHECK(sample(14) == 0);
    // A NaN the stage wrote (other bits than the poison's: what 0/0 gives on the GPU) is a written, wrong
    // value, for the full check to report, not an unwritten one.
    fill_bits(C.get(), C.size(), 0x7FFFFFFFFFFFFFFFull, ctx.stream);
    CHECK(sample(15) == 0);
}

GPU_TEST_CASE("the sample check of an interval of several calls looks into every call's C") {
    GpuContext ctx(4);
    const int M = 64, N = 48, ldc = 50, slots = 4;
    const size_t stride = size_t(M) * ldc + 100;  // slots apart, with a gap that is never sampled
    DeviceBuffer<float> C(stride * slots);
    DeviceBuffer<unsigned> count(1);
    auto sample = [&](uint64_t secret) {
        CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
        CUDA_CHECK(cudaMemset(count.get(), 0, sizeof(unsigned)));
        count_unwritten_sample(C.get(), ldc, M, N, slots, stride, secret, 1024, count.get(), ctx.stream);
        CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
        unsigned h = 0;
        CUDA_CHECK(cudaMemcpy(&h, count.get(), sizeof h, cudaMemcpyDeviceToHost));
        return h;
    };
    fill_bits(C.get(), C.size(), 0x3f800000u, ctx.stream);  // 1.0f everywhere: all written
    CHECK(sample(21) == 0);
    fill_bits(C.get(), C.size(), 0x7FFFFFFFu, ctx.stream);  // the GPU's own NaN everywhere: written, wrong
    CHECK(sample(24) == 0);
    // The last call of the interval left its C unwritten: about a quarter of the samples see it.
    fill_bits(C.get() + stride * (slots - 1), size_t(M) * ldc, quiet_nan_bits32(), ctx.stream);
    const unsigned last = sample(22);
    CHECK(last > 180);
    CHECK(last < 330);
    // Poison between the slots is nobody's C.
    fill_bits(C.get(), C.size(), 0x3f800000u, ctx.stream);
    for (int i = 0; i < slots; ++i) fill_bits(C.get() + stride * i + size_t(M) * ldc, 100, quiet_nan_bits32(), ctx.stream);
    CHECK(sample(23) == 0);
}

// The C's of two calls (float), their inputs in the judge's layout, and the exact answers.
namespace {
struct TwoCalls {
    static constexpr int M = 129, N = 257, K = 1031, lda = K + 1, ldb = N + 3, ldc = N + 5, slots = 2;
    const size_t stride_a = size_t(M) * lda + 64, stride_b = size_t(K) * ldb + 64, stride_c = size_t(M) * ldc + 64;
    DeviceBuffer<float> A{stride_a * slots}, B{stride_b * slots}, C{stride_c * slots};
    std::vector<float> answer = std::vector<float>(stride_c * slots, NAN);
    TwoCalls() {
        std::mt19937 gen(5);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        std::vector<float> a(A.size()), b(B.size());
        for (float& x : a) x = u(gen);
        for (float& x : b) x = u(gen);
        for (int s = 0; s < slots; ++s)
            for (int r = 0; r < M; ++r)
                for (int c = 0; c < N; ++c) {
                    long double acc = 0;
                    for (int k = 0; k < K; ++k)
                        acc += (long double)a[s * stride_a + size_t(r) * lda + k] * b[s * stride_b + size_t(k) * ldb + c];
                    answer[s * stride_c + size_t(r) * ldc + c] = float(acc);
                }
        CUDA_CHECK(cudaMemcpy(A.get(), a.data(), A.bytes(), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(B.get(), b.data(), B.bytes(), cudaMemcpyHostToDevice));
    }
    AnswerSample<float> sample() const {
        AnswerSample<float> s;
        s.C = C.get(), s.ldc = ldc, s.stride_c = stride_c, s.A = A.get(), s.lda = lda, s.stride_a = stride_a;
        s.B = B.get(), s.ldb = ldb, s.stride_b = stride_b, s.M = M, s.N = N, s.K = K, s.slots = slots;
        return s;
    }
};
}  // namespace

// The answer sample's two counts.
struct Counts {
    unsigned poisoned = 0, unanswered = 0;
};

GPU_TEST_CASE("the answer sample passes the answer and catches zeros or a placeholder written first") {
    GpuContext ctx(5);
    TwoCalls t;
    DeviceBuffer<unsigned> count(2);  // poisoned, unanswered
    const ErrorBound b = error_bound(false, InputPrecision::full);
    Counts last;
    auto sample = [&](uint64_t secret, double threshold) {
        CUDA_CHECK(cudaMemsetAsync(count.get(), 0, count.bytes(), ctx.stream));
        count_unanswered_sample(t.sample(), secret, 1024, 64, b.u, threshold, b.underflow_weight, count.get(),
                                count.get() + 1, ctx.stream);
        CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
        unsigned h[2] = {0, 0};
        CUDA_CHECK(cudaMemcpy(h, count.get(), sizeof h, cudaMemcpyDeviceToHost));
        last.poisoned = h[0], last.unanswered = h[1];
        return h[1];
    };
    const double threshold = b.threshold * kSampleSlack;
    CUDA_CHECK(cudaMemcpyAsync(t.C.get(), t.answer.data(), t.C.bytes(), cudaMemcpyHostToDevice, ctx.stream));
    CHECK(sample(31, threshold) == 0);  // both calls' answers, rounded to float: every position passes
    CHECK(sample(32, threshold) == 0);
    // A placeholder first (zeros), the real work not yet done: caught at (nearly) every position.
    fill_bits(t.C.get(), t.C.size(), 0u, ctx.stream);
    CHECK(sample(33, threshold) >= 62);
    CHECK(last.poisoned == 0);  // zeros are not the poison: the full check decides what they are
    // The first call's answer in place, the second's still zero: about half the positions.
    CUDA_CHECK(cudaMemcpyAsync(t.C.get(), t.answer.data(), t.stride_c * sizeof(float), cudaMemcpyHostToDevice, ctx.stream));
    const unsigned half = sample(34, threshold);
    CHECK(half > 16);
    CHECK(half < 48);
    CHECK(last.poisoned == 0);
    // The grader's own items: an infinite threshold, only the poison counts.
    CHECK(sample(35, INFINITY) == 0);
    fill_bits(t.C.get(), t.C.size(), quiet_nan_bits32(), ctx.stream);
    CHECK(sample(36, INFINITY) == 64);
    CHECK(last.poisoned == 64);
    CHECK(sample(37, threshold) == 64);
    CHECK(last.poisoned == 64);  // still the judge's poison: unwritten, whatever else the values say
    // The GPU's own NaN (0x7FFFFFFF) was written: not the answer, and not poison either.
    fill_bits(t.C.get(), t.C.size(), 0x7FFFFFFFu, ctx.stream);
    CHECK(sample(38, threshold) == 64);
    CHECK(last.poisoned == 0);
    CHECK(sample(39, INFINITY) == 0);  // the grader's own items are held to the poison only
}

GPU_TEST_CASE("the answer sample in double: the answer passes, a value off by 1e-9 does not") {
    // Double's bound is 2·32·2^-53·G, about 1e-12 here: only a sum in (at least) double precision, with
    // the operands read where they are, gets every position within it.
    GpuContext ctx(6);
    const int M = 3, N = 40, K = 777, lda = K + 2, ldb = N + 1;
    std::mt19937 gen(6);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> a(size_t(M) * lda), b(size_t(K) * ldb), c(size_t(M) * N);
    for (double& x : a) x = u(gen);
    for (double& x : b) x = u(gen);
    for (int r = 0; r < M; ++r)
        for (int j = 0; j < N; ++j) {
            long double exact = 0;
            for (int k = 0; k < K; ++k) exact += (long double)a[size_t(r) * lda + k] * b[size_t(k) * ldb + j];
            c[size_t(r) * N + j] = double(exact);
        }
    DeviceBuffer<double> A(a.size()), B(b.size()), C(c.size());
    DeviceBuffer<unsigned> count(2);  // poisoned, unanswered
    Counts last;
    CUDA_CHECK(cudaMemcpyAsync(A.get(), a.data(), A.bytes(), cudaMemcpyHostToDevice, ctx.stream));
    CUDA_CHECK(cudaMemcpyAsync(B.get(), b.data(), B.bytes(), cudaMemcpyHostToDevice, ctx.stream));
    AnswerSample<double> s;
    s.C = C.get(), s.ldc = N, s.stride_c = 0, s.A = A.get(), s.lda = lda, s.stride_a = 0;
    s.B = B.get(), s.ldb = ldb, s.stride_b = 0, s.M = M, s.N = N, s.K = K, s.slots = 1;
    const ErrorBound bd = error_bound(true, InputPrecision::full);
    auto sample = [&](const std::vector<double>& values) {
        CUDA_CHECK(cudaMemcpyAsync(C.get(), values.data(), C.bytes(), cudaMemcpyHostToDevice, ctx.stream));
        CUDA_CHECK(cudaMemsetAsync(count.get(), 0, count.bytes(), ctx.stream));
        count_unanswered_sample(s, 41, 0, 64, bd.u, bd.threshold * kSampleSlack, bd.underflow_weight, count.get(),
                                count.get() + 1, ctx.stream);
        CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
        unsigned h[2] = {0, 0};
        CUDA_CHECK(cudaMemcpy(h, count.get(), sizeof h, cudaMemcpyDeviceToHost));
        last.poisoned = h[0], last.unanswered = h[1];
        return h[1];
    };
    CHECK(sample(c) == 0);
    std::vector<double> off = c;
    for (double& x : off) x += 1e-9;
    CHECK(sample(off) == 64);
    CHECK(last.poisoned == 0);
    double poison_value = 0;  // the judge's poison, bit for bit
    const uint64_t poison_bits = quiet_nan_bits64();
    std::memcpy(&poison_value, &poison_bits, sizeof poison_value);
    std::vector<double> poison(c.size(), poison_value);
    CHECK(sample(poison) == 64);
    CHECK(last.poisoned == 64);
}
