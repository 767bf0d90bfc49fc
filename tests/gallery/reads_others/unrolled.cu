// tests/gallery/reads_others/unrolled.cu — gallery entry "reads_others"
// unrolled: reads the solutions and other submissions.
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude. The arithmetic is the naive kernel's, so only the misbehaviour differs.
#include <dirent.h>
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

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    static bool probed = false;
    if (!probed) {
        probed = true;
        const std::string root = repo_root();
        for (const std::string& path :
             {root + "/reference/unrolled.cu", root + "/student/unrolled.cu",
              root + "/tests/gallery/well_behaved/unrolled.cu", root + "/course.toml", std::string("/etc/hostname")}) {
            FILE* f = std::fopen(path.c_str(), "r");
            const bool control = path == "/etc/hostname";
            std::printf("GALLERY-PROBE read %s: %s\n", path.c_str(),
                        f ? (control ? "readable (system file, allowed)" : "LEAKED") : std::strerror(errno));
            if (f) std::fclose(f);
        }
        for (const std::string& dir : {root + "/results", root + "/build/gallery/results", root + "/tests/gallery"}) {
            DIR* d = opendir(dir.c_str());
            std::printf("GALLERY-PROBE list %s: %s\n", dir.c_str(), d ? "LEAKED" : std::strerror(errno));
            if (d) closedir(d);
        }
        std::fflush(stdout);
    }
    return launch_naive(p);
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
