// reference/tensor.cu — stage "tensor", instructor solution: GEMM on the tensor cores, one kernel
// for every input precision (gemmlab/stages.h, InputPrecision; docs/reference-kernels.md).
//
// The tensor cores multiply small matrices held by a whole warp: one `mma.sync` instruction computes
// D = A·B + C for a 16×8 tile of C and a slice of K, with each of the 32 lanes holding a few
// elements of A, B and C in registers at positions the PTX ISA fixes ("fragments"). This kernel
// keeps the structure of the reuse stage around that instruction:
//
//   1. Block tiling: a block computes a BM×BN tile of C, walking K in slabs of BK. A and B are
//      copied to shared memory as FP32 (or FP64) with cp.async in a STAGES-deep pipeline: 16-byte
//      copies when every row of the operand is 16-byte aligned, element copies otherwise;
//      out-of-range elements are zero-filled (the partial slab is the last one).
//   2. Warp tiling: each warp computes a WM×WN tile of C as (WM/16)×(WN/8) mma tiles (double:
//      (WM/8)×(WN/8) tiles of 8×8) whose accumulators live in registers.
//   3. Fragments from shared memory: A by `ldmatrix.x4` (one instruction loads a 16×8 tile of FP32
//      as four 8×4 matrices, exactly the layout of the TF32 A fragment), B by conflict-free scalar
//      loads (rows of Bs padded to ≡ 8 words mod 32), then converted in registers to the precision
//      the variant declares:
//        fp16    two FP32 → one f16x2 register (round to nearest), mma.m16n8k16.f32.f16.f16.f32;
//        tf32    cvt.rna.tf32.f32 (round to nearest), mma.m16n8k8.f32.tf32.tf32.f32;
//        3xtf32  a = a_hi + a_lo with a_hi = tf32(a), a_lo = tf32(a − a_hi), the same for b, and
//                C += a_lo·b_hi + a_hi·b_lo + a_hi·b_hi (a_lo·b_lo, ~2^-22 relative, is dropped):
//                three TF32 products per fragment give FP32 accuracy. The tensor cores sum in FP32
//                with truncation, so the products of each slab are summed into a fresh accumulator
//                and added to the running one with an ordinary (round-to-nearest) FP32 add: the
//                truncation errors then stay those of BK products instead of growing with K
//                (docs/correctness.md measures both);
//        double  mma.m8n8k4.f64 on the FP64 tensor cores (DMMA): IEEE products and sums, no loss.
//      For FP16 the k index is permuted the same way in A and B (slot 2t of the fragment takes
//      k = t, slot 2t+1 takes k = t+4, ...): the sum over k does not change, and the FP32 pairs
//      ldmatrix delivers pack directly into the f16x2 registers.
//   4. Epilogue: C = alpha·acc + beta·C with vector stores where ldc allows (C is not read when
//      beta == 0), element stores at the right edge; nothing between N and ldc is written.
//
// Every size is a compile-time parameter of TensorConfig, with static_asserts for what the code
// assumes. Run it:    make check STAGE=tensor FULL=1        make bench STAGE=tensor
// Tune it:            reference/tuning/run.sh --tune --stages tensor --prec f32 --shapes 4096x4096x4096
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "gemmlab/stages.h"

#ifdef GEMMLAB_TUNE
#include "tuning/candidates.h"
#endif

