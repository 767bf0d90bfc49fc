// student/naive.cu — the naive stage, given complete: the baseline every other stage is measured
// against, and a worked example of what a stage file looks like.
//
// One thread computes one element of C. Consecutive threads of a warp take consecutive columns
// j of the same row i, so their loads of B[k][j] and their stores to C[i][j] are coalesced, and
// all of them read the same A[i][k] (a broadcast). Every operand is read straight from global
// memory: A is read N times and B M times, which is what the later stages improve on.
//
// Run it:  make check STAGE=naive      make bench STAGE=naive
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

constexpr int kBlockX = 32;  // one warp along a row of C: coalesced B loads and C stores
constexpr int kBlockY = 8;   // 256 threads per block

template <typename T>
__global__ void __launch_bounds__(kBlockX * kBlockY)
naive_kernel(int M, int N, int K, T alpha, const T* __restrict__ A, int lda,
             const T* __restrict__ B, int ldb, T beta, T* __restrict__ C, int ldc) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;  // the grid rounds up: guard the edges

    T acc = T(0);
    for (int k = 0; k < K; ++k) acc += A[row * lda + k] * B[k * ldb + col];

    // beta == 0 must not read C: it may hold garbage or NaN, and 0 * NaN is NaN.
    T* c = &C[row * ldc + col];
    *c = (beta == T(0)) ? alpha * acc : alpha * acc + beta * *c;
}

}  // namespace

template <typename T>
Status gemm_naive(const GemmProblem<T>& p) {
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid((p.N + kBlockX - 1) / kBlockX, (p.M + kBlockY - 1) / kBlockY);
    naive_kernel<T><<<grid, block, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb,
                                                  p.beta, p.C, p.ldc);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

template Status gemm_naive<float>(const GemmProblem<float>&);
template Status gemm_naive<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
