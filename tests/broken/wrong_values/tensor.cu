// tests/broken/wrong_values/tensor.cu — BROKEN ON PURPOSE (see README.md): one FP16 kernel handed in
// as every float variant. It rounds A and B to FP16 (10 mantissa bits, what the tensor cores
// multiply in their FP16 mode) and sums the products in FP32. That is honest for tensor/fp16 and
// tensor/tf32, which declare 11-bit inputs (their bound is 32 + 4·2^13 u·G), and wrong for
// tensor/3xtf32, which declares FP32 accuracy (bound 32 u·G): its errors are hundreds to thousands
// of u·G. The double version (shared by every variant) is an honest FP64 kernel and passes.
#include <cuda_fp16.h>

#include <type_traits>

#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;

__device__ __forceinline__ float through_half(float x) { return __half2float(__float2half_rn(x)); }

template <typename T>
__global__ void __launch_bounds__(kBlockX * kBlockY)
half_inputs_kernel(int M, int N, int K, T alpha, const T* __restrict__ A, int lda, const T* __restrict__ B, int ldb,
                   T beta, T* __restrict__ C, int ldc) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    T acc = T(0);
    for (int k = 0; k < K; ++k) {
        if constexpr (std::is_same_v<T, float>)  // BROKEN for 3xtf32: FP16 inputs where FP32 accuracy is declared
            acc += through_half(A[row * lda + k]) * through_half(B[k * ldb + col]);
        else
            acc += A[row * lda + k] * B[k * ldb + col];
    }
    T* c = &C[row * ldc + col];
    *c = beta == T(0) ? alpha * acc : alpha * acc + beta * *c;
}

}  // namespace

template <typename T, InputPrecision IN>
Status gemm_tensor(const GemmProblem<T>& p) {
    const dim3 block(kBlockX, kBlockY), grid((p.N + kBlockX - 1) / kBlockX, (p.M + kBlockY - 1) / kBlockY);
    half_inputs_kernel<T><<<grid, block, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C,
                                                        p.ldc);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

template Status gemm_tensor<float, InputPrecision::fp16>(const GemmProblem<float>&);
template Status gemm_tensor<float, InputPrecision::tf32>(const GemmProblem<float>&);
template Status gemm_tensor<float, InputPrecision::full>(const GemmProblem<float>&);
template Status gemm_tensor<double, InputPrecision::full>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