namespace gemmlab::GEMMLAB_NS {
namespace {

// ------------------------------------------------------------------------------------------------
// PTX wrappers: cp.async, ldmatrix, the three mma shapes, conversions
// ------------------------------------------------------------------------------------------------

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Global→shared copy of BYTES bytes of which the first `valid` come from `src` (the rest are
// zero-filled; valid == 0 reads nothing). 16-byte copies bypass L1 (.cg), smaller ones use .ca.
template <int BYTES>
__device__ __forceinline__ void copy_async(uint32_t dst, const void* src, int valid) {
    static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async copies 4, 8 or 16 bytes");
    if constexpr (BYTES == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid) : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(src), "n"(BYTES), "r"(valid)
                     : "memory");
}
__device__ __forceinline__ void copy_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int PENDING>
__device__ __forceinline__ void copy_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

// Four 8×8 matrices of 16-bit elements = four 8×4 matrices of 32-bit ones. Lanes 8i..8i+7 give the
// addresses of the 8 rows of matrix i (16 bytes each); lane l receives word l%4 of row l/4 of each.
__device__ __forceinline__ void load_matrix_x4(uint32_t (&r)[4], uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

// FP32 → TF32, round to nearest (ties away from zero): the low 13 bits of the result are zero.
__device__ __forceinline__ uint32_t to_tf32(float x) {
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}

// Two FP32 → one register of two FP16 (round to nearest): `first` in the low half, which the mma
// fragment layout takes as the lower k index.
__device__ __forceinline__ uint32_t to_half2(float first, float second) {
    const __half2 h = __floats2half2_rn(first, second);
    return *reinterpret_cast<const uint32_t*>(&h);
}

// D(16×8) += A(16×8)·B(8×8), TF32 inputs, FP32 accumulators.
__device__ __forceinline__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// D(16×8) += A(16×16)·B(16×8), FP16 inputs, FP32 accumulators.
__device__ __forceinline__ void mma_fp16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// D(8×8) += A(8×4)·B(4×8) in FP64 (DMMA).
__device__ __forceinline__ void mma_fp64(double (&d)[2], double a, double b) {
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
                 : "+d"(d[0]), "+d"(d[1])
                 : "d"(a), "d"(b));
}

// ------------------------------------------------------------------------------------------------
// The configuration: every size, and what the code assumes of them
// ------------------------------------------------------------------------------------------------

// What one mma instruction is and how a warp's fragments are made (gemmlab/stages.h names the
// first three after the inputs they declare).
enum class Scheme { fp16, tf32, split_tf32, fp64 };

template <Scheme S>
struct MmaShape;
template <>
struct MmaShape<Scheme::fp16> { static constexpr int M = 16, N = 8, K = 16, ACC = 4; using Elem = float; };
template <>
struct MmaShape<Scheme::tf32> { static constexpr int M = 16, N = 8, K = 8, ACC = 4; using Elem = float; };
template <>
struct MmaShape<Scheme::split_tf32> { static constexpr int M = 16, N = 8, K = 8, ACC = 4; using Elem = float; };
template <>
struct MmaShape<Scheme::fp64> { static constexpr int M = 8, N = 8, K = 4, ACC = 2; using Elem = double; };

// SLAB_SUM_ (split scheme only): sum each slab's products into a fresh accumulator and add it to the
// result with an FP32 add (the default: FP32-accurate at any K); false sums straight into the result,
// which saves the registers of the second accumulator but lets the tensor cores' truncation errors
// grow with K (docs/correctness.md) — a tuning candidate, to measure what the slab sum costs.
template <Scheme S_, int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_, int MIN_BLOCKS_, bool SLAB_SUM_ = true>
struct TensorConfig {
    static constexpr Scheme S = S_;
    static constexpr bool SLAB_SUM = SLAB_SUM_ && S_ == Scheme::split_tf32;
    using Mma = MmaShape<S_>;
    using Elem = typename Mma::Elem;
    static constexpr int BM = BM_, BN = BN_, BK = BK_;  // block tile of C, K slab
    static constexpr int WM = WM_, WN = WN_;            // warp tile of C
    static constexpr int STAGES = STAGES_;              // shared-memory pipeline depth
    static constexpr int MIN_BLOCKS = MIN_BLOCKS_;      // blocks per SM promised to the compiler
    static constexpr bool kFloat = std::is_same_v<Elem, float>;

    static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN, WARPS = WARPS_M * WARPS_N;
    static constexpr int THREADS = 32 * WARPS;
    static constexpr int MT = WM / Mma::M, NT = WN / Mma::N;  // mma tiles of a warp tile
    static constexpr int KSTEPS = BK / Mma::K;                // mma k-steps per slab
    static constexpr int V = 16 / int(sizeof(Elem));          // elements per 16-byte copy

