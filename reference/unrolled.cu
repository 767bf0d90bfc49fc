// reference/unrolled.cu — stage "unrolled", instructor solution: register blocking.
//
// The tiled kernel does one FMA per two shared-memory loads. Here each thread computes a TM×TN
// tile of C held in registers: at each k it loads TM values of A and TN values of B from shared
// memory into registers and does all TM·TN products between them (an outer product). With
// TM = TN = 8 that is 64 FMAs per 16 loads, 8× the arithmetic per load of the tiled kernel. The
// loops over the thread tile have compile-time bounds and are fully unrolled (#pragma unroll), so
// the accumulators, the A column and the B row all live in registers: an array indexed by
// run-time values would go to (slow) local memory instead.
//
// Layout. A block of THREADS_M×THREADS_N threads computes a BM×BN tile of C (BM = TM·THREADS_M,
// BN = TN·THREADS_N) and walks K in slabs of BK. The elements a thread owns are strided: thread
// (ty, tx) owns rows ty + i·THREADS_M and columns tx + j·THREADS_N. Then, at every step,
//   - the 16 lanes of a half-warp that share ty read the same A word (a broadcast), and the two
//     values of ty in a warp hit different banks: no bank conflict;
//   - lanes with consecutive tx read consecutive B words: no bank conflict;
//   - stores of C by consecutive lanes go to consecutive addresses: coalesced.
// Every access is a plain scalar one, so the kernel works for any leading dimension and any
// alignment (vector loads are the topic of the next stage).
//
// Edges: slabs that stick out of A or B are filled with zeros; only elements inside C are stored;
// when beta == 0, C is never read.
//
// Run it:  make check STAGE=unrolled      make bench STAGE=unrolled
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

template <typename T, int TM_, int TN_, int THREADS_M_, int THREADS_N_, int BK_, int MIN_BLOCKS_>
struct UnrolledConfig {
    using Elem = T;
    static constexpr int TM = TM_, TN = TN_;                          // C elements per thread
    static constexpr int THREADS_M = THREADS_M_, THREADS_N = THREADS_N_;
    static constexpr int THREADS = THREADS_M * THREADS_N;
    static constexpr int BM = TM * THREADS_M, BN = TN * THREADS_N;  // block tile of C
    static constexpr int BK = BK_;                                    // K slab
    static constexpr int MIN_BLOCKS = MIN_BLOCKS_;  // blocks per SM promised to the compiler
    static constexpr int A_LOADS = BM * BK / THREADS;  // elements of the A slab per thread
    static constexpr int B_LOADS = BK * BN / THREADS;  // elements of the B slab per thread

    static_assert(THREADS % 32 == 0 && THREADS <= 1024, "whole warps, at most 1024 threads");
    static_assert(THREADS_N % 16 == 0, "a half-warp spans one row of threads (broadcast of A)");
    static_assert((BM * BK) % THREADS == 0 && (BK * BN) % THREADS == 0,
                  "the slabs of A and B are shared evenly between the threads");
    static_assert(THREADS % BK == 0 && THREADS % BN == 0,
                  "each thread copies a fixed column of A and a fixed column of B");
    static_assert(TM * TN * sizeof(T) <= 512,
                  "at most 128 registers of accumulators: more spills out of the register file");
};

template <class Cfg>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS)
unrolled_kernel(int M, int N, int K, typename Cfg::Elem alpha,
                const typename Cfg::Elem* __restrict__ A, int lda,
                const typename Cfg::Elem* __restrict__ B, int ldb, typename Cfg::Elem beta,
                typename Cfg::Elem* __restrict__ C, int ldc) {
    using T = typename Cfg::Elem;
    constexpr int TM = Cfg::TM, TN = Cfg::TN, BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK;
    constexpr int TX = Cfg::THREADS_N, TY = Cfg::THREADS_M;

    __shared__ T As[BM][BK];  // As[m][k]: rows of the A slab (read as broadcasts)
    __shared__ T Bs[BK][BN];  // Bs[k][n]: rows of the B slab

    const int tid = threadIdx.x;
    const int tx = tid % TX, ty = tid / TX;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    // Copy coordinates: thread tid copies A[m0 + a_r + i·(THREADS/BK)][k0 + a_k] and
    // B[k0 + b_k + i·(THREADS/BN)][n0 + b_n]; consecutive threads take consecutive columns.
    const int a_k = tid % BK, a_r = tid / BK;
    const int b_n = tid % BN, b_k = tid / BN;

    T acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = T(0);

    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int i = 0; i < Cfg::A_LOADS; ++i) {
            const int r = a_r + i * (Cfg::THREADS / BK);
            const int m = m0 + r, k = k0 + a_k;
            As[r][a_k] = (m < M && k < K) ? A[static_cast<size_t>(m) * lda + k] : T(0);
        }
#pragma unroll
        for (int i = 0; i < Cfg::B_LOADS; ++i) {
            const int r = b_k + i * (Cfg::THREADS / BN);
            const int k = k0 + r, n = n0 + b_n;
            Bs[r][b_n] = (k < K && n < N) ? B[static_cast<size_t>(k) * ldb + n] : T(0);
        }
        __syncthreads();

#pragma unroll
        for (int k = 0; k < BK; ++k) {
            T a[TM], b[TN];  // a column of the A tile, a row of the B tile: registers
#pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = As[ty + i * TY][k];
#pragma unroll
            for (int j = 0; j < TN; ++j) b[j] = Bs[k][tx + j * TX];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int m = m0 + ty + i * TY;
        if (m >= M) continue;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int n = n0 + tx + j * TX;
            if (n >= N) continue;
            T* c = &C[static_cast<size_t>(m) * ldc + n];
            *c = (beta == T(0)) ? alpha * acc[i][j] : fma(beta, *c, alpha * acc[i][j]);
        }
    }
}

template <class Cfg>
Status run_config(const GemmProblem<typename Cfg::Elem>& p) {
    if (p.M <= 0 || p.N <= 0) return Status::ok;
    const dim3 grid((p.N + Cfg::BN - 1) / Cfg::BN, (p.M + Cfg::BM - 1) / Cfg::BM);
    if (grid.y > 65535) return Status::unsupported;
    unrolled_kernel<Cfg><<<grid, Cfg::THREADS, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda,
                                                              p.B, p.ldb, p.beta, p.C, p.ldc);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

// The configurations the stage uses, as named types (the kernels' symbols say what they are for).
//                                             T   TM  TN  TY  TX  BK  MIN_BLOCKS
// float: 8×8 per thread, 16×16 threads → 128×128 block tile, K slabs of 16 (16 KB of shared
// memory: half as many barriers as slabs of 8), 64 FMAs per 16 shared loads; ~120 registers, so
// two blocks (16 warps) per SM.
struct FloatConfig  : UnrolledConfig<float,   8,  8, 16, 16, 16, 2> {};
// double: 8×4 per thread → 128×64 block tile. FP64 FMAs are half as fast, so fewer loads per FMA
// are needed, and 32 accumulators (64 registers) leave room for two blocks per SM.
struct DoubleConfig : UnrolledConfig<double,  8,  4, 16, 16,  8, 2> {};

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    if constexpr (sizeof(T) == 4) {
        return run_config<FloatConfig>(p);
    } else {
        return run_config<DoubleConfig>(p);
    }
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS

#ifdef GEMMLAB_TUNE
#include "tuning/unrolled.h"  // other configurations, timed beside these by reference/tuning
#endif
