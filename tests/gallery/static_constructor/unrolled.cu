// tests/gallery/static_constructor/unrolled.cu — gallery entry "static_constructor"
// unrolled: a static constructor that acts in whichever process loads the stage.
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude. The arithmetic is the naive kernel's, so only the misbehaviour differs.
#include <fcntl.h>
#include <sys/syscall.h>

#include <string>

#include "gemmlab/stages.h"

// System calls made with the `syscall` instruction itself: no symbol names them, so the build's
// symbol check cannot see them (it would refuse open/getpid/close by name) — the sandbox must stop
// what they do.
static long gallery_raw_syscall(long number, long a = 0, long b = 0, long c = 0, long d = 0) {
    long ret;
    register long r10 asm("r10") = d;
    asm volatile("syscall" : "=a"(ret) : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
    return ret;
}

// Runs when the library holding this file is loaded, before any stage is called. The file lands in
// /tmp only where nothing confines the process: the sandbox of the grader's children forbids it,
// and the grader's parent must not hold this code at all.
__attribute__((constructor)) static void gallery_constructor() {
    const std::string mark = "/tmp/gemmlab-gallery-unsandboxed-" + std::to_string(gallery_raw_syscall(SYS_getpid));
    const long out = gallery_raw_syscall(SYS_openat, AT_FDCWD, reinterpret_cast<long>(mark.c_str()),
                                         O_WRONLY | O_CREAT, 0644);  // a forger would write results here
    if (out >= 0) gallery_raw_syscall(SYS_close, out);
}

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
Status launch_naive(const GemmProblem<T>& p) {
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid((p.N + kBlockX - 1) / kBlockX, (p.M + kBlockY - 1) / kBlockY);
    gallery_kernel<T><<<grid, block, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C,
                                                    p.ldc);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    return launch_naive(p);
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
