// reference/pitched.cu — stage "pitched", instructor solution: pitched memory and vector loads.
//
// Part 1, the helpers. cudaMallocPitch pads every row of a matrix to a "pitch" (a multiple of
// the GPU's alignment, 512 bytes on current GPUs), so every row starts on an aligned address
// whatever the width. cudaMemcpy2DAsync copies a matrix between two layouts with different row
// strides (a dense host/device matrix and the pitched one).
//
// Part 2, the kernel. Because every row of A, B and C starts on a 16-byte boundary, a thread can
// move 16 bytes (4 floats or 2 doubles; V elements below) with one instruction: LDG.128 from
// global memory, LDS.128/STS.128 in shared memory. The kernel is the register-blocked kernel of
// the previous stage with three changes:
//   1. Global loads are 16-byte vectors: 4× fewer load instructions for the same bytes.
//   2. A is stored transposed in shared memory (As[k][m]), so the TM values of A that a thread
//      needs at one k are contiguous and load as vectors too. A thread's TM×TN tile of C is made
//      of V×V fragments, placed so that the lanes of a warp read consecutive 16-byte vectors.
//   3. Double buffering through registers: the loads of slab t+1 are issued into registers
//      before the FMAs of slab t and stored to the other shared buffer after them, so the global
//      latency hides behind arithmetic and one barrier per slab suffices.
//
// DGEMM: the same pitched 16-byte loads and register double buffering, but the products run on
// the FP64 tensor cores (IEEE double arithmetic, like an FMA): mma.sync.m16n8k4.f64, one 16×8×4
// product per warp instruction, in pitched_dmma_kernel ("DGEMM" below; reuse.cu, Part 2, says
// why the tensor cores). A is not transposed there: the tensor cores want it by rows. GPUs before
// sm_80 have no FP64 tensor cores: there the double stage runs the FMA kernel above.
// Measured speeds of every configuration: docs/reference-kernels.md.
//
// Any M, N, K: a vector that straddles the end of a row (K or N not a multiple of V) is loaded
// whole — the rest of the vector lies inside the pitch padding, which is allocated and readable —
// and its elements past the end are replaced by zeros (the padding may hold anything, even NaN).
// Vectors that start past the end of a row, and rows past the last one, are not loaded at all.
// C is written as vectors inside the matrix and element by element at the right edge: the bytes
// between N and the pitch are never written. The alignment is checked at run time; if it does
// not hold (the kernel called on ordinary dense operands), the same kernel runs with element-wise
// loads.
//
// Run it:  make check STAGE=pitched      make bench STAGE=pitched
#include <cmath>
#include <cstdint>

