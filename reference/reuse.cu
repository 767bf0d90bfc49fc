// reference/reuse.cu — stage "reuse", instructor solution: maximal shared-memory reuse.
//
// The fastest kernel of the ladder. It combines every technique of the earlier stages and adds
// the ones that decide the last factor of two on a modern GPU:
//
//   1. 2D block tiling: a block computes a BM×BN tile of C and walks K in slabs of BK. Every
//      element of A it stages in shared memory is used BN times, every element of B BM times.
//   2. Warp tiling: the block tile is split into WM×WN warp tiles and each warp tile into a 2D
//      grid of 32 threads, each computing TM×TN elements of C in registers. A thread's TM×TN tile
//      is not contiguous: it is made of (TM/V)×(TN/V) fragments of V×V elements (V elements = 16
//      bytes: 4 floats or 2 doubles), spaced so that the lanes of a warp read *adjacent* 16-byte
//      vectors from shared memory. That makes every shared-memory read a conflict-free LDS.128,
//      and lanes that need the same vector get it by broadcast.
//   3. A stored transposed in shared memory (As[k][m]): the TM values of A that a thread needs at
//      one k are then contiguous and load as vectors, exactly like B's. The transpose happens
//      during the copy from global memory, element by element (cp.async of 4 or 8 bytes).
//   4. A multi-stage pipeline with cp.async (sm_80+): global→shared copies of the next
//      STAGES-1 slabs are in flight while the current one is computed; no registers are spent on
//      staging and one __syncthreads per slab suffices. (Before sm_80 the same copies are done
//      synchronously, gemmlab/arch.h: correct, without the overlap.)
//   5. Register double-buffering: the fragments of step k+1 are loaded from shared memory while
//      the FMAs of step k execute, so the FMA pipe never waits on shared-memory latency.
//
//   6. SGEMM scheduled for the FMA pipe (reuse_ffma_kernel, float configurations). An SM's four
//      schedulers each issue one warp instruction per clock and an FFMA fills a scheduler's 32
//      FP32 lanes for exactly one clock, so every other instruction costs an FFMA's slot. The
//      float kernel keeps 1–5 and (a) walks K in slabs of 16 (one barrier per 2048 FFMAs of a
//      thread), (b) has no branch in its slab loop, (c) during slab s, at k-step 8, copies slab
//      s + STAGES - 1 into the stage of slab s - 1, away from the barrier, (d) issues its FMAs in
//      strips of 2×2 blocks (FmaOrder), an order that leads ptxas to a schedule whose
//      shared-memory loads wait less, and (e) reads the old values of a tile inside C in batches
//      instead of one vector at a time. With these it runs as fast as cuBLAS SGEMM on an H100.
//
//   7. DGEMM on the FP64 tensor cores (Part 2, reuse_dmma_kernel, sm_80 and later). An H100 SM does
//      64 FP64 FMAs per clock on its FMA units but 128 on its tensor cores (DMMA), with IEEE double
//      products and sums (no precision is lost: the checker's bound is the same). Before sm_80
//      there are none: the double stage then runs reuse_kernel's FMA configurations.
//
// Why it is fast: an SM does 128 FP32 FMAs per clock but reads only 128 bytes of shared memory
// per clock. A thread with a 16×8 register tile performs 128 FMAs per 6 LDS.128 (24 values),
// which keeps shared memory under its limit; a 4×4 tile would need 4× the shared-memory
// bandwidth and could never reach more than ~25% of the FMA peak.
//
// What each configuration measured, and the designs that lost (stream-K, the Ampere-era m8n8k4,
// other tiles and orders): docs/reference-kernels.md; the candidates: reference/tuning/reuse.h.
//
// Edges: every stage works for any M, N, K >= 1 and any leading dimension. Copies that would read
// outside A or B are predicated: cp.async with a source size of 0 writes zeros to shared memory,
// so partial tiles compute with zeros and no special code runs in the inner loop. Interior tiles
// take an unpredicated fast path. B is copied as 16-byte vectors when every row of B is 16-byte
// aligned (ldb a multiple of V and B aligned), else element by element. C is written as vectors
// when ldc allows it and element by element at the right edge, so nothing between N and ldc is
// written; when beta == 0, C is never read.
//
// Run it:  make check STAGE=reuse      make bench STAGE=reuse
// Tune it: reference/tuning/run.sh --tune --stages reuse   (the candidates: reference/tuning/reuse.h)
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "gemmlab/arch.h"
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

// ------------------------------------------------------------------------------------------------
// cp.async (asynchronous global→shared copy, sm_80+) and 16-byte shared-memory vectors
// ------------------------------------------------------------------------------------------------

__device__ __forceinline__ uint32_t shared_address(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Copies `src_bytes` (0..BYTES) bytes from global memory to shared memory and zero-fills the
// rest of the BYTES-byte destination. src_bytes == 0 reads nothing: that is how out-of-range
// elements become zeros. 16-byte copies bypass L1 (.cg); smaller ones must use .ca.
template <int BYTES>
__device__ __forceinline__ void cp_async(uint32_t dst, const void* src, int src_bytes) {
    static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async copies 4, 8 or 16 bytes");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    copy_to_shared_sync<BYTES>(dst, src, src_bytes);
#else
    if constexpr (BYTES == 16) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                     "r"(src_bytes)
                     : "memory");
    } else {
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(src),
                     "n"(BYTES), "r"(src_bytes)
                     : "memory");
    }
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

// One 16-byte load from shared memory (LDS.128) into V consecutive registers.
__device__ __forceinline__ void load_vec16(float* dst, const float* src) {
    const float4 v = *reinterpret_cast<const float4*>(src);
    dst[0] = v.x; dst[1] = v.y; dst[2] = v.z; dst[3] = v.w;
}
__device__ __forceinline__ void load_vec16(double* dst, const double* src) {
    const double2 v = *reinterpret_cast<const double2*>(src);
    dst[0] = v.x; dst[1] = v.y;
}
// 16-byte global load/store of C (only used when the address is known to be aligned).
__device__ __forceinline__ void load_vec16_global(float* dst, const float* src) { load_vec16(dst, src); }
__device__ __forceinline__ void load_vec16_global(double* dst, const double* src) { load_vec16(dst, src); }
__device__ __forceinline__ void store_vec16(float* dst, const float* v) {
    *reinterpret_cast<float4*>(dst) = make_float4(v[0], v[1], v[2], v[3]);
}
__device__ __forceinline__ void store_vec16(double* dst, const double* v) {
    *reinterpret_cast<double2*>(dst) = make_double2(v[0], v[1]);
}

// ------------------------------------------------------------------------------------------------
// The tile configuration: every size of the kernel, and the constraints between them
// ------------------------------------------------------------------------------------------------

template <typename T, int BM_, int BN_, int BK_, int WM_, int WN_, int TM_, int TN_, int STAGES_, int MIN_BLOCKS_>
struct ReuseConfig {
    using Elem = T;
    static constexpr int BM = BM_, BN = BN_, BK = BK_;  // block tile of C, K slab
    static constexpr int WM = WM_, WN = WN_;            // warp tile of C
    static constexpr int TM = TM_, TN = TN_;            // thread tile of C (registers)
    static constexpr int STAGES = STAGES_;              // shared-memory pipeline depth
    static constexpr int MIN_BLOCKS = MIN_BLOCKS_;      // blocks per SM promised to the compiler

    static constexpr int V = 16 / int(sizeof(T));  // elements per 16-byte vector
    static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN, WARPS = WARPS_M * WARPS_N;
    static constexpr int THREADS = 32 * WARPS;
    static constexpr int WTM = WM / TM, WTN = WN / TN;  // the 32 lanes of a warp as a WTM×WTN grid
    static constexpr int FM = TM / V, FN = TN / V;      // V×V fragments per thread

    // Transposed A: As[k][m], each row padded so that the copy-in (8 k × 4 rows per warp
    // instruction, see below) is conflict-free while rows stay 16-byte aligned for LDS.128.
    // float: A_LD ≡ 4 (mod 32) words; double: A_LD ≡ 2 (mod 16) elements.
    static constexpr int A_LD = BM + (sizeof(T) == 4 ? 4 : 2);
    static constexpr int B_LD = BN;  // read as whole vectors: no conflicts
    static constexpr int A_STAGE = BK * A_LD, B_STAGE = BK * B_LD, STAGE = A_STAGE + B_STAGE;
    static constexpr size_t SMEM_BYTES = size_t(STAGES) * STAGE * sizeof(T);

    // Copy of A: the BM×BK slab is cut in chunks of 4 rows × 8 k (one per warp instruction:
    // lane → row lane/8, k lane%8, i.e. 32 contiguous bytes of four rows of A).
    static constexpr int ROW_GROUPS = BM / 4;
    static constexpr int A_ITERS = BM * BK / 32 / WARPS;  // chunks per warp
    // Copy of B: 16-byte vectors, consecutive threads take consecutive vectors of a row.
    static constexpr int B_VECS_PER_ROW = BN / V;
    static constexpr int B_ROWS_PER_ITER = THREADS / B_VECS_PER_ROW;
    static constexpr int B_VEC_ITERS = BK / B_ROWS_PER_ITER;
    static constexpr int B_SCALAR_ITERS = BK * BN / THREADS;  // fallback: one element at a time

