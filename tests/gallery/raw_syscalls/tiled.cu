// tests/gallery/raw_syscalls/tiled.cu — gallery entry "raw_syscalls"
// tiled: six attacks on the grader made with the `syscall` instruction itself, one per variant and precision.
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude. The arithmetic is the naive kernel's, so only the misbehaviour differs.
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>

#include <cstdio>
#include <cstring>

#include "gemmlab/stages.h"

// No symbol names these calls, so the build's symbol check (which refuses fork, kill, open, write...
// by name) cannot see them: the sandbox of the grader's children and the report key must stop them.
static long gallery_raw_syscall(long number, long a = 0, long b = 0, long c = 0, long d = 0) {
    long ret;
    register long r10 asm("r10") = d;
    asm volatile("syscall" : "=a"(ret) : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
    return ret;
}

// tiled/8 float: a forged "passed" report on every descriptor the process may hold.
static void forge_reports() {
    static const char line[] = "{\"event\":\"case\",\"index\":0,\"result\":{\"disposition\":\"passed\"}}\n";
    for (long fd = 0; fd < 1024; ++fd) gallery_raw_syscall(SYS_write, fd, reinterpret_cast<long>(line), sizeof line - 1);
}

// tiled/8 double: the grader's parent killed.
static void kill_parent() { gallery_raw_syscall(SYS_kill, gallery_raw_syscall(SYS_getppid), SIGKILL); }

// tiled/16 float: a process of its own, out of the grader's sight.
static void fork_away() {
    if (gallery_raw_syscall(SYS_fork) == 0) gallery_raw_syscall(SYS_exit_group, 0);
}

// An open() the symbol check cannot see; prints what became of it (GALLERY-PROBE lines are read back
// by the gallery sweep: ESCAPED or LEAKED means a defence failed).
static void try_open(const char* path, long flags, const char* what) {
    const long fd = gallery_raw_syscall(SYS_openat, AT_FDCWD, reinterpret_cast<long>(path), flags, 0644);
    if (fd >= 0) {
        std::printf("GALLERY-PROBE %s: %s %s\n", what, path, (flags & O_ACCMODE) == O_RDONLY ? "LEAKED" : "ESCAPED");
        gallery_raw_syscall(SYS_close, fd);
    } else {
        std::printf("GALLERY-PROBE %s: %s blocked (%ld)\n", what, path, -fd);
    }
}

// The grader's own executable, whose directory holds the build (and three levels up, the repository).
static void grader_path(char* out, size_t size) {
    const long n = gallery_raw_syscall(SYS_readlink, reinterpret_cast<long>("/proc/self/exe"), reinterpret_cast<long>(out),
                                       static_cast<long>(size - 1));
    out[n > 0 ? n : 0] = '\0';
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

template <typename T, int TILE>
Status gemm_tiled(const GemmProblem<T>& p) {
    char path[4096];
    if constexpr (TILE == 8) {
        if constexpr (sizeof(T) == 4) forge_reports();
        else kill_parent();
    } else if constexpr (TILE == 16) {
        if constexpr (sizeof(T) == 4) {
            fork_away();
        } else {
            try_open("/tmp/gemmlab-gallery-pwned-raw", O_WRONLY | O_CREAT, "write outside the scratch directory");
        }
    } else {
        grader_path(path, sizeof path);
        if constexpr (sizeof(T) == 4) {
            // the instructor's solutions: <repository>/reference/reuse.cu, three levels above the build
            char* cut = path;
            for (int up = 0; up < 4 && cut; ++up) cut = std::strrchr(path, '/'), cut ? *cut = '\0' : 0;
            std::strncat(path, "/reference/reuse.cu", sizeof path - std::strlen(path) - 1);
            try_open(path, O_RDONLY, "read the reference solutions");
        } else {
            try_open(path, O_WRONLY, "overwrite the grader");
        }
    }
    return launch_naive(p);
}

template Status gemm_tiled<float, 8>(const GemmProblem<float>&);
template Status gemm_tiled<float, 16>(const GemmProblem<float>&);
template Status gemm_tiled<float, 32>(const GemmProblem<float>&);
template Status gemm_tiled<double, 8>(const GemmProblem<double>&);
template Status gemm_tiled<double, 16>(const GemmProblem<double>&);
template Status gemm_tiled<double, 32>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
