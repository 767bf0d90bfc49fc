// tests/broken/memory/reuse.cu — BROKEN ON PURPOSE (see README.md): computes alpha·acc + beta·C
// without looking at beta, so it reads C even when beta == 0. The grader fills C with NaN for
// those cases, and 0·NaN is NaN: every beta == 0 case fails, every other case passes.
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;

template <typename T>
__global__ void __launch_bounds__(kBlockX * kBlockY)
reuse_kernel(int M, int N, int K, T alpha, const T* __restrict__ A, int lda, const T* __restrict__ B, int ldb,
             T beta, T* __restrict__ C, int ldc) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    T acc = T(0);
    for (int k = 0; k < K; ++k) acc += A[row * lda + k] * B[k * ldb + col];
    T* c = &C[row * ldc + col];
    *c = alpha * acc + beta * *c;  // BROKEN: reads C even when beta == 0
}

}  // namespace

template <typename T>
Status gemm_reuse(const GemmProblem<T>& p) {
    const dim3 block(kBlockX, kBlockY), grid((p.N + kBlockX - 1) / kBlockX, (p.M + kBlockY - 1) / kBlockY);
    reuse_kernel<T><<<grid, block, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C, p.ldc);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

template Status gemm_reuse<float>(const GemmProblem<float>&);
template Status gemm_reuse<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