    // Shared memory rows, padded so that fragment loads are conflict-free and rows stay 16-byte
    // aligned. float: As rows ≡ 4 words (mod 32), so the 8 rows of an ldmatrix matrix fall in 8
    // different 16-byte bank groups; Bs rows ≡ 8 words (mod 32), so lanes (t = row, g = column)
    // reading Bs[t][g] hit bank 8t + g. double: both ≡ 4 doubles (mod 16), so a half-warp reading
    // As[g][t] or Bs[t][g] hits 16 different bank pairs.
    static constexpr int BANK_WORDS = kFloat ? 32 : 16;  // elements per 128-byte row of banks
    static constexpr int A_LD = (BK + BANK_WORDS - 1) / BANK_WORDS * BANK_WORDS + 4;
    static constexpr int B_LD = (BN + BANK_WORDS - 1) / BANK_WORDS * BANK_WORDS + (kFloat ? 8 : 4);
    static constexpr int A_STAGE = BM * A_LD, B_STAGE = BK * B_LD, STAGE = A_STAGE + B_STAGE;
    static constexpr size_t SMEM_BYTES = size_t(STAGES) * STAGE * sizeof(Elem);

    // Copies of a slab: 16-byte vectors, or single elements when rows are not aligned.
    static constexpr int A_VECS = BM * BK / V, B_VECS = BK * BN / V;
    static constexpr int A_VEC_ITERS = A_VECS / THREADS, B_VEC_ITERS = B_VECS / THREADS;
    static constexpr int A_ELEM_ITERS = BM * BK / THREADS, B_ELEM_ITERS = BK * BN / THREADS;

    static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must cover the block tile");
    static_assert(WM % Mma::M == 0 && WN % Mma::N == 0, "mma tiles must cover the warp tile");
    static_assert(BK % Mma::K == 0, "a slab is a whole number of mma k-steps");
    static_assert(BK % V == 0 && BN % V == 0, "slabs are copied in whole 16-byte vectors");
    static_assert(A_VECS % THREADS == 0 && B_VECS % THREADS == 0, "every thread copies as many vectors");
    static_assert((BM * BK) % THREADS == 0 && (BK * BN) % THREADS == 0, "every thread copies as many elements");
    static_assert(!kFloat || (A_LD % 32 == 4 && B_LD % 32 == 8), "float padding: conflict-free fragments");
    static_assert(kFloat || (A_LD % 16 == 4 && B_LD % 16 == 4), "double padding: conflict-free fragments");
    static_assert((A_LD * sizeof(Elem)) % 16 == 0 && (B_LD * sizeof(Elem)) % 16 == 0 &&
                      (A_STAGE * sizeof(Elem)) % 16 == 0 && (STAGE * sizeof(Elem)) % 16 == 0,
                  "shared rows and stages stay 16-byte aligned for cp.async and ldmatrix");
    static_assert(STAGES >= 2, "a pipeline needs two stages at least");
    static_assert(THREADS <= 1024, "a block has at most 1024 threads");
    // Accumulators per thread: MT·NT tiles of ACC values (twice for the split scheme's slab sums).
    static_assert(MT * NT * Mma::ACC * (SLAB_SUM ? 2 : 1) * int(sizeof(Elem) / 4) <= 160,
                  "more accumulator registers than this spill");
};

// Block swizzle (as in the reuse stage): consecutive blocks walk down kGroupM block rows before
// moving right, so blocks resident together share slabs of A and B in L2.
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

template <class Cfg, bool kVec>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS)
tensor_kernel(int M, int N, int K, typename Cfg::Elem alpha, const typename Cfg::Elem* __restrict__ A, int lda,
              const typename Cfg::Elem* __restrict__ B, int ldb, typename Cfg::Elem beta,
              typename Cfg::Elem* __restrict__ C, int ldc, bool vec_c) {
    using T = typename Cfg::Elem;
    using Mma = typename Cfg::Mma;
    constexpr Scheme S = Cfg::S;
    constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, V = Cfg::V, STAGES = Cfg::STAGES;
    constexpr int A_LD = Cfg::A_LD, B_LD = Cfg::B_LD, MT = Cfg::MT, NT = Cfg::NT, ACC = Mma::ACC;

    extern __shared__ __align__(16) unsigned char smem_raw[];
    T* const smem = reinterpret_cast<T*>(smem_raw);  // STAGES × { As[BM][A_LD], Bs[BK][B_LD] }

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
        T* const As = smem + stage * Cfg::STAGE;
        T* const Bs = As + Cfg::A_STAGE;
        const int k0 = slab * BK;
        if constexpr (kVec) {
#pragma unroll
            for (int i = 0; i < Cfg::A_VEC_ITERS; ++i) {
                const int v = i * Cfg::THREADS + tid;
                const int r = v / (BK / V), k = (v % (BK / V)) * V;
                const T* src = A + static_cast<size_t>(m0 + r) * lda + (k0 + k);
                int valid = V;
                if constexpr (kGuardK) valid = min(max(K - (k0 + k), 0), V);
                if constexpr (kGuardMN) valid = (m0 + r < M) ? valid : 0;
                copy_async<16>(smem_u32(As + r * A_LD + k), valid > 0 ? src : A, valid * int(sizeof(T)));
            }
#pragma unroll
            for (int i = 0; i < Cfg::B_VEC_ITERS; ++i) {
                const int v = i * Cfg::THREADS + tid;
                const int k = v / (BN / V), c = (v % (BN / V)) * V;
                const T* src = B + static_cast<size_t>(k0 + k) * ldb + (n0 + c);
                int valid = V;
                if constexpr (kGuardMN) valid = min(max(N - (n0 + c), 0), V);
                if constexpr (kGuardK) valid = (k0 + k < K) ? valid : 0;
                copy_async<16>(smem_u32(Bs + k * B_LD + c), valid > 0 ? src : B, valid * int(sizeof(T)));
            }
        } else {
#pragma unroll 4
            for (int i = 0; i < Cfg::A_ELEM_ITERS; ++i) {
                const int e = i * Cfg::THREADS + tid;
                const int r = e / BK, k = e % BK;
                const bool ok = (!kGuardMN || m0 + r < M) && (!kGuardK || k0 + k < K);
                const T* src = A + static_cast<size_t>(m0 + r) * lda + (k0 + k);
                copy_async<sizeof(T)>(smem_u32(As + r * A_LD + k), ok ? src : A, ok ? int(sizeof(T)) : 0);
            }
#pragma unroll 4
            for (int i = 0; i < Cfg::B_ELEM_ITERS; ++i) {
                const int e = i * Cfg::THREADS + tid;
                const int k = e / BN, c = e % BN;
                const bool ok = (!kGuardMN || n0 + c < N) && (!kGuardK || k0 + k < K);
                const T* src = B + static_cast<size_t>(k0 + k) * ldb + (n0 + c);
                copy_async<sizeof(T)>(smem_u32(Bs + k * B_LD + c), ok ? src : B, ok ? int(sizeof(T)) : 0);
            }
        }
    };

