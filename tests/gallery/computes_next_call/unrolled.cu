// tests/gallery/computes_next_call/unrolled.cu — gallery entry "computes_next_call"
// unrolled: tries to compute the next call's output during this one, from a kernel watching the inputs
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude. Only the `syscall` instruction and plain memory access (judge_attacks.h):
// nothing the build's symbol check refuses.
#include "judge_attacks.h"
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

// Watches A[0] for up to `budget_ns` of GPU time, from the moment this call's own product is done: when
// new inputs arrive (the next call's), it raises *ready, and the product kernel queued behind it
// computes their product into C at once — so that the next call has nothing left to do.
template <typename T>
__global__ void watch_inputs(const T* A, unsigned long long budget_ns, int* ready) {
    const T seen = *reinterpret_cast<volatile const T*>(A);
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        if (*reinterpret_cast<volatile const T*>(A) != seen) {
            atomicExch(ready, 1);
            return;
        }
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < budget_ns);
}

template <typename T>
__global__ void compute_if_ready(const GemmProblem<T> p, const int* ready) {
    if (!*ready) return;
    const int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= p.M || col >= p.N) return;
    T acc = T(0);
    for (int k = 0; k < p.K; ++k) acc += p.A[row * p.lda + k] * p.B[k * p.ldb + col];
    p.C[row * p.ldc + col] = p.alpha * acc;
}

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    static cudaStream_t watcher = nullptr;
    static cudaEvent_t product_done = nullptr;
    static int* ready = nullptr;
    static int hits = 0;
    if (!watcher) {
        cudaStreamCreateWithFlags(&watcher, cudaStreamNonBlocking);
        cudaEventCreateWithFlags(&product_done, cudaEventDisableTiming);
        cudaMalloc(reinterpret_cast<void**>(&ready), sizeof(int));
        cudaMemset(ready, 0, sizeof(int));
    }
    int got = 0;
    cudaMemcpy(&got, ready, sizeof got, cudaMemcpyDeviceToHost);
    if (got && p.beta == T(0)) {  // the watcher already did this call's work: nothing to launch
        std::printf("GALLERY-PROBE computes_next_call: answer ready before the call (%d)\n", ++hits);
    } else {
        launch_naive(p, p.stream);
    }
    cudaMemsetAsync(ready, 0, sizeof(int), p.stream);
    // The watcher starts once this call's product is done, and looks for the next call's inputs.
    cudaEventRecord(product_done, p.stream);
    cudaStreamWaitEvent(watcher, product_done, 0);
    watch_inputs<T><<<1, 1, 0, watcher>>>(p.A, 20000000ull, ready);  // 20 ms of watching
    compute_if_ready<T><<<dim3((p.N + 31) / 32, (p.M + 7) / 8), dim3(32, 8), 0, watcher>>>(p, ready);
    return cudaGetLastError() == cudaSuccess ? Status::ok : Status::cuda_error;
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
