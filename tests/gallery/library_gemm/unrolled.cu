// tests/gallery/library_gemm/unrolled.cu — gallery entry "library_gemm"
// unrolled: calls cuBLAS instead of computing the product.
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude. The arithmetic is the naive kernel's, so only the misbehaviour differs.
#include <cublas_v2.h>

#include <type_traits>

#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

cublasHandle_t gallery_handle() {
    static cublasHandle_t handle = [] {
        cublasHandle_t h = nullptr;
        cublasCreate(&h);
        return h;
    }();
    return handle;
}

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: swap the operands, keep the storage.
    cublasHandle_t h = gallery_handle();
    if (cublasSetStream(h, p.stream) != CUBLAS_STATUS_SUCCESS) return Status::cuda_error;
    cublasStatus_t st;
    if constexpr (std::is_same_v<T, float>)
        st = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, p.N, p.M, p.K, &p.alpha, p.B, p.ldb, p.A, p.lda, &p.beta,
                         p.C, p.ldc);
    else
        st = cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, p.N, p.M, p.K, &p.alpha, p.B, p.ldb, p.A, p.lda, &p.beta,
                         p.C, p.ldc);
    return st == CUBLAS_STATUS_SUCCESS ? Status::ok : Status::cuda_error;
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
