// reference/tuning/ladder.cu — the instructor's ladder: checks and times every stage of the
// registry (gemmlab/stages.h) as built from reference/*.cu, against cuBLAS, in one run.
//
// This is an instructor tool, not the grader. It links the reference stage files compiled
// normally (namespace gemmlab::submission), walks gemmlab::submission::stage_table() — stages are
// never listed by hand here — and for each stage, variant and precision:
//   1. checks it on odd shapes (fresh uniform [-1,1) data, random nonzero C, several alpha/beta
//      including beta = 0 with C = NaN, leading dimensions larger than the widths, NaN in the
//      padding of A and B, a canary in the padding of C) against cuBLAS DGEMM on the inputs
//      converted to double. Bound: max |C - Cref| / (u·G) <= 32, G = |alpha||A||B| + |beta||C|
//      elementwise, u the unit roundoff of the type — or the wider bound of a variant that declares
//      TF32 or FP16 inputs, from the grader's own grader/src/common/bound.h (one place for both).
//      Operands of pitched stages are built with the
//      stage's own pitched_alloc/pitched_upload/pitched_download, like the grader does.
//   2. times it (CUDA events, 3 warm-ups, median of >= 10) at several shapes, interleaved call by
//      call with cuBLAS (SGEMM with CUBLAS_PEDANTIC_MATH: true FP32, no TF32; DGEMM), and reports
//      GFLOPS and % of cuBLAS.
// Built with -DGEMMLAB_TUNE, the stage files also export tuning candidates (other tile shapes,
// see reference/tuning/candidates.h); --tune checks and times them next to the stages.
//
// Build (from the repository root) and run:  reference/tuning/run.sh [options]   (see README.md)
//   nvcc -std=c++17 -O3 -arch=sm_90 -Igrader/include -Igrader/src -Xcompiler -Wall,-Wextra -Xptxas -v
//        reference/*.cu reference/tuning/ladder.cu -lcublas -o /tmp/ladder
#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/bound.h"
#include "gemmlab/stages.h"

#ifdef GEMMLAB_TUNE
#include "candidates.h"
#endif

namespace {

using gemmlab::GemmFn;
using gemmlab::InputPrecision;
using gemmlab::GemmProblem;
using gemmlab::Operands;
using gemmlab::PitchedMatrix;
using gemmlab::StageFns;
using gemmlab::Status;

#define CUDA_CHECK(call)                                                                   \
    do {                                                                                   \
        cudaError_t err_ = (call);                                                         \
        if (err_ != cudaSuccess) {                                                         \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,      \
                         cudaGetErrorString(err_));                                        \
            std::exit(2);                                                                  \
        }                                                                                  \
    } while (0)
#define CUBLAS_CHECK(call)                                                                 \
    do {                                                                                   \
        cublasStatus_t st_ = (call);                                                       \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                                \
            std::fprintf(stderr, "%s:%d: %s failed: status %d\n", __FILE__, __LINE__, #call, \
                         static_cast<int>(st_));                                           \
            std::exit(2);                                                                  \
        }                                                                                  \
    } while (0)

const char* status_name(Status s) {
    switch (s) {
        case Status::ok: return "ok";
        case Status::not_implemented: return "not_implemented";
        case Status::unsupported: return "unsupported";
        case Status::cuda_error: return "cuda_error";
    }
    return "?";
}

template <typename T> const char* prec_name();
template <> const char* prec_name<float>() { return "f32"; }
template <> const char* prec_name<double>() { return "f64"; }

// ---- what runs: registry stages, plus tuning candidates --------------------------------------

template <typename T>
struct Entry {
    std::string stage, variant;
    Operands operands;
    StageFns<T> fns;
    bool candidate;
    InputPrecision inputs = InputPrecision::full;  // what the float version rounds A and B to
    std::string name() const {
        std::string n = stage;
        if (!variant.empty()) n += (candidate ? " [" : "/") + variant + (candidate ? "]" : "");
        return n;
    }
};

