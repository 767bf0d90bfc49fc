// tests/broken/process/reuse.cu — BROKEN ON PURPOSE (see README.md): fast but not honest. It
// converts A and B to half precision (what a student might do to use FP16 tensor cores) and
// multiplies in float. Half has TF32's 10 mantissa bits, so the error is the same: about
// 2^13/sqrt(K) times an honest FP32 kernel's, hundreds of u·G at K = 4096.
#include <cuda_fp16.h>

#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;
__device__ float through_half(float x) { return __half2float(__float2half_rn(x)); }

template <typename T>
__global__ void __launch_bounds__(kBlockX * kBlockY)
half_kernel(int M, int N, int K, T alpha, const T* __restrict__ A, int lda, const T* __restrict__ B, int ldb,
            T beta, T* __restrict__ C, int ldc) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;  // BROKEN: inputs rounded to half (and, for double, everything in float)
    for (int k = 0; k < K; ++k)
        acc += through_half(static_cast<float>(A[row * lda + k])) * through_half(static_cast<float>(B[k * ldb + col]));
    T* c = &C[row * ldc + col];
    *c = beta == T(0) ? alpha * T(acc) : alpha * T(acc) + beta * *c;
}

}  // namespace

template <typename T>
Status gemm_reuse(const GemmProblem<T>& p) {
    const dim3 block(kBlockX, kBlockY), grid((p.N + kBlockX - 1) / kBlockX, (p.M + kBlockY - 1) / kBlockY);
    half_kernel<T><<<grid, block, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C, p.ldc);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

template Status gemm_reuse<float>(const GemmProblem<float>&);
template Status gemm_reuse<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
