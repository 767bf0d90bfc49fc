// submission_main.cpp — `gemmlab-stages`, the runner of submission code. It holds the runner loop
// (runner.h) and opens the library of each stage it was started for on that stage's first call
// (submission_library.h): the judge starts one for each stage it checks or times, so a stage runs with
// nothing of the submission but its own file and the files that file calls into. It links no GEMM
// library and no grader code that judges or times, and its sandbox cannot read cuBLAS or the other
// stages' libraries (judge/sandbox.h, judge/runner_launch.cpp). The judge starts it; people run it only
// through `make sanitize` and `make profile`:
//
//   gemmlab-stages run --stage S --prec P [--shape MxNxK]   one call under compute-sanitizer
#include <algorithm>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "runner/runner.h"
#include "runner/stage_call.h"
#include "runner/submission_library.h"

namespace gemmlab {
namespace {

class SubmissionProvider : public Provider {
public:
    std::string start(cudaStream_t) override { return ""; }
    void allow_stages(const std::vector<std::string>& stages) override { allowed_ = stages; }
    protocol::CallResult call(const BenchItem& item, const protocol::Problem& p, void* A, void* B, void* C,
                              cudaStream_t s) override {
        protocol::CallResult r;
        r.status = "missing";
        if (item.kind != BenchItem::Kind::stage || item.side != Side::submission) {
            r.error = "gemmlab-stages runs the submission's stages only";
            return r;
        }
        if (std::find(allowed_.begin(), allowed_.end(), item.stage) == allowed_.end()) {
            r.error = "this runner was started for " + (allowed_.empty() ? std::string("no stage") : "stage " + allowed_.front()) +
                      ", not " + item.stage + ": a stage runs only in a runner started for it, with its own library";
            return r;
        }
        const SubmissionAbi& library = submission_library(item.stage);
        return call_stage(library.registry(), library.take_stage_error, item.stage, item.variant, p, A, B, C, s);
    }
    const std::vector<StageInfo>& registry(const std::string& stage) override {
        return submission_library(stage).registry();
    }

private:
    std::vector<std::string> allowed_;
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