template <typename T>
std::vector<Entry<T>> collect_entries(bool with_candidates) {
    std::vector<Entry<T>> out;
    const auto table = gemmlab::submission::stage_table();
    for (const auto& s : table)
        for (const auto& v : s.variants)
            out.push_back({s.name, v.label, s.operands, v.template fns<T>(), false, v.float_inputs});
#ifdef GEMMLAB_TUNE
    if (with_candidates) {
        std::vector<gemmlab::submission::tuning::Candidate<float>> f32;
        std::vector<gemmlab::submission::tuning::Candidate<double>> f64;
        gemmlab::submission::tiled_candidates(f32, f64);
        gemmlab::submission::unrolled_candidates(f32, f64);
        gemmlab::submission::pitched_candidates(f32, f64);
        gemmlab::submission::reuse_candidates(f32, f64);
        gemmlab::submission::tensor_candidates(f32, f64);
        auto add = [&](const auto& list) {
            for (const auto& c : list) {
                // A candidate runs on the operands of the stage it could replace.
                for (const auto& s : table) {
                    if (std::string(s.name) != c.stage) continue;
                    StageFns<T> fns = s.variants.front().template fns<T>();
                    fns.gemm = c.fn;
                    out.push_back({s.name, c.label, s.operands, fns, true, c.inputs});
                }
            }
        };
        if constexpr (sizeof(T) == 4) add(f32); else add(f64);
    }
#else
    (void)with_candidates;
#endif
    return out;
}

// ---- device helpers -------------------------------------------------------------------------

__global__ void fill_uniform_kernel(float* p, size_t n, uint64_t seed) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
        x ^= x >> 30; x *= 0xBF58476D1CE4E5B9ull; x ^= x >> 27; x *= 0x94D049BB133111EBull; x ^= x >> 31;
        p[i] = static_cast<float>((x >> 40) * (1.0 / 16777216.0) * 2.0 - 1.0);
    }
}
__global__ void fill_uniform_kernel(double* p, size_t n, uint64_t seed) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
        x ^= x >> 30; x *= 0xBF58476D1CE4E5B9ull; x ^= x >> 27; x *= 0x94D049BB133111EBull; x ^= x >> 31;
        p[i] = static_cast<double>(x >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;
    }
}
template <typename T>
void fill_uniform(T* p, size_t n, uint64_t seed) {
    fill_uniform_kernel<<<1024, 256>>>(p, n, seed);
    CUDA_CHECK(cudaGetLastError());
}

template <typename T>
struct DeviceBuffer {
    T* p = nullptr;
    size_t n = 0;
    explicit DeviceBuffer(size_t count) : n(count) { CUDA_CHECK(cudaMalloc(&p, std::max<size_t>(count, 1) * sizeof(T))); }
    ~DeviceBuffer() { cudaFree(p); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// Row-major C = alpha·A·B + beta·C through column-major cuBLAS: C^T = B^T·A^T.
void blas_gemm(cublasHandle_t h, int M, int N, int K, float alpha, const float* A, int lda,
               const float* B, int ldb, float beta, float* C, int ldc) {
    CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, ldb, A, lda, &beta, C, ldc));
}
void blas_gemm(cublasHandle_t h, int M, int N, int K, double alpha, const double* A, int lda,
               const double* B, int ldb, double beta, double* C, int ldc) {
    CUBLAS_CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, ldb, A, lda, &beta, C, ldc));
}

// Every copy goes through the stream the stages and cuBLAS run on, and waits for it: a plain
// cudaMemcpy runs on the legacy default stream, which does not order itself with a non-blocking
// stream (and from pageable memory may return before the data has landed).
void copy_sync(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
}

// ---- correctness -------------------------------------------------------------------------------

struct CheckShape { int M, N, K; };
struct CheckParams { double alpha, beta; int pad_a, pad_b, pad_c; };

const std::vector<CheckShape> kCheckShapes = {
    {1, 1, 1},      {2, 3, 5},       {31, 33, 17},    {33, 31, 127},    {127, 129, 33},
    {129, 127, 257}, {128, 128, 128}, {256, 128, 64},  {4097, 129, 65},  {1000, 8, 2000},
    {8, 3000, 16},  {17, 1, 300},    {1, 300, 17},    {300, 300, 1},    {513, 1027, 259},
    {1537, 1665, 333}, {2048, 2048, 2048},
    // Big enough for the stream-K schedule of the last wave (reuse.cu, StreamK) on 132 SMs: 289
    // tiles of 128×256 with edges and a partial slab, and 4096³ (512 tiles).
    {2100, 4100, 1000}, {4096, 4096, 4096},
};
const std::vector<CheckParams> kCheckParams = {
    {1.0, 0.0, 0, 0, 0},     // beta = 0 (C holds NaN), tight leading dimensions
    {1.5, 0.5, 3, 1, 5},     // misaligned rows everywhere
    {-0.75, 1.0, 4, 4, 4},   // padded but aligned when the widths are multiples of 4
    {2.0, 0.0, 1, 3, 2},     // beta = 0 with padding
};