    static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must cover the block tile");
    static_assert(WM % TM == 0 && WN % TN == 0, "thread tiles must cover the warp tile");
    static_assert(WTM * WTN == 32, "a warp tile is computed by exactly 32 lanes");
    static_assert(TM % V == 0 && TN % V == 0, "thread tiles are made of whole 16-byte vectors");
    static_assert(FM * V == TM && FN * V == TN, "V×V fragments cover the thread tile");
    static_assert(BK % 8 == 0, "A is copied in chunks of 8 k");
    static_assert(BM % 32 == 0, "A_LD padding assumes BM is a multiple of 32");
    static_assert(ROW_GROUPS % WARPS == 0 && (BM * BK / 32) % WARPS == 0,
                  "the chunks of the A slab must be shared evenly between the warps");
    static_assert(THREADS % B_VECS_PER_ROW == 0 && BK % B_ROWS_PER_ITER == 0,
                  "the vectors of the B slab must be shared evenly between the threads");
    static_assert((BK * BN) % THREADS == 0, "the elements of the B slab (fallback copy) too");
    static_assert((A_LD * sizeof(T)) % 16 == 0 && (B_LD * sizeof(T)) % 16 == 0 &&
                      (A_STAGE * sizeof(T)) % 16 == 0 && (STAGE * sizeof(T)) % 16 == 0,
                  "shared-memory rows must stay 16-byte aligned for LDS.128 and cp.async");
    static_assert(STAGES >= 2, "a pipeline needs at least two stages");
    static_assert(TM * TN <= 128, "more accumulators than that spill out of the 255 registers");
    static_assert(BK % 2 == 0, "register double-buffering alternates fragments over the steps");
};

// Block swizzle: consecutive blocks walk down GROUP_M block-rows before moving right, so the
// blocks resident at one time share slabs of A and B in L2 (matters for 8192² and up).
constexpr int kGroupM = 8;

__device__ __forceinline__ void swizzled_tile(int id, int tiles_m, int tiles_n, int& tm, int& tn) {
    const int per_group = kGroupM * tiles_n;
    const int first_m = (id / per_group) * kGroupM;
    const int group_m = min(tiles_m - first_m, kGroupM);
    const int in_group = id % per_group;
    tm = first_m + in_group % group_m;
    tn = in_group / group_m;
}

// ------------------------------------------------------------------------------------------------
// The kernel
// ------------------------------------------------------------------------------------------------

template <class Cfg, bool kVecB>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS)
reuse_kernel(int M, int N, int K, typename Cfg::Elem alpha, const typename Cfg::Elem* __restrict__ A,
             int lda, const typename Cfg::Elem* __restrict__ B, int ldb,
             typename Cfg::Elem beta, typename Cfg::Elem* __restrict__ C, int ldc, bool vec_c) {
    using T = typename Cfg::Elem;
    constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, V = Cfg::V;
    constexpr int TM = Cfg::TM, TN = Cfg::TN, STAGES = Cfg::STAGES;
    constexpr int A_LD = Cfg::A_LD, B_LD = Cfg::B_LD;

    extern __shared__ __align__(16) unsigned char smem_raw[];
    T* const smem = reinterpret_cast<T*>(smem_raw);  // STAGES × { As[BK][A_LD], Bs[BK][B_LD] }

    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    int tile_m, tile_n;
    swizzled_tile(blockIdx.x, tiles_m, tiles_n, tile_m, tile_n);
    const int m0 = tile_m * BM, n0 = tile_n * BN;

    // K is walked in num_slabs slabs of BK. The partial slab (when BK does not divide K) is the
    // FIRST one: it starts at k_first = K - num_slabs*BK <= 0 and its elements k < 0 are zeros.
    // Every later slab is full, so the copies in the main loop need no test on k.
    const int num_slabs = (K + BK - 1) / BK;
    const int k_first = K - num_slabs * BK;

    // ---- global→shared copy of one K slab into one pipeline stage --------------------------
    // A: chunk c = i*WARPS + warp covers rows 4*(c % ROW_GROUPS) + lane/8, k 8*(c / ROW_GROUPS) + lane%8.
    const int a_row = warp * 4 + lane / 8, a_k = lane % 8;
    const T* const a_src = A + static_cast<size_t>(m0) * lda;  // row m0 of A
    // B: vector v = i*THREADS + tid covers row v / B_VECS_PER_ROW, columns V*(v % B_VECS_PER_ROW).
    const int b_row = tid / Cfg::B_VECS_PER_ROW, b_col = (tid % Cfg::B_VECS_PER_ROW) * V;
    const T* const b_src = B + n0;  // column n0 of B

    // kGuardMN: the block overlaps the bottom or right edge (rows >= M / columns >= N read as
    // zeros). kGuardK: the slab is the partial first one (k < 0 reads as zeros). Interior blocks
    // in the main loop take the version with neither test: a copy is then one address
    // computation and one LDGSTS.
    auto copy_slab = [&](int slab, int stage, auto guard_mn, auto guard_k) {
        constexpr bool kGuardMN = decltype(guard_mn)::value, kGuardK = decltype(guard_k)::value;
        T* const As = smem + stage * Cfg::STAGE;
        T* const Bs = As + Cfg::A_STAGE;
        const int k0 = k_first + slab * BK;
#pragma unroll
        for (int i = 0; i < Cfg::A_ITERS; ++i) {
            const int c = i * Cfg::WARPS;  // + warp, folded into a_row (ROW_GROUPS % WARPS == 0)
            const int r = a_row + 4 * (c % Cfg::ROW_GROUPS), k = a_k + 8 * (c / Cfg::ROW_GROUPS);
            const uint32_t dst = shared_address(As + k * A_LD + r);  // transposed: As[k][m]
            const T* src = a_src + static_cast<size_t>(r) * lda + (k0 + k);
            if constexpr (kGuardMN || kGuardK) {
                const bool ok = (!kGuardMN || m0 + r < M) && (!kGuardK || k0 + k >= 0);
                cp_async<sizeof(T)>(dst, ok ? src : A, ok ? int(sizeof(T)) : 0);
            } else {
                cp_async<sizeof(T)>(dst, src, sizeof(T));
            }
        }
        if constexpr (kVecB) {
#pragma unroll
            for (int i = 0; i < Cfg::B_VEC_ITERS; ++i) {
                const int k = b_row + i * Cfg::B_ROWS_PER_ITER;
                const uint32_t dst = shared_address(Bs + k * B_LD + b_col);
                const T* src = b_src + static_cast<size_t>(k0 + k) * ldb + b_col;
                if constexpr (kGuardMN || kGuardK) {
                    // A partial vector at the right edge copies only its valid elements.
                    const int cols = kGuardMN ? min(max(N - (n0 + b_col), 0), V) : V;
                    const int valid = (!kGuardK || k0 + k >= 0) ? cols : 0;
                    cp_async<16>(dst, valid > 0 ? src : B, valid * int(sizeof(T)));
                } else {
                    cp_async<16>(dst, src, 16);
                }
            }
        } else {
#pragma unroll
            for (int i = 0; i < Cfg::B_SCALAR_ITERS; ++i) {
                const int e = i * Cfg::THREADS + tid;
                const int k = e / BN, n = e % BN;
                const uint32_t dst = shared_address(Bs + k * B_LD + n);
                const T* src = b_src + static_cast<size_t>(k0 + k) * ldb + n;
                if constexpr (kGuardMN || kGuardK) {
                    const bool ok = (!kGuardMN || n0 + n < N) && (!kGuardK || k0 + k >= 0);
                    cp_async<sizeof(T)>(dst, ok ? src : B, ok ? int(sizeof(T)) : 0);
                } else {
                    cp_async<sizeof(T)>(dst, src, sizeof(T));
                }
            }
        }
    };

    // ---- fragments: where this thread reads As and Bs -------------------------------------
    const int warp_m = warp / Cfg::WARPS_N, warp_n = warp % Cfg::WARPS_N;
    // The lane's V×V fragments start at a_frag (+ f·WTM·V) and b_frag (+ f·WTN·V).
    const int lane_m = lane / Cfg::WTN, lane_n = lane % Cfg::WTN;
    const int a_frag = warp_m * Cfg::WM + lane_m * V;
    const int b_frag = warp_n * Cfg::WN + lane_n * V;

    T frag_a[2][TM], frag_b[2][TN];  // double-buffered over the k-steps
    auto load_fragments = [&](T* fa, T* fb, int stage, int k) {
        const T* As = smem + stage * Cfg::STAGE + k * A_LD + a_frag;
        const T* Bs = smem + stage * Cfg::STAGE + Cfg::A_STAGE + k * B_LD + b_frag;
#pragma unroll
        for (int f = 0; f < Cfg::FM; ++f) load_vec16(fa + f * V, As + f * Cfg::WTM * V);
#pragma unroll
        for (int f = 0; f < Cfg::FN; ++f) load_vec16(fb + f * V, Bs + f * Cfg::WTN * V);
    };

    T acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = T(0);

    // The whole pipeline, instantiated twice below: for interior blocks (no bounds tests at all)
    // and for edge blocks. The branch between the two is uniform per block and taken once.
    auto pipeline = [&](auto guard_mn) {
        using GuardK = std::true_type;
        using NoGuardK = std::false_type;

        // ---- prologue: fill every stage (slab 0 is the partial one), wait for slab 0 --------
        copy_slab(0, 0, guard_mn, GuardK{});
        cp_async_commit();
#pragma unroll
        for (int s = 1; s < STAGES; ++s) {
            if (s < num_slabs) copy_slab(s, s, guard_mn, NoGuardK{});
            cp_async_commit();  // one group per slab, empty or not, keeps the counting uniform
        }
        cp_async_wait<STAGES - 1>();
        __syncthreads();
        load_fragments(frag_a[0], frag_b[0], 0, 0);

        // ---- main loop: one slab per iteration, one barrier per slab ------------------------
        int stage = 0;
        for (int slab = 0; slab < num_slabs; ++slab) {
#pragma unroll
            for (int k = 0; k < BK; ++k) {
                const int cur = k % 2, nxt = cur ^ 1;
                if (k < BK - 1) {
                    load_fragments(frag_a[nxt], frag_b[nxt], stage, k + 1);
                } else if (slab + 1 < num_slabs) {
                    // Last step of the slab: every fragment of this stage is in registers. Wait
                    // for the next slab (STAGES-2 newer groups may stay in flight), make it
                    // visible to all threads, then refill the stage just consumed.
                    cp_async_wait<STAGES - 2>();
                    __syncthreads();
                    if (slab + STAGES < num_slabs) copy_slab(slab + STAGES, stage, guard_mn, NoGuardK{});
                    cp_async_commit();
                    load_fragments(frag_a[nxt], frag_b[nxt], stage + 1 == STAGES ? 0 : stage + 1, 0);
                }
                // The outer product: TM×TN independent FMAs.
#pragma unroll
                for (int i = 0; i < TM; ++i)
#pragma unroll
                    for (int j = 0; j < TN; ++j)
                        acc[i][j] = fma(frag_a[cur][i], frag_b[cur][j], acc[i][j]);
            }
            stage = (stage + 1 == STAGES) ? 0 : stage + 1;
        }
    };
    const bool interior = (m0 + BM <= M) && (n0 + BN <= N);
    if (interior) {
        pipeline(std::false_type{});
    } else {
        pipeline(std::true_type{});
    }

    // ---- epilogue: C = alpha·acc + beta·C, vectors inside, elements at the right edge ---------
    // Writes V consecutive results to row `row`, columns col..col+V-1 of C.
    auto write_c = [&](int row, int col, const T* values) {
        if (row >= M) return;
        T* const c_row = C + static_cast<size_t>(row) * ldc;
        T out[V];
#pragma unroll
        for (int v = 0; v < V; ++v) out[v] = alpha * values[v];
        if (vec_c && col + V <= N) {
            if (beta != T(0)) {
                T old[V];
                load_vec16_global(old, c_row + col);
#pragma unroll
                for (int v = 0; v < V; ++v) out[v] = fma(beta, old[v], out[v]);
            }
            store_vec16(c_row + col, out);
        } else {
#pragma unroll
            for (int v = 0; v < V; ++v) {
                if (col + v < N) {
                    T* c = c_row + col + v;
                    *c = (beta != T(0)) ? fma(beta, *c, out[v]) : out[v];
                }
            }
        }
    };
#pragma unroll
    for (int fi = 0; fi < Cfg::FM; ++fi)
#pragma unroll
        for (int vi = 0; vi < V; ++vi)
#pragma unroll
            for (int fj = 0; fj < Cfg::FN; ++fj)
                write_c(m0 + a_frag + fi * Cfg::WTM * V + vi, n0 + b_frag + fj * Cfg::WTN * V,
                        &acc[fi * V + vi][fj * V]);
}

