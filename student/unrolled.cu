// student/unrolled.cu — stage "unrolled": register blocking. Each thread computes a small TM×TN
// tile of C in registers, with inner loops the compiler unrolls completely.
//
// The idea. In the tiled stage each multiply-add needs two shared-memory loads: the kernel is
// limited by shared-memory bandwidth, not by arithmetic. Give each thread TM×TN outputs instead of
// one: for every k it loads TM values of A's tile and TN values of B's tile into registers and
// does TM·TN multiply-adds with them (an outer product). That is TM+TN loads for TM·TN FMAs —
// 8 loads for 16 FMAs at 4×4, against 2 loads for 1 FMA before.
//
//   block tile of C: BM×BN          one thread: TM×TN of it        k-step of BK along K
//   +----------------------+        acc[TM][TN] in registers      As: BM×BK  (shared)
//   | t t t t ...          |        a[TM] = column k of As        Bs: BK×BN  (shared)
//   | t t t t ...          |        b[TN] = row k of Bs
//   | ...                  |        acc[i][j] += a[i] * b[j]
//   +----------------------+
//
// Registers only stay registers when every index into acc, a and b is known at compile time:
// loops over TM and TN must have constant trip counts and be unrolled (#pragma unroll). An array
// indexed by a run-time value is put in local memory (slow, and it shows up as "spills").
//
// Parameters to choose: UnrolledTiles<T> below. The values given compile and are a reasonable
// place to start; `make bench STAGE=unrolled` tells you whether a change helped.
//
// Pitfalls the grader tests (docs/correctness.md lists the shapes):
//   - Edges: M, N and K need not be multiples of BM, BN or BK (primes, tile±1, K = 1). Store 0 in
//     shared memory for elements outside A or B; store only the elements of acc inside C.
//   - Every thread must reach every __syncthreads(): never return early before the K loop.
//   - Any leading dimension: index with lda, ldb, ldc. Writing C's padding columns is an
//     out-of-bounds write.
//   - beta == 0 must not read C (it holds NaN).
//   - Register spills: TM·TN accumulators + TM + TN operands per thread, twice as many registers in
//     double. `make resources` prints each kernel's registers, shared memory and spills (from
//     `nvcc -Xptxas -v`); any spill stores or loads mean the thread tile is too large: make it
//     smaller. (`cuobjdump -res-usage` on the stage's object shows the same, where the toolkit has it.)
//   - Loading the tiles: BM·BK and BK·BN elements are loaded by kThreads threads, so each thread
//     loads several. Let consecutive threads load consecutive addresses of a row (coalesced).
//   - No allocation and no synchronization in the stage: the grader times the call. printf is fine
//     for debugging, in a kernel too (you see its output; the grader never reads it), but take it
//     out before you time: a kernel that prints is slower.
//
// Run it:  make check STAGE=unrolled      make sanitize STAGE=unrolled PREC=double
//          make bench STAGE=unrolled
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

// TODO(student): set to true once unrolled_kernel below is written; until then the stage returns
// Status::not_implemented and the grader reports it as "not implemented".
constexpr bool kUnrolledKernelWritten = false;

constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

// The tile sizes, per precision. TODO(student): tune them (a double takes two registers, so in
// double the best thread tile is often smaller).
template <typename T>
struct UnrolledTiles {
    static constexpr int BM = 64;  // rows of C per block
    static constexpr int BN = 64;  // columns of C per block
    static constexpr int BK = 8;   // step along K: the tiles in shared memory are BM×BK and BK×BN
    static constexpr int TM = 4;   // rows of C per thread
    static constexpr int TN = 4;   // columns of C per thread
};

template <typename T>
struct UnrolledLaunch {
    using P = UnrolledTiles<T>;
    static constexpr int kThreadsX = P::BN / P::TN;  // threadIdx.x runs along the columns of C
    static constexpr int kThreadsY = P::BM / P::TM;
    static constexpr int kThreads = kThreadsX * kThreadsY;

    static_assert(P::BM % P::TM == 0 && P::BN % P::TN == 0, "thread tiles must cover the block tile exactly");
    static_assert(kThreads % 32 == 0, "whole warps only: the block must have a multiple of 32 threads");
    static_assert(kThreads <= 1024, "a block has at most 1024 threads");
    static_assert((P::BM * P::BK) % kThreads == 0 && (P::BK * P::BN) % kThreads == 0,
                  "every thread loads the same number of elements of each tile");
    static_assert(P::TM * P::TN <= 64, "more than 64 accumulators per thread spill registers");
    static_assert((P::BM * P::BK + P::BK * P::BN) * sizeof(T) <= 48 * 1024,
                  "the two tiles must fit in the 48 KiB of static shared memory a block may use");
};

// One block computes the BM×BN tile of C at block row blockIdx.y, block column blockIdx.x; thread
// (threadIdx.y, threadIdx.x) computes the TM×TN piece at rows threadIdx.y·TM.. and columns
// threadIdx.x·TN.. of that tile.
template <typename T>
__global__ void __launch_bounds__(UnrolledLaunch<T>::kThreads)
unrolled_kernel(int M, int N, int K, T alpha, const T* __restrict__ A, int lda,
                const T* __restrict__ B, int ldb, T beta, T* __restrict__ C, int ldc) {
    using P = UnrolledTiles<T>;
    // TODO(student): write the kernel body.
    //   1. Shared tiles of A (BM×BK) and B (BK×BN); a TM×TN accumulator array, zeroed.
    //   2. For each step of BK along K:
    //        a. all kThreads threads load the two tiles cooperatively (each loads
    //           BM·BK / kThreads elements of A and BK·BN / kThreads of B), 0 outside the matrices;
    //        b. __syncthreads();
    //        c. for each k of the step (unrolled): TM values of A and TN of B into registers, then
    //           the TM×TN outer product into the accumulators (both loops unrolled);
    //        d. __syncthreads();
    //   3. Write the accumulators that fall inside C: alpha·acc (+ beta·C only when beta != 0).
}

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    using P = UnrolledTiles<T>;
    using L = UnrolledLaunch<T>;
    if (!kUnrolledKernelWritten) return Status::not_implemented;

    const dim3 block(L::kThreadsX, L::kThreadsY);
    const dim3 grid(ceil_div(p.N, P::BN), ceil_div(p.M, P::BM));
    unrolled_kernel<T><<<grid, block, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta,
                                                     p.C, p.ldc);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

// The versions the registry (gemmlab/stages.h) runs: keep these lines as they are.
template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