struct CheckResult {
    int cases = 0, failures = 0;
    double worst = 0;
    std::string first_failure;
};

// One check case: host data (with NaN padding in A/B and a canary in C's padding) and the FP64
// reference, shared by every stage that is checked on it.
template <typename T>
struct CheckCase {
    int M, N, K, lda, ldb, ldc;
    T alpha, beta;
    std::vector<T> A, B, C;      // with leading dimensions lda, ldb, ldc
    std::vector<double> ref, G;  // M×N, dense
    std::vector<double> row_abs, col_abs;  // Σ_k |A[i][k]| and Σ_k |B[k][j]|: bound.h's underflow term
};


template <typename T>
T canary() { return T(777.25); }

template <typename T>
CheckCase<T> make_case(const CheckShape& s, const CheckParams& prm, std::mt19937_64& rng,
                       cublasHandle_t blas, cudaStream_t stream) {
    CheckCase<T> c;
    c.M = s.M; c.N = s.N; c.K = s.K;
    c.lda = s.K + prm.pad_a; c.ldb = s.N + prm.pad_b; c.ldc = s.N + prm.pad_c;
    c.alpha = T(prm.alpha); c.beta = T(prm.beta);
    std::uniform_real_distribution<double> U(-1.0, 1.0);
    const T nan = std::numeric_limits<T>::quiet_NaN();
    c.A.assign(size_t(c.M) * c.lda, nan);
    c.B.assign(size_t(c.K) * c.ldb, nan);
    c.C.assign(size_t(c.M) * c.ldc, canary<T>());
    for (int i = 0; i < c.M; ++i)
        for (int k = 0; k < c.K; ++k) c.A[size_t(i) * c.lda + k] = T(U(rng));
    for (int k = 0; k < c.K; ++k)
        for (int j = 0; j < c.N; ++j) c.B[size_t(k) * c.ldb + j] = T(U(rng));
    for (int i = 0; i < c.M; ++i)
        for (int j = 0; j < c.N; ++j) {
            double v = U(rng);
            if (v == 0.0) v = 0.5;  // random nonzero C
            c.C[size_t(i) * c.ldc + j] = (prm.beta == 0.0) ? nan : T(v);
        }

    // Reference in FP64 on the inputs as stored (converted exactly to double): dense copies.
    const size_t mk = size_t(c.M) * c.K, kn = size_t(c.K) * c.N, mn = size_t(c.M) * c.N;
    std::vector<double> a(mk), b(kn), cc(mn), aa(mk), ab(kn), ac(mn);
    for (int i = 0; i < c.M; ++i)
        for (int k = 0; k < c.K; ++k) {
            a[size_t(i) * c.K + k] = double(c.A[size_t(i) * c.lda + k]);
            aa[size_t(i) * c.K + k] = std::fabs(a[size_t(i) * c.K + k]);
        }
    for (int k = 0; k < c.K; ++k)
        for (int j = 0; j < c.N; ++j) {
            b[size_t(k) * c.N + j] = double(c.B[size_t(k) * c.ldb + j]);
            ab[size_t(k) * c.N + j] = std::fabs(b[size_t(k) * c.N + j]);
        }
    for (int i = 0; i < c.M; ++i)
        for (int j = 0; j < c.N; ++j) {
            cc[size_t(i) * c.N + j] = (prm.beta == 0.0) ? 0.0 : double(c.C[size_t(i) * c.ldc + j]);
            ac[size_t(i) * c.N + j] = std::fabs(cc[size_t(i) * c.N + j]);
        }
    DeviceBuffer<double> dA(mk), dB(kn), dC(mn);
    auto run = [&](const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& z,
                   double alpha, double beta, std::vector<double>& out) {
        copy_sync(dA.p, x.data(), mk * sizeof(double), stream);
        copy_sync(dB.p, y.data(), kn * sizeof(double), stream);
        copy_sync(dC.p, z.data(), mn * sizeof(double), stream);
        blas_gemm(blas, c.M, c.N, c.K, alpha, dA.p, c.K, dB.p, c.N, beta, dC.p, c.N);
        out.resize(mn);
        copy_sync(out.data(), dC.p, mn * sizeof(double), stream);
    };
    run(a, b, cc, double(c.alpha), double(c.beta), c.ref);
    run(aa, ab, ac, std::fabs(double(c.alpha)), std::fabs(double(c.beta)), c.G);
    c.row_abs.assign(c.M, 0.0);
    c.col_abs.assign(c.N, 0.0);
    for (int i = 0; i < c.M; ++i)
        for (int k = 0; k < c.K; ++k) c.row_abs[i] += aa[size_t(i) * c.K + k];
    for (int k = 0; k < c.K; ++k)
        for (int j = 0; j < c.N; ++j) c.col_abs[j] += ab[size_t(k) * c.N + j];
    for (size_t i = 0; i < mn; ++i) {  // the harness checks itself: |ref| <= G up to rounding
        if (!(std::fabs(c.ref[i]) <= c.G[i] * (1 + 1e-12))) {
            std::fprintf(stderr, "harness error: |ref| = %g > G = %g at element %zu (M=%d N=%d K=%d)\n",
                         std::fabs(c.ref[i]), c.G[i], i, c.M, c.N, c.K);
            std::exit(4);
        }
    }
    return c;
}

