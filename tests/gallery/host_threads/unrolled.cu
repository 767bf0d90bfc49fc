// tests/gallery/host_threads/unrolled.cu — gallery entry "host_threads"
// unrolled: does the work on the host instead of the GPU — copies A and B to host memory, computes C
// with one std::thread per core-sized band of rows, and copies C back. Not a model to follow: a
// submission the grader must survive and see through; README.md says what the grader has to conclude.
#include <thread>
#include <vector>

#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

constexpr int kThreads = 8;

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    if (p.M <= 0 || p.N <= 0) return Status::ok;
    std::vector<T> A(size_t(p.M) * p.lda), B(size_t(p.K) * p.ldb), C(size_t(p.M) * p.ldc);
    GEMMLAB_TRY(cudaMemcpyAsync(A.data(), p.A, A.size() * sizeof(T), cudaMemcpyDeviceToHost, p.stream));
    GEMMLAB_TRY(cudaMemcpyAsync(B.data(), p.B, B.size() * sizeof(T), cudaMemcpyDeviceToHost, p.stream));
    GEMMLAB_TRY(cudaMemcpyAsync(C.data(), p.C, C.size() * sizeof(T), cudaMemcpyDeviceToHost, p.stream));
    GEMMLAB_TRY(cudaStreamSynchronize(p.stream));
    std::vector<std::thread> workers;
    for (int t = 0; t < kThreads; ++t)
        workers.emplace_back([&, t] {
            for (int r = t; r < p.M; r += kThreads)
                for (int c = 0; c < p.N; ++c) {
                    T acc = T(0);
                    for (int k = 0; k < p.K; ++k) acc += A[size_t(r) * p.lda + k] * B[size_t(k) * p.ldb + c];
                    T& out = C[size_t(r) * p.ldc + c];
                    out = p.beta == T(0) ? p.alpha * acc : p.alpha * acc + p.beta * out;
                }
        });
    for (std::thread& w : workers) w.join();
    GEMMLAB_TRY(cudaMemcpyAsync(p.C, C.data(), C.size() * sizeof(T), cudaMemcpyHostToDevice, p.stream));
    GEMMLAB_TRY(cudaStreamSynchronize(p.stream));
    return Status::ok;
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
