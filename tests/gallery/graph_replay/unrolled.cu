// tests/gallery/graph_replay/unrolled.cu — gallery entry "graph_replay"
// unrolled: captures its first call (the naive stage's kernel on p.stream) into a CUDA graph once and
// replays that graph on every later call: the kernel runs again on the first call's pointers, sizes
// and scalars, never on the operands it is given. Not a model to follow: a submission the grader must
// survive and see through; README.md says what the grader has to conclude.
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

template <typename T>
cudaGraphExec_t replay = nullptr;

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    if (replay<T>) {
        GEMMLAB_TRY(cudaGraphLaunch(replay<T>, p.stream));  // the first call's work, on its stale pointers
        return Status::ok;
    }
    cudaGraph_t graph = nullptr;
    GEMMLAB_TRY(cudaStreamBeginCapture(p.stream, cudaStreamCaptureModeThreadLocal));
    const Status s = gemm_naive<T>(p);
    GEMMLAB_TRY(cudaStreamEndCapture(p.stream, &graph));
    if (s != Status::ok) return s;
    GEMMLAB_TRY(cudaGraphInstantiate(&replay<T>, graph, 0));
    GEMMLAB_TRY(cudaGraphLaunch(replay<T>, p.stream));
    return Status::ok;
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
