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
#include <string>

#include "common/model.h"
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
// events, and how the runner ended), for collect_stage_run (check_command.h) to turn into the run's
// record. on_case(i) is called as case i starts (progress).
ChildOutcome check_stage_run(GpuContext& ctx, const CheckRun& run, const std::function<void(size_t)>& on_case);

}  // namespace gemmlab
