// reference/tiled.cu — stage "tiled", instructor solution: shared-memory tiling.
//
// A block of TILE×TILE threads computes a TILE×TILE tile of C, one element per thread, like the
// naive kernel. The difference is where the operands come from: the block walks K in steps of
// TILE, and at each step its threads copy one TILE×TILE tile of A and one of B into shared
// memory (one element each, coalesced), wait at a barrier, and then compute TILE products from
// shared memory. Each element of A and B loaded from global memory is used TILE times, so global
// traffic drops by a factor TILE compared with the naive kernel.
//
// Why this stage is still slow: each FMA needs two shared-memory loads (one of A, one of B), and
// shared memory delivers 128 bytes per clock per SM against four warp-wide FMAs: the kernel is
// bound by shared-memory bandwidth at a fraction of the FMA peak. The next stage (unrolled)
// fixes that by computing several elements of C per thread from the same loaded values.
//
// Two details decide how close this stage gets to that bound (reference/tuning measures the
// choices side by side; docs/reference-kernels.md has the numbers):
//   - Which elements of C the 32 threads of a warp compute. Shared memory serves a warp's load in
//     "wavefronts" of 32 banks × 4 bytes; threads that read the same word share it (broadcast).
//     A warp that computes one row of 32 elements reads one element of A (a broadcast) and 32 of
//     B per step: 128 bytes in float, 256 in double. A warp computing a PATCH_H × PATCH_W patch
//     reads PATCH_H elements of A and PATCH_W of B. The threads always copy the tiles in the
//     natural order (a warp = one row: coalesced) and compute in patches.
//   - Whether a thread's row of As can be read as 16-byte vectors: As[cy][k..k+3] are
//     consecutive, and the compiler loads them with one LDS.128 when the row is 16-byte aligned.
//     Padding a row by PAD elements moves the rows of a patch to different banks; PAD = 16 bytes
//     keeps the rows aligned as well.
//
//   As[cy][k]  — PATCH_H rows per warp, padded by PAD elements.
//   Bs[k][cx]  — PATCH_W consecutive words per warp: conflict-free.
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

template <typename T, int TILE, int PATCH_W, int PAD, bool PREFETCH>
__global__ void __launch_bounds__(TILE * TILE)
tiled_kernel(int M, int N, int K, T alpha, const T* __restrict__ A, int lda,
             const T* __restrict__ B, int ldb, T beta, T* __restrict__ C, int ldc) {
    __shared__ __align__(16) T As[TILE][TILE + PAD];  // As[row][k]: the A tile, rows padded
    __shared__ __align__(16) T Bs[TILE][TILE];        // Bs[k][col]: the B tile

    // Copy order: thread (tx, ty) copies element [ty][tx] of each tile; a warp reads one row.
    const int tx = threadIdx.x, ty = threadIdx.y;
    // Compute order: the warp's 32 lanes cover a PATCH_H × PATCH_W patch of the tile.
    constexpr int PATCH_H = 32 / PATCH_W, PATCHES_PER_ROW = TILE / PATCH_W;
    const int t = ty * TILE + tx, lane = t % 32, warp = t / 32;
    const int cx = (warp % PATCHES_PER_ROW) * PATCH_W + lane % PATCH_W;
    const int cy = (warp / PATCHES_PER_ROW) * PATCH_H + lane / PATCH_W;
    const int row = blockIdx.y * TILE + cy;  // the element of C this thread computes
    const int col = blockIdx.x * TILE + cx;

    // The elements this thread copies from the tiles that start at k0. Threads along x read
    // consecutive addresses of a row of A and of B (coalesced). Outside the matrices: zeros.
    const int a_row = blockIdx.y * TILE + ty, b_col = blockIdx.x * TILE + tx;
    auto a_elem = [&](int k0) {
        return (a_row < M && k0 + tx < K) ? A[static_cast<size_t>(a_row) * lda + k0 + tx] : T(0);
    };
    auto b_elem = [&](int k0) {
        return (k0 + ty < K && b_col < N) ? B[static_cast<size_t>(k0 + ty) * ldb + b_col] : T(0);
    };

    T acc = T(0);
    As[ty][tx] = a_elem(0);
    Bs[ty][tx] = b_elem(0);
    __syncthreads();  // the first tiles are complete
    for (int k0 = 0; k0 < K; k0 += TILE) {
        // PREFETCH: the loads of the next tiles are issued now, into registers, and complete
        // while the products below run (otherwise the block waits for them after the barrier).
        T a_next = T(0), b_next = T(0);
        if constexpr (PREFETCH) a_next = a_elem(k0 + TILE), b_next = b_elem(k0 + TILE);

#pragma unroll
        for (int k = 0; k < TILE; ++k) acc = fma(As[cy][k], Bs[k][cx], acc);
        __syncthreads();  // everyone is done with the tiles before they are overwritten

        if (k0 + TILE < K) {
            As[ty][tx] = PREFETCH ? a_next : a_elem(k0 + TILE);
            Bs[ty][tx] = PREFETCH ? b_next : b_elem(k0 + TILE);
        }
        __syncthreads();  // the next tiles are complete
    }

    if (row < M && col < N) {
        T* c = &C[static_cast<size_t>(row) * ldc + col];
        *c = (beta == T(0)) ? alpha * acc : fma(beta, *c, alpha * acc);
    }
}

