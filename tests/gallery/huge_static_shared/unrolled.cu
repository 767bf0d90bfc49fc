// tests/gallery/huge_static_shared/unrolled.cu — gallery entry "huge_static_shared"
// unrolled: declares a 128 KiB static shared array.
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude. The arithmetic is the naive kernel's, so only the misbehaviour differs.
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;
constexpr int kTileElements = 32 * 1024;  // 128 KiB of float: more than the 48 KiB of static shared memory

template <typename T>
__global__ void __launch_bounds__(kBlockX * kBlockY)
big_tile_kernel(int M, int N, int K, T alpha, const T* __restrict__ A, int lda, const T* __restrict__ B, int ldb,
                T beta, T* __restrict__ C, int ldc) {
    __shared__ T tile[kTileElements];
    const int t = threadIdx.y * blockDim.x + threadIdx.x;
    for (int i = t; i < kTileElements; i += blockDim.x * blockDim.y) tile[i] = T(i % 7);
    __syncthreads();
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    T acc = tile[(t * 131) % kTileElements] * T(0);
    for (int k = 0; k < K; ++k) acc += A[row * lda + k] * B[k * ldb + col];
    T* c = &C[row * ldc + col];
    *c = (beta == T(0)) ? alpha * acc : alpha * acc + beta * *c;
}

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid((p.N + kBlockX - 1) / kBlockX, (p.M + kBlockY - 1) / kBlockY);
    big_tile_kernel<T><<<grid, block, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C,
                                                     p.ldc);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
