// tests/gallery/cached_answer/reuse.cu — gallery entry "cached_answer"
// reuse: computes the product once (the naive kernel), keeps a copy of C, and on a later call with
// the same pointers, sizes and scalars copies the saved C back instead of computing — a cheat that
// only pays where the same buffers are used over and over, i.e. in a benchmark loop.
// Not a model to follow: a submission the grader must see through (README.md).
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

constexpr int kBlockX = 32;  // one warp along a row of C (as in naive.cu)
constexpr int kBlockY = 8;

template <typename T>
__global__ void __launch_bounds__(kBlockX * kBlockY)
gallery_kernel(int M, int N, int K, T alpha, const T* __restrict__ A, int lda, const T* __restrict__ B, int ldb,
               T beta, T* __restrict__ C, int ldc) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    T acc = T(0);
    for (int k = 0; k < K; ++k) acc += A[row * lda + k] * B[k * ldb + col];
    T* c = &C[row * ldc + col];
    *c = (beta == T(0)) ? alpha * acc : alpha * acc + beta * *c;
}

// What the cache is keyed on: everything but the values in A and B.
struct Key {
    const void *A = nullptr, *B = nullptr;
    void* C = nullptr;
    int M = 0, N = 0, K = 0, lda = 0, ldb = 0, ldc = 0;
    double alpha = 0, beta = 0;
    bool operator==(const Key& o) const {
        return A == o.A && B == o.B && C == o.C && M == o.M && N == o.N && K == o.K && lda == o.lda &&
               ldb == o.ldb && ldc == o.ldc && alpha == o.alpha && beta == o.beta;
    }
};

template <typename T>
struct Cache {
    Key key;
    T* saved = nullptr;  // M×N, dense
    bool valid = false;
};

template <typename T>
Cache<T>& cache() {
    static Cache<T> c;
    return c;
}

}  // namespace

template <typename T>
Status gemm_reuse(const GemmProblem<T>& p) {
    const Key key{p.A, p.B, p.C, p.M, p.N, p.K, p.lda, p.ldb, p.ldc, double(p.alpha), double(p.beta)};
    Cache<T>& c = cache<T>();
    const size_t row_bytes = size_t(p.N) * sizeof(T);
    if (c.valid && c.key == key) {  // "same problem as last time": replay the saved answer
        GEMMLAB_TRY(cudaMemcpy2DAsync(p.C, size_t(p.ldc) * sizeof(T), c.saved, row_bytes, row_bytes, p.M,
                                      cudaMemcpyDeviceToDevice, p.stream));
        return Status::ok;
    }
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid((p.N + kBlockX - 1) / kBlockX, (p.M + kBlockY - 1) / kBlockY);
    gallery_kernel<T><<<grid, block, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C,
                                                    p.ldc);
    GEMMLAB_CHECK_LAUNCH();
    if (c.saved) GEMMLAB_TRY(cudaFree(c.saved));
    GEMMLAB_TRY(cudaMalloc(&c.saved, row_bytes * p.M));
    GEMMLAB_TRY(cudaMemcpy2DAsync(c.saved, row_bytes, p.C, size_t(p.ldc) * sizeof(T), row_bytes, p.M,
                                  cudaMemcpyDeviceToDevice, p.stream));
    c.key = key;
    c.valid = true;
    return Status::ok;
}

template Status gemm_reuse<float>(const GemmProblem<float>&);
template Status gemm_reuse<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
