// tests/gallery/tensor_cores_outside_tensor/reuse.cu — gallery entry "tensor_cores_outside_tensor"
// reuse: in float, calls the tensor stage's 3xTF32 code (tensor.cu): FP32-accurate, and faster
// than any FP32 kernel on the CUDA cores could be. Not a model to follow: a submission the grader must
// survive and see through; README.md says what the grader has to conclude. Double is the naive kernel.
#include <type_traits>

#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

constexpr int kBlockX = 32;  // one warp along a row of C (as in naive.cu)
constexpr int kBlockY = 8;

__global__ void __launch_bounds__(kBlockX * kBlockY)
naive_double_kernel(int M, int N, int K, double alpha, const double* __restrict__ A, int lda,
                    const double* __restrict__ B, int ldb, double beta, double* __restrict__ C, int ldc) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    double acc = 0.0;
    for (int k = 0; k < K; ++k) acc += A[static_cast<size_t>(row) * lda + k] * B[static_cast<size_t>(k) * ldb + col];
    double* c = &C[static_cast<size_t>(row) * ldc + col];
    *c = (beta == 0.0) ? alpha * acc : alpha * acc + beta * *c;
}

}  // namespace

template <typename T>
Status gemm_reuse(const GemmProblem<T>& p) {
    if constexpr (std::is_same_v<T, float>) {
        return gemm_tensor<float, InputPrecision::full>(p);  // the tensor stage's 3xTF32 kernel
    } else {
        const dim3 block(kBlockX, kBlockY);
        const dim3 grid((p.N + kBlockX - 1) / kBlockX, (p.M + kBlockY - 1) / kBlockY);
        naive_double_kernel<<<grid, block, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb,
                                                          p.beta, p.C, p.ldc);
        GEMMLAB_CHECK_LAUNCH();
        return Status::ok;
    }
}

template Status gemm_reuse<float>(const GemmProblem<float>&);
template Status gemm_reuse<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
