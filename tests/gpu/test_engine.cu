// GPU tests of the check engine against stages planted here, in-process: each planted stage makes
// exactly one mistake, and the engine must call it by its name — the bound separates honest FP32
// from TF32/half inputs, guard bands catch stray writes and say where, NaN poison catches reads
// of C when beta == 0, input copies catch writes to A — and a full check at 4096³ takes well
// under a second. The real stages (the reference side) must pass every shape of the full set.
#include <cuda_fp16.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/bound.h"
#include "common/check_result.h"
#include "child/checker.h"
#include "common/cuda_check.h"
#include "gpu_test.h"
#include "common/shapes.h"
#include "common/sides.h"

using namespace gemmlab;

namespace {

constexpr int kBlockX = 32, kBlockY = 8;

// How a planted stage goes wrong.
enum class Plant { honest, tf32_inputs, half_inputs, reads_c_always, writes_before_c, writes_after_c, writes_into_a,
                   skips_last_element };

__device__ float round_to_tf32(float x) {
    constexpr unsigned kDropped = 13;  // float keeps 23 mantissa bits, TF32 10
    return __uint_as_float((__float_as_uint(x) + (1u << (kDropped - 1))) & ~((1u << kDropped) - 1));
}

template <typename T, Plant P>
__global__ void planted_kernel(GemmProblem<T> p) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= p.M || col >= p.N) return;
    if (P == Plant::skips_last_element && row == p.M - 1 && col == p.N - 1) return;
    T acc = T(0);
    for (int k = 0; k < p.K; ++k) {
        T a = p.A[row * p.lda + k], b = p.B[k * p.ldb + col];
        if (P == Plant::tf32_inputs) a = T(round_to_tf32(float(a))), b = T(round_to_tf32(float(b)));
        if (P == Plant::half_inputs) a = T(__half2float(__float2half_rn(float(a)))), b = T(__half2float(__float2half_rn(float(b))));
        acc += a * b;
    }
    T* c = &p.C[row * p.ldc + col];
    const bool read_c = P == Plant::reads_c_always || p.beta != T(0);
    *c = read_c ? p.alpha * acc + p.beta * *c : p.alpha * acc;
    if (row == 0 && col == 0) {
        if (P == Plant::writes_before_c) p.C[-1] = T(0);
        if (P == Plant::writes_after_c) p.C[p.M * p.ldc] = T(0);
        if (P == Plant::writes_into_a) const_cast<T*>(p.A)[0] = T(0);
    }
}

