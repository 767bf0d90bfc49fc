// check_engine.h — the judge's check of one stage run (stage × variant × precision), every case of a
// shape set, with the stage called in a runner process of its own.
//
// For each case, in the judge's own CUDA context: fresh random A and B (padding too) and C (or NaN
// when beta == 0) in buffers the judge exports to the runner, with canaries around C and private
// copies of A and B; the FP64 reference C_ref = alpha·A·B + beta·C and the gauge G of bound.h, which
// never leave the judge's context. The runner calls the stage on the judge's buffers, synchronizes
// its device and says what the call returned. The judge then checks its own buffers: canaries, A and
// B unchanged, every element within the variant's bound. The pitched stage builds its own operands
// from the judge's with its helpers and downloads its result into the judge's C.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/vocabulary.h"
#include "common/shapes.h"
#include "common/sides.h"
#include "judge/gpu_context.h"
#include "judge/isolation.h"

namespace gemmlab {

// A stage whose file the build's symbol check refused is not linked into the submission's library
// (runner/submission_library.h): its entry points are null, and it is `rejected` with these words.
// The judge replaces them with the check's own (which names the symbol and the rule).
constexpr const char* kNotLinkedProblem =
    "this stage's code is not in the build: the symbol check refused its file (the build printed why; "
    "see docs/student-guide.md, \"What a stage may call\")";

struct CheckRun {
    Side side = Side::submission;
    std::string stage, variant;
    Precision precision = Precision::f32;
    std::vector<Shape> shapes;
    ChildLimits limits;  // idle_seconds: the longest one case may take
};

// Runs every case; returns what happened as a runner's outcome (the judge's own case reports as its
// events, and how the runner ended), for collect_stage_run (pipeline.h) to turn into the run's
// record. on_case(i) is called as case i starts (progress). `runner`, when given, is this run's runner
// started ahead (start_check_runner); one that did not start is replaced by a fresh one, whose start
// alone speaks for the run.
ChildOutcome check_stage_run(GpuContext& ctx, const CheckRun& run, const std::function<void(size_t)>& on_case,
                             std::unique_ptr<ChildProcess> runner = nullptr);

// A run's runner, started while the run before it is checked, so that its start (CUDA's set-up, a
// quarter of a second) overlaps that check: it loads no stage's code before its first call, and
// nothing is timed during a check.
std::unique_ptr<ChildProcess> start_check_runner(const CheckRun& run);

// The stubs among `runs` (the submission's, all checked on the same shapes), found before any run's
// own runner starts: a stage still a stub returns Status::not_implemented at its first call, and a
// runner process of its own for each of them (CUDA, the library, the buffers mapped: a fifth of a
// second) would be most of a check of a half-done submission. One runner calls each run's stage
// once, in order, with the first case's shape (inputs of no value, the judge's throwaway buffers),
// and waits at most kStubProbeSeconds for each answer. Only Status::not_implemented, returned with
// the runner's context intact, counts: for such a run the answer is the check's own first case
// (stub_outcome); every other run, and every run from the first call that crashes, hangs or breaks
// the context on, is checked in a runner of its own as before. A stage that lies here can only
// lose its own points. This runner is the only one that opens several stages' libraries (each its own,
// runner/submission_library.h): what one stage's code does to another's call in it can only make
// that call a stub, which the other stage's own runner would have had to say. Fewer than two runs: no
// probe (its runner would cost what it saves).
constexpr double kStubProbeSeconds = 5;
struct StubAnswer {
    bool stub = false;    // the call returned Status::not_implemented
    std::string problem;  // what the runner said with it (the pitched stage's helpers)
    double seconds = 0;   // the call, as the judge waited for it
};
std::vector<StubAnswer> find_stubs(GpuContext& ctx, const std::vector<CheckRun>& runs);

// The outcome of a run the stub probe answered: its first case, not implemented, as
// check_stage_run reports it; the process record says the probe answered (kStubProbeEnd).
ChildOutcome stub_outcome(const CheckRun& run, const StubAnswer& answer);
constexpr const char* kStubProbeEnd =
    "no runner of its own: the stub probe's call returned Status::not_implemented (one process asks "
    "every stage once before the check)";

}  // namespace gemmlab