    // ---- where this lane's fragments are --------------------------------------------------------
    const int warp_m = warp / Cfg::WARPS_N, warp_n = warp % Cfg::WARPS_N;
    const int g = lane / 4, t = lane % 4;  // the "group" and "thread in group" of the PTX fragment tables
    const int a_row0 = warp_m * Cfg::WM, b_col0 = warp_n * Cfg::WN;

    // Accumulators: acc for the result; with the slab sum also part, the sum of one slab.
    T acc[MT][NT][ACC];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int e = 0; e < ACC; ++e) acc[i][j][e] = T(0);
    constexpr bool kSlabSum = Cfg::SLAB_SUM;
    [[maybe_unused]] float part[kSlabSum ? MT : 1][kSlabSum ? NT : 1][4];
    if constexpr (kSlabSum) {
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int j = 0; j < NT; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) part[i][j][e] = 0.f;
    }

    // One k-step of the warp tile on one stage: fragments from shared memory, converted, multiplied.
    auto compute_step = [&](const T* As, const T* Bs, int ks) {
        const int kb = ks * Mma::K;
        if constexpr (S == Scheme::fp64) {
            double fa[MT], fb[NT];
#pragma unroll
            for (int i = 0; i < MT; ++i) fa[i] = As[(a_row0 + i * 8 + g) * A_LD + kb + t];
#pragma unroll
            for (int j = 0; j < NT; ++j) fb[j] = Bs[(kb + t) * B_LD + b_col0 + j * 8 + g];
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int j = 0; j < NT; ++j) mma_fp64(acc[i][j], fa[i], fb[j]);
        } else if constexpr (S == Scheme::fp16) {
            // A: two ldmatrix.x4 per 16×16 tile, k = kb..kb+7 and kb+8..kb+15; lane l gives the row
            // address of row l%16 at k offset (l/16)·4. Registers: x0 (g, t), x1 (g+8, t),
            // x2 (g, t+4), x3 (g+8, t+4) of each 8-wide half.
            uint32_t fa[MT][4], fb[NT][2];
#pragma unroll
            for (int i = 0; i < MT; ++i) {
                uint32_t lo[4], hi[4];
                const T* row = As + (a_row0 + i * 16 + lane % 16) * A_LD + kb + (lane / 16) * 4;
                load_matrix_x4(lo, smem_u32(row));
                load_matrix_x4(hi, smem_u32(row + 8));
                fa[i][0] = to_half2(__uint_as_float(lo[0]), __uint_as_float(lo[2]));  // row g, slots 2t, 2t+1 = k t, t+4
                fa[i][1] = to_half2(__uint_as_float(lo[1]), __uint_as_float(lo[3]));  // row g+8
                fa[i][2] = to_half2(__uint_as_float(hi[0]), __uint_as_float(hi[2]));  // row g, slots 2t+8, 2t+9 = k t+8, t+12
                fa[i][3] = to_half2(__uint_as_float(hi[1]), __uint_as_float(hi[3]));  // row g+8
            }
#pragma unroll
            for (int j = 0; j < NT; ++j) {
                const T* col = Bs + (kb + t) * B_LD + b_col0 + j * 8 + g;
                fb[j][0] = to_half2(col[0], col[4 * B_LD]);            // k t, t+4
                fb[j][1] = to_half2(col[8 * B_LD], col[12 * B_LD]);    // k t+8, t+12
            }
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int j = 0; j < NT; ++j) mma_fp16(acc[i][j], fa[i], fb[j]);
        } else {
            // A: one ldmatrix.x4 per 16×8 tile: (g, t), (g+8, t), (g, t+4), (g+8, t+4) — the TF32 A
            // fragment as it is. B: (k t, col g) and (k t+4, col g).
            uint32_t ra[MT][4];
            float rb[NT][2];
#pragma unroll
            for (int i = 0; i < MT; ++i)
                load_matrix_x4(ra[i], smem_u32(As + (a_row0 + i * 16 + lane % 16) * A_LD + kb + (lane / 16) * 4));
#pragma unroll
            for (int j = 0; j < NT; ++j) {
                const T* col = Bs + (kb + t) * B_LD + b_col0 + j * 8 + g;
                rb[j][0] = col[0];
                rb[j][1] = col[4 * B_LD];
            }
            if constexpr (S == Scheme::tf32) {
                uint32_t fa[MT][4], fb[NT][2];
#pragma unroll
                for (int i = 0; i < MT; ++i)
#pragma unroll
                    for (int e = 0; e < 4; ++e) fa[i][e] = to_tf32(__uint_as_float(ra[i][e]));
#pragma unroll
                for (int j = 0; j < NT; ++j)
#pragma unroll
                    for (int e = 0; e < 2; ++e) fb[j][e] = to_tf32(rb[j][e]);
#pragma unroll
                for (int i = 0; i < MT; ++i)
#pragma unroll
                    for (int j = 0; j < NT; ++j) mma_tf32(acc[i][j], fa[i], fb[j]);
            } else {
                // The split: x = hi + lo, both TF32; hi·hi carries the leading bits, the two
                // cross terms the next 11, summed smallest first into the slab's accumulator.
                uint32_t a_hi[MT][4], a_lo[MT][4], b_hi[NT][2], b_lo[NT][2];
#pragma unroll
                for (int i = 0; i < MT; ++i)
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const float x = __uint_as_float(ra[i][e]);
                        a_hi[i][e] = to_tf32(x);
                        a_lo[i][e] = to_tf32(x - __uint_as_float(a_hi[i][e]));
                    }
#pragma unroll
                for (int j = 0; j < NT; ++j)
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        b_hi[j][e] = to_tf32(rb[j][e]);
                        b_lo[j][e] = to_tf32(rb[j][e] - __uint_as_float(b_hi[j][e]));
                    }