// Runs one entry on one case; returns the worst ratio (inf on NaN, wrong padding or error).
template <typename T>
double check_one(const Entry<T>& e, const CheckCase<T>& c, cudaStream_t stream, std::string& why) {
    std::vector<T> got(size_t(c.M) * c.ldc), got2;
    bool padding_intact = true;

    auto run_twice = [&](auto&& launch, auto&& fetch) -> bool {
        Status s = launch();
        if (s != Status::ok) { why = std::string("returned ") + status_name(s); return false; }
        CUDA_CHECK(cudaStreamSynchronize(stream));
        cudaError_t err = cudaGetLastError();
        if (err != cudaSuccess) { why = std::string("CUDA error: ") + cudaGetErrorString(err); std::exit(3); }
        fetch(got);
        if (c.beta == T(0)) {  // same inputs again: a deterministic kernel gives the same bits
            s = launch();
            if (s != Status::ok) { why = std::string("returned ") + status_name(s); return false; }
            CUDA_CHECK(cudaStreamSynchronize(stream));
            got2.resize(got.size());
            fetch(got2);
        }
        return true;
    };

    if (e.operands == Operands::dense) {
        DeviceBuffer<T> dA(c.A.size()), dB(c.B.size()), dC(c.C.size());
        copy_sync(dA.p, c.A.data(), c.A.size() * sizeof(T), stream);
        copy_sync(dB.p, c.B.data(), c.B.size() * sizeof(T), stream);
        auto launch = [&]() {
            copy_sync(dC.p, c.C.data(), c.C.size() * sizeof(T), stream);
            GemmProblem<T> p;
            p.M = c.M; p.N = c.N; p.K = c.K; p.alpha = c.alpha; p.beta = c.beta;
            p.A = dA.p; p.lda = c.lda; p.B = dB.p; p.ldb = c.ldb; p.C = dC.p; p.ldc = c.ldc;
            p.stream = stream;
            return e.fns.gemm(p);
        };
        auto fetch = [&](std::vector<T>& out) {
            copy_sync(out.data(), dC.p, c.C.size() * sizeof(T), stream);
        };
        if (!run_twice(launch, fetch)) return INFINITY;
    } else {
        PitchedMatrix<T> pA, pB, pC;
        Status s1 = e.fns.alloc(&pA, c.M, c.K), s2 = e.fns.alloc(&pB, c.K, c.N), s3 = e.fns.alloc(&pC, c.M, c.N);
        if (s1 != Status::ok || s2 != Status::ok || s3 != Status::ok) { why = "pitched_alloc failed"; return INFINITY; }
        // Fill every byte (padding included) with 0xFF: NaN for float and double.
        CUDA_CHECK(cudaMemsetAsync(pA.data, 0xFF, pA.pitch_bytes * c.M, stream));
        CUDA_CHECK(cudaMemsetAsync(pB.data, 0xFF, pB.pitch_bytes * c.K, stream));
        if (e.fns.upload(pA, c.A.data(), c.lda, stream) != Status::ok ||
            e.fns.upload(pB, c.B.data(), c.ldb, stream) != Status::ok) { why = "pitched_upload failed"; return INFINITY; }
        auto launch = [&]() {
            CUDA_CHECK(cudaMemsetAsync(pC.data, 0xFF, pC.pitch_bytes * c.M, stream));
            if (e.fns.upload(pC, c.C.data(), c.ldc, stream) != Status::ok) return Status::cuda_error;
            GemmProblem<T> p;
            p.M = c.M; p.N = c.N; p.K = c.K; p.alpha = c.alpha; p.beta = c.beta;
            p.A = pA.data; p.lda = int(pA.pitch_bytes / sizeof(T));
            p.B = pB.data; p.ldb = int(pB.pitch_bytes / sizeof(T));
            p.C = pC.data; p.ldc = int(pC.pitch_bytes / sizeof(T));
            p.stream = stream;
            return e.fns.gemm(p);
        };
        auto fetch = [&](std::vector<T>& out) {
            std::fill(out.begin(), out.end(), canary<T>());
            if (e.fns.download(out.data(), c.ldc, pC, stream) != Status::ok) { why = "pitched_download failed"; }
            CUDA_CHECK(cudaStreamSynchronize(stream));
            // The padding of C (bytes from N*sizeof(T) to the pitch) must still be 0xFF.
            std::vector<unsigned char> raw(pC.pitch_bytes * c.M);
            copy_sync(raw.data(), pC.data, raw.size(), stream);
            for (int i = 0; i < c.M && padding_intact; ++i)
                for (size_t b = size_t(c.N) * sizeof(T); b < pC.pitch_bytes; ++b)
                    if (raw[size_t(i) * pC.pitch_bytes + b] != 0xFF) { padding_intact = false; break; }
        };
        bool ok = run_twice(launch, fetch);
        cudaFree(pA.data); cudaFree(pB.data); cudaFree(pC.data);
        if (!ok) return INFINITY;
        if (!why.empty()) return INFINITY;
    }

    if (!padding_intact) { why = "wrote into the padding of pitched C"; return INFINITY; }
    const gemmlab::ErrorBound bound = gemmlab::error_bound(sizeof(T) == 8, e.inputs);
    const double u = bound.u;
    double worst = 0;
    for (int i = 0; i < c.M; ++i) {
        for (int j = 0; j < c.ldc; ++j) {
            const T v = got[size_t(i) * c.ldc + j];
            if (j >= c.N) {  // padding of C: must hold the canary, bit for bit
                if (std::memcmp(&v, &c.C[size_t(i) * c.ldc + j], sizeof(T)) != 0) {
                    why = "wrote C(" + std::to_string(i) + "," + std::to_string(j) + ") past N";
                    return INFINITY;
                }
                continue;
            }
            if (!got2.empty() && std::memcmp(&v, &got2[size_t(i) * c.ldc + j], sizeof(T)) != 0) {
                why = "two runs on the same inputs differ at (" + std::to_string(i) + "," + std::to_string(j) + "): a race?";
                return INFINITY;
            }
            const double r = c.ref[size_t(i) * c.N + j],
                         g = c.G[size_t(i) * c.N + j] +
                             bound.underflow_weight * std::fabs(double(c.alpha)) * (c.row_abs[i] + c.col_abs[j]);
            const double err = std::fabs(double(v) - r);
            double ratio = (g > 0) ? err / (u * g) : (err == 0 ? 0 : INFINITY);
            if (std::isnan(double(v))) ratio = INFINITY;
            if (ratio > worst) {
                worst = ratio;
                if (ratio > bound.threshold && why.empty()) {
                    char buf[256];
                    std::snprintf(buf, sizeof buf, "C(%d,%d) = %.9g, expected %.9g, |err|/(u·G) = %.3g > %.0f", i,
                                  j, double(v), r, ratio, bound.threshold);
                    why = buf;
                }
            }
        }
    }
    return worst;
}

