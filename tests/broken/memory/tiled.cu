// tests/broken/memory/tiled.cu — BROKEN ON PURPOSE (see README.md): shared-memory tiling without
// the two __syncthreads() a tile needs. Warps read tiles other warps have not written yet, and
// overwrite tiles others still read: a race. Its results change from run to run; the large shapes
// show it reliably, and `make sanitize STAGE=tiled` (racecheck) names the lines.
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

template <typename T, int TILE>
__global__ void __launch_bounds__(TILE * TILE)
tiled_kernel(int M, int N, int K, T alpha, const T* __restrict__ A, int lda, const T* __restrict__ B, int ldb,
             T beta, T* __restrict__ C, int ldc) {
    __shared__ T As[TILE][TILE];
    __shared__ T Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    T acc = T(0);
    for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
        const int ka = t * TILE + tx, kb = t * TILE + ty;
        As[ty][tx] = (row < M && ka < K) ? A[row * lda + ka] : T(0);
        Bs[ty][tx] = (kb < K && col < N) ? B[kb * ldb + col] : T(0);
        // BROKEN: __syncthreads() missing here (the tile is not complete yet) ...
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        // BROKEN: ... and here (the next iteration overwrites what slower warps still read)
    }
    if (row < M && col < N) {
        T* c = &C[row * ldc + col];
        *c = beta == T(0) ? alpha * acc : alpha * acc + beta * *c;
    }
}

}  // namespace

template <typename T, int TILE>
Status gemm_tiled(const GemmProblem<T>& p) {
    static_assert(TILE * TILE <= 1024, "one thread per element of a TILE×TILE tile");
    const dim3 block(TILE, TILE), grid((p.N + TILE - 1) / TILE, (p.M + TILE - 1) / TILE);
    tiled_kernel<T, TILE><<<grid, block, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta,
                                                        p.C, p.ldc);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

template Status gemm_tiled<float, 8>(const GemmProblem<float>&);
template Status gemm_tiled<float, 16>(const GemmProblem<float>&);
template Status gemm_tiled<float, 32>(const GemmProblem<float>&);
template Status gemm_tiled<double, 8>(const GemmProblem<double>&);
template Status gemm_tiled<double, 16>(const GemmProblem<double>&);
template Status gemm_tiled<double, 32>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