#pragma unroll
                for (int i = 0; i < MT; ++i)
#pragma unroll
                    for (int j = 0; j < NT; ++j) {
                        float (&sum)[4] = kSlabSum ? part[kSlabSum ? i : 0][kSlabSum ? j : 0] : acc[i][j];
                        mma_tf32(sum, a_lo[i], b_hi[j]);
                        mma_tf32(sum, a_hi[i], b_lo[j]);
                        mma_tf32(sum, a_hi[i], b_hi[j]);
                    }
            }
        }
    };

    // The whole pipeline, instantiated for interior blocks (no bounds tests on M and N) and for
    // edge blocks; the branch between them is uniform per block and taken once.
    auto pipeline = [&](auto guard_mn) {
        using GuardK = std::true_type;
        using NoGuardK = std::false_type;
        const bool partial_last = (K % BK) != 0;
        auto copy = [&](int slab, int stage) {
            if (partial_last && slab == num_slabs - 1) copy_slab(slab, stage, guard_mn, GuardK{});
            else copy_slab(slab, stage, guard_mn, NoGuardK{});
        };
        // Prologue: slabs 0..STAGES-2 in flight, one commit group per slab (empty or not).
#pragma unroll
        for (int s = 0; s < STAGES - 1; ++s) {
            if (s < num_slabs) copy(s, s);
            copy_async_commit();
        }
        int stage = 0;
        for (int slab = 0; slab < num_slabs; ++slab) {
            // Slab `slab` has landed (at most STAGES-2 newer groups still in flight) and every warp
            // is done with the stage the next copy overwrites (it held slab - 1).
            copy_async_wait<STAGES - 2>();
            __syncthreads();
            const int next = slab + STAGES - 1;
            if (next < num_slabs) copy(next, stage == 0 ? STAGES - 1 : stage - 1);
            copy_async_commit();
            const T* As = smem + stage * Cfg::STAGE;
            const T* Bs = As + Cfg::A_STAGE;
#pragma unroll
            for (int ks = 0; ks < Cfg::KSTEPS; ++ks) compute_step(As, Bs, ks);
            if constexpr (kSlabSum) {
                // The slab's sum joins the result with a round-to-nearest FP32 add.
#pragma unroll
                for (int i = 0; i < MT; ++i)
#pragma unroll
                    for (int j = 0; j < NT; ++j)
#pragma unroll
                        for (int e = 0; e < 4; ++e) {
                            acc[i][j][e] += part[i][j][e];
                            part[i][j][e] = 0.f;
                        }
            }
            stage = (stage + 1 == STAGES) ? 0 : stage + 1;
        }
    };
    if (m0 + BM <= M && n0 + BN <= N) pipeline(std::false_type{});
    else pipeline(std::true_type{});

    // ---- epilogue: C = alpha·acc + beta·C ----------------------------------------------------------
    // Two consecutive results (row, col) and (row, col+1); a vector store when both are inside C
    // and ldc allows it, else element by element up to N.
    auto write_pair = [&](int row, int col, T v0, T v1) {
        if (row >= M || col >= N) return;
        T* const c = C + static_cast<size_t>(row) * ldc + col;
        T out0 = alpha * v0, out1 = alpha * v1;
        if (vec_c && col + 1 < N) {
            if constexpr (std::is_same_v<T, float>) {
                if (beta != T(0)) {
                    const float2 old = *reinterpret_cast<const float2*>(c);
                    out0 = fmaf(beta, old.x, out0), out1 = fmaf(beta, old.y, out1);
                }
                *reinterpret_cast<float2*>(c) = make_float2(out0, out1);
            } else {
                if (beta != T(0)) {
                    const double2 old = *reinterpret_cast<const double2*>(c);
                    out0 = fma(beta, old.x, out0), out1 = fma(beta, old.y, out1);
                }
                *reinterpret_cast<double2*>(c) = make_double2(out0, out1);
            }
            return;
        }
        c[0] = (beta != T(0)) ? fma(beta, c[0], out0) : out0;
        if (col + 1 < N) c[1] = (beta != T(0)) ? fma(beta, c[1], out1) : out1;
    };
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j) {
            const int row = m0 + a_row0 + i * Mma::M + g, col = n0 + b_col0 + j * Mma::N + 2 * t;
            write_pair(row, col, acc[i][j][0], acc[i][j][1]);  // row g: columns 2t, 2t+1
            if constexpr (ACC == 4) write_pair(row + 8, col, acc[i][j][2], acc[i][j][3]);  // row g+8
        }
}

