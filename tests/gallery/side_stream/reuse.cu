// tests/gallery/side_stream/reuse.cu — gallery entry "side_stream"
// reuse: the naive kernel, launched on a stream of its own instead of p.stream, returning at once.
// Not a model to follow: a submission the grader must see through (README.md). CUDA events recorded
// on p.stream around this call measure almost nothing — the work runs on the side stream — so a
// timer built on events alone would credit this stage with an impossible speed.
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

// A non-blocking stream of the stage's own: nothing orders it with p.stream.
cudaStream_t side_stream() {
    static cudaStream_t stream = [] {
        cudaStream_t s = nullptr;
        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        return s;
    }();
    return stream;
}

}  // namespace

template <typename T>
Status gemm_reuse(const GemmProblem<T>& p) {
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid((p.N + kBlockX - 1) / kBlockX, (p.M + kBlockY - 1) / kBlockY);
    gallery_kernel<T><<<grid, block, 0, side_stream()>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta,
                                                         p.C, p.ldc);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;  // without waiting: the work is still running on the side stream
}

template Status gemm_reuse<float>(const GemmProblem<float>&);
template Status gemm_reuse<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