// ------------------------------------------------------------------------------------------------
// The float kernel: the same design, scheduled for the FP32 FMA pipe
// ------------------------------------------------------------------------------------------------
//
// An SM issues one warp instruction per clock per scheduler, and an FFMA keeps a scheduler's 32
// FP32 lanes busy for exactly one clock: every other instruction (shared loads, copies, address
// arithmetic, the barrier) costs an FFMA's slot (header, section 6). This kernel differs from
// reuse_kernel only where that matters:
//   - slabs of BK = 16 k: the wait, the barrier and the loop bookkeeping come once per 2048
//     FFMAs of a thread instead of once per 1024 (BK = 32 measured slower: its loop body is twice
//     as long);
//   - the loop over the slabs has no branch in it: past the last slab, a copy re-reads the last
//     slab into a stage nobody reads again, instead of being skipped (interior blocks need >= 2
//     slabs for that, so that the last slab is a full one; the others test every element);
//   - at the slab boundary the fragments of the next slab are read right after the barrier;
//   - the copy of a slab is issued at k-step COPY_STEP of a slab, into the stage of the slab
//     before it (every thread has passed the barrier that ended that slab), rather than right
//     after the barrier: the copies' latency no longer meets the barrier's (fewer long-scoreboard
//     stalls, measured faster);
//   - the copies address A and B from one per-thread base pointer each plus constants.

template <int BM_, int BN_, int BK_, int WM_, int WN_, int TM_, int TN_, int STAGES_, int MIN_BLOCKS_,
          int COPY_STEP_, int ORDER_ = 0, int EPI_BATCH_ = 0>
struct SgemmConfig {
    using Elem = float;
    using FfmaKernel = void;  // marks a configuration of reuse_ffma_kernel (kernel_for)
    static constexpr int BM = BM_, BN = BN_, BK = BK_;  // block tile of C, K slab
    static constexpr int WM = WM_, WN = WN_;            // warp tile of C
    static constexpr int TM = TM_, TN = TN_;            // thread tile of C (registers)
    static constexpr int STAGES = STAGES_;              // shared-memory pipeline depth
    static constexpr int MIN_BLOCKS = MIN_BLOCKS_;      // blocks per SM promised to the compiler
    static constexpr int COPY_STEP = COPY_STEP_;        // the k-step of a slab that issues a copy (-1: after the barrier)
    static constexpr int ORDER = ORDER_;                // order of the FMAs of a k-step (FmaOrder)
    static constexpr int EPI_BATCH = EPI_BATCH_;        // row fragments of C read per batch (0: vector by vector)

    static constexpr int V = 4;  // floats per 16-byte vector
    static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN, WARPS = WARPS_M * WARPS_N;
    static constexpr int THREADS = 32 * WARPS;
    static constexpr int WTM = WM / TM, WTN = WN / TN;  // the 32 lanes of a warp as a WTM×WTN grid
    static constexpr int FM = TM / V, FN = TN / V;      // 4×4 fragments per thread

    // As[k][m] (transposed, rows padded to ≡ 4 mod 32 floats: conflict-free transposing copy),
    // Bs[k][n] (read as whole vectors: no padding needed).
    static constexpr int A_LD = BM + 4, B_LD = BN;
    static constexpr int A_STAGE = BK * A_LD, B_STAGE = BK * B_LD, STAGE = A_STAGE + B_STAGE;
    static constexpr size_t SMEM_BYTES = size_t(STAGES) * STAGE * sizeof(float);

    // Copy of A: one warp instruction moves 4 rows × 8 k (lane → row lane/8, k lane%8: 32
    // contiguous bytes of each row). A thread copies A_ROW_PASSES rows × A_K_PASSES chunks of k.
    static constexpr int A_ROWS_PER_PASS = 4 * WARPS;
    static constexpr int A_ROW_PASSES = BM / A_ROWS_PER_PASS, A_K_PASSES = BK / 8;
    // Copy of B: 16-byte vectors, consecutive threads take consecutive vectors of a row.
    static constexpr int B_VECS_PER_ROW = BN / V;
    static constexpr int B_ROWS_PER_PASS = THREADS / B_VECS_PER_ROW;
    static constexpr int B_PASSES = BK / B_ROWS_PER_PASS;
    static constexpr int B_SCALAR_ITERS = BK * BN / THREADS;  // fallback: one element at a time

    static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must cover the block tile");
    static_assert(WM % TM == 0 && WN % TN == 0 && WTM * WTN == 32, "32 thread tiles make a warp tile");
    static_assert(TM % V == 0 && TN % V == 0, "thread tiles are made of whole 16-byte vectors");
    static_assert(BM % 32 == 0, "A_LD ≡ 4 (mod 32) assumes BM is a multiple of 32");
    static_assert(BM % A_ROWS_PER_PASS == 0 && BK % 8 == 0, "the A slab splits into whole passes");
    static_assert(THREADS % B_VECS_PER_ROW == 0 && BK % B_ROWS_PER_PASS == 0,
                  "the vectors of the B slab must be shared evenly between the threads");
    static_assert((BK * BN) % THREADS == 0 && (THREADS % BN == 0 || BN % THREADS == 0),
                  "the elements of the B slab (fallback copy) too, in whole rows or row parts");
    static_assert(STAGES >= 3 && BK % 2 == 0, "a pipeline of >= 3 stages, an even number of k-steps");
    static_assert(COPY_STEP >= -1 && COPY_STEP < BK - 1, "the copy is issued before the last k-step, or right after the barrier");
    static_assert(TM * TN <= 128, "more accumulators than that spill out of the 255 registers");
    static_assert(EPI_BATCH >= 0 && (EPI_BATCH == 0 || FM % EPI_BATCH == 0),
                  "the epilogue reads C in whole batches of row fragments");
};

