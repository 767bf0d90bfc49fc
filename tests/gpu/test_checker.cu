// GPU tests of the check engine, in-process: the naive stage passes on shapes that break naive
// tiling, stubs report "not implemented", planted errors are caught where they are.
#include <vector>

#include "child/checker.h"
#include "common/cuda_check.h"
#include "child/device_buffer.h"
#include "child/device_ops.h"
#include "gpu_test.h"
#include "common/shapes.h"
#include "common/sides.h"

using namespace gemmlab;

namespace {

Shape shape(int M, int N, int K, double alpha, double beta, int lda = 0, int ldb = 0, int ldc = 0) {
    Shape s;
    s.M = M, s.N = N, s.K = K, s.alpha = alpha, s.beta = beta, s.lda = lda, s.ldb = ldb, s.ldc = ldc;
    return s;
}

const StageInfo& stage(Side side, const char* name) {
    const StageInfo* s = find_stage(side, name);
    REQUIRE(s != nullptr);
    return *s;
}

}  // namespace

GPU_TEST_CASE("the naive stage passes against cuBLAS on odd shapes, both precisions") {
    GpuContext ctx(12345);
    const StageInfo& naive = stage(Side::submission, "naive");
    for (const Shape& s : {shape(1, 1, 1, 1.5, -0.75), shape(33, 31, 65, 1.0, 0.0), shape(129, 127, 131, -0.5, 1.0, 136, 130, 133),
                           shape(67, 45, 1, 2.0, 0.0), shape(1000, 8, 200, 1.5, -0.75)}) {
        CAPTURE(s.label());
        const CaseResult f = check_case<float>(ctx, naive.operands, naive.variants[0].fns<float>(), s);
        CHECK(f.disposition == Disposition::passed);
        CHECK(f.max_ratio < 8.0);
        const CaseResult d = check_case<double>(ctx, naive.operands, naive.variants[0].fns<double>(), s);
        CHECK(d.disposition == Disposition::passed);
        CHECK(d.max_ratio < 8.0);
    }
}

GPU_TEST_CASE("untouched stubs report not implemented") {
    GpuContext ctx(7);
    const Shape s = shape(33, 31, 17, 1.5, -0.75);
    for (const char* name : {"tiled", "unrolled", "pitched", "reuse", "tensor"}) {
        CAPTURE(name);
        const StageInfo& st = stage(Side::submission, name);
        const CaseResult r = check_case<float>(ctx, st.operands, st.variants[0].fns<float>(), s);
        CHECK(r.disposition == Disposition::not_implemented);
        CHECK(r.problem.find("not implemented") != std::string::npos);
    }
}

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
