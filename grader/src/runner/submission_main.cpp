// submission_main.cpp — `gemmlab-stages`, the runner of submission code. It holds the runner loop
// (runner.h) and opens the submission's own library on the first call (submission_library.h); it
// links no GEMM library and no grader code that judges or times, and its sandbox cannot read cuBLAS
// (judge/sandbox.h). The judge starts it; people run it only through `make sanitize`:
//
//   gemmlab-stages run --stage S --prec P [--shape MxNxK]   one call under compute-sanitizer
#include <cuda_runtime.h>

#include "runner/runner.h"
#include "runner/stage_call.h"
#include "runner/submission_library.h"

namespace gemmlab {
namespace {

class SubmissionProvider : public Provider {
public:
    std::string start(cudaStream_t) override { return ""; }
    protocol::CallResult call(const BenchItem& item, const protocol::Problem& p, void* A, void* B, void* C,
                              cudaStream_t s) override {
        if (item.kind != BenchItem::Kind::stage || item.side != Side::submission) {
            protocol::CallResult r;
            r.status = "missing";
            r.error = "gemmlab-stages runs the submission's stages only";
            return r;
        }
        return call_stage(registry(), submission_library().take_stage_error, item.stage, item.variant, p, A, B, C, s);
    }
    const std::vector<StageInfo>& registry() override { return submission_library().registry(); }
};

}  // namespace
}  // namespace gemmlab

int main(int argc, char** argv) {
    gemmlab::SubmissionProvider provider;
    try {
        return gemmlab::runner_main(argc, argv, provider, "GEMM Lab runner of submission code (started by gemmlab)");
    } catch (const std::exception& e) {
        fprintf(stderr, "gemmlab-stages: %s\n", e.what());
        return 1;
    }
}