// The order in which a thread issues the TM×TN FMAs of one k-step (FmaOrder<ORDER, TM, TN>).
// ptxas keeps much of the source order, and the order decides where it places the shared-memory
// loads of the next k-step and which registers it gives the accumulators, so it decides speed:
// with the same instructions, the orders below differ by up to 8% (docs/reference-kernels.md). In
// the SASS (reference/tuning/sass_loop.py), loops that use many loaded fragments less than 40
// instructions after their LDS were all slow; few such uses did not make a loop fast: only timing
// tells.
//   kRowByRow    row i of the thread tile after row i − 1, columns in order;
//   kSerpentine  the same with odd rows backwards (consecutive FMAs share an operand);
//   100 + code   strips: 2×2 blocks of FMAs (a_r·b_c, a_r·b_c+1, a_r+1·b_c+1, a_r+1·b_c), which
//                read two values of A and two of B for four FMAs, grouped in strips of STRIP rows;
//                a strip walks its column pairs and, for each, its row pairs. code = 16·log2(STRIP/4)
//                + 4·inner + 2·snake_columns + snake_rows: snake_columns walks the column pairs
//                of odd strips backwards, snake_rows the row pairs of odd column pairs; inner
//                orders a block's four FMAs as above (0), row-major (1), column-major (2) or
//                the first one backwards (3).
[[maybe_unused]] constexpr int kRowByRow = 0, kSerpentine = 1;
constexpr int strip_order(int strip_rows, int inner, bool snake_columns, bool snake_rows) {
    return 100 + 16 * (strip_rows == 4 ? 0 : strip_rows == 8 ? 1 : 2) + 4 * inner + 2 * snake_columns + snake_rows;
}

template <int ORDER, int TM, int TN>
struct FmaOrder {
    int i[TM * TN] = {}, j[TM * TN] = {};  // the n-th FMA updates acc[i[n]][j[n]]
    int n = 0;
    __host__ __device__ constexpr void put(int r, int c) { i[n] = r, j[n] = c, ++n; }
    __host__ __device__ constexpr bool complete() const {  // every (i, j) exactly once
        if (n != TM * TN) return false;
        for (int a = 0; a < n; ++a)
            for (int b = a + 1; b < n; ++b)
                if (i[a] == i[b] && j[a] == j[b]) return false;
        return true;
    }
    __host__ __device__ constexpr FmaOrder() {
        if (ORDER < 100) {
            for (int r = 0; r < TM; ++r)
                for (int c = 0; c < TN; ++c) put(r, (ORDER == kSerpentine && r % 2) ? TN - 1 - c : c);
            return;
        }
        const int code = ORDER - 100, strip = 4 << (code >= 0 ? code / 16 : 0), inner = (code / 4) % 4;
        const bool snake_c = (code / 2) % 2, snake_r = code % 2;
        for (int g = 0; g < TM / strip; ++g)
            for (int jb = 0; jb < TN / 2; ++jb)
                for (int ib = 0; ib < strip / 2; ++ib) {
                    const int c = 2 * ((snake_c && g % 2) ? TN / 2 - 1 - jb : jb);
                    const int r = strip * g + 2 * ((snake_r && jb % 2) ? strip / 2 - 1 - ib : ib);
                    if (inner == 0) put(r, c), put(r, c + 1), put(r + 1, c + 1), put(r + 1, c);
                    else if (inner == 1) put(r, c), put(r, c + 1), put(r + 1, c), put(r + 1, c + 1);
                    else if (inner == 2) put(r, c), put(r + 1, c), put(r, c + 1), put(r + 1, c + 1);
                    else put(r + 1, c), put(r + 1, c + 1), put(r, c + 1), put(r, c);
                }
    }
};

// Which tiles of C a block computes: the stage gives each block one whole tile, in the swizzled
// order. (A schedule is a kernel parameter so that reference/tuning/reuse.h can try another one:
// stream-K, which shares the K slabs of the last, partial wave out between the blocks.)
struct WholeTiles {
    // set_tile(t) points the block at tile t, compute(first_slab, slabs) accumulates that range of
    // K slabs into the thread's registers, epilogue() writes them to C.
    template <class Cfg, class Acc, class SetTile, class Compute, class Epilogue>
    __device__ __forceinline__ void run(int /*tiles*/, int num_slabs, int /*tid*/, Acc& /*acc*/, SetTile& set_tile,
                                        Compute& compute, Epilogue& epilogue) const {
        set_tile(static_cast<int>(blockIdx.x));
        compute(0, num_slabs);
        epilogue();
    }
};