template <typename T>
void run_checks(const std::vector<Entry<T>>& entries, std::vector<CheckResult>& results,
                cublasHandle_t blas, cudaStream_t stream, uint64_t seed) {
    std::mt19937_64 rng(seed ^ (sizeof(T) * 0x51ED2701ull));
    results.assign(entries.size(), CheckResult{});
    for (const auto& s : kCheckShapes) {
        for (const auto& prm : kCheckParams) {
            const CheckCase<T> c = make_case<T>(s, prm, rng, blas, stream);  // fresh data for every case
            for (size_t i = 0; i < entries.size(); ++i) {
                std::string why;
                const double w = check_one(entries[i], c, stream, why);
                CheckResult& r = results[i];
                ++r.cases;
                r.worst = std::max(r.worst, w);
                if (!(w <= gemmlab::error_bound(sizeof(T) == 8, entries[i].inputs).threshold) || !why.empty()) {
                    ++r.failures;
                    if (r.first_failure.empty()) {
                        char buf[160];
                        std::snprintf(buf, sizeof buf, "M=%d N=%d K=%d lda=%d ldb=%d ldc=%d alpha=%g beta=%g: ", c.M,
                                      c.N, c.K, c.lda, c.ldb, c.ldc, double(c.alpha), double(c.beta));
                        r.first_failure = buf + why;
                    }
                }
            }
        }
    }
    for (size_t i = 0; i < entries.size(); ++i) {
        const CheckResult& r = results[i];
        std::printf("check %-4s %-44s %3d cases  worst |err|/(u·G) = %8.3f (bound %.0f)  %s\n", prec_name<T>(),
                    entries[i].name().c_str(), r.cases, r.worst,
                    gemmlab::error_bound(sizeof(T) == 8, entries[i].inputs).threshold, r.failures ? "FAILED" : "passed");
        if (r.failures) std::printf("      %d failing case(s); first: %s\n", r.failures, r.first_failure.c_str());
    }
    std::fflush(stdout);
}

