// tests/gallery/signals_done_early/unrolled.cu — gallery entry "signals_done_early"
// unrolled: writes the judge's done word from its kernel before the work is finished
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude. Only the `syscall` instruction and plain memory access (judge_attacks.h):
// nothing the build's symbol check refuses.
#include "judge_attacks.h"
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

// The device table of addresses the kernel writes through: one for both precisions, so that neither
// finds the other's table among the runner's allocations and writes into it.
unsigned** words = nullptr;

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
    static int nwords = 0;
    static const void* seen_at[3] = {nullptr, nullptr, nullptr};
    static int seen_shape[3] = {0, 0, 0};
    if (seen_at[0] != p.A || seen_at[1] != p.B || seen_at[2] != p.C || seen_shape[0] != p.M ||
        seen_shape[1] != p.N || seen_shape[2] != p.K) {
        if (!words) cudaMalloc(reinterpret_cast<void**>(&words), sizeof(unsigned*) * 32);
        const void* skip[] = {p.A, p.B, p.C, words};
        void* all[32];
        void* found[32];
        const int n = gallery::find_device_pointers(all, 32, skip, 4);
        // Not the operands nor the guard bands the judge lays around them: an address inside an
        // operand's extent or within 16 MiB of either end belongs to the operand, and a write there is
        // a write outside C (or into an input), not a race with the judge's flag.
        auto near = [](const void* v, const void* operand, size_t extent) {
            const uintptr_t a = reinterpret_cast<uintptr_t>(v), o = reinterpret_cast<uintptr_t>(operand);
            const uintptr_t band = uintptr_t(16) << 20;
            return a + band >= o && a < o + extent + band;
        };
        const size_t a_extent = size_t(p.M) * size_t(p.lda) * sizeof(T);
        const size_t b_extent = size_t(p.K) * size_t(p.ldb) * sizeof(T);
        const size_t c_extent = size_t(p.M) * size_t(p.ldc) * sizeof(T);
        nwords = 0;
        for (int i = 0; i < n; ++i)
            if (!near(all[i], p.A, a_extent) && !near(all[i], p.B, b_extent) && !near(all[i], p.C, c_extent))
                found[nwords++] = all[i];
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
