// tests/broken/process/unrolled.cu — BROKEN ON PURPOSE (see README.md): loads rows of B as vectors
// (float4 / double2, 16 bytes) as if every row started on a 16-byte boundary. That holds for
// pitched rows, not for the grader's dense ones: as soon as ldb·sizeof(T) is not a multiple of 16
// (ldb = 5 in the "small primes" case) the load faults with a misaligned address.
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

template <typename T> struct Vec16;
template <> struct Vec16<float> { using type = float4; static constexpr int width = 4; };
template <> struct Vec16<double> { using type = double2; static constexpr int width = 2; };

constexpr int kBlockX = 16;
constexpr int kBlockY = 16;

template <typename T>
__device__ T lane(const typename Vec16<T>::type& v, int j) {
    return reinterpret_cast<const T*>(&v)[j];
}

template <typename T>
__global__ void __launch_bounds__(kBlockX * kBlockY)
vector_kernel(int M, int N, int K, T alpha, const T* __restrict__ A, int lda, const T* __restrict__ B, int ldb,
              T beta, T* __restrict__ C, int ldc) {
    using V = typename Vec16<T>::type;
    constexpr int W = Vec16<T>::width;
    const int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * W;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col0 >= N) return;
    T acc[W] = {};
    for (int k = 0; k < K; ++k) {
        const T a = A[row * lda + k];
        const V b = *reinterpret_cast<const V*>(&B[k * ldb + col0]);  // BROKEN: assumes aligned rows
#pragma unroll
        for (int j = 0; j < W; ++j) acc[j] += a * lane<T>(b, j);
    }
#pragma unroll
    for (int j = 0; j < W; ++j) {
        if (col0 + j >= N) break;
        T* c = &C[row * ldc + col0 + j];
        *c = beta == T(0) ? alpha * acc[j] : alpha * acc[j] + beta * *c;
    }
}

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    constexpr int W = Vec16<T>::width;
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid((p.N + kBlockX * W - 1) / (kBlockX * W), (p.M + kBlockY - 1) / kBlockY);
    vector_kernel<T><<<grid, block, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C, p.ldc);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