// ---- timing ------------------------------------------------------------------------------------

struct TimeShape { int M, N, K; };

struct Timing {
    double ms = 0, blas_ms = 0;
    bool ok = false;
    std::string note;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

template <typename T>
Timing time_one(const Entry<T>& e, const TimeShape& s, const T* dA, const T* dB, T* dC, T* dCblas,
                cublasHandle_t blas, cudaStream_t stream, int warmups, int reps) {
    Timing t;
    const T alpha = T(1.5), beta = T(0.5);
    GemmProblem<T> p;
    p.M = s.M; p.N = s.N; p.K = s.K; p.alpha = alpha; p.beta = beta; p.stream = stream;
    PitchedMatrix<T> pA, pB, pC;
    if (e.operands == Operands::dense) {
        p.A = dA; p.lda = s.K; p.B = dB; p.ldb = s.N; p.C = dC; p.ldc = s.N;
    } else {
        if (e.fns.alloc(&pA, s.M, s.K) != Status::ok || e.fns.alloc(&pB, s.K, s.N) != Status::ok ||
            e.fns.alloc(&pC, s.M, s.N) != Status::ok) {
            t.note = "pitched_alloc failed";
            return t;
        }
        e.fns.upload(pA, dA, s.K, stream);
        e.fns.upload(pB, dB, s.N, stream);
        e.fns.upload(pC, dC, s.N, stream);
        p.A = pA.data; p.lda = int(pA.pitch_bytes / sizeof(T));
        p.B = pB.data; p.ldb = int(pB.pitch_bytes / sizeof(T));
        p.C = pC.data; p.ldc = int(pC.pitch_bytes / sizeof(T));
    }
    auto blas_call = [&]() { blas_gemm(blas, s.M, s.N, s.K, alpha, dA, s.K, dB, s.N, beta, dCblas, s.N); };
    Status st = Status::ok;
    for (int w = 0; w < warmups && st == Status::ok; ++w) {
        blas_call();
        st = e.fns.gemm(p);
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    if (st != Status::ok) {
        t.note = std::string("returned ") + status_name(st);
    } else {
        // Interleaved cuBLAS, stage, cuBLAS, stage, ... queued back to back with no wait between:
        // each call's host-side work (cuBLAS's takes 20 to 120 µs before its kernel starts) overlaps
        // the GPU work before it, so both times are the GPU's time of the kernels. One untimed stage
        // call first keeps the GPU busy when the first cuBLAS call is queued.
        std::vector<cudaEvent_t> ev(4 * size_t(reps));
        for (auto& x : ev) CUDA_CHECK(cudaEventCreate(&x));
        e.fns.gemm(p);
        for (int r = 0; r < reps; ++r) {
            CUDA_CHECK(cudaEventRecord(ev[4 * r + 0], stream));
            blas_call();
            CUDA_CHECK(cudaEventRecord(ev[4 * r + 1], stream));
            CUDA_CHECK(cudaEventRecord(ev[4 * r + 2], stream));
            e.fns.gemm(p);
            CUDA_CHECK(cudaEventRecord(ev[4 * r + 3], stream));
        }
        CUDA_CHECK(cudaStreamSynchronize(stream));
        std::vector<double> mine, theirs;
        for (int r = 0; r < reps; ++r) {
            float a = 0, b = 0;
            CUDA_CHECK(cudaEventElapsedTime(&a, ev[4 * r + 0], ev[4 * r + 1]));
            CUDA_CHECK(cudaEventElapsedTime(&b, ev[4 * r + 2], ev[4 * r + 3]));
            theirs.push_back(a);
            mine.push_back(b);
        }
        for (auto& x : ev) CUDA_CHECK(cudaEventDestroy(x));
        CUDA_CHECK(cudaGetLastError());
        t.ms = median(mine);
        t.blas_ms = median(theirs);
        t.ok = true;
    }
    if (e.operands == Operands::pitched) {
        cudaFree(pA.data); cudaFree(pB.data); cudaFree(pC.data);
    }
    return t;
}

// ---- command line ------------------------------------------------------------------------------

struct Options {
    bool check = true, time = true, tune = false, f32 = true, f64 = true;
    bool time_failed = false;  // time entries that failed the check too (for diagnosis only)
    int warmups = 3, reps = 10;
    double max_call_ms = 3000;  // entries slower than this per call are not timed at that shape
    std::vector<std::string> stages;  // empty: all
    std::vector<std::string> only;  // keep entries whose name contains one of these
    std::vector<TimeShape> shapes = {{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096},
                                     {4093, 4093, 4093}, {8192, 8192, 8192}, {8192, 8192, 256},
                                     {16384, 64, 4096}};
    uint64_t seed = 20261121;
};

void usage() {
    std::printf(
        "usage: ladder [--no-check] [--no-time] [--tune] [--time-failed] [--prec f32|f64] [--stages a,b,...] [--only w,...]\n"
        "              [--shapes MxNxK,...] [--reps N] [--warmups N] [--max-call-ms X] [--seed S]\n"
        "  --tune        also check and time the tuning candidates (needs -DGEMMLAB_TUNE)\n"
        "  --time-failed time entries even when their check failed (their numbers are marked)\n"
        "  --stages      registry names to run (e.g. reuse,pitched); default: all\n"
        "  --only        entries whose name contains one of these words (e.g. wgmma,3xtf32)\n");
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    size_t b = 0;
    while (b <= s.size()) {
        size_t e = s.find(sep, b);
        if (e == std::string::npos) e = s.size();
        if (e > b) out.push_back(s.substr(b, e - b));
        b = e + 1;
    }
    return out;
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) { usage(); std::exit(1); }
            return argv[++i];
        };
        if (a == "--no-check") o.check = false;
        else if (a == "--no-time") o.time = false;
        else if (a == "--tune") o.tune = true;
        else if (a == "--time-failed") o.time_failed = true;
        else if (a == "--prec") { const std::string p = next(); o.f32 = (p == "f32"); o.f64 = (p == "f64"); }
        else if (a == "--stages") o.stages = split(next(), ',');
        else if (a == "--only") o.only = split(next(), ',');
        else if (a == "--shapes") {
            o.shapes.clear();
            for (const auto& t : split(next(), ',')) {
                TimeShape s{};
                if (std::sscanf(t.c_str(), "%dx%dx%d", &s.M, &s.N, &s.K) != 3) { usage(); std::exit(1); }
                o.shapes.push_back(s);
            }
        } else if (a == "--reps") o.reps = std::max(10, std::atoi(next().c_str()));
        else if (a == "--warmups") o.warmups = std::max(1, std::atoi(next().c_str()));
        else if (a == "--max-call-ms") o.max_call_ms = std::atof(next().c_str());
        else if (a == "--seed") o.seed = std::strtoull(next().c_str(), nullptr, 10);
        else { usage(); std::exit(a == "--help" || a == "-h" ? 0 : 1); }
    }
