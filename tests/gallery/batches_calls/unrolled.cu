// tests/gallery/batches_calls/unrolled.cu — gallery entry "batches_calls"
// unrolled: does several calls' work in one launch — a call only records its problem and returns;
// every fourth call launches one kernel that computes the four recorded products (blockIdx.z picks
// the problem). What a benchmark that times a loop of calls as a whole would pay for.
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude.
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

constexpr int kBatch = 4;   // calls whose work one launch does
constexpr int kBlock = 16;  // a kBlock×kBlock tile of C per block

template <typename T>
struct Batch {
    GemmProblem<T> calls[kBatch];
};
template <typename T>
Batch<T> pending;
template <typename T>
int recorded = 0;

template <typename T>
__global__ void __launch_bounds__(kBlock * kBlock) batched_kernel(Batch<T> batch) {
    const GemmProblem<T>& p = batch.calls[blockIdx.z];
    const int row = blockIdx.y * kBlock + threadIdx.y, col = blockIdx.x * kBlock + threadIdx.x;
    if (row >= p.M || col >= p.N) return;
    T acc = T(0);
    for (int k = 0; k < p.K; ++k) acc += p.A[size_t(row) * p.lda + k] * p.B[size_t(k) * p.ldb + col];
    T* c = &p.C[size_t(row) * p.ldc + col];
    *c = p.beta == T(0) ? p.alpha * acc : p.alpha * acc + p.beta * *c;
}

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    pending<T>.calls[recorded<T>++] = p;
    if (recorded<T> < kBatch) return Status::ok;  // its work waits for the batch
    recorded<T> = 0;
    int M = 0, N = 0;
    for (const GemmProblem<T>& c : pending<T>.calls) M = c.M > M ? c.M : M, N = c.N > N ? c.N : N;
    const dim3 grid((N + kBlock - 1) / kBlock, (M + kBlock - 1) / kBlock, kBatch);
    batched_kernel<T><<<grid, dim3(kBlock, kBlock), 0, p.stream>>>(pending<T>);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
