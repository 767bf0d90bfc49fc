// tests/broken/wrong_values/reuse.cu — BROKEN ON PURPOSE (see README.md): fast but not honest.
// It rounds A and B to TF32 (10 mantissa bits, what tensor cores multiply in their TF32 mode)
// before multiplying, accumulating in float. Its error is about 2^13/sqrt(K) times an honest
// FP32 kernel's: hundreds of u·G at K = 4096, far above the bound of 32 u·G.
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;
// TF32 keeps 10 of float's 23 mantissa bits: round to nearest at bit 13, then clear the rest.
constexpr unsigned kTf32DroppedBits = 13;
constexpr unsigned kTf32Half = 1u << (kTf32DroppedBits - 1);
constexpr unsigned kTf32Mask = ~((1u << kTf32DroppedBits) - 1);

__device__ float round_to_tf32(float x) {
    return __uint_as_float((__float_as_uint(x) + kTf32Half) & kTf32Mask);
}

template <typename T>
__global__ void __launch_bounds__(kBlockX * kBlockY)
tf32_kernel(int M, int N, int K, T alpha, const T* __restrict__ A, int lda, const T* __restrict__ B, int ldb,
            T beta, T* __restrict__ C, int ldc) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;  // BROKEN: inputs rounded to TF32 (and, for double, everything in float)
    for (int k = 0; k < K; ++k)
        acc += round_to_tf32(static_cast<float>(A[row * lda + k])) * round_to_tf32(static_cast<float>(B[k * ldb + col]));
    T* c = &C[row * ldc + col];
    *c = beta == T(0) ? alpha * T(acc) : alpha * T(acc) + beta * *c;
}

}  // namespace

template <typename T>
Status gemm_reuse(const GemmProblem<T>& p) {
    const dim3 block(kBlockX, kBlockY), grid((p.N + kBlockX - 1) / kBlockX, (p.M + kBlockY - 1) / kBlockY);
    tf32_kernel<T><<<grid, block, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C, p.ldc);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

template Status gemm_reuse<float>(const GemmProblem<float>&);
template Status gemm_reuse<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