#ifndef GEMMLAB_TUNE
    if (o.tune) {
        std::fprintf(stderr, "--tune needs a build with -DGEMMLAB_TUNE; ignoring it\n");
        o.tune = false;
    }
#endif
    return o;
}

template <typename T>
std::vector<Entry<T>> selected_entries(const Options& o) {
    std::vector<Entry<T>> all = collect_entries<T>(o.tune), out;
    for (auto& e : all) {
        if (!o.stages.empty() && std::find(o.stages.begin(), o.stages.end(), e.stage) == o.stages.end()) continue;
        if (!o.only.empty() && std::none_of(o.only.begin(), o.only.end(), [&](const std::string& w) {
                return e.name().find(w) != std::string::npos;
            }))
            continue;
        out.push_back(e);
    }
    return out;
}

struct Row {
    std::string name, prec;
    std::vector<std::string> cells;
};

template <typename T>
void run_precision(const Options& o, cublasHandle_t blas, cudaStream_t stream, std::vector<Row>& summary) {
    const std::vector<Entry<T>> entries = selected_entries<T>(o);
    std::vector<CheckResult> checks;
    if (o.check) run_checks(entries, checks, blas, stream, o.seed);
    if (!o.time) return;

    std::vector<Row> rows(entries.size() + 1);
    rows[0].name = std::string("cuBLAS ") + (sizeof(T) == 4 ? "SGEMM (pedantic FP32)" : "DGEMM");
    rows[0].prec = prec_name<T>();
    for (size_t i = 0; i < entries.size(); ++i) {
        rows[i + 1].name = entries[i].name();
        rows[i + 1].prec = prec_name<T>();
    }
    std::vector<bool> too_slow(entries.size(), false);
    for (const auto& s : o.shapes) {
        const size_t na = size_t(s.M) * s.K, nb = size_t(s.K) * s.N, nc = size_t(s.M) * s.N;
        DeviceBuffer<T> dA(na), dB(nb), dC(nc), dCblas(nc);
        fill_uniform(dA.p, na, o.seed + 1);
        fill_uniform(dB.p, nb, o.seed + 2);
        fill_uniform(dC.p, nc, o.seed + 3);
        copy_sync(dCblas.p, dC.p, nc * sizeof(T), stream);
        CUDA_CHECK(cudaDeviceSynchronize());
        const double flop = 2.0 * s.M * s.N * double(s.K);
        std::vector<double> blas_all;
        for (size_t i = 0; i < entries.size(); ++i) {
            const bool failed = o.check && checks[i].failures > 0 && !o.time_failed;
            std::string cell;
            if (failed) {
                cell = "failed check";
            } else if (too_slow[i]) {
                cell = "(slow)";
            } else {
                const Timing t = time_one(entries[i], s, dA.p, dB.p, dC.p, dCblas.p, blas, stream, o.warmups, o.reps);
                if (!t.ok) {
                    cell = t.note;
                } else {
                    const double gf = flop / (t.ms * 1e6), bgf = flop / (t.blas_ms * 1e6);
                    blas_all.push_back(bgf);
                    char buf[64];
                    std::snprintf(buf, sizeof buf, "%.0f (%.1f%%)%s", gf, 100.0 * gf / bgf,
                                  (o.check && checks[i].failures > 0) ? " FAILED-CHECK" : "");
                    cell = buf;
                    std::printf("time  %-4s %-44s %5dx%5dx%5d  %9.3f ms  %8.0f GFLOPS  cuBLAS %8.0f GFLOPS  %6.1f%%\n",
                                prec_name<T>(), entries[i].name().c_str(), s.M, s.N, s.K, t.ms, gf, bgf,
                                100.0 * gf / bgf);
                    std::fflush(stdout);
                    if (t.ms > o.max_call_ms) too_slow[i] = true;  // skip larger shapes
                }
            }
            rows[i + 1].cells.push_back(cell);
        }
        char buf[64];
        if (blas_all.empty()) std::snprintf(buf, sizeof buf, "-");
        else std::snprintf(buf, sizeof buf, "%.0f", median(blas_all));
        rows[0].cells.push_back(buf);
    }
    for (auto& r : rows) summary.push_back(r);
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    int dev = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    int clock_khz = 0, mem_clock_khz = 0;
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev);
    cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, dev);
    int rt = 0, drv = 0;
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    std::printf("GEMM Lab ladder — %s, %d SMs, sm_%d%d, max SM clock %d MHz, L2 %d MB, runtime %d, driver %d%s\n",
                prop.name, prop.multiProcessorCount, prop.major, prop.minor, clock_khz / 1000,
                prop.l2CacheSize >> 20, rt, drv, o.tune ? ", with tuning candidates" : "");

    cublasHandle_t blas;
    CUBLAS_CHECK(cublasCreate(&blas));
    CUBLAS_CHECK(cublasSetMathMode(blas, CUBLAS_PEDANTIC_MATH));  // true FP32: no TF32
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasSetStream(blas, stream));

    std::vector<Row> summary;
    if (o.f32) run_precision<float>(o, blas, stream, summary);
    if (o.f64) run_precision<double>(o, blas, stream, summary);

    if (o.time && !summary.empty()) {
        std::printf("\nGFLOPS (%% of cuBLAS, timed interleaved in this run), median of %d after %d warm-ups, alpha=1.5 beta=0.5\n\n",
                    o.reps, o.warmups);
        std::printf("| stage | prec |");
        for (const auto& s : o.shapes) std::printf(" %dx%dx%d |", s.M, s.N, s.K);
        std::printf("\n|---|---|");
        for (size_t i = 0; i < o.shapes.size(); ++i) std::printf("---:|");
        std::printf("\n");
        for (const auto& r : summary) {
            std::printf("| %s | %s |", r.name.c_str(), r.prec.c_str());
            for (const auto& c : r.cells) std::printf(" %s |", c.c_str());
            std::printf("\n");
        }
    }
    CUBLAS_CHECK(cublasDestroy(blas));
    CUDA_CHECK(cudaStreamDestroy(stream));
    return 0;
}
