// reference/tiled.cu — stage "tiled", instructor solution: shared-memory tiling.
//
// A block of TILE×TILE threads computes a TILE×TILE tile of C, one element per thread, like the
// naive kernel. The difference is where the operands come from: the block walks K in steps of
// TILE, and at each step its threads copy one TILE×TILE tile of A and one of B into shared
// memory (one element each, coalesced), wait at a barrier, and then compute TILE products from
// shared memory. Each element of A and B loaded from global memory is used TILE times, so global
// traffic drops by a factor TILE compared with the naive kernel.
//
//   As[ty][k]  — every thread of a row of the block reads the same word: a broadcast.
//   Bs[k][tx]  — consecutive threads read consecutive words: conflict-free.
//
// Why this stage is still slow: each FMA needs two shared-memory loads (one of A, one of B), and
// shared memory delivers one 32-wide load per clock per SM against four 32-wide FMAs: the kernel
// is bound by shared-memory bandwidth at a fraction of the FMA peak. The next stage (unrolled)
// fixes that by computing several elements of C per thread from the same loaded values.
//
// Edges: tiles that stick out of A or B are filled with zeros (the zeros add nothing to the dot
// products), and only threads inside C store. When beta == 0, C is never read.
//
// Run it:  make check STAGE=tiled      make bench STAGE=tiled
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

template <typename T, int TILE>
__global__ void __launch_bounds__(TILE * TILE)
tiled_kernel(int M, int N, int K, T alpha, const T* __restrict__ A, int lda,
             const T* __restrict__ B, int ldb, T beta, T* __restrict__ C, int ldc) {
    __shared__ T As[TILE][TILE];  // As[ty][k]: row ty of the A tile
    __shared__ T Bs[TILE][TILE];  // Bs[k][tx]: row k of the B tile

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;  // the element of C this thread computes
    const int col = blockIdx.x * TILE + tx;

    T acc = T(0);
    for (int k0 = 0; k0 < K; k0 += TILE) {
        // Each thread copies one element of each tile; threads along x read consecutive
        // addresses of a row of A and of B (coalesced). Outside the matrices: zeros.
        const int a_col = k0 + tx, b_row = k0 + ty;
        As[ty][tx] = (row < M && a_col < K) ? A[static_cast<size_t>(row) * lda + a_col] : T(0);
        Bs[ty][tx] = (b_row < K && col < N) ? B[static_cast<size_t>(b_row) * ldb + col] : T(0);
        __syncthreads();  // the tiles are complete

#pragma unroll
        for (int k = 0; k < TILE; ++k) acc = fma(As[ty][k], Bs[k][tx], acc);
        __syncthreads();  // everyone is done with the tiles before they are overwritten
    }

    if (row < M && col < N) {
        T* c = &C[static_cast<size_t>(row) * ldc + col];
        *c = (beta == T(0)) ? alpha * acc : fma(beta, *c, alpha * acc);
    }
}

}  // namespace

template <typename T, int TILE>
Status gemm_tiled(const GemmProblem<T>& p) {
    static_assert(TILE * TILE <= 1024, "one thread per element of a TILE×TILE tile");
    static_assert(TILE % 8 == 0, "TILE = 8, 16, 32: a warp covers whole rows of the tile");
    static_assert(2 * TILE * TILE * sizeof(T) <= 48 * 1024, "both tiles fit in static shared memory");
    if (p.M <= 0 || p.N <= 0) return Status::ok;
    const dim3 block(TILE, TILE);
    const dim3 grid((p.N + TILE - 1) / TILE, (p.M + TILE - 1) / TILE);
    if (grid.y > 65535) return Status::unsupported;
    tiled_kernel<T, TILE><<<grid, block, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B,
                                                        p.ldb, p.beta, p.C, p.ldc);
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
