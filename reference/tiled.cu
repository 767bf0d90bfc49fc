// reference/tiled.cu — stage "tiled", instructor solution: shared-memory tiling.
//
// A block of TILE×TILE threads computes a TILE×TILE tile of C, one element per thread, like the
// naive kernel. The difference is where the operands come from: the block walks K in steps of
// TILE, and at each step its threads copy one TILE×TILE tile of A and one of B into shared
// memory (one element each, coalesced), wait at a barrier, and then compute TILE products from
// shared memory. Each element of A and B loaded from global memory is used TILE times, so global
// traffic drops by a factor TILE compared with the naive kernel.
//
//   As[ty][k]  — every thread of a row of the block reads the same word: a broadcast (and the
//                compiler reads several k at once with LDS.128: four in float, two in double).
//   Bs[k][tx]  — consecutive threads read consecutive words: conflict-free.
//
// Why this stage is still slow: each FMA needs its two operands from shared memory, and the
// shared-memory data pipe moves 128 bytes per clock per SM. In double a warp's step of k costs
// three of those wavefronts (two for the 32 different B words, one for the A word, read two k at a
// time as a broadcast LDS.128), while the FP64 units could do the warp's 32 FMAs in half a clock:
// Nsight Compute shows the data pipe saturated and the FP64 pipe mostly idle.
// No arrangement of one-element-per-thread tiles gets under those three wavefronts. The next stage
// (unrolled) breaks the limit by computing several elements of C per thread from each loaded value.
//
// One refinement pays here: two shared buffers per operand. The next tiles are loaded from global
// memory into registers before the products of the current step and stored into the other buffer
// after them, so the loads complete while the FMAs run and one barrier per step suffices instead
// of the student version's two. Measurements: docs/reference-kernels.md ("tiled").
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
    // Two buffers per operand: the step that reads buffer `cur` fills buffer `cur ^ 1`.
    __shared__ T As[2][TILE][TILE];  // As[b][ty][k]: row ty of an A tile
    __shared__ T Bs[2][TILE][TILE];  // Bs[b][k][tx]: row k of a B tile

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;  // the element of C this thread computes
    const int col = blockIdx.x * TILE + tx;

    // The elements this thread copies from the tiles that start at k0. Threads along x read
    // consecutive addresses of a row of A and of B (coalesced). Outside the matrices: zeros.
    auto a_elem = [&](int k0) {
        return (row < M && k0 + tx < K) ? A[static_cast<size_t>(row) * lda + k0 + tx] : T(0);
    };
    auto b_elem = [&](int k0) {
        return (k0 + ty < K && col < N) ? B[static_cast<size_t>(k0 + ty) * ldb + col] : T(0);
    };

    T acc = T(0);
    int cur = 0;
    As[cur][ty][tx] = a_elem(0);
    Bs[cur][ty][tx] = b_elem(0);
    __syncthreads();  // the first tiles are complete
    for (int k0 = 0; k0 < K; k0 += TILE) {
        // The loads of the next tiles start now (zeros past the end of K) and complete during
        // the products.
        const T a_next = a_elem(k0 + TILE), b_next = b_elem(k0 + TILE);

#pragma unroll
        for (int k = 0; k < TILE; ++k) acc = fma(As[cur][ty][k], Bs[cur][k][tx], acc);

        // Writing the other buffer is safe without a barrier before it: the last readers of that
        // buffer (the previous step) all passed the barrier at the end of that step.
        As[cur ^ 1][ty][tx] = a_next;
        Bs[cur ^ 1][ty][tx] = b_next;
        cur ^= 1;
        __syncthreads();  // the next tiles are complete, and nobody reads the old ones any more
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
    static_assert(4 * TILE * TILE * sizeof(T) <= 48 * 1024, "two buffers of both tiles fit in static shared memory");
    if (p.M <= 0 || p.N <= 0) return Status::ok;
    const dim3 block(TILE, TILE);
    const dim3 grid((p.N + TILE - 1) / TILE, (p.M + TILE - 1) / TILE);
    if (grid.y > 65535) return Status::unsupported;
    tiled_kernel<T, TILE><<<grid, block, 0, p.stream>>>(
        p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C, p.ldc);
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

#ifdef GEMMLAB_TUNE
#include "tuning/tiled.h"  // other configurations, timed beside these by reference/tuning
#endif
