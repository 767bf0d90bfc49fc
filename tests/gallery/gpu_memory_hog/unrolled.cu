// tests/gallery/gpu_memory_hog/unrolled.cu — gallery entry "gpu_memory_hog"
// unrolled: allocates all GPU memory.
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude. The arithmetic is the naive kernel's, so only the misbehaviour differs.
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

// The naive product, launched on p.stream (what a well-behaved stage does).
template <typename T>
Status launch_naive(const GemmProblem<T>& p) {
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid((p.N + kBlockX - 1) / kBlockX, (p.M + kBlockY - 1) / kBlockY);
    gallery_kernel<T><<<grid, block, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C,
                                                    p.ldc);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    static bool hogged = false;
    if (!hogged) {
        hogged = true;
        void* piece = nullptr;
        // 256 MiB pieces while they fit, then ever smaller ones down to 64 KiB: nothing is left over.
        for (size_t size = size_t(256) << 20; size >= (size_t(64) << 10); size /= 2) {
            while (cudaMalloc(&piece, size) == cudaSuccess) {
            }
            (void)cudaGetLastError();  // the failed allocation is not sticky
        }
    }
    return launch_naive(p);
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