template <typename T, Plant P>
Status planted(const GemmProblem<T>& p) {
    const dim3 block(kBlockX, kBlockY), grid((p.N + kBlockX - 1) / kBlockX, (p.M + kBlockY - 1) / kBlockY);
    planted_kernel<T, P><<<grid, block, 0, p.stream>>>(p);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

template <typename T, Plant P>
StageFns<T> fns() { return {&planted<T, P>, nullptr, nullptr, nullptr}; }

Shape shape(int M, int N, int K, double alpha, double beta, int lda = 0, int ldb = 0, int ldc = 0) {
    Shape s;
    s.M = M, s.N = N, s.K = K, s.alpha = alpha, s.beta = beta, s.lda = lda, s.ldb = ldb, s.ldc = ldc;
    return s;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// cuBLAS SGEMM/DGEMM (pedantic: no TF32) as a stage: the fastest honest stage there is, so that
// timing a check measures the checker.
cublasHandle_t blas() {
    static cublasHandle_t h = [] {
        cublasHandle_t made;
        CUBLAS_CHECK(cublasCreate(&made));
        CUBLAS_CHECK(cublasSetMathMode(made, CUBLAS_PEDANTIC_MATH));
        return made;
    }();
    return h;
}
Status cublas_stage(const GemmProblem<float>& p) {
    cublasSetStream(blas(), p.stream);
    const bool ok = cublasSgemm(blas(), CUBLAS_OP_N, CUBLAS_OP_N, p.N, p.M, p.K, &p.alpha, p.B, p.ldb, p.A, p.lda,
                                &p.beta, p.C, p.ldc) == CUBLAS_STATUS_SUCCESS;
    return ok ? Status::ok : Status::cuda_error;
}

}  // namespace

GPU_TEST_CASE("honest FP32 stays far below the bound even at very long K; TF32 and half inputs fail") {
    GpuContext ctx(101);
    for (int K : {1, 64, 4096, 16411}) {
        CAPTURE(K);
        const Shape s = shape(96, 80, K, 1.5, -0.75);
        const CaseResult honest = check_case<float>(ctx, Operands::dense, fns<float, Plant::honest>(), s);
        CHECK(honest.disposition == Disposition::passed);
        CHECK(honest.max_ratio < kErrorThreshold / 4);
        for (const CaseResult& r : {check_case<float>(ctx, Operands::dense, fns<float, Plant::tf32_inputs>(), s),
                                    check_case<float>(ctx, Operands::dense, fns<float, Plant::half_inputs>(), s)}) {
            CHECK(r.disposition == Disposition::failed);
            CHECK(r.max_ratio > 3 * kErrorThreshold);
            CHECK(r.wrong > s.M * s.N / 5);  // not one unlucky element: a large share of C
        }
        MESSAGE("K=" << K << ": honest max " << honest.max_ratio << " u·G");
    }
    // DGEMM: the FP64 reference has rounding errors of the same size as the stage's; still far below.
    const CaseResult d = check_case<double>(ctx, Operands::dense, fns<double, Plant::honest>(), shape(64, 72, 16411, 1.5, -0.75));
    CHECK(d.disposition == Disposition::passed);
    CHECK(d.max_ratio < kErrorThreshold / 4);
    const CaseResult d_tf32 = check_case<double>(ctx, Operands::dense, fns<double, Plant::tf32_inputs>(), shape(64, 72, 1000, 1, 0));
    CHECK(d_tf32.disposition == Disposition::failed);
}

GPU_TEST_CASE("every real stage (the reference side) passes every shape of the full set") {
    GpuContext ctx(202);
    const std::vector<Shape> shapes = check_shapes(false, 202);
    for (const StageInfo& st : stages(Side::reference)) {
        for (const StageVariant& v : st.variants) {
            double worst_f = 0, worst_d = 0;
            // Each variant is held to its own bound (bound.h): 32 u·G, or more for 11-bit inputs.
            const ErrorBound bound_f = error_bound(Precision::f32, v), bound_d = error_bound(Precision::f64, v);
            for (const Shape& s : shapes) {
                CAPTURE(st.name);
                CAPTURE(v.label);
                CAPTURE(s.label());
                const CaseResult f = check_case<float>(ctx, st.operands, v.fns<float>(), s, bound_f);
                CHECK_MESSAGE(f.disposition == Disposition::passed, describe_failure(st.name, Precision::f32, f, {}));
                const CaseResult d = check_case<double>(ctx, st.operands, v.fns<double>(), s, bound_d);
                CHECK_MESSAGE(d.disposition == Disposition::passed, describe_failure(st.name, Precision::f64, d, {}));
                worst_f = std::max(worst_f, f.max_ratio), worst_d = std::max(worst_d, d.max_ratio);
            }
            const std::string run_label = std::string(st.name) + (v.label[0] ? "/" : "") + v.label;
            MESSAGE(run_label << ": worst " << worst_f << " u·G (float), "
                            << worst_d << " u·G (double)");
            // Full-precision arithmetic stays far below 32 u·G; 3xTF32 drops a_lo·b_lo and rounds the low
            // parts (up to ~9 u·G at K = 1, docs/correctness.md); rounded inputs stay below the part of
            // their bound that rounding to nearest can use (2·u_in of the 4·u_in allowed).
            if (bound_f.threshold > kErrorThreshold) CHECK(worst_f < bound_f.threshold / 2 + kErrorThreshold);
            else if (st.tensor_cores) CHECK(worst_f < kErrorThreshold / 2);
            else CHECK(worst_f < kErrorThreshold / 4);
            CHECK(worst_d < kErrorThreshold / 4);
        }
    }
}

GPU_TEST_CASE("NaN poison: a stage that reads C when beta == 0 fails every element, and only then") {
    GpuContext ctx(303);
    const Shape zero_beta = shape(33, 31, 17, 2.0, 0.0);
    const CaseResult r = check_case<float>(ctx, Operands::dense, fns<float, Plant::reads_c_always>(), zero_beta);
    CHECK(r.disposition == Disposition::failed);
    CHECK(r.wrong == 33 * 31);
    CHECK(std::isnan(r.worst.got));
    CHECK(contains(describe_failure("planted", Precision::f32, r, {}), "fills C with NaN"));
    const CaseResult ok = check_case<float>(ctx, Operands::dense, fns<float, Plant::reads_c_always>(), shape(33, 31, 17, 2.0, 0.5));
    CHECK(ok.disposition == Disposition::passed);
}

GPU_TEST_CASE("one element never written is found, named and drawn") {
    GpuContext ctx(404);
    const Shape s = shape(20, 30, 9, 1.0, 0.0, 0, 0, 37);
    const CaseResult r = check_case<double>(ctx, Operands::dense, fns<double, Plant::skips_last_element>(), s);
    CHECK(r.disposition == Disposition::failed);
    CHECK(r.wrong == 1);
    CHECK(r.worst.row == 19);
    CHECK(r.worst.col == 29);
    REQUIRE(r.picture.size() == 1 + 20);      // one character per element at this size
    CHECK(r.picture.back().back() == 'X');    // bottom right
    CHECK(r.picture[1].find('X') == std::string::npos);
}

GPU_TEST_CASE("guard bands: writes before C, after C and into A are out of bounds, with where") {
    GpuContext ctx(505);
    const Shape s = shape(17, 19, 5, 1.5, -0.75, 7, 23, 21);
    const CaseResult before = check_case<float>(ctx, Operands::dense, fns<float, Plant::writes_before_c>(), s);
    CHECK(before.disposition == Disposition::out_of_bounds);
    CHECK(before.oob_writes == 1);
    CHECK(contains(before.oob_first, "1 element(s) before C[0][0]"));
    const CaseResult after = check_case<double>(ctx, Operands::dense, fns<double, Plant::writes_after_c>(), s);
    CHECK(after.disposition == Disposition::out_of_bounds);
    CHECK(contains(after.oob_first, "row 17, column 0 (past the last row: M = 17)"));
    CHECK(contains(describe_failure("planted", Precision::f64, after, {}), "write(s) outside C"));
    const CaseResult into_a = check_case<float>(ctx, Operands::dense, fns<float, Plant::writes_into_a>(), s);
    CHECK(into_a.disposition == Disposition::out_of_bounds);
    CHECK(contains(into_a.problem, "wrote into its input A"));
}

GPU_TEST_CASE("a check at 4096^3 takes well under a second (the checker, with cuBLAS as the stage)") {
    GpuContext ctx(606);
    const StageFns<float> fast{&cublas_stage, nullptr, nullptr, nullptr};
    const Shape warm = shape(256, 256, 256, 1, 0), big = shape(4096, 4096, 4096, 1.5, -0.75);
    check_case<float>(ctx, Operands::dense, fast, warm);  // first-use costs: module loading, cuBLAS heuristics
    const auto t0 = std::chrono::steady_clock::now();
    const CaseResult r = check_case<float>(ctx, Operands::dense, fast, big);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    MESSAGE("4096^3 float check: " << took << " s, worst " << r.max_ratio << " u·G");
    CHECK(r.disposition == Disposition::passed);
    CHECK(took < 0.5);
}
