// tests/broken/process/tiled.cu — BROKEN ON PURPOSE (see README.md): a correct tiled kernel, broken
// in a different way for each tile size, each of which takes the whole process down:
//   TILE = 8   stores through a null pointer passed in place of C -> an illegal memory access
//   TILE = 16  spins on a flag no thread ever sets   -> the kernel never ends
//   TILE = 32  calls exit(0) from the host code      -> the process ends in the middle of a check
#include <cstdlib>

#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

template <typename T, int TILE>
__global__ void __launch_bounds__(TILE * TILE)
tiled_kernel(int M, int N, int K, T alpha, const T* __restrict__ A, int lda, const T* __restrict__ B, int ldb,
             T beta, const T* C_in, T* C_out, int ldc, int* never_set) {
    __shared__ T As[TILE][TILE];
    __shared__ T Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    if constexpr (TILE == 16) {
        // BROKEN: waits for another block that never signals (there is no such block); the
        // volatile load keeps the compiler from removing the loop.
        while (*static_cast<volatile int*>(never_set) == 0) {
        }
    }
    T acc = T(0);
    for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
        const int ka = t * TILE + tx, kb = t * TILE + ty;
        As[ty][tx] = (row < M && ka < K) ? A[row * lda + ka] : T(0);
        Bs[ty][tx] = (kb < K && col < N) ? B[kb * ldb + col] : T(0);
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N)
        C_out[row * ldc + col] = beta == T(0) ? alpha * acc : alpha * acc + beta * C_in[row * ldc + col];
}

}  // namespace

template <typename T, int TILE>
Status gemm_tiled(const GemmProblem<T>& p) {
    static_assert(TILE * TILE <= 1024, "one thread per element of a TILE×TILE tile");
    if constexpr (TILE == 32) std::exit(0);  // BROKEN: leftover debugging code
    int* flag = nullptr;
    if constexpr (TILE == 16) {
        GEMMLAB_TRY(cudaMallocAsync(reinterpret_cast<void**>(&flag), sizeof(int), p.stream));
        GEMMLAB_TRY(cudaMemsetAsync(flag, 0, sizeof(int), p.stream));
    }
    const dim3 block(TILE, TILE), grid((p.N + TILE - 1) / TILE, (p.M + TILE - 1) / TILE);
    T* C_out = TILE == 8 ? nullptr : p.C;  // BROKEN (TILE = 8): the output pointer is lost
    tiled_kernel<T, TILE><<<grid, block, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta,
                                                        p.C, C_out, p.ldc, flag);
    GEMMLAB_CHECK_LAUNCH();
    if (flag) GEMMLAB_TRY(cudaFreeAsync(flag, p.stream));
    return Status::ok;
}

template Status gemm_tiled<float, 8>(const GemmProblem<float>&);
template Status gemm_tiled<float, 16>(const GemmProblem<float>&);
template Status gemm_tiled<float, 32>(const GemmProblem<float>&);
template Status gemm_tiled<double, 8>(const GemmProblem<double>&);
template Status gemm_tiled<double, 16>(const GemmProblem<double>&);
template Status gemm_tiled<double, 32>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
