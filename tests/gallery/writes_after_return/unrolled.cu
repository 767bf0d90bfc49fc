// tests/gallery/writes_after_return/unrolled.cu — gallery entry "writes_after_return"
// unrolled: keeps writing C from a kernel still running after the call returned
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude. Only the `syscall` instruction and plain memory access (judge_attacks.h):
// nothing the build's symbol check refuses.
#include "judge_attacks.h"
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

}  // namespace

// The work goes to a stream of the stage's own, and the call returns at once: C is written after the
// call has "finished" on p.stream.
template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    static cudaStream_t own = nullptr;
    if (!own) cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking);
    launch_naive(p, own);
    return cudaGetLastError() == cudaSuccess ? Status::ok : Status::cuda_error;
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
