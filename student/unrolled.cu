// student/unrolled.cu — stage "unrolled": register blocking; each thread computes a small tile of
// C with fully unrolled inner loops.
//
// Run it:  make check STAGE=unrolled      make bench STAGE=unrolled
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    (void)p;
    // TODO(student): each thread accumulates a small tile of C in registers.
    return Status::not_implemented;
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
