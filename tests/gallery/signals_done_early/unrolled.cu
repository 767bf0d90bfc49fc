// tests/gallery/signals_done_early/unrolled.cu — gallery entry "signals_done_early"
// unrolled: writes the judge's done word from its kernel before the work is finished
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude. Only the `syscall` instruction and plain memory access (judge_attacks.h):
// nothing the build's symbol check refuses.
#include "judge_attacks.h"
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

// The naive product, but its first thread first writes "done" (the largest value) into the second word
// of every device allocation the runner keeps an address of — the judge's flag words among them.
template <typename T>
__global__ void early_done_kernel(int M, int N, int K, T alpha, const T* A, int lda, const T* B, int ldb, T beta, T* C,
                                  int ldc, unsigned* const* words, int nwords) {
    if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0) {
        for (int i = 0; i < nwords; ++i) atomicExch(words[i] + 1, 0xFFFFFFFFu);
        __threadfence_system();
    }
    const int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    T acc = T(0);
    for (int k = 0; k < K; ++k) acc += A[row * lda + k] * B[k * ldb + col];
    C[row * ldc + col] = beta == T(0) ? alpha * acc : alpha * acc + beta * C[row * ldc + col];
}

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    // The runner maps new operands (and unmaps the old) when the shape changes: an address list kept
    // from an earlier shape may point into memory no longer mapped (or mapped smaller at the same
    // address), and the kernel would crash instead of racing the judge. So the list is found again
    // whenever the operands or the shape change.
    static unsigned** words = nullptr;
    static int nwords = 0;
    static const void* seen_at[3] = {nullptr, nullptr, nullptr};
    static int seen_shape[3] = {0, 0, 0};
    if (seen_at[0] != p.A || seen_at[1] != p.B || seen_at[2] != p.C || seen_shape[0] != p.M ||
        seen_shape[1] != p.N || seen_shape[2] != p.K) {
        const void* skip[] = {p.A, p.B, p.C};
        void* all[32];
        void* found[32];
        const int n = gallery::find_device_pointers(all, 32, skip, 3);
        // Not the operands' own allocations (the judge lays C out after a guard band): below 16 MiB of them.
        auto near = [](const void* v, const void* operand) {
            const char* o = static_cast<const char*>(operand);
            return static_cast<const char*>(v) <= o && o - static_cast<const char*>(v) < (16 << 20);
        };
        nwords = 0;
        for (int i = 0; i < n; ++i)
            if (!near(all[i], p.A) && !near(all[i], p.B) && !near(all[i], p.C)) found[nwords++] = all[i];
        if (!words) cudaMalloc(reinterpret_cast<void**>(&words), sizeof(unsigned*) * 32);
        cudaMemcpy(words, found, sizeof(void*) * size_t(nwords), cudaMemcpyHostToDevice);
        seen_at[0] = p.A, seen_at[1] = p.B, seen_at[2] = p.C;
        seen_shape[0] = p.M, seen_shape[1] = p.N, seen_shape[2] = p.K;
        std::printf("GALLERY-PROBE signals_done_early: %d candidate flag allocation(s) at %dx%dx%d\n", nwords, p.M,
                    p.N, p.K);
    }
    early_done_kernel<T><<<dim3((p.N + 31) / 32, (p.M + 7) / 8), dim3(32, 8), 0, p.stream>>>(
        p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C, p.ldc, words, nwords);
    return cudaGetLastError() == cudaSuccess ? Status::ok : Status::cuda_error;
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