template <typename T, int TILE, int PATCH_W, int PAD, bool PREFETCH = false>
Status run_tiled(const GemmProblem<T>& p) {
    static_assert(TILE * TILE <= 1024, "one thread per element of a TILE×TILE tile");
    static_assert(TILE % 8 == 0, "TILE = 8, 16, 32: a warp covers whole rows of the tile when copying");
    static_assert(TILE % PATCH_W == 0 && 32 % PATCH_W == 0 && (TILE * TILE / 32) % (TILE / PATCH_W) == 0,
                  "the warps' patches tile the block tile");
    static_assert(2 * TILE * (TILE + PAD) * sizeof(T) <= 48 * 1024, "both tiles fit in static shared memory");
    if (p.M <= 0 || p.N <= 0) return Status::ok;
    const dim3 block(TILE, TILE);
    const dim3 grid((p.N + TILE - 1) / TILE, (p.M + TILE - 1) / TILE);
    if (grid.y > 65535) return Status::unsupported;
    tiled_kernel<T, TILE, PATCH_W, PAD, PREFETCH><<<grid, block, 0, p.stream>>>(
        p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C, p.ldc);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

}  // namespace

// The choice, measured on an H100 with reference/tuning (docs/reference-kernels.md): whole rows
// per warp, no padding, the next tiles prefetched into registers. At TILE = 32 and 4096³ the
// prefetch makes SGEMM 16% faster (10.0 against 8.7 TFLOPS); DGEMM runs at 4.9 TFLOPS with every
// layout and with or without it.
template <typename T, int TILE>
Status gemm_tiled(const GemmProblem<T>& p) {
    return run_tiled<T, TILE, TILE, 0, true>(p);
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
    //                                                                       T   TILE PATCH_W PAD
    f32.push_back({"tiled", "32 rows pad0", &run_tiled<float, 32, 32, 0>});
    f32.push_back({"tiled", "32 p4x8 pad1", &run_tiled<float, 32, 8, 1>});
    f32.push_back({"tiled", "32 p4x8 pad4", &run_tiled<float, 32, 8, 4>});
    f32.push_back({"tiled", "32 p2x16 pad4", &run_tiled<float, 32, 16, 4>});
    f64.push_back({"tiled", "32 rows pad0", &run_tiled<double, 32, 32, 0>});
    f64.push_back({"tiled", "32 p4x8 pad1", &run_tiled<double, 32, 8, 1>});
    f64.push_back({"tiled", "32 p4x8 pad2", &run_tiled<double, 32, 8, 2>});
    f64.push_back({"tiled", "32 p2x16 pad2", &run_tiled<double, 32, 16, 2>});
    f64.push_back({"tiled", "32 p8x4 pad2", &run_tiled<double, 32, 4, 2>});
    f64.push_back({"tiled", "16 p4x8 pad2", &run_tiled<double, 16, 8, 2>});
    f64.push_back({"tiled", "16 rows pad0", &run_tiled<double, 16, 16, 0>});
    f32.push_back({"tiled", "32 rows pad0 prefetch", &run_tiled<float, 32, 32, 0, true>});
    f32.push_back({"tiled", "16 rows pad0 prefetch", &run_tiled<float, 16, 16, 0, true>});
    f64.push_back({"tiled", "32 rows pad0 prefetch", &run_tiled<double, 32, 32, 0, true>});
    f64.push_back({"tiled", "32 p4x8 pad2 prefetch", &run_tiled<double, 32, 8, 2, true>});
    f64.push_back({"tiled", "16 rows pad0 prefetch", &run_tiled<double, 16, 16, 0, true>});
    f64.push_back({"tiled", "8 rows pad0 prefetch", &run_tiled<double, 8, 8, 0, true>});
    f32.push_back({"tiled", "32 two accumulators", &run_tiled_two_acc<float, 32>});
    f64.push_back({"tiled", "32 two accumulators", &run_tiled_two_acc<double, 32>});
    f64.push_back({"tiled", "16 two accumulators", &run_tiled_two_acc<double, 16>});
}
#endif

}  // namespace gemmlab::GEMMLAB_NS
