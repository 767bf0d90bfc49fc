// student/reuse.cu — stage "reuse": the fastest kernel you can write, by reusing every value loaded
// as often as possible: 2D block tiling, warp tiling, A transposed in shared memory, and double
// buffering. Scored against cuBLAS (docs/scoring.md).
//
// The three levels of tiling. A block computes a BM×BN tile of C; inside it, each warp computes a
// WM×WN warp tile; inside that, each lane computes a TM×TN thread tile in registers:
//
//   block tile BM×BN                 warp tile WM×WN                  thread tile TM×TN
//   +-----------+-----------+        +--+--+--+--+--+--+--+--+        acc[TM][TN] in registers,
//   |  warp 0   |  warp 1   |        |l0|l1|l2|l3|l4|l5|l6|l7|        fed each k by TM values
//   +-----------+-----------+        +--+--+--+--+--+--+--+--+        of A and TN values of B
//   |  warp 2   |  warp 3   |        |l8|...                  |       from shared memory
//   +-----------+-----------+        +--+--+--+--+--+--+--+--+
//
// Why warp tiles: the 32 lanes of a warp read shared memory together. Arranged as a compact
// (WM/TM)×(WN/TN) grid, the lanes of one warp need only WM values of A and WN of B per k (many of
// them the same word: broadcasts), instead of each lane wanting values no neighbour shares.
//
// Why A is transposed in shared memory (As[k][m] instead of As[m][k]): in the inner loop a thread
// needs TM consecutive rows of A at one k. Stored transposed they are contiguous, so they can be
// read as a few wide (vector) loads, and lanes that share rows read the same words. The cost is in
// the store into shared memory: a warp writing a column of As hits the same bank many times
// unless the rows are padded (the PAD_A parameter: a row length of BM + PAD_A words spreads them).
//
// What double buffering overlaps: with one tile in shared memory, a block alternates "load the
// next tile from global memory" and "compute on it", each waiting for the other. With two buffers,
// the global loads for step t+1 (into registers, or into the other buffer) are issued before the
// FMAs of step t, so memory latency hides behind arithmetic; and since the buffer being written
// is not the one being read, one __syncthreads() per step is enough instead of two.
//
// Parameters to choose: ReuseTiles<T> below (one set per precision). The values given compile and
// satisfy the constraints; `make bench STAGE=reuse` tells you whether a change helped.
//
// Pitfalls the grader tests (docs/correctness.md lists the shapes):
//   - Edges: M, N, K are not multiples of the tiles (primes, tile±1, K = 1, tall-skinny). Tiles
//     outside the matrices hold zeros; only elements inside C are written. Every thread reaches
//     every __syncthreads().
//   - Any leading dimension and any alignment: the dense operands here can have lda, ldb, ldc of
//     any value and rows at any address, so vector loads from GLOBAL memory are only safe after
//     checking alignment (or keep global loads scalar; vector loads from SHARED memory are yours
//     to align).
//   - beta == 0 must not read C (it holds NaN).
//   - Register spills: TM·TN accumulators plus the prefetch registers. `make resources` prints
//     each kernel's registers, shared memory and spills (from `nvcc -Xptxas -v`); any spill stores
//     or loads mean spills. (`cuobjdump -res-usage` on the stage's object shows the same, where the
//     toolkit has it.)
//   - Shared memory: 48 KiB of static shared memory per block at most (asserted below).
//   - No allocation, no cudaDeviceSynchronize and no library GEMM (cuBLAS, CUTLASS) in the stage:
//     the grader times the call and checks that the work is yours. printf is fine for debugging, in
//     a kernel too (you see its output; the grader never reads it), but take it out before you
//     time: a kernel that prints is slower.
//
// Run it:  make check STAGE=reuse      make sanitize STAGE=reuse PREC=float
//          make bench STAGE=reuse
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

// TODO(student): set to true once reuse_kernel below is written; until then the stage returns
// Status::not_implemented and the grader reports it as "not implemented".
constexpr bool kReuseKernelWritten = false;

constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

// The tile sizes, per precision. TODO(student): tune them.
template <typename T>
struct ReuseTiles;

