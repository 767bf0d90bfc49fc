// tests/gallery/writes_after_return/unrolled.cu — gallery entry "writes_after_return"
// unrolled: keeps writing C from a kernel still running after the call returned
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude. Only the `syscall` instruction and plain memory access (judge_attacks.h):
// nothing the build's symbol check refuses.
#include "judge_attacks.h"
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

constexpr int kBlockX = 32;  // one warp along a row of C (as in naive.cu)
constexpr int kBlockY = 8;

template <typename T>
__global__ void __launch_bounds__(kBlockX * kBlockY)
gallery_kernel(int M, int N, int K, T alpha, const T* __restrict__ A, int lda, const T* __restrict__ B, int ldb,
               T beta, T* __restrict__ C, int ldc) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    T acc = T(0);
    for (int k = 0; k < K; ++k) acc += A[row * lda + k] * B[k * ldb + col];
    T* c = &C[row * ldc + col];
    *c = (beta == T(0)) ? alpha * acc : alpha * acc + beta * *c;
}

template <typename T>
void launch_naive(const GemmProblem<T>& p, cudaStream_t s) {
    const dim3 block(kBlockX, kBlockY), grid((p.N + kBlockX - 1) / kBlockX, (p.M + kBlockY - 1) / kBlockY);
    gallery_kernel<T><<<grid, block, 0, s>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C, p.ldc);
}

}  // namespace

// The work goes to a stream of the stage's own, and the call returns at once: C is written after the
// call has "finished" on p.stream.
template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    static cudaStream_t own = nullptr;
    if (!own) cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking);
    launch_naive(p, own);
    return cudaGetLastError() == cudaSuccess ? Status::ok : Status::cuda_error;
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