template <class Cfg, bool kVecB, class Schedule>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS)
reuse_ffma_kernel(int M, int N, int K, float alpha,
                  const float* __restrict__ A, int lda, const float* __restrict__ B, int ldb,
                  float beta, float* __restrict__ C, int ldc, bool vec_c, Schedule schedule) {
    constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, V = Cfg::V;
    constexpr int TM = Cfg::TM, TN = Cfg::TN, STAGES = Cfg::STAGES;
    constexpr int A_LD = Cfg::A_LD, B_LD = Cfg::B_LD;

    extern __shared__ __align__(16) unsigned char smem_raw[];
    float* const smem = reinterpret_cast<float*>(smem_raw);  // STAGES × { As[BK][A_LD], Bs[BK][B_LD] }

    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;

    // As in reuse_kernel, the partial slab is the first one (k from k_first < 0: zeros).
    const int num_slabs = (K + BK - 1) / BK;
    const int k_first = K - num_slabs * BK;

    // ---- global→shared copy of one K slab (its first k: k0) into one stage -----------------
    const int a_row = warp * 4 + lane / 8, a_k = lane % 8;      // + p·A_ROWS_PER_PASS, + 8q
    const int b_row = tid / Cfg::B_VECS_PER_ROW, b_col = (tid % Cfg::B_VECS_PER_ROW) * V;  // + j·B_ROWS_PER_PASS
    int m0 = 0, n0 = 0;  // the tile of C being computed (set_tile)
    const float* a_src = A;
    const float* b_src = B;
    auto set_tile = [&](int tile) {
        int tile_m, tile_n;
        swizzled_tile(tile, tiles_m, tiles_n, tile_m, tile_n);
        m0 = tile_m * BM, n0 = tile_n * BN;
        a_src = A + static_cast<size_t>(m0 + a_row) * lda + a_k;
        b_src = B + static_cast<size_t>(b_row) * ldb + n0 + b_col;
    };
    const uint32_t a_dst = shared_address(smem + a_k * A_LD + a_row);
    const uint32_t b_dst = shared_address(smem + Cfg::A_STAGE + b_row * B_LD + b_col);
    const int bs_row = tid / BN, bs_col = tid % BN;  // element-wise copy of B (unaligned rows)
    const uint32_t bs_dst = shared_address(smem + Cfg::A_STAGE + bs_row * B_LD + bs_col);

    auto copy_slab = [&](int k0, int stage, auto guard_mn, auto guard_k) {
        constexpr bool kGuardMN = decltype(guard_mn)::value, kGuardK = decltype(guard_k)::value;
        const uint32_t stage_bytes = stage * Cfg::STAGE * sizeof(float);
#pragma unroll
        for (int p = 0; p < Cfg::A_ROW_PASSES; ++p) {
            const int r = p * Cfg::A_ROWS_PER_PASS;  // + a_row
            const float* const src_row = a_src + static_cast<size_t>(r) * lda + k0;
#pragma unroll
            for (int q = 0; q < Cfg::A_K_PASSES; ++q) {
                const uint32_t dst = a_dst + stage_bytes + (8 * q * A_LD + r) * sizeof(float);
                if constexpr (kGuardMN || kGuardK) {
                    const bool ok = (!kGuardMN || m0 + a_row + r < M) && (!kGuardK || k0 + a_k + 8 * q >= 0);
                    cp_async<4>(dst, ok ? src_row + 8 * q : A, ok ? 4 : 0);
                } else {
                    cp_async<4>(dst, src_row + 8 * q, 4);
                }
            }
        }
        if constexpr (kVecB) {
#pragma unroll
            for (int j = 0; j < Cfg::B_PASSES; ++j) {
                const int k = j * Cfg::B_ROWS_PER_PASS;  // + b_row
                const uint32_t dst = b_dst + stage_bytes + k * B_LD * sizeof(float);
                const float* const src = b_src + static_cast<size_t>(k0 + k) * ldb;
                if constexpr (kGuardMN || kGuardK) {
                    // A partial vector at the right edge copies only its valid elements.
                    const int cols = kGuardMN ? min(max(N - (n0 + b_col), 0), V) : V;
                    const int valid = (!kGuardK || k0 + b_row + k >= 0) ? cols : 0;
                    cp_async<16>(dst, valid > 0 ? src : B, valid * 4);
                } else {
                    cp_async<16>(dst, src, 16);
                }
            }
        } else {
            // Element e = i·THREADS + tid of the slab: row (e / BN), column (e % BN); the part
            // that depends on tid is in bs_row, bs_col.
            const float* const src_slab = B + static_cast<size_t>(k0 + bs_row) * ldb + n0 + bs_col;
            const uint32_t dst_slab = bs_dst + stage_bytes;
#pragma unroll
            for (int i = 0; i < Cfg::B_SCALAR_ITERS; ++i) {
                constexpr int kRowsPerIter = Cfg::THREADS >= BN ? Cfg::THREADS / BN : 0;
                const int k = kRowsPerIter ? i * kRowsPerIter : i * Cfg::THREADS / BN;     // + bs_row
                const int n = kRowsPerIter ? 0 : (i * Cfg::THREADS) % BN;                  // + bs_col
                const uint32_t dst = dst_slab + (k * B_LD + n) * sizeof(float);
                const float* const src = src_slab + static_cast<size_t>(k) * ldb + n;
                if constexpr (kGuardMN || kGuardK) {
                    const bool ok = (!kGuardMN || n0 + bs_col + n < N) && (!kGuardK || k0 + bs_row + k >= 0);
                    cp_async<4>(dst, ok ? src : B, ok ? 4 : 0);
                } else {
                    cp_async<4>(dst, src, 4);
                }
            }
        }
    };

    // ---- fragments: where this thread reads As and Bs -------------------------------------
    const int warp_m = warp / Cfg::WARPS_N, warp_n = warp % Cfg::WARPS_N;
    const int lane_m = lane / Cfg::WTN, lane_n = lane % Cfg::WTN;
    const int a_frag = warp_m * Cfg::WM + lane_m * V;  // + f·WTM·V
    const int b_frag = warp_n * Cfg::WN + lane_n * V;  // + f·WTN·V

    float frag_a[2][TM], frag_b[2][TN];  // double-buffered over the k-steps
    auto load_fragments = [&](float* fa, float* fb, int stage, int k) {
        const float* As = smem + stage * Cfg::STAGE + k * A_LD + a_frag;
        const float* Bs = smem + stage * Cfg::STAGE + Cfg::A_STAGE + k * B_LD + b_frag;
#pragma unroll
        for (int f = 0; f < Cfg::FM; ++f) load_vec16(fa + f * V, As + f * Cfg::WTM * V);
#pragma unroll
        for (int f = 0; f < Cfg::FN; ++f) load_vec16(fb + f * V, Bs + f * Cfg::WTN * V);
    };

    float acc[TM][TN];

    // Slabs [first_slab, first_slab + slabs) of the current tile into acc (from zero).
    auto pipeline = [&](auto guard_mn, int first_slab, int slabs) {
        using GuardK = std::true_type;
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
        const int k_base = k_first + first_slab * BK;

        // ---- prologue: fill every stage (slab 0 is the partial one), wait for slab 0 --------
        // Past the last slab a copy re-reads the last slab, which is a full one in interior
        // blocks (they have >= 2 slabs); edge blocks test k on every copy.
        using GuardLaterK = decltype(guard_mn);
        constexpr bool kAfterBarrier = (Cfg::COPY_STEP < 0);
        constexpr int kPrologueSlabs = kAfterBarrier ? STAGES : STAGES - 1;
        copy_slab(k_base, 0, guard_mn, GuardK{});
        cp_async_commit();
#pragma unroll
        for (int s = 1; s < kPrologueSlabs; ++s) {
            copy_slab(k_base + min(s, slabs - 1) * BK, s, guard_mn, GuardLaterK{});
            cp_async_commit();
        }
        cp_async_wait<kPrologueSlabs - 1>();
        __syncthreads();
        load_fragments(frag_a[0], frag_b[0], 0, 0);

        // ---- main loop: one slab per iteration, one barrier per slab, no other branch --------
        // Slab s is read from stage s % STAGES. COPY_STEP >= 0: during slab s, at that k-step,
        // slab s + STAGES - 1 is copied into the stage of slab s - 1, which every thread
        // finished reading before the barrier that ended slab s - 1 (copy group j holds slab
        // j). COPY_STEP = -1: right after the barrier that ends slab s, slab s + STAGES is
        // copied into the stage of slab s (group j holds slab j too, the prologue fills every
        // stage). Past the end a copy re-reads the last slab into a stage nobody reads again.
        int stage = 0;
        for (int slab = 0; slab < slabs; ++slab) {
#pragma unroll
            for (int k = 0; k < BK; ++k) {
                const int cur = k % 2, nxt = cur ^ 1;
                if (k < BK - 1) {
                    load_fragments(frag_a[nxt], frag_b[nxt], stage, k + 1);
                } else {
                    // Every fragment of this stage is in registers. Wait for the next slab
                    // (group slab + 1: STAGES - 2 newer groups may stay in flight), make it
                    // visible to all threads, and read its first fragments.
                    cp_async_wait<STAGES - 2>();
                    __syncthreads();
                    const int next = (stage + 1 == STAGES) ? 0 : stage + 1;
                    load_fragments(frag_a[nxt], frag_b[nxt], next, 0);
                    if constexpr (kAfterBarrier) {
                        copy_slab(k_base + min(slab + STAGES, slabs - 1) * BK, stage, guard_mn, GuardLaterK{});
                        cp_async_commit();
                    }
                    stage = next;
                }
                if (!kAfterBarrier && k == Cfg::COPY_STEP) {
                    copy_slab(k_base + min(slab + STAGES - 1, slabs - 1) * BK,
                              stage == 0 ? STAGES - 1 : stage - 1, guard_mn, GuardLaterK{});
                    cp_async_commit();
                }
                // The outer product: TM×TN independent FMAs, in the configuration's order
                // (FmaOrder: the order decides how ptxas schedules the whole loop).
                constexpr FmaOrder<Cfg::ORDER, TM, TN> order{};
                static_assert(order.complete(), "an FMA order must issue every FMA of the thread tile once");
#pragma unroll
                for (int n = 0; n < TM * TN; ++n) {
                    const int i = order.i[n], j = order.j[n];
                    acc[i][j] = fmaf(frag_a[cur][i], frag_b[cur][j], acc[i][j]);
                }
            }
        }
        cp_async_wait<0>();  // no copy may still be writing shared memory when the block exits
    };
    // Interior: no edge in M or N, and the last slab of the range is a full one (the copies past
    // the end re-read it unguarded).
    auto compute = [&](int first_slab, int slabs) {
        const bool interior = (m0 + BM <= M) && (n0 + BN <= N) && first_slab + slabs >= 2;
        if (interior) {
            pipeline(std::false_type{}, first_slab, slabs);
        } else {
            pipeline(std::true_type{}, first_slab, slabs);
        }
    };

    // ---- epilogue: C = alpha·acc + beta·C, vectors inside, elements at the right edge ---------
    auto write_c = [&](int row, int col, const float* values) {
        if (row >= M) return;
        float* const c_row = C + static_cast<size_t>(row) * ldc;
        float out[V];
#pragma unroll
        for (int v = 0; v < V; ++v) out[v] = alpha * values[v];
        if (vec_c && col + V <= N) {
            if (beta != 0.0f) {
                float old[V];
                load_vec16_global(old, c_row + col);
#pragma unroll
                for (int v = 0; v < V; ++v) out[v] = fmaf(beta, old[v], out[v]);
            }
            store_vec16(c_row + col, out);
        } else {
#pragma unroll
            for (int v = 0; v < V; ++v) {
                if (col + v < N) {
                    float* c = c_row + col + v;
                    *c = (beta != 0.0f) ? fmaf(beta, *c, out[v]) : out[v];
                }
            }
        }
    };
    // A tile that lies inside C with 16-byte rows reads its old values in batches of
    // EPI_BATCH row fragments (V·FN vectors each) before it writes any: their load latencies
    // overlap instead of adding up, one per vector, as they do behind write_c's per-vector tests.
    auto epilogue = [&] {
        if (Cfg::EPI_BATCH > 0 && vec_c && m0 + BM <= M && n0 + BN <= N) {
            constexpr int B = Cfg::EPI_BATCH > 0 ? Cfg::EPI_BATCH : 1;
#pragma unroll
            for (int f0 = 0; f0 < Cfg::FM; f0 += B) {
                float old[B][V][Cfg::FN][V];
                if (beta != 0.0f) {
#pragma unroll
                    for (int b = 0; b < B; ++b)
#pragma unroll
                        for (int vi = 0; vi < V; ++vi)
#pragma unroll
                            for (int fj = 0; fj < Cfg::FN; ++fj)
                                load_vec16_global(old[b][vi][fj],
                                                  C + static_cast<size_t>(m0 + a_frag + (f0 + b) * Cfg::WTM * V + vi) * ldc +
                                                      n0 + b_frag + fj * Cfg::WTN * V);
                }
#pragma unroll
                for (int b = 0; b < B; ++b)
#pragma unroll
                    for (int vi = 0; vi < V; ++vi)
#pragma unroll
                        for (int fj = 0; fj < Cfg::FN; ++fj) {
                            const float* a = &acc[(f0 + b) * V + vi][fj * V];
                            float out[V];
#pragma unroll
                            for (int v = 0; v < V; ++v)
                                out[v] = beta != 0.0f ? fmaf(beta, old[b][vi][fj][v], alpha * a[v]) : alpha * a[v];
                            store_vec16(C + static_cast<size_t>(m0 + a_frag + (f0 + b) * Cfg::WTM * V + vi) * ldc +
                                            n0 + b_frag + fj * Cfg::WTN * V,
                                        out);
                        }
            }
            return;
        }
#pragma unroll
        for (int fi = 0; fi < Cfg::FM; ++fi)
#pragma unroll
            for (int vi = 0; vi < V; ++vi)
#pragma unroll
                for (int fj = 0; fj < Cfg::FN; ++fj)
                    write_c(m0 + a_frag + fi * Cfg::WTM * V + vi, n0 + b_frag + fj * Cfg::WTN * V,
                            &acc[fi * V + vi][fj * V]);
    };

    schedule.template run<Cfg>(tiles_m * tiles_n, num_slabs, tid, acc, set_tile, compute, epilogue);
}

// ------------------------------------------------------------------------------------------------
// Host side
// ------------------------------------------------------------------------------------------------

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) % 16) == 0; }

// The kernel of a configuration: reuse_ffma_kernel for SgemmConfig, reuse_kernel for ReuseConfig.
template <class Cfg, class = void>
struct UsesFfmaKernel : std::false_type {};
template <class Cfg>
struct UsesFfmaKernel<Cfg, std::void_t<typename Cfg::FfmaKernel>> : std::true_type {};
template <class Cfg, bool kVecB, class Schedule = WholeTiles>
auto kernel_for() {
    if constexpr (UsesFfmaKernel<Cfg>::value) return reuse_ffma_kernel<Cfg, kVecB, Schedule>;
    else return reuse_kernel<Cfg, kVecB>;
}

