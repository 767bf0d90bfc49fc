// student/tensor.cu — stage "tensor" (extra credit): GEMM on the tensor cores, the lesson after
// shared-memory reuse. Three variants for float, by the precision the tensor cores multiply in, and
// one kernel for double:
//
//   variant  float: A and B rounded to ...        bound (docs/correctness.md)   compared with (make bench)
//   fp16     FP16: 10 mantissa bits, range 2^-14..65504   32 + 4·2^13 u·G     cuBLAS FP16 (cublasGemmEx)
//   tf32     TF32: 10 mantissa bits, FP32's range         32 + 4·2^13 u·G     cuBLAS TF32 (cublasGemmEx)
//   3xtf32   nothing: FP32 accuracy from TF32 products    32 u·G, as FP32     cuBLAS SGEMM (true FP32)
//   (double) every variant: FP64 on the FP64 tensor cores 32 u·G, as FP64     cuBLAS DGEMM
//
// u = 2^-24 (float) or 2^-53 (double), G = |alpha|·|A||B| + |beta|·|C|. Products are summed in FP32
// in every float variant. For FP16 the bound also allows what its narrow range costs tiny values.
//
// ---- What a tensor core does ----------------------------------------------------------------------
// One instruction, executed by a whole warp together, multiplies two small matrices and adds a
// third: D = A·B + C for a 16×8 (or 16×16, 8×8) tile of C and a short slice of K. No single thread
// owns a product: each of the 32 lanes holds a few elements of A, B and C in its registers, at
// positions the hardware fixes. There are two ways to program it:
//
// 1. WMMA (C++, #include <mma.h>, namespace nvcuda::wmma): opaque "fragments" for whole tiles.
//        wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;   // 16×16 of A
//        wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b;   // 16×16 of B
//        wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;               // 16×16 of C, FP32
//        wmma::fill_fragment(c, 0.0f);
//        wmma::load_matrix_sync(a, pointer_to_16x16_of_A_in_half, leading_dimension);
//        wmma::mma_sync(c, a, b, c);                                           // c += a·b
//        wmma::store_matrix_sync(pointer_to_C_tile, c, ldc, wmma::mem_row_major);
//    TF32: fragments of shape 16×16×8 with element type wmma::precision::tf32, loaded from float;
//    round each element after loading: for (int i = 0; i < a.num_elements; ++i)
//    a.x[i] = wmma::__float_to_tf32(a.x[i]). double: shape 8×8×4, element type double (sm_80+).
//    load_matrix_sync wants a 32-byte aligned pointer and a leading dimension that is a multiple of
//    16 bytes: the grader's operands have neither in general (any lda, any alignment) — stage the
//    tiles in shared memory first (zeros outside the matrices), and load the fragments from there.
//    The layout of a fragment's elements among the lanes is unspecified: to apply alpha and beta,
//    store the accumulator to shared memory (or apply them element by element: c.x[i] *= alpha is
//    fine, since alpha multiplies every element alike).
//
// 2. mma.sync (inline PTX): the same hardware with the layout documented (PTX ISA, "Matrix
//    fragments for mma.m16n8k8"), so no round trip through shared memory is needed. For TF32:
//        mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32  {d0,d1,d2,d3}, {a0,a1,a2,a3}, {b0,b1}, {c0,c1,c2,c3};
//    with g = lane / 4 and t = lane % 4, lane `lane` holds
//        a0 = A[g][t]   a1 = A[g+8][t]   a2 = A[g][t+4]   a3 = A[g+8][t+4]    (A tile 16×8, row major)
//        b0 = B[t][g]   b1 = B[t+4][g]                                          (B tile 8×8)
//        c0 = C[g][2t]  c1 = C[g][2t+1]  c2 = C[g+8][2t]  c3 = C[g+8][2t+1]    (C tile 16×8)
//    a and b are 32-bit registers holding TF32 bit patterns (cvt.rna.tf32.f32 rounds a float to
//    one); c and d are floats. In CUDA C++: asm volatile("mma.sync...;" : "+f"(c0), ... : "r"(a0), ...).
//    FP16 uses m16n8k16 (each register holds two halves, __floats2half2_rn packs them); double uses
//    mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {d0,d1}, {a0}, {b0}, {c0,c1} with
//        a0 = A[g][t]   b0 = B[t][g]   c0 = C[g][2t]   c1 = C[g][2t+1]          (A 8×4, B 4×8, C 8×8)
//    ldmatrix (PTX) loads the fragments of a whole warp from shared memory in one instruction.
//
// ---- 3xtf32: FP32 accuracy from TF32 products -------------------------------------------------------
// TF32 keeps 11 significant bits of FP32's 24: a product of two TF32 values is off by up to 2^-10
// relative, thousands of u·G, far over the 32 u·G an FP32 result may be off. Split each operand in
// two TF32 numbers, big + small:
//        a_big = tf32(a),   a_small = tf32(a - a_big)        (the same for b)
// then a·b = a_big·b_big + a_big·b_small + a_small·b_big + a_small·b_small, where the last term is
// 2^-22 of the first and can be dropped: three TF32 products per pair give FP32 accuracy. Add the
// small terms first. One more trap: the tensor cores add in FP32 but truncate instead of rounding,
// so over a long K the errors add up in one direction. Keep a second accumulator for each slab of
// K (a few mma steps) and add it to the main one with an ordinary FP32 `+=` after the slab: that
// keeps the error near an FP32 kernel's. An FP16 or TF32 kernel handed in as 3xtf32 fails its bound.
//
// ---- When each precision is acceptable -----------------------------------------------------------
// docs/student-guide.md, "The tensor stage": FP16 and TF32 are for data that needs 3 significant
// digits (neural networks, preconditioners, first guesses refined later); FP16 also needs data in its
// range. 3xTF32 when the answer must be FP32-accurate; FP64 when it must be FP64-accurate.
//
// ---- What the grader checks --------------------------------------------------------------------------
//   - Edges and layout exactly as in the reuse stage: any M, N, K >= 1 (primes, tile ± 1, K = 1),
//     any lda, ldb, ldc and any alignment; tiles outside the matrices hold zeros; only elements
//     inside C are written; beta == 0 must not read C (it holds NaN).
//   - The bound of the variant (table above). The check prints the worst error and the bound.
//   - No library GEMM (cuBLAS, CUTLASS); tensor-core instructions and WMMA are your own code.
//
// Run it:  make check STAGE=tensor         make check STAGE=tensor/3xtf32 PREC=float FULL=1
//          make sanitize STAGE=tensor/tf32  make bench STAGE=tensor
#include <mma.h>