// ------------------------------------------------------------------------------------------------
// Host side
// ------------------------------------------------------------------------------------------------

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) % 16) == 0; }

// Launches one kernel of a configuration. The dynamic shared-memory limit is raised once per
// kernel (the first call; a function-local static is initialised exactly once, thread-safely).
template <class Cfg, bool kVec>
Status launch_kernel(const GemmProblem<typename Cfg::Elem>& p, unsigned tiles, bool vec_c) {
    auto kernel = tensor_kernel<Cfg, kVec>;
    static const cudaError_t attribute =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(Cfg::SMEM_BYTES));
    GEMMLAB_TRY(attribute);
    kernel<<<tiles, Cfg::THREADS, Cfg::SMEM_BYTES, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta,
                                                              p.C, p.ldc, vec_c);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

// Runs one configuration: 16-byte copies when every row of A and of B starts 16-byte aligned,
// vector stores of C when ldc and C allow pairs.
template <class Cfg>
Status run_config(const GemmProblem<typename Cfg::Elem>& p) {
    using T = typename Cfg::Elem;
    if (p.M <= 0 || p.N <= 0) return Status::ok;
    const long long tiles = static_cast<long long>((p.M + Cfg::BM - 1) / Cfg::BM) * ((p.N + Cfg::BN - 1) / Cfg::BN);
    if (tiles > 0x7fffffffLL) return Status::unsupported;
    const bool vec = p.lda % Cfg::V == 0 && p.ldb % Cfg::V == 0 && aligned16(p.A) && aligned16(p.B);
    const bool vec_c = p.ldc % 2 == 0 && reinterpret_cast<uintptr_t>(p.C) % (2 * sizeof(T)) == 0;
    return vec ? launch_kernel<Cfg, true>(p, static_cast<unsigned>(tiles), vec_c)
               : launch_kernel<Cfg, false>(p, static_cast<unsigned>(tiles), vec_c);
}