inline int sm_count() {
    static const int count = [] {
        int device = 0, sms = 0;
        if (cudaGetDevice(&device) != cudaSuccess ||
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
            return 132;
        return sms;
    }();
    return count;
}

// Launches one configuration. The dynamic shared-memory limit is raised once per kernel (the
// first call; a function-local static is initialised exactly once, thread-safely).
template <class Cfg, bool kVecB>
Status launch_config(const GemmProblem<typename Cfg::Elem>& p) {
    auto kernel = kernel_for<Cfg, kVecB>();
    static const cudaError_t attribute = cudaFuncSetAttribute(
        kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(Cfg::SMEM_BYTES));
    GEMMLAB_TRY(attribute);
    const long long tiles = static_cast<long long>((p.M + Cfg::BM - 1) / Cfg::BM) *
                            ((p.N + Cfg::BN - 1) / Cfg::BN);
    if (tiles > 0x7fffffffLL) return Status::unsupported;
    const bool vec_c = (p.ldc % Cfg::V == 0) && aligned16(p.C);
    if constexpr (UsesFfmaKernel<Cfg>::value) {
        kernel<<<static_cast<unsigned>(tiles), Cfg::THREADS, Cfg::SMEM_BYTES, p.stream>>>(
            p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C, p.ldc, vec_c, WholeTiles{});
    } else {
        kernel<<<static_cast<unsigned>(tiles), Cfg::THREADS, Cfg::SMEM_BYTES, p.stream>>>(
            p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C, p.ldc, vec_c);
    }
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

// Picks the 16-byte or the element-wise copy of B at run time: vectors need every row of B to
// start on a 16-byte boundary.
template <class Cfg>
Status run_config(const GemmProblem<typename Cfg::Elem>& p) {
    if (p.M <= 0 || p.N <= 0) return Status::ok;
    const bool vec_b = (p.ldb % Cfg::V == 0) && aligned16(p.B);
    return vec_b ? launch_config<Cfg, true>(p) : launch_config<Cfg, false>(p);
}

// ---- the configurations the stage uses, and how it picks one per problem ---------------------
//
// Chosen with reference/tuning/run.sh --tune on an H100; docs/reference-kernels.md has the
// measurements. Each is a named type, so that the kernels' symbols say what they are for.
//                                  T       BM   BN  BK  WM  WN  TM  TN  STAGES  MIN_BLOCKS
//              SgemmConfig<     BM   BN  BK  WM  WN  TM  TN  STAGES  MIN_BLOCKS  COPY_STEP  ORDER  EPI_BATCH>
// float, large problems (reuse_ffma_kernel): 128×256 block, 8 warps of 64×64, 16×8 per thread
// (128 FMAs per 6 LDS.128), slabs of 16 k, 3 stages (73 KB), copy at k-step 8, one block of 255
// registers × 256 threads per SM; FMAs in strips of 4 rows of 2×2 blocks, the column pairs of odd
// strips backwards; C read in batches of 2 row fragments (16 vectors) in the epilogue. 3 and 4
// stages measured alike; copies at k-step 0 or 4 slower.
struct FloatHuge   : SgemmConfig<128, 256, 16, 64, 64, 16, 8, 3, 1, 8, strip_order(4, 0, true, false), 2> {};
// float, mid-sized problems or short K (reuse_kernel): 128×128 block, 8 warps of 32×64, 8×8 per
// thread, two blocks per SM (one block's prologue and epilogue overlap the other's main loop);
// faster than reuse_ffma_kernel's 128×128×16 at short K.
struct FloatLarge  : ReuseConfig<float,  128, 128, 8, 32, 64,  8,  8, 4, 2> {};
// float, small or skinny problems (reuse_ffma_kernel): 64×64 block, 4 warps of 32×32, 8×4 per
// thread, slabs of 16 k, 3 stages (25 KB), copy right after the barrier: 4× more blocks to spread
// over the SMs.
struct FloatSmall  : SgemmConfig<64, 64, 16, 32, 32, 8, 4, 3, 4, -1> {};
// double before sm_80 (no FP64 tensor cores; reuse_kernel's FMAs): 8×8 per thread is the most the
// register file holds (64 accumulators = 128 registers, ~240 in all). 64×128 blocks of 4 warps
// (32×64 each) let two blocks share an SM, which measured better than one 128×128 block of 8 warps
// (one block's barrier stalls hide behind the other).
struct DoubleFmaLarge : ReuseConfig<double,  64, 128, 8, 32, 64,  8,  8, 3, 2> {};
// ... and 64×64 blocks of 4 warps of 32×32, 8×4 per thread, for small or skinny problems.
struct DoubleFmaSmall : ReuseConfig<double,  64,  64, 8, 32, 32,  8,  4, 3, 3> {};

// Estimated throughput of a configuration on a problem: its speed on large problems (relative,
// measured), times the share of its tiles' area that lies inside C, times the share of the
// block slots of the last wave that have work. Large tiles reuse more but waste more at the
// edges and leave SMs idle when there are few of them.
template <class Cfg, typename T>
double estimated_speed(const GemmProblem<T>& p, double relative_speed) {
    const double tiles = double((p.M + Cfg::BM - 1) / Cfg::BM) * double((p.N + Cfg::BN - 1) / Cfg::BN);
    const double inside = double(p.M) * double(p.N) / (tiles * Cfg::BM * Cfg::BN);
    const double slots = double(sm_count()) * Cfg::MIN_BLOCKS;
    const double waves = std::ceil(tiles / slots);
    return relative_speed * inside * (tiles / (waves * slots));
}

// ================================================================================================
// Part 2 — DGEMM on the FP64 tensor cores with Hopper's 16×8 DMMA shapes
// ================================================================================================
//
// The double stage uses its own kernel, reuse_dmma_kernel, built around instructions that sm_90
// added: mma.sync.m16n8k4 / m16n8k8 / m16n8k16 .f64 (PTX ISA 7.8; one DMMA.16x8x4/8/16 each in
// SASS). One of them multiplies a 16×K block of A by a K×8 block of B into a 16×8 tile of C,
// every product and sum in IEEE double precision (like an FMA: the checker's bound is the same).
// The Ampere-era m8n8k4 does 256 FMAs per instruction; m16n8k8 does 1024 and reads each
// accumulator once per 8 k instead of once per 4. (sm_80 to sm_89 have only m8n8k4: there
// dmma_16x8 issues several of those. Before sm_80 the stage runs Part 1's FMA configurations.)
//
//   1. Block tile 128×64, 4 warps of 64×32, two blocks per SM. A warp tile is 4×4 mma tiles of
//      16×8: 64 accumulators per lane (128 registers), the most that leaves room for fragments
//      and copy addresses under the 255-register limit of 256 threads per SM. Two blocks rather
//      than one 128×128 block: while one block waits at its barrier, the other's mma run.
//   2. Both operands keep their global layout in shared memory, As[m][k] and Bs[k][n], so both
//      are copied with 16-byte cp.async (no transposition, unlike Part 1). A lane (g, t) =
//      (lane/4, lane%4) needs A[g + 8h][t + 4j] and B[t + 4j][g] of each tile: single doubles,
//      read with LDS.64. Rows padded to ≡ 4 doubles (mod 8) — 32 or 96 bytes (mod 128) — put
//      the 4 rows g (or t) that a half-warp reads in 4 different 32-byte bank groups:
//      conflict-free.
//   3. A cp.async pipeline of STAGES slabs of BK (the partial slab is the last one, so every
//      16-byte copy starts aligned; a copy that crosses K reads its valid head and zero-fills
//      its tail), one barrier per slab. The first fragments of a slab are loaded BEFORE that
//      barrier (they landed one barrier earlier), so their shared-memory latency hides behind
//      the barrier and the previous slab's mma still in the tensor pipe ("EARLY"; it costs one
//      stage of lookahead, hence STAGES >= 3).
//   4. Edges as in Part 1: interior blocks run without any bounds test, edge blocks zero-fill
//      out-of-range copies; C is written as double2 where ldc allows, element-wise at the right
//      edge, never between N and ldc, and not read when beta == 0.
//
// What the SASS of the main loop holds (DmmaLarge): per warp and slab, 32 DMMA.16x8x8, 48
// conflict-free LDS.64, 8 LDGSTS and the reloads of the spilled copy addresses (LDL).

// D(16×8) += A(16×K)·B(K×8) on the FP64 tensor cores, K = 4, 8 or 16. Lane l = 4g + t holds
// a[2j + h] = A[g + 8h][t + 4j], b[j] = B[t + 4j][g] and d = {D[g][2t], D[g][2t+1],
// D[g+8][2t], D[g+8][2t+1]} (the PTX ISA's fragment tables for .f64).
template <int K>
__device__ __forceinline__ void dmma_16x8(double (&d)[4], const double (&a)[K / 2], const double (&b)[K / 4]) {
    static_assert(K == 4 || K == 8 || K == 16, "sm_90 has m16n8k4, m16n8k8 and m16n8k16 for f64");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
    // sm_80 to sm_89 have only m8n8k4 (C(8×8) += A(8×4)·B(4×8), lane l holding A[l/4][l%4],
    // B[l%4][l/4], C[l/4][2(l%4) + {0,1}]): the same product as 2·K/4 of those, the rows g and
    // g + 8 separately, with the same fragments.
#pragma unroll
    for (int j = 0; j < K / 4; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h)
            asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
                         : "+d"(d[2 * h]), "+d"(d[2 * h + 1])
                         : "d"(a[2 * j + h]), "d"(b[j]));
#else
    if constexpr (K == 4) {
        asm("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
            "{%0, %1, %2, %3};\n"
            : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
            : "d"(a[0]), "d"(a[1]), "d"(b[0]));
    } else if constexpr (K == 8) {
        asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
            "{%8, %9}, {%0, %1, %2, %3};\n"
            : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
            : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
    } else {
        asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, "
            "{%4, %5, %6, %7, %8, %9, %10, %11}, {%12, %13, %14, %15}, {%0, %1, %2, %3};\n"
            : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
            : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
              "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
    }
#endif
}

template <int BM_, int BN_, int BK_, int WM_, int WN_, int MMA_K_, int STAGES_, int MIN_BLOCKS_,
          bool EARLY_ = true>
struct DmmaConfig {
    using Elem = double;
    static constexpr int BM = BM_, BN = BN_, BK = BK_;  // block tile of C, K slab
    static constexpr int WM = WM_, WN = WN_;            // warp tile of C
    static constexpr int MMA_K = MMA_K_;                // k of one mma: 4, 8 or 16
    static constexpr int STAGES = STAGES_;              // cp.async pipeline depth
    static constexpr int MIN_BLOCKS = MIN_BLOCKS_;      // blocks per SM promised to the compiler
    static constexpr bool EARLY = EARLY_;               // first fragments of a slab before its barrier

    static constexpr int V = 2;  // doubles per 16-byte copy
    static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN, WARPS = WARPS_M * WARPS_N;
    static constexpr int THREADS = 32 * WARPS;
    static constexpr int MT = WM / 16, NT = WN / 8;  // 16×8 mma tiles of a warp tile
    static constexpr int KSTEPS = BK / MMA_K;        // mma k-steps per slab
    static constexpr int FRAG_A = MMA_K / 2, FRAG_B = MMA_K / 4;  // doubles per lane and tile

    // Rows ≡ 4 (mod 8) doubles: conflict-free fragment loads (point 2 above), 16-byte aligned.
    static constexpr int A_LD = BK + 4, B_LD = BN + 4;
    static constexpr int A_STAGE = BM * A_LD, B_STAGE = BK * B_LD, STAGE = A_STAGE + B_STAGE;
    static constexpr size_t SMEM_BYTES = size_t(STAGES) * STAGE * sizeof(double);

    // Copies of one slab, per thread: 16-byte vectors, or single doubles when rows are not aligned.
    static constexpr int A_VEC_ITERS = BM * BK / V / THREADS, B_VEC_ITERS = BK * BN / V / THREADS;
    static constexpr int A_ELEM_ITERS = BM * BK / THREADS, B_ELEM_ITERS = BK * BN / THREADS;

    static_assert(MMA_K == 4 || MMA_K == 8 || MMA_K == 16, "the f64 mma shapes of sm_90");
    static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must cover the block tile");
    static_assert(WM % 16 == 0 && WN % 8 == 0, "mma tiles of 16×8 must cover the warp tile");
    static_assert(BK % MMA_K == 0, "a slab is a whole number of mma k-steps");
    static_assert(BK % V == 0 && BN % V == 0, "slabs are copied in whole 16-byte vectors");
    static_assert((BM * BK / V) % THREADS == 0 && (BK * BN / V) % THREADS == 0,
                  "every thread copies as many vectors of a slab");
    static_assert(A_LD % 8 == 4 && B_LD % 8 == 4, "rows ≡ 4 (mod 8) doubles: conflict-free fragments");
    static_assert(STAGES >= (EARLY ? 3 : 2), "stages: the one computed, the next, one in flight");
    static_assert(MT * NT * 4 <= 64, "64 accumulators (128 registers) at most: fragments need the rest");
    static_assert(SMEM_BYTES * MIN_BLOCKS <= 227 * 1024, "the stages must fit in an SM's shared memory");
};

template <class Cfg, bool kVec>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS)
reuse_dmma_kernel(int M, int N, int K, double alpha,
                  const double* __restrict__ A, int lda, const double* __restrict__ B, int ldb,
                  double beta, double* __restrict__ C, int ldc, bool vec_c) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    // No FP64 tensor cores: never launched (gemm_reuse runs Part 1's FMA configurations). The
    // sizes only this body uses are named here too, so that no build finds them unused.
    static_assert(Cfg::KSTEPS > 0 && Cfg::FRAG_A > 0 && Cfg::FRAG_B > 0 && Cfg::A_VEC_ITERS >= 0 &&
                  Cfg::B_VEC_ITERS >= 0 && Cfg::A_ELEM_ITERS > 0 && Cfg::B_ELEM_ITERS > 0);
    __trap();
