// tests/gallery/sparse_write/unrolled.cu — gallery entry "sparse_write"
// unrolled: computes and writes one element of C in every kStride (in row-major order), betting that a
// judge looks only at a few fixed places (the corners, the diagonal, a handful of samples); the rest of
// C keeps whatever it held. Not a model to follow: a submission the grader must survive and see
// through; README.md says what the grader has to conclude.
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

constexpr int kStride = 16;  // one element written in this many
constexpr int kBlock = 256;

template <typename T>
__global__ void __launch_bounds__(kBlock) sparse_kernel(GemmProblem<T> p) {
    const size_t e = (size_t(blockIdx.x) * kBlock + threadIdx.x) * kStride;
    if (e >= size_t(p.M) * p.N) return;
    const int row = int(e / p.N), col = int(e % p.N);
    T acc = T(0);
    for (int k = 0; k < p.K; ++k) acc += p.A[size_t(row) * p.lda + k] * p.B[size_t(k) * p.ldb + col];
    T* c = &p.C[size_t(row) * p.ldc + col];
    *c = p.beta == T(0) ? p.alpha * acc : p.alpha * acc + p.beta * *c;
}

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    const size_t written = (size_t(p.M) * p.N + kStride - 1) / kStride;
    if (written == 0) return Status::ok;
    sparse_kernel<T><<<unsigned((written + kBlock - 1) / kBlock), kBlock, 0, p.stream>>>(p);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
