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
//                compiler reads four k at once with LDS.128).
//   Bs[k][tx]  — consecutive threads read consecutive words: conflict-free.
//
// Why this stage is still slow: each FMA needs two shared-memory loads (one of A, one of B), and
// shared memory delivers 128 bytes per clock per SM against four warp-wide FMAs: the kernel is
// bound by shared-memory bandwidth at a fraction of the FMA peak. The next stage (unrolled)
// fixes that by computing several elements of C per thread from the same loaded values.
//
// One refinement pays here: the loads of the next tiles are issued into registers before the
// products of the current ones, so they complete while the FMAs run instead of after the barrier
// (SGEMM, tile 32, 4096³ on an H100: 10.0 against 8.6 TFLOPS). Other warp layouts and paddings of
// As measured no different (docs/reference-kernels.md).
//
// Edges: tiles that stick out of A or B are filled with zeros (the zeros add nothing to the dot
// products), and only threads inside C store. When beta == 0, C is never read.
//
// Run it:  make check STAGE=tiled      make bench STAGE=tiled
#include "gemmlab/stages.h"

#ifdef GEMMLAB_TUNE
#include "tuning/candidates.h"
#endif

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

    // The elements this thread copies from the tiles that start at k0. Threads along x read
    // consecutive addresses of a row of A and of B (coalesced). Outside the matrices: zeros.
    auto a_elem = [&](int k0) {
        return (row < M && k0 + tx < K) ? A[static_cast<size_t>(row) * lda + k0 + tx] : T(0);
    };
    auto b_elem = [&](int k0) {
        return (k0 + ty < K && col < N) ? B[static_cast<size_t>(k0 + ty) * ldb + col] : T(0);
    };

    T acc = T(0);
    As[ty][tx] = a_elem(0);
    Bs[ty][tx] = b_elem(0);
    __syncthreads();  // the first tiles are complete
    for (int k0 = 0; k0 < K; k0 += TILE) {
        // Prefetch: the loads of the next tiles start now and complete during the products.
        const T a_next = a_elem(k0 + TILE), b_next = b_elem(k0 + TILE);

#pragma unroll
        for (int k = 0; k < TILE; ++k) acc = fma(As[ty][k], Bs[k][tx], acc);
        __syncthreads();  // everyone is done with the tiles before they are overwritten

        if (k0 + TILE < K) {
            As[ty][tx] = a_next;
            Bs[ty][tx] = b_next;
        }
        __syncthreads();  // the next tiles are complete
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

#ifdef GEMMLAB_TUNE
namespace {
// Tuning experiment (not the stage): the same tiled kernel with the TILE products of a step split
// over two accumulators (even and odd k), which halves the dependent chain of FMAs per thread. If
// DGEMM gets faster with it, the chain's latency is what holds the one-element-per-thread design.
template <typename T, int TILE>
__global__ void __launch_bounds__(TILE * TILE)
tiled_two_acc_kernel(int M, int N, int K, T alpha, const T* __restrict__ A, int lda,
                     const T* __restrict__ B, int ldb, T beta, T* __restrict__ C, int ldc) {
    __shared__ __align__(16) T As[TILE][TILE];
    __shared__ __align__(16) T Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    T acc0 = T(0), acc1 = T(0);
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[static_cast<size_t>(row) * lda + k0 + tx] : T(0);
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[static_cast<size_t>(k0 + ty) * ldb + col] : T(0);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; k += 2) {
            acc0 = fma(As[ty][k], Bs[k][tx], acc0);
            acc1 = fma(As[ty][k + 1], Bs[k + 1][tx], acc1);
        }
        __syncthreads();
    }
    if (row < M && col < N) {
        const T acc = acc0 + acc1;
        T* c = &C[static_cast<size_t>(row) * ldc + col];
        *c = (beta == T(0)) ? alpha * acc : fma(beta, *c, alpha * acc);
    }
}

template <typename T, int TILE>
Status run_tiled_two_acc(const GemmProblem<T>& p) {
    if (p.M <= 0 || p.N <= 0) return Status::ok;
    const dim3 block(TILE, TILE), grid((p.N + TILE - 1) / TILE, (p.M + TILE - 1) / TILE);
    if (grid.y > 65535) return Status::unsupported;
    tiled_two_acc_kernel<T, TILE><<<grid, block, 0, p.stream>>>(
        p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C, p.ldc);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}
}  // namespace

void tiled_candidates(std::vector<tuning::Candidate<float>>& f32, std::vector<tuning::Candidate<double>>& f64) {
    f32.push_back({"tiled", "32 two accumulators", &run_tiled_two_acc<float, 32>});
    f64.push_back({"tiled", "32 two accumulators", &run_tiled_two_acc<double, 32>});
    f64.push_back({"tiled", "16 two accumulators", &run_tiled_two_acc<double, 16>});
}
#endif

}  // namespace gemmlab::GEMMLAB_NS
