// tests/gallery/library_gemm/reuse.cu — gallery entry "library_gemm"
// reuse: calls cuBLAS through dlsym, hoping the scan will not see it.
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude. The arithmetic is the naive kernel's, so only the misbehaviour differs.
#include <dlfcn.h>

#include <type_traits>

#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

}  // namespace

template <typename T>
Status gemm_reuse(const GemmProblem<T>& p) {
    using Gemm = int (*)(void*, int, int, int, int, int, const T*, const T*, int, const T*, int, const T*, T*,
                         int);
    using Create = int (*)(void**);
    using SetStream = int (*)(void*, cudaStream_t);
    static void* handle = nullptr;
    if (!handle) {
        auto create = reinterpret_cast<Create>(dlsym(RTLD_DEFAULT, "cublasCreate_v2"));
        if (!create || create(&handle) != 0) return Status::cuda_error;
    }
    auto set_stream = reinterpret_cast<SetStream>(dlsym(RTLD_DEFAULT, "cublasSetStream_v2"));
    auto gemm = reinterpret_cast<Gemm>(
        dlsym(RTLD_DEFAULT, std::is_same_v<T, float> ? "cublasSgemm_v2" : "cublasDgemm_v2"));
    if (!set_stream || !gemm || set_stream(handle, p.stream) != 0) return Status::cuda_error;
    // 0 = CUBLAS_OP_N; row-major C = A·B as column-major Cᵀ = Bᵀ·Aᵀ.
    return gemm(handle, 0, 0, p.N, p.M, p.K, &p.alpha, p.B, p.ldb, p.A, p.lda, &p.beta, p.C, p.ldc) == 0
               ? Status::ok
               : Status::cuda_error;
}

template Status gemm_reuse<float>(const GemmProblem<float>&);
template Status gemm_reuse<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
