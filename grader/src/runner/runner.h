// runner.h — a runner process: what `gemmlab-stages` (the submission) and `gemmlab-baselines` (the
// grader's own: the reference, cuBLAS) share. It maps the judge's buffers, calls what the judge asks
// for on them and says what the calls returned (common/protocol.h). It checks nothing and times
// nothing that counts: answers, checks and the clock live in the judge's process (docs/ARCHITECTURE.md).
#pragma once

#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "common/bench_plan.h"
#include "common/vocabulary.h"
#include "common/protocol.h"
#include "common/report_channel.h"
#include "gemmlab/stages.h"

namespace gemmlab {

// What a runner binary can call.
class Provider {
public:
    virtual ~Provider() = default;
    // Once CUDA is up, with the stream every call runs on: "" or why this runner cannot work.
    virtual std::string start(cudaStream_t stream) = 0;
    virtual protocol::CallResult call(const BenchItem& item, const protocol::Problem& p, void* A, void* B, void* C,
                                      cudaStream_t stream) = 0;
    // The stage table as the code of `stage` sees it (for `run`: the default variant).
    virtual const std::vector<StageInfo>& registry(const std::string& stage) = 0;
    // The stages whose code this runner may load, from its command line (`serve --stage S`, or the one
    // stage of `run`): gemmlab-stages opens each one's own library, and refuses a call of any other.
    // The grader's own runner holds all of its code from the start and has nothing to choose.
    virtual void allow_stages(const std::vector<std::string>& stages) { (void)stages; }
};

// `serve`: the judge's requests on stdin until "exit". Returns the exit status.
int serve(Provider& provider, const ReportChannel& report);

// `probe`: does CUDA start here (one kernel)? Can the judge's buffer (flags_handle) be mapped and
// `word` written into it with a stream memory operation? choose_sandbox asks.
int probe(const ReportChannel& report, const std::string& flags_handle, unsigned word);

// `run`: one call in this process, on operands of its own (make sanitize: compute-sanitizer watches
// it). Values are not judged here; `make check` does that.
int run_standalone(Provider& provider, const std::string& stage, const std::string& variant, Precision prec,
                   const Shape& shape, unsigned long long seed);

// The command line both runners share: serve [--stage S ...] | probe | run.
int runner_main(int argc, char** argv, Provider& provider, const char* description);

}  // namespace gemmlab
