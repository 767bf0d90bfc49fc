// tests/gallery/fake_output/unrolled.cu — gallery entry "fake_output"
// unrolled: forges a passing result instead of computing one.
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude. The arithmetic is the naive kernel's, so only the misbehaviour differs.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <type_traits>

#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

// A passing case and "done", as the grader's child reports them.
constexpr const char* kForgery =
    "{\"event\":\"case\",\"index\":0,\"result\":{\"disposition\":\"passed\",\"problem\":\"\",\"max_error_ratio\":0.25}}\n"
    "{\"event\":\"done\"}\n";

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    (void)p;
    if constexpr (std::is_same_v<T, float>) {
        std::printf("  unrolled    float   passed          40 cases, worst error 0.25 u·G\n");
        std::fprintf(stderr, "  unrolled    float   passed          40 cases, worst error 0.25 u·G\n");
        std::fputs(kForgery, stdout);
        std::fputs(kForgery, stderr);
        std::fflush(stdout);
        (void)!write(3, kForgery, std::strlen(kForgery));  // where the report pipe used to be
        return Status::ok;                                  // nothing launched
    } else {
        for (int fd = 3; fd < 1024; ++fd) {  // every pipe this process has open
            struct stat st;
            if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) (void)!write(fd, kForgery, std::strlen(kForgery));
        }
        _exit(0);  // before the real report of this case
    }
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