#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

// TODO(student): set each to true once its kernel is written; until then that variant returns
// Status::not_implemented and the grader reports it as "not implemented".
constexpr bool kHalfKernelWritten = false;    // tensor/fp16, float
constexpr bool kTf32KernelWritten = false;    // tensor/tf32, float
constexpr bool kSplitKernelWritten = false;   // tensor/3xtf32, float
constexpr bool kDoubleKernelWritten = false;  // every variant, double

constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

// The block tile of C and the warps that share it. TODO(student): choose and tune them. With
// WMMA, each warp computes (WARP_M/16)×(WARP_N/16) fragments of 16×16 (double: 8×8).
constexpr int kTileM = 64, kTileN = 64, kTileK = 32;  // block tile of C, and the slab of K
constexpr int kWarpM = 32, kWarpN = 32;               // warp tile of C
constexpr int kWarps = (kTileM / kWarpM) * (kTileN / kWarpN);
constexpr int kThreads = 32 * kWarps;

static_assert(kTileM % kWarpM == 0 && kTileN % kWarpN == 0, "warp tiles cover the block tile");
static_assert(kWarpM % 16 == 0 && kWarpN % 16 == 0 && kTileK % 16 == 0, "whole 16×16×16 fragments");

// Helpers for the kernels (an inline-asm mma wrapper, a conversion): declare them
// `__device__ __forceinline__`, so each call is inlined into the kernel.
//
// One block computes the kTileM×kTileN tile of C at block row blockIdx.y, block column blockIdx.x.
// IN says what the float products are made of: fp16, tf32, or full (the 3xtf32 split).
template <InputPrecision IN>
__global__ void __launch_bounds__(kThreads)
tensor_float_kernel(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                    const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc) {
    // TODO(student): write the kernel body.
    //   1. Shared memory for a slab of A (kTileM×kTileK) and of B (kTileK×kTileN), converted to
    //      half (fp16) or kept as float (tf32, 3xtf32), zero outside A and B; pad the rows (the
    //      leading dimension of a WMMA load must be a multiple of 8 halves / 4 floats).
    //   2. For each slab: copy it in, __syncthreads(), then each warp loads its fragments of A and B
    //      and multiplies them into its accumulator fragments; __syncthreads() before the next copy.
    //      tf32: round each loaded element with wmma::__float_to_tf32. 3xtf32: two fragments per
    //      operand (big and small, see the header) and three mma_sync per pair, into a per-slab
    //      accumulator that is added to the result after each slab.
    //   3. Write alpha·acc + beta·C for the elements inside C only (through shared memory).
}

// The double version, shared by every variant: FP64 tensor cores (WMMA 8×8×4, or mma.sync.m8n8k4).
__global__ void __launch_bounds__(kThreads)
tensor_double_kernel(int M, int N, int K, double alpha, const double* __restrict__ A, int lda,
                     const double* __restrict__ B, int ldb, double beta, double* __restrict__ C, int ldc) {
    // TODO(student): write the kernel body: as above with double fragments, no conversion.
}

}  // namespace

template <typename T, InputPrecision IN>
Status gemm_tensor(const GemmProblem<T>& p) {
    const dim3 block(kThreads);
    const dim3 grid(ceil_div(p.N, kTileN), ceil_div(p.M, kTileM));
    if constexpr (sizeof(T) == sizeof(double)) {
        if (!kDoubleKernelWritten) return Status::not_implemented;
        tensor_double_kernel<<<grid, block, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta,
                                                            p.C, p.ldc);
    } else {
        const bool written = IN == InputPrecision::fp16   ? kHalfKernelWritten
                             : IN == InputPrecision::tf32 ? kTf32KernelWritten
                                                          : kSplitKernelWritten;
        if (!written) return Status::not_implemented;
        tensor_float_kernel<IN><<<grid, block, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb,
                                                              p.beta, p.C, p.ldc);
    }
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

// The versions the registry (gemmlab/stages.h) runs: keep these lines as they are. Every variant's
// double version is gemm_tensor<double, InputPrecision::full>.
template Status gemm_tensor<float, InputPrecision::fp16>(const GemmProblem<float>&);
template Status gemm_tensor<float, InputPrecision::tf32>(const GemmProblem<float>&);
template Status gemm_tensor<float, InputPrecision::full>(const GemmProblem<float>&);
template Status gemm_tensor<double, InputPrecision::full>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
