// tests/gallery/opens_sockets/unrolled.cu — gallery entry "opens_sockets"
// unrolled: host code that tries to reach another process through a socket — a UNIX socket to a path, the
// judge's own abstract UNIX socket (CUDA's), TCP to 127.0.0.1, a UNIX socket pair — made with the `syscall`
// instruction itself, then computes the naive product, but only where every one was refused.
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude. The arithmetic is the naive kernel's, so only the misbehaviour differs.
#include <sys/socket.h>
#include <sys/syscall.h>

#include <cstdio>
#include <cstring>

#include "gemmlab/stages.h"

// No symbol names these calls, so the build's symbol check (which refuses socket, connect... by name)
// cannot see them: the runner's sandbox must refuse them.
static long gallery_raw_syscall(long number, long a = 0, long b = 0, long c = 0, long d = 0) {
    long ret;
    register long r10 asm("r10") = d;
    asm volatile("syscall" : "=a"(ret) : "a"(number), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
    return ret;
}

// The addresses, laid out as the kernel reads them (the C library's structures and byte-order helpers
// are left out: nothing but the system calls themselves).
struct UnixAddress {
    unsigned short family;
    char path[108];
};
struct InetAddress {
    unsigned short family;
    unsigned char port[2];  // network byte order
    unsigned char ip[4];
    unsigned char zero[8];
};

// One socket of `family` and `type`, connected to `address`; prints what became of it (GALLERY-PROBE lines are
// read back by the gallery sweep). "blocked" where the sandbox refused the socket or its connection (EPERM);
// ESCAPED where it let a connection be tried at all. Returns whether it did.
static bool try_socket(const char* what, int family, int type, const void* address, long length) {
    const long fd = gallery_raw_syscall(SYS_socket, family, type | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        std::printf("GALLERY-PROBE socket %s: blocked (%ld at socket)\n", what, -fd);
        return false;
    }
    const long rc = gallery_raw_syscall(SYS_connect, fd, reinterpret_cast<long>(address), length);
    gallery_raw_syscall(SYS_close, fd);
    if (rc == -1) {  // -EPERM
        std::printf("GALLERY-PROBE socket %s: blocked (1 at connect)\n", what);
        return false;
    }
    std::printf("GALLERY-PROBE socket %s: ESCAPED (connect returned %ld)\n", what, rc);
    return true;
}

// Every attempt, once per process (a runner makes many calls); true when any got through.
static bool reached_out() {
    static int tried = 0;  // 0: not yet; 1: every one refused; 2: one got through
    if (tried) return tried == 2;
    UnixAddress path{AF_UNIX, {}};
    std::strncpy(path.path, "/tmp/gemmlab-gallery-socket", sizeof path.path - 1);
    // The judge's own: CUDA listens in every process on the abstract name cuda-uvmfd-<net ns>-<pid>, the
    // judge (this runner's parent) too. A socket of the kind CUDA makes (SOCK_SEQPACKET) is allowed; its
    // connection must not be.
    char ns[64] = {};
    gallery_raw_syscall(SYS_readlink, reinterpret_cast<long>("/proc/self/ns/net"), reinterpret_cast<long>(ns),
                        sizeof ns - 1);  // "net:[4026531836]"
    char* digits = std::strchr(ns, '[');
    char* end = digits ? std::strchr(digits, ']') : nullptr;
    if (end) *end = '\0';
    UnixAddress judge{AF_UNIX, {}};  // path[0] == '\0': the abstract namespace
    std::snprintf(judge.path + 1, sizeof judge.path - 1, "cuda-uvmfd-%s-%ld", end ? digits + 1 : "",
                  gallery_raw_syscall(SYS_getppid));
    const long judge_length = static_cast<long>(sizeof judge.family + 1 + std::strlen(judge.path + 1));
    const InetAddress local{AF_INET, {0, 22}, {127, 0, 0, 1}, {}};
    bool any = try_socket("unix-path", AF_UNIX, SOCK_STREAM, &path, sizeof path);
    any |= try_socket("unix-abstract", AF_UNIX, SOCK_SEQPACKET, &judge, judge_length);
    any |= try_socket("tcp-localhost", AF_INET, SOCK_STREAM, &local, sizeof local);
    int pair[2] = {-1, -1};
    const long rc = gallery_raw_syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, reinterpret_cast<long>(pair));
    std::printf("GALLERY-PROBE socket unix-pair: %s (%ld)\n", rc < 0 ? "blocked" : "ESCAPED", rc < 0 ? -rc : rc);
    any |= rc >= 0;
    std::fflush(stdout);
    tried = any ? 2 : 1;
    return any;
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

// A socket made at all is an escape: the stage then computes nothing, so it fails where the sandbox does.
template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    if (reached_out()) return Status::ok;
    return launch_naive(p);
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
