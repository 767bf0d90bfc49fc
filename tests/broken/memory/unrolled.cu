// tests/broken/memory/unrolled.cu — BROKEN ON PURPOSE (see README.md): the store guard is off by
// one (col <= N), so the thread just past the last column of each row writes one element there:
// into a padding column when ldc > N, onto the next row's first element when ldc == N, and past
// the end of C on the last row. Its arithmetic is right, so only the guard bands notice.
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;

template <typename T>
__global__ void __launch_bounds__(kBlockX * kBlockY)
unrolled_kernel(int M, int N, int K, T alpha, const T* __restrict__ A, int lda, const T* __restrict__ B, int ldb,
                T beta, T* __restrict__ C, int ldc) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M) return;
    constexpr int kUnroll = 4;
    T acc = T(0);
    if (col < N) {
        int k = 0;
        for (; k + kUnroll <= K; k += kUnroll) {
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) acc += A[row * lda + k + u] * B[(k + u) * ldb + col];
        }
        for (; k < K; ++k) acc += A[row * lda + k] * B[k * ldb + col];
    }
    if (col <= N) {  // BROKEN: should be col < N
        T* c = &C[row * ldc + col];
        *c = beta == T(0) ? alpha * acc : alpha * acc + beta * *c;
    }
}

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    const dim3 block(kBlockX, kBlockY), grid((p.N + kBlockX - 1) / kBlockX, (p.M + kBlockY - 1) / kBlockY);
    unrolled_kernel<T><<<grid, block, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C,
                                                     p.ldc);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