#else
    constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, V = Cfg::V, STAGES = Cfg::STAGES;
    constexpr int A_LD = Cfg::A_LD, B_LD = Cfg::B_LD, MT = Cfg::MT, NT = Cfg::NT, MMA_K = Cfg::MMA_K;

    extern __shared__ __align__(16) unsigned char smem_raw[];
    double* const smem = reinterpret_cast<double*>(smem_raw);  // STAGES × { As[BM][A_LD], Bs[BK][B_LD] }

    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    int tile_m, tile_n;
    swizzled_tile(blockIdx.x, tiles_m, tiles_n, tile_m, tile_n);
    const int m0 = tile_m * BM, n0 = tile_n * BN;
    // Slabs of BK along K; only the last one may be partial (its elements k >= K read as zeros).
    const int num_slabs = (K + BK - 1) / BK;

    // ---- global→shared copy of one slab into one pipeline stage ------------------------------
    // kGuardMN: the block overlaps the bottom or right edge; kGuardK: the partial last slab.
    auto copy_slab = [&](int slab, int stage, auto guard_mn, auto guard_k) {
        constexpr bool kGuardMN = decltype(guard_mn)::value, kGuardK = decltype(guard_k)::value;
        double* const As = smem + stage * Cfg::STAGE;
        double* const Bs = As + Cfg::A_STAGE;
        const int k0 = slab * BK;
        if constexpr (kVec) {
#pragma unroll
            for (int i = 0; i < Cfg::A_VEC_ITERS; ++i) {
                const int v = i * Cfg::THREADS + tid;  // consecutive threads: consecutive k of a row
                const int r = v / (BK / V), k = (v % (BK / V)) * V;
                const double* src = A + static_cast<size_t>(m0 + r) * lda + (k0 + k);
                int valid = V;
                if constexpr (kGuardK) valid = min(max(K - (k0 + k), 0), V);
                if constexpr (kGuardMN) valid = (m0 + r < M) ? valid : 0;
                cp_async<16>(shared_address(As + r * A_LD + k), valid > 0 ? src : A, valid * 8);
            }
#pragma unroll
            for (int i = 0; i < Cfg::B_VEC_ITERS; ++i) {
                const int v = i * Cfg::THREADS + tid;  // consecutive threads: consecutive n of a row
                const int k = v / (BN / V), c = (v % (BN / V)) * V;
                const double* src = B + static_cast<size_t>(k0 + k) * ldb + (n0 + c);
                int valid = V;
                if constexpr (kGuardMN) valid = min(max(N - (n0 + c), 0), V);
                if constexpr (kGuardK) valid = (k0 + k < K) ? valid : 0;
                cp_async<16>(shared_address(Bs + k * B_LD + c), valid > 0 ? src : B, valid * 8);
            }
        } else {
#pragma unroll 4
            for (int i = 0; i < Cfg::A_ELEM_ITERS; ++i) {
                const int e = i * Cfg::THREADS + tid;
                const int r = e / BK, k = e % BK;
                const bool ok = (!kGuardMN || m0 + r < M) && (!kGuardK || k0 + k < K);
                const double* src = A + static_cast<size_t>(m0 + r) * lda + (k0 + k);
                cp_async<8>(shared_address(As + r * A_LD + k), ok ? src : A, ok ? 8 : 0);
            }
#pragma unroll 4
            for (int i = 0; i < Cfg::B_ELEM_ITERS; ++i) {
                const int e = i * Cfg::THREADS + tid;
                const int k = e / BN, c = e % BN;
                const bool ok = (!kGuardMN || n0 + c < N) && (!kGuardK || k0 + k < K);
                const double* src = B + static_cast<size_t>(k0 + k) * ldb + (n0 + c);
                cp_async<8>(shared_address(Bs + k * B_LD + c), ok ? src : B, ok ? 8 : 0);
            }
        }
    };

    // ---- fragments: lane (g, t) reads As[row + g + 8h][k + t + 4j] and Bs[k + t + 4j][col + g] --
    const int warp_m = warp / Cfg::WARPS_N, warp_n = warp % Cfg::WARPS_N;
    const int g = lane / 4, t = lane % 4;
    const int a_frag = (warp_m * Cfg::WM + g) * A_LD + t;            // offset in a stage's As
    const int b_frag = Cfg::A_STAGE + t * B_LD + warp_n * Cfg::WN + g;  // and in its Bs

    double acc[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0;

    // The fragments of one k-step: MT tiles of A and NT of B.
    struct Fragments {
        double a[MT][Cfg::FRAG_A], b[NT][Cfg::FRAG_B];
    };
    // Loads them from a stage. Loops are unrolled, so every address is a base register plus a
    // constant.
    auto load_step = [&](Fragments& f, const double* stage_base, int ks) {
        const double* As = stage_base + a_frag + ks * MMA_K;
        const double* Bs = stage_base + b_frag + ks * MMA_K * B_LD;
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int s = 0; s < Cfg::FRAG_A; ++s)  // slot s = 2j + h: row g + 8h, k t + 4j
                f.a[i][s] = As[(i * 16 + (s % 2) * 8) * A_LD + (s / 2) * 4];
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int s = 0; s < Cfg::FRAG_B; ++s)  // slot s: k t + 4s, column g
                f.b[j][s] = Bs[s * 4 * B_LD + j * 8];
    };
    // MT×NT independent mma.
    auto mma_step = [&](const Fragments& f) {
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int j = 0; j < NT; ++j) dmma_16x8<MMA_K>(acc[i][j], f.a[i], f.b[j]);
    };

    // The whole pipeline, instantiated for interior blocks (no bounds tests on M and N) and for
    // edge blocks; the branch between them is uniform per block and taken once.
    auto pipeline = [&](auto guard_mn) {
        const bool partial_last = (K % BK) != 0;
        auto copy = [&](int slab, int stage) {
            if (partial_last && slab == num_slabs - 1) copy_slab(slab, stage, guard_mn, std::true_type{});
            else copy_slab(slab, stage, guard_mn, std::false_type{});
        };
        // Prologue: slabs 0..STAGES-2 in flight, one commit group per slab (empty or not).
#pragma unroll
        for (int s = 0; s < STAGES - 1; ++s) {
            if (s < num_slabs) copy(s, s);
            cp_async_commit();
        }
        if constexpr (Cfg::EARLY) {
            cp_async_wait<STAGES - 2>();  // slab 0 has landed
            __syncthreads();
        }
        int stage = 0;
        for (int slab = 0; slab < num_slabs; ++slab) {
            const double* const stage_base = smem + stage * Cfg::STAGE;
            const int next = slab + STAGES - 1, next_stage = (stage == 0) ? STAGES - 1 : stage - 1;
            Fragments f;
            if constexpr (Cfg::EARLY) {
                // The first fragments of this slab (visible since the last barrier) are loaded
                // before the barrier, so their latency hides behind it and the mma of the
                // previous slab. Then: slab + 1 has landed (STAGES-3 newer groups may still be
                // in flight), and every warp is done with the stage of slab - 1: refill it.
                load_step(f, stage_base, 0);
                cp_async_wait<STAGES - 3>();
                __syncthreads();
                if (next < num_slabs) copy(next, next_stage);
                cp_async_commit();
                mma_step(f);
#pragma unroll
                for (int ks = 1; ks < Cfg::KSTEPS; ++ks) {
                    load_step(f, stage_base, ks);
                    mma_step(f);
                }
            } else {
                // Slab `slab` has landed (at most STAGES-2 newer groups still in flight), and
                // every warp is done with the stage the next copy overwrites (it held slab - 1).
                cp_async_wait<STAGES - 2>();
                __syncthreads();
                if (next < num_slabs) copy(next, next_stage);
                cp_async_commit();
#pragma unroll
                for (int ks = 0; ks < Cfg::KSTEPS; ++ks) {
                    load_step(f, stage_base, ks);
                    mma_step(f);
                }
            }
            stage = (stage + 1 == STAGES) ? 0 : stage + 1;
        }
    };
    if (m0 + BM <= M && n0 + BN <= N) pipeline(std::false_type{});
    else pipeline(std::true_type{});

    // ---- epilogue: C = alpha·acc + beta·C ----------------------------------------------------
    // Two consecutive results (row, col), (row, col+1): one double2 when both are inside C and
    // ldc allows it, else element by element up to N.
    auto write_pair = [&](int row, int col, double v0, double v1) {
        if (row >= M || col >= N) return;
        double* const c = C + static_cast<size_t>(row) * ldc + col;
        double out[V] = {alpha * v0, alpha * v1};
        if (vec_c && col + 1 < N) {
            if (beta != 0.0) {
                double old[V];
                load_vec16_global(old, c);
                out[0] = fma(beta, old[0], out[0]);
                out[1] = fma(beta, old[1], out[1]);
            }
            store_vec16(c, out);
            return;
        }
        c[0] = (beta != 0.0) ? fma(beta, c[0], out[0]) : out[0];
        if (col + 1 < N) c[1] = (beta != 0.0) ? fma(beta, c[1], out[1]) : out[1];
    };
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j) {
            const int row = m0 + warp_m * Cfg::WM + i * 16 + g, col = n0 + warp_n * Cfg::WN + j * 8 + 2 * t;
            write_pair(row, col, acc[i][j][0], acc[i][j][1]);      // row g: columns 2t, 2t+1
            write_pair(row + 8, col, acc[i][j][2], acc[i][j][3]);  // row g + 8
        }
