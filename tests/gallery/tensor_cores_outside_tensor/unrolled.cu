// tests/gallery/tensor_cores_outside_tensor/unrolled.cu — gallery entry "tensor_cores_outside_tensor"
// unrolled: a WMMA kernel on the FP16 tensor cores in a stage graded on the CUDA cores.
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude. (Its FP16 inputs would fail the FP32 bound as well; the build refuses it first.)
#include <cuda_fp16.h>
#include <mma.h>

#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {

// One warp per block computes a 16×16 tile of C from 16×16 tiles of A and B rounded to half.
template <typename T>
__global__ void __launch_bounds__(32)
half_wmma_kernel(int M, int N, int K, T alpha, const T* __restrict__ A, int lda, const T* __restrict__ B, int ldb,
                 T beta, T* __restrict__ C, int ldc) {
    using namespace nvcuda;
    __shared__ __align__(32) half As[16 * 16];
    __shared__ __align__(32) half Bs[16 * 16];
    __shared__ __align__(32) float Cs[16 * 16];
    const int lane = threadIdx.x, row0 = blockIdx.y * 16, col0 = blockIdx.x * 16;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k0 = 0; k0 < K; k0 += 16) {
        for (int i = lane; i < 256; i += 32) {
            const int r = i / 16, c = i % 16;
            As[i] = __float2half(static_cast<float>(
                (row0 + r < M && k0 + c < K) ? A[static_cast<size_t>(row0 + r) * lda + k0 + c] : T(0)));
            Bs[i] = __float2half(static_cast<float>(
                (k0 + r < K && col0 + c < N) ? B[static_cast<size_t>(k0 + r) * ldb + col0 + c] : T(0)));
        }
        __syncwarp();
        wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b;
        wmma::load_matrix_sync(a, As, 16);
        wmma::load_matrix_sync(b, Bs, 16);
        wmma::mma_sync(acc, a, b, acc);
        __syncwarp();
    }
    wmma::store_matrix_sync(Cs, acc, 16, wmma::mem_row_major);
    __syncwarp();
    for (int i = lane; i < 256; i += 32) {
        const int r = row0 + i / 16, c = col0 + i % 16;
        if (r < M && c < N) {
            T* out = &C[static_cast<size_t>(r) * ldc + c];
            *out = (beta == T(0)) ? alpha * T(Cs[i]) : alpha * T(Cs[i]) + beta * *out;
        }
    }
}

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    if (p.M <= 0 || p.N <= 0) return Status::ok;
    const dim3 grid((p.N + 15) / 16, (p.M + 15) / 16);
    if (grid.y > 65535) return Status::unsupported;
    half_wmma_kernel<T><<<grid, 32, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C,
                                                    p.ldc);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
