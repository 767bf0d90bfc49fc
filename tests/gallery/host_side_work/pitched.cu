// student/pitched.cu — stage "pitched": operands in pitched memory, whose rows all start at aligned
// addresses, and a kernel that uses the alignment for 16-byte vector loads.
//
// The idea. A dense M×K matrix with lda = K has rows starting wherever K·sizeof(T) puts them: row 1
// of a 7-column float matrix starts 28 bytes in, which no 16-byte load may touch. cudaMallocPitch
// pads every row to a pitch (in bytes) chosen by the driver, a multiple of the alignment the
// hardware likes, so that every row starts on an aligned boundary:
//
//     data ─► | row 0: cols·sizeof(T) bytes | padding |     pitch_bytes per row,
//             | row 1                       | padding |     row r at (char*)data + r·pitch_bytes
//
// What that buys: one thread can load 16 bytes (a float4, or a double2) with one instruction
// — four floats or two doubles — whenever the element index is a multiple of the vector width.
// Fewer, wider memory instructions for the same bytes, and a load never straddles two cache sectors.
//
// Your four functions (the grader calls them; docs/correctness.md says how each is checked):
//   pitched_alloc     allocate a rows×cols matrix with cudaMallocPitch; fill in *out completely.
//                     The grader frees it with cudaFree.
//   pitched_upload    copy a dense device matrix (leading dimension ld_src, in elements) into the
//                     pitched one with cudaMemcpy2DAsync on `stream`. Its widths are in BYTES,
//                     its height in rows; it must copy exactly rows×cols elements.
//   pitched_download  the same, back into a dense matrix (leading dimension ld_dst).
//   gemm_pitched      the GEMM; the grader passes p.lda = A's pitch_bytes / sizeof(T) (likewise
//                     ldb, ldc), so p.A + i·p.lda is row i — and every row is 16-byte aligned.
//
// Pitfalls the grader tests:
//   - The copies are compared bit for bit; a copy that is one column short, or uses the element
//     count where cudaMemcpy2DAsync wants bytes, is reported with the first differing element.
//   - Vector loads at the right edge: when K (or N) is not a multiple of the vector width, the last
//     vector of a row reaches into the row's padding. That memory is allocated (the pitch covers it),
//     but it holds whatever was there: possibly NaN. Do not multiply it by zero (0·NaN = NaN):
//     replace the out-of-range lanes with 0 after loading. Never load rows beyond M (or K): past the
//     last row there is no allocation.
//   - Vector stores to C: the padding of the pitched C is checked like a canary. Write C with a
//     vector store only when all its lanes are inside the matrix; otherwise element by element.
//   - Reinterpreting a T* as a Vec* is only valid at an index that is a multiple of kVecWidth
//     within a row; a misaligned vector access is a "misaligned address" error.
//   - beta == 0 must not read C; the edges, __syncthreads() and spill advice of unrolled.cu apply.
//   - No allocation in gemm_pitched: the grader times that call (the helpers are not timed).
//
// Run it:  make check STAGE=pitched      make sanitize STAGE=pitched PREC=float
//          make bench STAGE=pitched
#include <cstdint>
#include <type_traits>

#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

// TODO(student): set to true once pitched_kernel below is written; until then gemm_pitched returns
// Status::not_implemented and the grader reports the stage as "not implemented".
constexpr bool kPitchedKernelWritten = false;

constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

// The 16-byte vector of T that one aligned load or store moves: float4 (4 floats) or double2.
template <typename T>
using Vec16 = std::conditional_t<std::is_same_v<T, float>, float4, double2>;
template <typename T> constexpr int kVecWidth = 16 / static_cast<int>(sizeof(T));  // 4 floats, 2 doubles

// The tile sizes, per precision (see unrolled.cu for what each one means). TODO(student): tune them.
template <typename T>
struct PitchedTiles {
    static constexpr int BM = 128;
    static constexpr int BN = 128;
    static constexpr int BK = 8;
    static constexpr int TM = 8;
    static constexpr int TN = 8;
};

template <typename T>
struct PitchedLaunch {
    using P = PitchedTiles<T>;
    static constexpr int kVec = kVecWidth<T>;
    static constexpr int kThreadsX = P::BN / P::TN;
    static constexpr int kThreadsY = P::BM / P::TM;
    static constexpr int kThreads = kThreadsX * kThreadsY;