#endif
}

// Launches one DMMA configuration: 16-byte copies when every row of A and of B starts 16-byte
// aligned (lda, ldb even, A and B aligned), element copies otherwise.
template <class Cfg, bool kVec>
Status launch_dmma(const GemmProblem<double>& p, unsigned tiles, bool vec_c) {
    auto kernel = reuse_dmma_kernel<Cfg, kVec>;
    static const cudaError_t attribute = cudaFuncSetAttribute(
        kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(Cfg::SMEM_BYTES));
    GEMMLAB_TRY(attribute);
    kernel<<<tiles, Cfg::THREADS, Cfg::SMEM_BYTES, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B,
                                                              p.ldb, p.beta, p.C, p.ldc, vec_c);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

template <class Cfg>
Status run_dmma(const GemmProblem<double>& p) {
    if (p.M <= 0 || p.N <= 0) return Status::ok;
    const long long tiles = static_cast<long long>((p.M + Cfg::BM - 1) / Cfg::BM) *
                            ((p.N + Cfg::BN - 1) / Cfg::BN);
    if (tiles > 0x7fffffffLL) return Status::unsupported;
    const bool vec = p.lda % 2 == 0 && p.ldb % 2 == 0 && aligned16(p.A) && aligned16(p.B);
    const bool vec_c = p.ldc % 2 == 0 && aligned16(p.C);
    return vec ? launch_dmma<Cfg, true>(p, static_cast<unsigned>(tiles), vec_c)
               : launch_dmma<Cfg, false>(p, static_cast<unsigned>(tiles), vec_c);
}

// ---- the double configurations (sm_80 and later) -------------------------------------------------
// Chosen with reference/tuning/run.sh --tune on an H100 (docs/reference-kernels.md):
//                                       BM   BN  BK  WM  WN  MMA_K STAGES MIN_BLOCKS
// Large problems: 128×64 blocks of 4 warps of 64×32 (point 1), m16n8k8, slabs of 16 k, 3 stages
// (2 × 85.5 KB), two blocks per SM. ptxas: 255 registers and 100 bytes of spill, loop-invariant
// copy addresses that the main loop reloads from L1 once per slab. m16n8k8 rather than m16n8k16:
// k16 fragments take 96 registers per k-step and spill, or without the early loads of point 3 do
// not spill but wait at every barrier; m16n8k4 is slower on every tile measured.
struct DmmaLarge : DmmaConfig<128, 64, 16, 64, 32, 8, 3, 2> {};
// Small or skinny problems: 64×64 blocks of 4 warps of 32×32, m16n8k16 (no spill at this size),
// 4 stages, two blocks per SM: slower on large problems, but 4× more blocks than DmmaLarge to
// spread over the SMs.
struct DmmaSmall : DmmaConfig<64, 64, 16, 32, 32, 16, 4, 2> {};

}  // namespace

template <typename T>
Status gemm_reuse(const GemmProblem<T>& p) {
    if (p.M <= 0 || p.N <= 0) return Status::ok;
    // The relative speeds below: each configuration on large problems on an H100
    // (docs/reference-kernels.md); estimated_speed weighs them by how well a problem fills its tiles.
    if constexpr (sizeof(T) == 4) {
        // The one-block-per-SM configuration only pays when K is long enough to hide its prologue
        // and epilogue, and only fits where a block may have 73 KB of shared memory (not sm_75).
        const bool huge_fits = FloatHuge::SMEM_BYTES <= max_dynamic_shared_memory();
        const double huge = (p.K >= 1024 && huge_fits) ? estimated_speed<FloatHuge>(p, 1.0) : 0.0;
        const double large = estimated_speed<FloatLarge>(p, 0.93);
        const double small = estimated_speed<FloatSmall>(p, 0.79);
        if (huge >= large && huge >= small) return run_config<FloatHuge>(p);
        return (large >= small) ? run_config<FloatLarge>(p) : run_config<FloatSmall>(p);
    } else {
        // Part 2 where the loaded image of its kernel was compiled for sm_80 or later, else FMAs.
        static const bool dmma = compiled_arch(reuse_dmma_kernel<DmmaLarge, true>) >= 80;
        if (dmma) {
            const double large = estimated_speed<DmmaLarge>(p, 1.0);
            const double small = estimated_speed<DmmaSmall>(p, 0.885);
            return (large >= small) ? run_dmma<DmmaLarge>(p) : run_dmma<DmmaSmall>(p);
        }
        const double large = estimated_speed<DoubleFmaLarge>(p, 1.0);
        const double small = estimated_speed<DoubleFmaSmall>(p, 0.87);
        return (large >= small) ? run_config<DoubleFmaLarge>(p) : run_config<DoubleFmaSmall>(p);
    }
}

template Status gemm_reuse<float>(const GemmProblem<float>&);
template Status gemm_reuse<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS

#ifdef GEMMLAB_TUNE
#include "tuning/reuse.h"  // other configurations and schedules, timed beside these by reference/tuning
#endif
