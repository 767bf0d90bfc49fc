// tests/broken/wrong_values/unrolled.cu — BROKEN ON PURPOSE (see README.md): register blocking
// (each thread computes kCols consecutive elements of a row of C) that ignores beta: it stores
// alpha·A·B and drops beta·C. Right whenever beta == 0, wrong whenever it is not.
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

constexpr int kCols = 4;          // elements of C per thread, along a row
constexpr int kThreadsX = 16;     // threads per block along a row: 64 columns per block
constexpr int kThreadsY = 16;

template <typename T>
__global__ void __launch_bounds__(kThreadsX * kThreadsY)
unrolled_kernel(int M, int N, int K, T alpha, const T* __restrict__ A, int lda, const T* __restrict__ B, int ldb,
                T* __restrict__ C, int ldc) {
    const int row = blockIdx.y * kThreadsY + threadIdx.y;
    const int col0 = (blockIdx.x * kThreadsX + threadIdx.x) * kCols;
    if (row >= M) return;
    T acc[kCols] = {};
    for (int k = 0; k < K; ++k) {
        const T a = A[row * lda + k];
#pragma unroll
        for (int j = 0; j < kCols; ++j)
            if (col0 + j < N) acc[j] += a * B[k * ldb + col0 + j];
    }
#pragma unroll
    for (int j = 0; j < kCols; ++j)
        if (col0 + j < N) C[row * ldc + col0 + j] = alpha * acc[j];  // BROKEN: + beta·C is missing
}

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    const dim3 block(kThreadsX, kThreadsY);
    const dim3 grid((p.N + kThreadsX * kCols - 1) / (kThreadsX * kCols), (p.M + kThreadsY - 1) / kThreadsY);
    unrolled_kernel<T><<<grid, block, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.C, p.ldc);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
