// tests/gallery/takes_report_fd/unrolled.cu — gallery entry "takes_report_fd"
// unrolled: takes over the report descriptor (its own pipe dup2()ed over it) and rewrites what passes
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude. Only the `syscall` instruction and plain memory access (judge_attacks.h):
// nothing the build's symbol check refuses.
#include "judge_attacks.h"
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

// The relay: the runner's reports arrive on `from` (the stage's own pipe, now on the runner's report
// descriptor); they leave on `to` (the real report pipe, moved away) with every status an "ok" and
// every error dropped. System calls only: this thread shares the caller's thread-local storage.
struct Relay {
    int from = -1, to = -1;
};

void copy_replacing(const char* in, long n, char* out, long* m) {
    static const char* const kFrom[] = {"\"unsupported\"", "\"cuda_error\"", "\"not_implemented\"", "\"failed\""};
    long j = 0;
    for (long i = 0; i < n;) {
        bool replaced = false;
        for (const char* f : kFrom) {
            long k = 0;
            while (f[k] && i + k < n && in[i + k] == f[k]) ++k;
            if (!f[k]) {
                for (const char* r = "\"ok\""; *r; ++r) out[j++] = *r;
                i += k;
                replaced = true;
                break;
            }
        }
        if (!replaced) out[j++] = in[i++];
    }
    *m = j;
}

void relay_loop(void* arg) {
    const Relay* r = static_cast<const Relay*>(arg);
    static char in[1 << 16], out[1 << 17];
    for (;;) {
        const long n = gallery::raw_syscall(SYS_read, r->from, reinterpret_cast<long>(in), sizeof in);
        if (n <= 0) return;
        long m = 0;
        copy_replacing(in, n, out, &m);
        gallery::raw_syscall(SYS_write, r->to, reinterpret_cast<long>(out), m);
    }
}

// Once: every pipe descriptor the runner writes reports to gets the stage's own pipe in its place.
void take_over_reports() {
    static bool done = false;
    if (done) return;
    done = true;
    int pipes[16];
    const int n = gallery::find_pipes(pipes, 16);
    int taken = 0;
    for (int i = 0; i < n; ++i) {
        if (pipes[i] < 32) continue;  // the report pipe sits on a high descriptor; low ones are stdin and friends
        int fds[2];
        if (gallery::raw_syscall(SYS_pipe2, reinterpret_cast<long>(fds), O_CLOEXEC) != 0) continue;
        auto* relay = new Relay;
        relay->to = static_cast<int>(gallery::raw_syscall(SYS_fcntl, pipes[i], F_DUPFD_CLOEXEC, 900));
        relay->from = fds[0];
        gallery::raw_syscall(SYS_dup3, fds[1], pipes[i], O_CLOEXEC);  // the runner now writes into the stage's pipe
        gallery::raw_syscall(SYS_close, fds[1]);
        if (gallery::raw_thread(&relay_loop, relay)) ++taken;
    }
    std::printf("GALLERY-PROBE takes_report_fd: %d report descriptor(s) taken over\n", taken);
}

}  // namespace

// Right only where M, N and K are multiples of 16: the edge rows and columns are left alone (a kernel
// that does not handle unaligned shapes), and the relay says every call went fine.
template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    take_over_reports();
    GemmProblem<T> q = p;
    q.M = p.M / 16 * 16, q.N = p.N / 16 * 16;
    if (q.M && q.N) launch_naive(q, p.stream);
    cudaGetLastError();
    return Status::ok;
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
