// tests/gallery/forges_clock_memory/unrolled.cu — gallery entry "forges_clock_memory"
// unrolled: work hidden on a stream of its own, and the harness's start time moved forward in memory.
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude. The arithmetic is the naive kernel's, so only the misbehaviour differs.
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

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

// The naive product, launched on p.stream (what a well-behaved stage does).
template <typename T>
Status launch_naive(const GemmProblem<T>& p, cudaStream_t stream) {
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid((p.N + kBlockX - 1) / kBlockX, (p.M + kBlockY - 1) / kBlockY);
    gallery_kernel<T><<<grid, block, 0, stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C,
                                                    p.ldc);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}



// The monotonic clock (the one std::chrono::steady_clock reads), through the system call itself: no
// clock function is referenced, so the build's symbol check has nothing to refuse.
int64_t monotonic_ns() {
    timespec ts{};
    long ret;
    asm volatile("syscall" : "=a"(ret) : "a"(SYS_clock_gettime), "D"(CLOCK_MONOTONIC), "S"(&ts) : "rcx", "r11", "memory");
    return ret == 0 ? int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec : 0;
}

long raw_syscall(long n, long a, long b, long c) {
    long ret;
    asm volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return ret;
}

// The end of the main thread's stack, from the "[stack]" line of /proc/self/maps (read with the
// system calls themselves), so the walk below never leaves it.
uintptr_t stack_end() {
    static char maps[1 << 18];
    const long fd = raw_syscall(SYS_openat, AT_FDCWD, reinterpret_cast<long>("/proc/self/maps"), O_RDONLY);
    if (fd < 0) return 0;
    long have = 0, n;
    while (have < long(sizeof maps) - 1 &&
           (n = raw_syscall(SYS_read, fd, reinterpret_cast<long>(maps + have), long(sizeof maps) - 1 - have)) > 0)
        have += n;
    raw_syscall(SYS_close, fd, 0, 0);
    maps[have] = '\0';
    const char* line = std::strstr(maps, "[stack]");
    if (!line) return 0;
    while (line > maps && line[-1] != '\n') --line;
    unsigned long lo = 0, hi = 0;
    return std::sscanf(line, "%lx-%lx", &lo, &hi) == 2 ? hi : 0;
}

// Moves every value on the stack above this frame that looks like a steady_clock time taken in the
// last 5 ms (the harness's start time of this call, kept in its frame or in a register saved on
// the way here) forward by `shift_ns`: the harness's wall clock then measures less than the call.
__attribute__((noinline)) void shift_recent_times(int64_t shift_ns) {
    static const uintptr_t end = stack_end();
    const int64_t now = monotonic_ns();
    auto* p = static_cast<volatile int64_t*>(__builtin_frame_address(0));
    const uintptr_t limit = end ? end : reinterpret_cast<uintptr_t>(p) + 4096;
    for (int i = 0; i < 8192 && reinterpret_cast<uintptr_t>(p + i + 1) <= limit; ++i)  // at most 64 KiB
        if (p[i] > now - 5000000 && p[i] <= now) p[i] += shift_ns;
}

// The stage's own stream and the duration of its previous call, read with its own events.
cudaStream_t side = nullptr;
cudaEvent_t began = nullptr, ended = nullptr;
bool have_previous = false;

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    // Every callee-saved register is saved in this frame on entry and restored from it on return,
    // so a start time the harness keeps in one of them is within reach of shift_recent_times.
    asm volatile("" ::: "rbx", "r12", "r13", "r14", "r15");
    if (!side) {
        GEMMLAB_TRY(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
        GEMMLAB_TRY(cudaEventCreate(&began));
        GEMMLAB_TRY(cudaEventCreate(&ended));
    }
    float previous_ms = 0;
    if (have_previous && cudaEventElapsedTime(&previous_ms, began, ended) != cudaSuccess) previous_ms = 0;
    // The work goes to the side stream, which the events on p.stream do not see; the wall clock
    // would, so the start time is moved forward by 80% of what the previous call took.
    GEMMLAB_TRY(cudaEventRecord(began, side));
    if (const Status st = launch_naive(p, side); st != Status::ok) return st;
    GEMMLAB_TRY(cudaEventRecord(ended, side));
    have_previous = true;
    shift_recent_times(int64_t(0.8 * previous_ms * 1e6));
    return Status::ok;
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
