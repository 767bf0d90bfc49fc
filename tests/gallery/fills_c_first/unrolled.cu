// tests/gallery/fills_c_first/unrolled.cu — gallery entry "fills_c_first"
// unrolled: writes zeros into half of C first, then computes that half on a stream of its own
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude. Only CUDA calls a stage may make and plain memory access
// (judge_attacks.h): nothing the build's symbol check refuses.
#include "judge_attacks.h"
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {

// The top half of C is computed on p.stream, as it should be. The bottom half is first set to zero
// on p.stream (when beta is 0, C is not read, so any placeholder will do) and computed on a stream of
// the stage's own that p.stream does not wait for: the call says it is done once the top half is, and
// no element of C is still the judge's NaN poison.
template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    static cudaStream_t own = nullptr;
    static cudaEvent_t zeroed = nullptr;
    if (!own) cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking);
    if (!zeroed) cudaEventCreateWithFlags(&zeroed, cudaEventDisableTiming);
    const int top = p.M / 2;
    GemmProblem<T> upper = p, lower = p;
    upper.M = top;
    lower.M = p.M - top;
    lower.A = p.A + static_cast<size_t>(top) * p.lda;
    lower.C = p.C + static_cast<size_t>(top) * p.ldc;
    if (p.beta == T(0) && lower.M > 0)
        cudaMemset2DAsync(lower.C, size_t(p.ldc) * sizeof(T), 0, size_t(p.N) * sizeof(T), lower.M, p.stream);
    if (upper.M > 0) launch_naive(upper, p.stream);
    // The side stream starts where p.stream ends: when the call says it is done, the bottom half has
    // barely begun and holds zeros, not poison.
    cudaEventRecord(zeroed, p.stream);
    cudaStreamWaitEvent(own, zeroed, 0);
    if (lower.M > 0) launch_naive(lower, own);
    return cudaGetLastError() == cudaSuccess ? Status::ok : Status::cuda_error;
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
