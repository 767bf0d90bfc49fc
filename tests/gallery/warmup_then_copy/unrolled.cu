// tests/gallery/warmup_then_copy/unrolled.cu — gallery entry "warmup_then_copy"
// unrolled: computes its first call (a benchmark's warm-up) with the naive stage's kernel and keeps
// the product; every later call copies that product into C, whatever the inputs and sizes.
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude.
#include <algorithm>

#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

template <typename T>
struct Kept {
    T* C = nullptr;  // M×N, rows of N
    int M = 0, N = 0;
};
template <typename T>
Kept<T> kept;

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    Kept<T>& k = kept<T>;
    if (k.C) {  // every call after the first: the first call's product, copied
        const int rows = std::min(k.M, p.M), cols = std::min(k.N, p.N);
        if (rows > 0 && cols > 0)
            GEMMLAB_TRY(cudaMemcpy2DAsync(p.C, size_t(p.ldc) * sizeof(T), k.C, size_t(k.N) * sizeof(T),
                                          size_t(cols) * sizeof(T), rows, cudaMemcpyDeviceToDevice, p.stream));
        return Status::ok;
    }
    const Status s = gemm_naive<T>(p);
    if (s != Status::ok || p.M <= 0 || p.N <= 0) return s;
    const size_t row = size_t(p.N) * sizeof(T);
    GEMMLAB_TRY(cudaMalloc(&k.C, row * p.M));
    GEMMLAB_TRY(cudaMemcpy2DAsync(k.C, row, p.C, size_t(p.ldc) * sizeof(T), row, p.M, cudaMemcpyDeviceToDevice,
                                  p.stream));
    k.M = p.M, k.N = p.N;
    return Status::ok;
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