#include "gemmlab/arch.h"
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {

// ---- Part 1: pitched helpers ----------------------------------------------------------------

template <typename T>
Status pitched_alloc(PitchedMatrix<T>* out, int rows, int cols) {
    if (out == nullptr || rows < 0 || cols < 0) return Status::unsupported;
    *out = PitchedMatrix<T>{};
    void* data = nullptr;
    size_t pitch = 0;
    // Width in bytes, height in rows; the pitch it returns is >= cols*sizeof(T) and aligned.
    GEMMLAB_TRY(cudaMallocPitch(&data, &pitch, static_cast<size_t>(cols) * sizeof(T),
                                static_cast<size_t>(rows)));
    if (pitch % sizeof(T) != 0) {  // never happens (pitches are multiples of 512), but the
        cudaFree(data);            // kernels take leading dimensions in elements
        return Status::unsupported;
    }
    out->data = static_cast<T*>(data);
    out->pitch_bytes = pitch;
    out->rows = rows;
    out->cols = cols;
    return Status::ok;
}

template <typename T>
Status pitched_upload(const PitchedMatrix<T>& dst, const T* src, int ld_src, cudaStream_t stream) {
    if (ld_src < dst.cols) return Status::unsupported;
    if (dst.rows == 0 || dst.cols == 0) return Status::ok;
    // cudaMemcpyDefault: src may be host or device memory (unified addressing tells which).
    GEMMLAB_TRY(cudaMemcpy2DAsync(dst.data, dst.pitch_bytes, src, static_cast<size_t>(ld_src) * sizeof(T),
                                  static_cast<size_t>(dst.cols) * sizeof(T), dst.rows,
                                  cudaMemcpyDefault, stream));
    return Status::ok;
}

template <typename T>
Status pitched_download(T* dst, int ld_dst, const PitchedMatrix<T>& src, cudaStream_t stream) {
    if (ld_dst < src.cols) return Status::unsupported;
    if (src.rows == 0 || src.cols == 0) return Status::ok;
    GEMMLAB_TRY(cudaMemcpy2DAsync(dst, static_cast<size_t>(ld_dst) * sizeof(T), src.data, src.pitch_bytes,
                                  static_cast<size_t>(src.cols) * sizeof(T), src.rows,
                                  cudaMemcpyDefault, stream));
    return Status::ok;
}

// ---- Part 2: the kernel ------------------------------------------------------------------------

namespace {

// 16 bytes = V elements, as one register vector.
template <typename T> struct Vec16;
template <> struct Vec16<float> { using type = float4; };
template <> struct Vec16<double> { using type = double2; };

template <typename T>
struct Pack {  // V elements that move together
    static constexpr int V = 16 / int(sizeof(T));
    T v[V];
};

template <typename T>
__device__ __forceinline__ void load16(Pack<T>& p, const T* src) {  // src 16-byte aligned
    const typename Vec16<T>::type x = *reinterpret_cast<const typename Vec16<T>::type*>(src);
    if constexpr (sizeof(T) == 4) {
        p.v[0] = x.x; p.v[1] = x.y; p.v[2] = x.z; p.v[3] = x.w;
    } else {
        p.v[0] = x.x; p.v[1] = x.y;
    }
}
template <typename T>
__device__ __forceinline__ void store16(T* dst, const Pack<T>& p) {  // dst 16-byte aligned
    typename Vec16<T>::type x;
    if constexpr (sizeof(T) == 4) {
        x = make_float4(p.v[0], p.v[1], p.v[2], p.v[3]);
    } else {
        x = make_double2(p.v[0], p.v[1]);
    }
    *reinterpret_cast<typename Vec16<T>::type*>(dst) = x;
}

// Loads the V elements src[0..V) of a row whose valid part ends `valid` elements after src
// (valid may be <= 0: nothing is loaded). Elements past the end become zeros.
template <typename T, bool kVec>
__device__ __forceinline__ void load_row_piece(Pack<T>& p, const T* src, int valid) {
    constexpr int V = Pack<T>::V;
    if (valid <= 0) {
#pragma unroll
        for (int v = 0; v < V; ++v) p.v[v] = T(0);
        return;
    }
    if constexpr (kVec) {
        load16(p, src);  // the whole vector lies inside the (padded) row
        if (valid < V) {
#pragma unroll
            for (int v = 0; v < V; ++v)
                if (v >= valid) p.v[v] = T(0);
        }
    } else {
#pragma unroll
        for (int v = 0; v < V; ++v) p.v[v] = (v < valid) ? src[v] : T(0);
    }
}

template <typename T, int TM_, int TN_, int BK_, int MIN_BLOCKS_>
struct PitchedConfig {
    using Elem = T;
    static constexpr int V = Pack<T>::V;
    static constexpr int TM = TM_, TN = TN_;          // C elements per thread (FMA)
    static constexpr int THREADS_M = 16, THREADS_N = 16, THREADS = 256;
    static constexpr int BM = TM * THREADS_M, BN = TN * THREADS_N, BK = BK_;
    static constexpr int MIN_BLOCKS = MIN_BLOCKS_;
    static constexpr int FM = TM / V, FN = TN / V;     // V×V fragments per thread
    // Transposed A, rows padded by 16 bytes: the transposing stores are then conflict-free.
    static constexpr int A_LD = BM + V;
    static constexpr int B_LD = BN;
    static constexpr int A_VECS = BM * BK / V / THREADS;  // 16-byte pieces of A per thread
    static constexpr int B_VECS = BK * BN / V / THREADS;  // and of B
    static_assert(TM % V == 0 && TN % V == 0, "thread tiles are made of whole 16-byte vectors");
    static_assert(FM * V == TM && FN * V == TN, "V×V fragments cover the thread tile");
    static_assert(BK % V == 0, "the A slab is read as whole vectors along k");
    static_assert((BM * BK / V) % THREADS == 0 && (BK * BN / V) % THREADS == 0,
                  "the vectors of a slab are shared evenly between the threads");
    static_assert(A_VECS >= 1 && B_VECS >= 1, "every thread copies at least one vector");
    static_assert(THREADS % (BK / V) == 0 && THREADS % (BN / V) == 0,
                  "each thread copies fixed columns of the slabs");
    static_assert((A_LD * sizeof(T)) % 16 == 0, "rows of As stay 16-byte aligned");
    static_assert(TM * TN * sizeof(T) <= 512, "at most 128 registers of accumulators");
    static_assert((B_LD * sizeof(T)) % 16 == 0, "rows of Bs stay 16-byte aligned");
    static_assert(THREADS_M % 4 == 0 && THREADS_N % 8 == 0, "warps cover 4×8 patches of the thread grid");
};

template <class Cfg, bool kVec>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS)
pitched_kernel(int M, int N, int K, typename Cfg::Elem alpha,
               const typename Cfg::Elem* __restrict__ A, int lda,
               const typename Cfg::Elem* __restrict__ B, int ldb, typename Cfg::Elem beta,
               typename Cfg::Elem* __restrict__ C, int ldc, bool vec_c) {
    using T = typename Cfg::Elem;
    constexpr int V = Cfg::V, TM = Cfg::TM, TN = Cfg::TN, BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK;
    constexpr int A_LD = Cfg::A_LD;

    __shared__ __align__(16) T As[2][BK][A_LD];  // two buffers, A transposed: As[buf][k][m]
    __shared__ __align__(16) T Bs[2][BK][Cfg::B_LD];  // Bs[buf][k][n]

    // The 256 threads form a 16×16 grid (ty, tx). Which threads share a warp matters: a warp
    // whose 32 lanes cover 4 rows × 8 columns of that grid reads, at each k, 4 different vectors
    // of A (64 bytes) and 8 of B (128 bytes) — the other lanes get theirs by broadcast. Two full
    // rows of 16 (the plain order tid = 16·ty + tx) would read 2 of A but 16 of B (256 bytes), a
    // third more shared-memory traffic per FMA; measurably slower, most in double.
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    constexpr int WARPS_N = Cfg::THREADS_N / 8;
    const int tx = (warp % WARPS_N) * 8 + lane % 8, ty = (warp / WARPS_N) * 4 + lane / 8;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    // Copy coordinates: vector e = i*THREADS + tid of the A slab is row e/(BK/V), k V*(e%(BK/V));
    // vector e of the B slab is row e/(BN/V), column V*(e%(BN/V)).
    constexpr int A_VECS_PER_ROW = BK / V, B_VECS_PER_ROW = BN / V;
    const int a_r = tid / A_VECS_PER_ROW, a_k = (tid % A_VECS_PER_ROW) * V;
    const int b_k = tid / B_VECS_PER_ROW, b_n = (tid % B_VECS_PER_ROW) * V;

    Pack<T> a_stage[Cfg::A_VECS], b_stage[Cfg::B_VECS];  // the next slab, in flight
    auto load_slab = [&](int k0) {
#pragma unroll
        for (int i = 0; i < Cfg::A_VECS; ++i) {
            const int r = a_r + i * (Cfg::THREADS / A_VECS_PER_ROW);
            const int m = m0 + r, k = k0 + a_k;
            load_row_piece<T, kVec>(a_stage[i], A + static_cast<size_t>(m) * lda + k,
                                    (m < M) ? K - k : 0);
        }
#pragma unroll
        for (int i = 0; i < Cfg::B_VECS; ++i) {
            const int k = k0 + b_k + i * (Cfg::THREADS / B_VECS_PER_ROW), n = n0 + b_n;
            load_row_piece<T, kVec>(b_stage[i], B + static_cast<size_t>(k) * ldb + n,
                                    (k < K) ? N - n : 0);
        }
    };
    auto store_slab = [&](int buf) {
#pragma unroll
        for (int i = 0; i < Cfg::A_VECS; ++i) {
            const int r = a_r + i * (Cfg::THREADS / A_VECS_PER_ROW);
#pragma unroll
            for (int v = 0; v < V; ++v) As[buf][a_k + v][r] = a_stage[i].v[v];  // transpose
        }
#pragma unroll
        for (int i = 0; i < Cfg::B_VECS; ++i) {
            const int k = b_k + i * (Cfg::THREADS / B_VECS_PER_ROW);
            store16(&Bs[buf][k][b_n], b_stage[i]);
        }
    };

    // acc[i][j] is element (i, j) of the thread's TM×TN tile.
    T acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = T(0);

    const int num_slabs = (K + BK - 1) / BK;
    load_slab(0);
    store_slab(0);
    __syncthreads();

    for (int t = 0; t < num_slabs; ++t) {
        const int buf = t % 2;
        if (t + 1 < num_slabs) load_slab((t + 1) * BK);  // in flight during the FMAs below

#pragma unroll
        for (int k = 0; k < BK; ++k) {
            // Fragment f of A: rows f*16V + ty*V + [0,V); of B: columns f*16V + tx*V + [0,V).
            T a[TM], b[TN];
#pragma unroll
            for (int f = 0; f < Cfg::FM; ++f) {
                Pack<T> p;
                load16(p, &As[buf][k][f * Cfg::THREADS_M * V + ty * V]);
#pragma unroll
                for (int v = 0; v < V; ++v) a[f * V + v] = p.v[v];
            }
#pragma unroll
            for (int f = 0; f < Cfg::FN; ++f) {
                Pack<T> p;
                load16(p, &Bs[buf][k][f * Cfg::THREADS_N * V + tx * V]);
#pragma unroll
                for (int v = 0; v < V; ++v) b[f * V + v] = p.v[v];
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
        }

        // The other buffer was last read before the previous barrier: safe to overwrite.
        if (t + 1 < num_slabs) store_slab(buf ^ 1);
        __syncthreads();
    }

    // Epilogue: C = alpha·acc + beta·C; V-wide stores inside the matrix, elements at the edge.
    // Writes the V results `values` to row m, columns n..n+V-1 of C.
    auto write_c = [&](int m, int n, const T* values) {
        if (m >= M) return;
        T* const c_row = C + static_cast<size_t>(m) * ldc;
        Pack<T> out;
#pragma unroll
        for (int v = 0; v < V; ++v) out.v[v] = alpha * values[v];
        if (vec_c && n + V <= N) {
            if (beta != T(0)) {
                Pack<T> old;
                load16(old, c_row + n);
#pragma unroll
                for (int v = 0; v < V; ++v) out.v[v] = fma(beta, old.v[v], out.v[v]);
            }
            store16(c_row + n, out);
        } else {
#pragma unroll
            for (int v = 0; v < V; ++v) {
                if (n + v < N) {
                    T* c = c_row + n + v;
                    *c = (beta != T(0)) ? fma(beta, *c, out.v[v]) : out.v[v];
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
                write_c(m0 + fi * Cfg::THREADS_M * V + ty * V + vi, n0 + fj * Cfg::THREADS_N * V + tx * V,
                        &acc[fi * V + vi][fj * V]);
}

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) % 16) == 0; }

template <class Cfg>
Status run_config(const GemmProblem<typename Cfg::Elem>& p) {
    if (p.M <= 0 || p.N <= 0) return Status::ok;
    constexpr int V = Cfg::V;
    // Vector loads need every row of A and B to start on a 16-byte boundary. With operands from
    // pitched_alloc this always holds; checked anyway, with an element-wise fallback.
    const bool vec_ab = aligned16(p.A) && aligned16(p.B) && p.lda % V == 0 && p.ldb % V == 0;
    const bool vec_c = aligned16(p.C) && p.ldc % V == 0;
    const dim3 grid((p.N + Cfg::BN - 1) / Cfg::BN, (p.M + Cfg::BM - 1) / Cfg::BM);
    if (grid.y > 65535) return Status::unsupported;
    if (vec_ab) {
        pitched_kernel<Cfg, true><<<grid, Cfg::THREADS, 0, p.stream>>>(
            p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C, p.ldc, vec_c);
    } else {
        pitched_kernel<Cfg, false><<<grid, Cfg::THREADS, 0, p.stream>>>(
            p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C, p.ldc, vec_c);
    }
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

// ---- DGEMM: the FP64 tensor cores with Hopper's 16×8 DMMA shapes ---------------------------------
//
// The double stage runs its own kernel with the same three ideas (16-byte loads of pitched rows,
// shared-memory tiles, double buffering through registers) around mma.sync.m16n8kK.f64 (K = 4, 8
// or 16, sm_90: one DMMA.16x8xK each; 8 to 32 times the work of one m8n8k4). Because the
// tensor-core fragments want A by rows, A is NOT transposed here: As[m][k] and Bs[k][n] keep the
// layout of global memory, so every 16-byte vector loaded from A or B is stored as one STS.128.
// A lane (g, t) = (lane/4, lane%4) reads single doubles A[g + 8h][t + 4j] and B[t + 4j][g] of each
// 16×8 tile (LDS.64); rows padded to ≡ 4 doubles (mod 8) put the 4 rows that a half-warp reads in
// 4 different 32-byte bank groups, so these loads are conflict-free.

// D(16×8) += A(16×K)·B(K×8) on the FP64 tensor cores, K = 4, 8 or 16. Lane l = 4g + t holds
// a[2j + h] = A[g + 8h][t + 4j], b[j] = B[t + 4j][g] and d = {D[g][2t], D[g][2t+1],
// D[g+8][2t], D[g+8][2t+1]} (the PTX ISA's fragment tables for .f64). sm_80 and later only.
template <int K>
__device__ __forceinline__ void dmma_16x8(double (&d)[4], const double (&a)[K / 2], const double (&b)[K / 4]) {
    static_assert(K == 4 || K == 8 || K == 16, "sm_90 has m16n8k4, m16n8k8 and m16n8k16 for f64");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
    // sm_80 to sm_89 have only m8n8k4 (C(8×8) += A(8×4)·B(4×8), lane l holding A[l/4][l%4],
    // B[l%4][l/4], C[l/4][2(l%4) + {0,1}]): the same product as 2·K/4 of those, rows g and g + 8
    // separately, with the same fragments.
#pragma unroll
    for (int j = 0; j < K / 4; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h)
            asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
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

template <int BM_, int BN_, int BK_, int WM_, int WN_, int MMA_K_, int MIN_BLOCKS_>
struct PitchedDmmaConfig {
    using Elem = double;
    static constexpr int BM = BM_, BN = BN_, BK = BK_;  // block tile of C, K slab
    static constexpr int WM = WM_, WN = WN_;            // warp tile of C
    static constexpr int MMA_K = MMA_K_;                // k of one mma: 4, 8 or 16
    static constexpr int MIN_BLOCKS = MIN_BLOCKS_;      // blocks per SM promised to the compiler
    static constexpr int V = 2;                         // doubles per 16-byte vector
    static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN, THREADS = 32 * WARPS_M * WARPS_N;
    static constexpr int MT = WM / 16, NT = WN / 8;     // 16×8 mma tiles of a warp tile
    static constexpr int FRAG_A = MMA_K / 2, FRAG_B = MMA_K / 4;  // doubles per lane and tile
    static constexpr int A_LD = BK + 4, B_LD = BN + 4;  // ≡ 4 (mod 8): conflict-free fragments
    static constexpr int A_BUF = BM * A_LD, BUF = A_BUF + BK * B_LD;  // one buffer: As, then Bs
    static constexpr size_t SMEM_BYTES = 2 * size_t(BUF) * sizeof(double);  // two buffers
    static constexpr int A_VECS = BM * BK / V / THREADS;  // 16-byte pieces of A per thread
    static constexpr int B_VECS = BK * BN / V / THREADS;  // and of B
    static_assert(MMA_K == 4 || MMA_K == 8 || MMA_K == 16, "the f64 mma shapes of sm_90");
    static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must cover the block tile");
    static_assert(WM % 16 == 0 && WN % 8 == 0, "mma tiles of 16×8 must cover the warp tile");
    static_assert(BK % MMA_K == 0 && BK % V == 0, "a slab is whole mma k-steps and whole vectors");
    static_assert((BM * BK / V) % THREADS == 0 && (BK * BN / V) % THREADS == 0 && A_VECS >= 1 && B_VECS >= 1,
                  "the vectors of a slab are shared evenly between the threads");
    static_assert(THREADS % (BK / V) == 0 && THREADS % (BN / V) == 0, "each thread copies fixed columns");
    static_assert(A_LD % 8 == 4 && B_LD % 8 == 4, "rows ≡ 4 (mod 8) doubles: conflict-free fragments");
    static_assert(MT * NT * 4 <= 64, "64 accumulators (128 registers) at most");
};

template <class Cfg, bool kVec>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS)
pitched_dmma_kernel(int M, int N, int K, double alpha,
                    const double* __restrict__ A, int lda, const double* __restrict__ B, int ldb,
                    double beta, double* __restrict__ C, int ldc, bool vec_c) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    // No FP64 tensor cores: never launched (gemm_pitched runs the FMA kernel). The fragment sizes
    // are named here too, so that no build finds them unused.
    static_assert(Cfg::FRAG_A > 0 && Cfg::FRAG_B > 0);
    __trap();
#else
    constexpr int V = Cfg::V, BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, MT = Cfg::MT, NT = Cfg::NT;
    constexpr int A_LD = Cfg::A_LD, B_LD = Cfg::B_LD, MMA_K = Cfg::MMA_K;

    extern __shared__ __align__(16) unsigned char smem_raw[];
    double* const smem = reinterpret_cast<double*>(smem_raw);  // 2 × { As[BM][A_LD], Bs[BK][B_LD] }

    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    // Copy coordinates: vector e = i*THREADS + tid of the A slab is row e/(BK/V), k V*(e%(BK/V));
    // vector e of the B slab is row e/(BN/V), column V*(e%(BN/V)).
    constexpr int A_VECS_PER_ROW = BK / V, B_VECS_PER_ROW = BN / V;
    const int a_r = tid / A_VECS_PER_ROW, a_k = (tid % A_VECS_PER_ROW) * V;
    const int b_k = tid / B_VECS_PER_ROW, b_n = (tid % B_VECS_PER_ROW) * V;

    Pack<double> a_stage[Cfg::A_VECS], b_stage[Cfg::B_VECS];  // the next slab, in flight
    auto load_slab = [&](int k0) {
#pragma unroll
        for (int i = 0; i < Cfg::A_VECS; ++i) {
            const int m = m0 + a_r + i * (Cfg::THREADS / A_VECS_PER_ROW), k = k0 + a_k;
            load_row_piece<double, kVec>(a_stage[i], A + static_cast<size_t>(m) * lda + k, (m < M) ? K - k : 0);
        }
#pragma unroll
        for (int i = 0; i < Cfg::B_VECS; ++i) {
            const int k = k0 + b_k + i * (Cfg::THREADS / B_VECS_PER_ROW), n = n0 + b_n;
            load_row_piece<double, kVec>(b_stage[i], B + static_cast<size_t>(k) * ldb + n, (k < K) ? N - n : 0);
        }
    };
    auto store_slab = [&](int buf) {  // no transposition: one STS.128 per vector
        double* const As = smem + buf * Cfg::BUF;
        double* const Bs = As + Cfg::A_BUF;
#pragma unroll
        for (int i = 0; i < Cfg::A_VECS; ++i)
            store16(As + (a_r + i * (Cfg::THREADS / A_VECS_PER_ROW)) * A_LD + a_k, a_stage[i]);
#pragma unroll
        for (int i = 0; i < Cfg::B_VECS; ++i)
            store16(Bs + (b_k + i * (Cfg::THREADS / B_VECS_PER_ROW)) * B_LD + b_n, b_stage[i]);
    };

    // Fragments: lane (g, t) reads As[row + g + 8h][k + t + 4j] and Bs[k + t + 4j][col + g].
    const int warp_m = warp / Cfg::WARPS_N, warp_n = warp % Cfg::WARPS_N;
    const int g = lane / 4, t = lane % 4;
    const int a_frag = (warp_m * Cfg::WM + g) * A_LD + t;
    const int b_frag = Cfg::A_BUF + t * B_LD + warp_n * Cfg::WN + g;

    double acc[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0;

    const int num_slabs = (K + BK - 1) / BK;
    load_slab(0);
    store_slab(0);
    __syncthreads();

    for (int s = 0; s < num_slabs; ++s) {
        const int buf = s % 2;
        if (s + 1 < num_slabs) load_slab((s + 1) * BK);  // in flight during the mma below

        const double* const As = smem + buf * Cfg::BUF + a_frag;
        const double* const Bs = smem + buf * Cfg::BUF + b_frag;
#pragma unroll
        for (int kb = 0; kb < BK; kb += MMA_K) {
            double a[MT][Cfg::FRAG_A], b[NT][Cfg::FRAG_B];
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int f = 0; f < Cfg::FRAG_A; ++f)  // slot f = 2j + h: row g + 8h, k t + 4j
                    a[i][f] = As[(i * 16 + (f % 2) * 8) * A_LD + kb + (f / 2) * 4];
#pragma unroll
            for (int j = 0; j < NT; ++j)
#pragma unroll
                for (int f = 0; f < Cfg::FRAG_B; ++f)  // slot f: k t + 4f, column g
                    b[j][f] = Bs[(kb + f * 4) * B_LD + j * 8];
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int j = 0; j < NT; ++j) dmma_16x8<MMA_K>(acc[i][j], a[i], b[j]);
        }

        // The other buffer was last read before the previous barrier: safe to overwrite.
        if (s + 1 < num_slabs) store_slab(buf ^ 1);
        __syncthreads();
    }

    // Epilogue: C = alpha·acc + beta·C; a double2 inside the matrix, elements at the right edge.
    auto write_pair = [&](int m, int n, double v0, double v1) {
        if (m >= M || n >= N) return;
        double* const c = C + static_cast<size_t>(m) * ldc + n;
        Pack<double> out;
        out.v[0] = alpha * v0;
        out.v[1] = alpha * v1;
        if (vec_c && n + 1 < N) {
            if (beta != 0.0) {
                Pack<double> old;
                load16(old, c);
                out.v[0] = fma(beta, old.v[0], out.v[0]);
                out.v[1] = fma(beta, old.v[1], out.v[1]);
            }
            store16(c, out);
            return;
        }
        c[0] = (beta != 0.0) ? fma(beta, c[0], out.v[0]) : out.v[0];
        if (n + 1 < N) c[1] = (beta != 0.0) ? fma(beta, c[1], out.v[1]) : out.v[1];
    };
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j) {
            const int m = m0 + warp_m * Cfg::WM + i * 16 + g, n = n0 + warp_n * Cfg::WN + j * 8 + 2 * t;
            write_pair(m, n, acc[i][j][0], acc[i][j][1]);      // row g: columns 2t, 2t+1
            write_pair(m + 8, n, acc[i][j][2], acc[i][j][3]);  // row g + 8
        }
#endif
}

// Launches a DMMA configuration; its two buffers may exceed the 48 KB of static shared memory,
// so they are dynamic and the limit is raised once per kernel.
template <class Cfg>
Status run_dmma(const GemmProblem<double>& p) {
    if (p.M <= 0 || p.N <= 0) return Status::ok;
    const bool vec_ab = aligned16(p.A) && aligned16(p.B) && p.lda % 2 == 0 && p.ldb % 2 == 0;
    const bool vec_c = aligned16(p.C) && p.ldc % 2 == 0;
    const dim3 grid((p.N + Cfg::BN - 1) / Cfg::BN, (p.M + Cfg::BM - 1) / Cfg::BM);
    if (grid.y > 65535) return Status::unsupported;
    auto kernel = vec_ab ? pitched_dmma_kernel<Cfg, true> : pitched_dmma_kernel<Cfg, false>;
    static const cudaError_t attribute[2] = {
        cudaFuncSetAttribute(pitched_dmma_kernel<Cfg, false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(Cfg::SMEM_BYTES)),
        cudaFuncSetAttribute(pitched_dmma_kernel<Cfg, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(Cfg::SMEM_BYTES))};
    GEMMLAB_TRY(attribute[vec_ab ? 1 : 0]);
    kernel<<<grid, Cfg::THREADS, Cfg::SMEM_BYTES, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb,
                                                             p.beta, p.C, p.ldc, vec_c);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

// The configurations the stage uses (docs/reference-kernels.md has the measurements behind them).
// Each is a named type, so that the kernels' symbols say what they are for.
//                                              T   TM  TN  BK  MIN_BLOCKS
// float: 8×8 per thread as 2×2 fragments of 4×4, 128×128 block tile, K slabs of 16 (half as
// many barriers as slabs of 8), two buffers (2 × 16.6 KB of shared memory), two blocks per SM.
struct FloatLarge : PitchedConfig<float,   8,  8, 16, 2> {};
// float, 128×64 and 64×64 block tiles: more, smaller blocks when the large tiles would leave
// SMs idle in the last wave or stick out of a skinny matrix.
struct FloatMid   : PitchedConfig<float,   8,  4, 16, 3> {};
struct FloatSmall : PitchedConfig<float,   4,  4, 16, 4> {};
// double before sm_80 (no FP64 tensor cores): FMAs, 4×8 per thread, 64×128 block tile, slabs of 8
// k, two blocks per SM; shared memory bounds it (FP64 FMAs need twice the bytes per FMA of float).
struct DoubleFma  : PitchedConfig<double,  4,  8,  8, 2> {};
// double from sm_80: the FP64 tensor cores (see "DGEMM" above). 64×128 blocks of 8 warps of 32×32
// (2×4 mma tiles: 32 accumulators, 128 registers in all), slabs of 16 k, two blocks per SM: while
// one block waits at its barrier or for its loads, the other one's mma keep the tensor cores busy
// (one 128×128 block per SM stalls the whole SM at every barrier); m16n8k4, whose fragments fit
// the 128-register budget that two blocks per SM leave (m16n8k8's spill).
//                                            BM   BN  BK  WM  WN MMA_K MINB
struct DoubleDmma : PitchedDmmaConfig<64, 128, 16, 32, 32, 4, 2> {};

// sm_count and estimated_speed repeat reuse.cu's on purpose: each stage file is a self-contained
// hand-in (students and the cluster copy single .cu files; nothing beside them is shipped).
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

// Estimated throughput of a configuration on a problem: its speed on large problems (relative,
// measured), times the share of its tiles' area inside C, times the share of the block slots of
// the last wave that have work (the same model as the reuse stage's).
template <class Cfg, typename T>
double estimated_speed(const GemmProblem<T>& p, double relative_speed) {
    const double tiles = double((p.M + Cfg::BM - 1) / Cfg::BM) * double((p.N + Cfg::BN - 1) / Cfg::BN);
    const double inside = double(p.M) * double(p.N) / (tiles * Cfg::BM * Cfg::BN);
    const double slots = double(sm_count()) * Cfg::MIN_BLOCKS;
    const double waves = std::ceil(tiles / slots);
    return relative_speed * inside * (tiles / (waves * slots));
}

}  // namespace