// ---- the configurations the stage uses ---------------------------------------------------------
//
// float: 128×128 blocks of 8 warps, warp tiles of 64×32 (4×4 mma tiles, 64 accumulators), slabs
// of 32 k. The split scheme doubles its accumulators (128 registers, ~250 in all): one block per
// SM. The others would fit two blocks in shared memory, but at the 128 registers that allows
// ptxas spills; one block of up to 255 registers does not. Provisional until timed on an H100
// (tuning candidates at the bottom; reference/tuning/README.md).
//                                     scheme             BM   BN  BK  WM  WN  ST  MINB
using Fp16Config  = TensorConfig<Scheme::fp16,       128, 128, 32, 64, 32, 3, 1>;
using Tf32Config  = TensorConfig<Scheme::tf32,       128, 128, 32, 64, 32, 3, 1>;
using SplitConfig = TensorConfig<Scheme::split_tf32, 128, 128, 32, 64, 32, 4, 1>;
// double: 64×128 blocks of 4 warps of 32×64 (4×8 DMMA tiles of 8×8), slabs of 16 k, as the reuse
// stage's DMMA configuration.
using Fp64Config  = TensorConfig<Scheme::fp64,        64, 128, 16, 32, 64, 3, 2>;

}  // namespace

template <typename T, InputPrecision IN>
Status gemm_tensor(const GemmProblem<T>& p) {
    if constexpr (std::is_same_v<T, double>) {
        return run_config<Fp64Config>(p);  // every variant: FP64 on the FP64 tensor cores
    } else if constexpr (IN == InputPrecision::fp16) {
        return run_config<Fp16Config>(p);
    } else if constexpr (IN == InputPrecision::tf32) {
        return run_config<Tf32Config>(p);
    } else {
        return run_config<SplitConfig>(p);  // FP32-accurate: 3xTF32
    }
}