template <>
struct ReuseTiles<float> {
    static constexpr int BM = 128, BN = 128, BK = 8;  // block tile of C, and the step along K
    static constexpr int WM = 32, WN = 64;             // warp tile
    static constexpr int TM = 8, TN = 8;               // thread tile
    static constexpr int PAD_A = 4;                    // extra words per row of the transposed A tile
    static constexpr int STAGES = 2;                   // shared-memory buffers (2: double buffering)
};

template <>
struct ReuseTiles<double> {
    static constexpr int BM = 64, BN = 64, BK = 8;
    static constexpr int WM = 32, WN = 32;
    static constexpr int TM = 4, TN = 8;
    static constexpr int PAD_A = 2;
    static constexpr int STAGES = 2;
};

template <typename T>
struct ReuseLaunch {
    using P = ReuseTiles<T>;
    static constexpr int kWarps = (P::BM / P::WM) * (P::BN / P::WN);
    static constexpr int kThreads = 32 * kWarps;
    static constexpr int kSharedBytes =
        P::STAGES * (P::BK * (P::BM + P::PAD_A) + P::BK * P::BN) * static_cast<int>(sizeof(T));

    static_assert(P::BM % P::WM == 0 && P::BN % P::WN == 0, "warp tiles must cover the block tile exactly");
    static_assert(P::WM % P::TM == 0 && P::WN % P::TN == 0, "thread tiles must cover the warp tile exactly");
    static_assert((P::WM / P::TM) * (P::WN / P::TN) == 32, "the 32 lanes of a warp split its warp tile exactly");
    static_assert(kThreads <= 1024, "a block has at most 1024 threads");
    static_assert((P::BM * P::BK) % kThreads == 0 && (P::BK * P::BN) % kThreads == 0,
                  "every thread loads the same number of elements of each tile");
    static_assert(P::TM * P::TN <= 64, "more than 64 accumulators per thread spill registers");
    static_assert(P::STAGES >= 2, "double buffering needs two buffers");
    static_assert(kSharedBytes <= 48 * 1024, "static shared memory is limited to 48 KiB a block");
};

// One block of kThreads threads (1D: warp = threadIdx.x / 32, lane = threadIdx.x % 32) computes
// the BM×BN tile of C at block row blockIdx.y, block column blockIdx.x.
template <typename T>
__global__ void __launch_bounds__(ReuseLaunch<T>::kThreads)
reuse_kernel(int M, int N, int K, T alpha, const T* __restrict__ A, int lda,
             const T* __restrict__ B, int ldb, T beta, T* __restrict__ C, int ldc) {
    // TODO(student): write the kernel body.
    //   1. Shared memory: STAGES buffers of the transposed A tile (BK rows of BM + PAD_A) and of the
    //      B tile (BK rows of BN). Registers: the TM×TN accumulators, and room for one step's
    //      global loads (the prefetch).
    //   2. Place this thread: its warp's tile inside the block tile, its lane's TM×TN piece inside
    //      the warp tile.
    //   3. Load step 0 into buffer 0; __syncthreads().
    //   4. For each step t along K:
    //        a. issue the global loads of step t+1 into registers (0 outside A and B);
    //        b. compute on buffer t % STAGES: for each k, TM values of A and TN of B into
    //           registers, then the outer product into the accumulators (all loops unrolled);
    //        c. store the prefetched registers into the other buffer (A transposed);
    //        d. __syncthreads() — one per step (work out why one is enough here).
    //   5. Write the accumulators inside C: alpha·acc (+ beta·C only when beta != 0).
}

}  // namespace

template <typename T>
Status gemm_reuse(const GemmProblem<T>& p) {
    using P = ReuseTiles<T>;
    using L = ReuseLaunch<T>;
    if (!kReuseKernelWritten) return Status::not_implemented;

    const dim3 block(L::kThreads);
    const dim3 grid(ceil_div(p.N, P::BN), ceil_div(p.M, P::BM));
    reuse_kernel<T><<<grid, block, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta,
                                                  p.C, p.ldc);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

// The versions the registry (gemmlab/stages.h) runs: keep these lines as they are.
template Status gemm_reuse<float>(const GemmProblem<float>&);
template Status gemm_reuse<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