    static_assert(P::BM % P::TM == 0 && P::BN % P::TN == 0, "thread tiles must cover the block tile exactly");
    static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, at most 1024 threads a block");
    static_assert(P::BK % kVec == 0 && P::BN % kVec == 0,
                  "a vector load must not straddle two tiles: BK and BN must be multiples of the vector width");
    static_assert((P::BM * P::BK / kVec) % kThreads == 0 && (P::BK * P::BN / kVec) % kThreads == 0,
                  "every thread loads the same number of vectors of each tile");
    static_assert(P::TM * P::TN <= 64, "more than 64 accumulators per thread spill registers");
    static_assert((P::BM * P::BK + P::BK * P::BN) * sizeof(T) <= 48 * 1024,
                  "the two tiles must fit in the 48 KiB of static shared memory a block may use");
};

// True when every row of every operand starts 16-byte aligned, as pitched_alloc guarantees.
template <typename T>
bool rows_are_aligned(const GemmProblem<T>& p) {
    auto aligned = [](const void* ptr, int ld) {
        return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && ld % kVecWidth<T> == 0;
    };
    return aligned(p.A, p.lda) && aligned(p.B, p.ldb) && aligned(p.C, p.ldc);
}

// Same layout of work as unrolled_kernel: block (blockIdx.y, blockIdx.x) computes a BM×BN tile of
// C, thread (threadIdx.y, threadIdx.x) a TM×TN piece of it.
template <typename T>
__global__ void __launch_bounds__(PitchedLaunch<T>::kThreads)
pitched_kernel(int M, int N, int K, T alpha, const T* __restrict__ A, int lda,
               const T* __restrict__ B, int ldb, T beta, T* __restrict__ C, int ldc) {
    // TODO(student): write the kernel body — start from your unrolled kernel and change how the
    // tiles are loaded from global memory:
    //   - each thread loads whole vectors (Vec16<T>) of A's and B's tiles, reading
    //     through reinterpret_cast<const Vec*>(row pointer + column) at columns that are multiples
    //     of kVecWidth<T>;
    //   - lanes past the end of a row (column >= K for A, >= N for B) become 0; rows past the end
    //     are not loaded at all;
    //   - optionally, write C with vector stores where a whole vector lies inside the matrix.
}

}  // namespace

template <typename T>
Status pitched_alloc(PitchedMatrix<T>* out, int rows, int cols) {
    (void)out, (void)rows, (void)cols;  // TODO(student): delete this line when you write the body
    // TODO(student): allocate rows×cols elements with cudaMallocPitch (its width is in bytes) and
    // set out->data, out->pitch_bytes, out->rows and out->cols. Return Status::cuda_error when the
    // allocation fails (GEMMLAB_TRY does that), Status::ok otherwise.
    return Status::not_implemented;
}

template <typename T>
Status pitched_upload(const PitchedMatrix<T>& dst, const T* src, int ld_src, cudaStream_t stream) {
    (void)dst, (void)src, (void)ld_src, (void)stream;  // TODO(student): delete this line
    // TODO(student): copy the dense device matrix src (dst.rows×dst.cols elements, leading
    // dimension ld_src elements) into dst with one cudaMemcpy2DAsync on `stream`.
    return Status::not_implemented;
}

template <typename T>
Status pitched_download(T* dst, int ld_dst, const PitchedMatrix<T>& src, cudaStream_t stream) {
    (void)dst, (void)ld_dst, (void)src, (void)stream;  // TODO(student): delete this line
    // TODO(student): the reverse of pitched_upload: src into the dense device matrix dst
    // (leading dimension ld_dst elements), one cudaMemcpy2DAsync on `stream`.
    return Status::not_implemented;
}

template <typename T>
Status gemm_pitched(const GemmProblem<T>& p) {
    using P = PitchedTiles<T>;
    using L = PitchedLaunch<T>;
    if (!kPitchedKernelWritten) return Status::not_implemented;
    if (!rows_are_aligned(p)) return Status::unsupported;  // only pitched operands come here

    const dim3 block(L::kThreadsX, L::kThreadsY);
    const dim3 grid(ceil_div(p.N, P::BN), ceil_div(p.M, P::BM));
    pitched_kernel<T><<<grid, block, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta,
                                                    p.C, p.ldc);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

// The versions the registry (gemmlab/stages.h) runs: keep these lines as they are.
template Status pitched_alloc<float>(PitchedMatrix<float>*, int, int);
template Status pitched_alloc<double>(PitchedMatrix<double>*, int, int);
template Status pitched_upload<float>(const PitchedMatrix<float>&, const float*, int, cudaStream_t);
template Status pitched_upload<double>(const PitchedMatrix<double>&, const double*, int, cudaStream_t);
template Status pitched_download<float>(float*, int, const PitchedMatrix<float>&, cudaStream_t);
template Status pitched_download<double>(double*, int, const PitchedMatrix<double>&, cudaStream_t);
template Status gemm_pitched<float>(const GemmProblem<float>&);
template Status gemm_pitched<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