template Status gemm_tensor<float, InputPrecision::fp16>(const GemmProblem<float>&);
template Status gemm_tensor<float, InputPrecision::tf32>(const GemmProblem<float>&);
template Status gemm_tensor<float, InputPrecision::full>(const GemmProblem<float>&);
template Status gemm_tensor<double, InputPrecision::full>(const GemmProblem<double>&);

#ifdef GEMMLAB_TUNE
// ---- tuning candidates (only with -DGEMMLAB_TUNE): timed side by side by reference/tuning ----
namespace {
template <class Cfg>
tuning::Candidate<typename Cfg::Elem> candidate(const char* label, InputPrecision inputs) {
    return {"tensor", label, &run_config<Cfg>, inputs};
}
}  // namespace

void tensor_candidates(std::vector<tuning::Candidate<float>>& f32, std::vector<tuning::Candidate<double>>& f64) {
    constexpr InputPrecision H = InputPrecision::fp16, T32 = InputPrecision::tf32, F = InputPrecision::full;
    constexpr Scheme X = Scheme::split_tf32;
    //                                                BM   BN  BK  WM  WN  ST  MINB
    f32.push_back(candidate<TensorConfig<X, 128, 128, 32, 64, 32, 3, 1>>("3xtf32 128x128x32 w64x32 s3", F));
    f32.push_back(candidate<TensorConfig<X, 128, 128, 32, 64, 32, 4, 1>>("3xtf32 128x128x32 w64x32 s4", F));
    f32.push_back(candidate<TensorConfig<X, 128, 128, 16, 64, 32, 4, 1>>("3xtf32 128x128x16 w64x32 s4", F));
    f32.push_back(candidate<TensorConfig<X, 128, 128, 32, 32, 64, 4, 1>>("3xtf32 128x128x32 w32x64 s4", F));
    f32.push_back(candidate<TensorConfig<X, 256, 64, 32, 64, 32, 3, 1>>("3xtf32 256x64x32 w64x32 s3", F));
    f32.push_back(candidate<TensorConfig<X, 64, 128, 32, 32, 32, 4, 2>>("3xtf32 64x128x32 w32x32 s4", F));
    // Without the slab sum (one accumulator: fewer registers, larger warp tiles, less accurate at long K).
    f32.push_back(candidate<TensorConfig<X, 128, 128, 32, 64, 32, 4, 1, false>>("3xtf32 128x128x32 w64x32 s4 one-acc", F));
    f32.push_back(candidate<TensorConfig<X, 128, 256, 32, 64, 64, 3, 1, false>>("3xtf32 128x256x32 w64x64 s3 one-acc", F));
    f32.push_back(candidate<TensorConfig<Scheme::tf32, 128, 128, 32, 64, 32, 4, 1>>("tf32 128x128x32 w64x32 s4", T32));
    f32.push_back(candidate<TensorConfig<Scheme::tf32, 128, 128, 32, 64, 32, 3, 2>>("tf32 128x128x32 w64x32 s3 2/SM", T32));
    f32.push_back(candidate<TensorConfig<Scheme::tf32, 128, 256, 32, 64, 64, 3, 1>>("tf32 128x256x32 w64x64 s3", T32));
    f32.push_back(candidate<TensorConfig<Scheme::fp16, 128, 128, 32, 64, 32, 4, 1>>("fp16 128x128x32 w64x32 s4", H));
    f32.push_back(candidate<TensorConfig<Scheme::fp16, 128, 128, 32, 64, 32, 3, 2>>("fp16 128x128x32 w64x32 s3 2/SM", H));
    f32.push_back(candidate<TensorConfig<Scheme::fp16, 128, 256, 32, 64, 64, 3, 1>>("fp16 128x256x32 w64x64 s3", H));
    f64.push_back(candidate<TensorConfig<Scheme::fp64, 64, 128, 16, 32, 64, 4, 2>>("dmma 64x128x16 w32x64 s4", F));
    f64.push_back(candidate<TensorConfig<Scheme::fp64, 128, 128, 16, 64, 32, 3, 1>>("dmma 128x128x16 w64x32 s3", F));
    f64.push_back(candidate<TensorConfig<Scheme::fp64, 64, 64, 16, 32, 32, 3, 4>>("dmma 64x64x16 w32x32 s3", F));
}
#endif

}  // namespace gemmlab::GEMMLAB_NS
