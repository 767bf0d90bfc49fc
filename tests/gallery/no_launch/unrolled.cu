// tests/gallery/no_launch/unrolled.cu — gallery entry "no_launch"
// unrolled: returns ok without launching anything.
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude. The arithmetic is the naive kernel's, so only the misbehaviour differs.
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    (void)p;
    return Status::ok;  // forgot to launch
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
