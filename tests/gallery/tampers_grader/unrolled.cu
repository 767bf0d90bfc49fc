// tests/gallery/tampers_grader/unrolled.cu — gallery entry "tampers_grader"
// unrolled: tries to modify the grader and its results.
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude. The arithmetic is the naive kernel's, so only the misbehaviour differs.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

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
Status launch_naive(const GemmProblem<T>& p) {
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid((p.N + kBlockX - 1) / kBlockX, (p.M + kBlockY - 1) / kBlockY);
    gallery_kernel<T><<<grid, block, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C,
                                                    p.ldc);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

// Where the grader's repository is: walk up from the grader executable (stat works everywhere).
std::string repo_root() {
    char exe[4096] = "";
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return "";
    exe[n] = '\0';
    std::string dir = exe;
    while (dir.size() > 1) {
        dir = dir.substr(0, dir.rfind('/'));
        struct stat st;
        if (stat((dir + "/grader/include/gemmlab/stages.h").c_str(), &st) == 0) return dir;
    }
    return "";
}

std::string grader_path() {
    char exe[4096] = "";
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) exe[n] = '\0';
    return exe;
}

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    static bool probed = false;
    if (!probed) {
        probed = true;
        const std::string root = repo_root(), exe = grader_path();
        auto attempt = [](const std::string& what, const std::string& path, int flags) {
            const int fd = open(path.c_str(), flags, 0644);
            std::printf("GALLERY-PROBE %s %s: %s\n", what.c_str(), path.c_str(),
                        fd >= 0 ? "ESCAPED" : std::strerror(errno));
            if (fd >= 0) {
                if (flags & O_APPEND) (void)!write(fd, "GEMMLAB-GALLERY-TAMPERED\n", 25);
                close(fd);
            }
            return fd >= 0;
        };
        attempt("open-grader-for-writing", exe, O_WRONLY);
        const std::string twin = exe.substr(0, exe.rfind('/')) + "/gemmlab-gallery-pwned-grader";
        if (attempt("create-beside-grader", twin, O_WRONLY | O_CREAT | O_EXCL)) {
            const bool replaced = rename(twin.c_str(), (exe + "-gemmlab-gallery-pwned").c_str()) == 0;
            std::printf("GALLERY-PROBE rename-beside-grader: %s\n", replaced ? "ESCAPED" : std::strerror(errno));
        }
        for (const char* rel : {"/build/gallery/results/well_behaved/results.json",
                                "/build/gallery/results/well_behaved/check.json",
                                "/results/well_behaved/results.json", "/results/student/results.json"})
            attempt("append-to-results", root + rel, O_WRONLY | O_APPEND);
        attempt("open-course-toml-for-writing", root + "/course.toml", O_WRONLY);  // writes nothing
        attempt("create-grader-source", root + "/grader/src/gemmlab-gallery-pwned.cpp",
                O_WRONLY | O_CREAT | O_EXCL);
        std::fflush(stdout);
    }
    return launch_naive(p);
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
