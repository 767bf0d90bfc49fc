// GPU tests of the judge's own device operations, in the judge's context: canaries, the comparison
// that decides correctness, the GPU's clock and the sample of unwritten elements.
#include <cmath>
#include <vector>

#include "common/cuda_check.h"
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

GPU_TEST_CASE("the sample check counts poison left in C, and only poison") {
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