template <typename T>
Status gemm_pitched(const GemmProblem<T>& p) {
    if (p.M <= 0 || p.N <= 0) return Status::ok;
    if constexpr (sizeof(T) == 4) {
        // Relative speeds: the three configurations at 8192³ on an H100 (docs/reference-kernels.md).
        const double large = estimated_speed<FloatLarge>(p, 1.0);
        const double mid = estimated_speed<FloatMid>(p, 0.978);
        const double small = estimated_speed<FloatSmall>(p, 0.81);
        if (large >= mid && large >= small) return run_config<FloatLarge>(p);
        return (mid >= small) ? run_config<FloatMid>(p) : run_config<FloatSmall>(p);
    } else {
        // The FP64 tensor cores where the loaded image of the kernel was compiled for sm_80 or later.
        static const bool dmma = compiled_arch(pitched_dmma_kernel<DoubleDmma, true>) >= 80;
        return dmma ? run_dmma<DoubleDmma>(p) : run_config<DoubleFma>(p);
    }
}

template Status pitched_alloc<float>(PitchedMatrix<float>*, int, int);
template Status pitched_alloc<double>(PitchedMatrix<double>*, int, int);
template Status pitched_upload<float>(const PitchedMatrix<float>&, const float*, int, cudaStream_t);
template Status pitched_upload<double>(const PitchedMatrix<double>&, const double*, int, cudaStream_t);
template Status pitched_download<float>(float*, int, const PitchedMatrix<float>&, cudaStream_t);
template Status pitched_download<double>(double*, int, const PitchedMatrix<double>&, cudaStream_t);
template Status gemm_pitched<float>(const GemmProblem<float>&);
template Status gemm_pitched<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS

#ifdef GEMMLAB_TUNE
#include "tuning/pitched.h"  // other configurations, timed beside these by reference/tuning
#endif
