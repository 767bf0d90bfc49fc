// bench_engine.h — the one benchmark engine of `gemmlab bench` and `gemmlab grade`: a BenchPlan timed
// by the judge's clock, every item's calls in a runner process (docs/timing.md).
//
// Two phases, never overlapping, for the plans of one run (one plan per precision):
//   1. at every shape of every plan, the grader's own runner (gemmlab-baselines) times `launch` (its
//      kernel that writes C: the calibration of the judge's clock at this shape, for each number of
//      calls per interval), then the reference's naive baseline, cuBLAS and the reference stages,
//      round-robin: one interval of each per round; then it ends;
//   2. for each of the submission's stages, a runner of the submission (gemmlab-stages) that opens that
//      stage's library only times its variants at every shape of every plan (float, then double),
//      round-robin, and is ended before the next stage's starts, so no work it leaves behind can slow
//      another stage — and none existed while a baseline was timed. One runner per stage, not per stage,
//      shape and precision: a runner's start (CUDA's set-up) is a quarter of a second.
// A runner that crashes or hangs costs the item whose call was running (crashed / timed_out, and
// skipped at later shapes of its plan); the other items go on in a fresh runner.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/bench_plan.h"
#include "judge/gpu_context.h"

namespace gemmlab {

// Every item timed at every shape of a plan: timings[item][shape].
struct BenchOutcome {
    BenchPlan plan;
    std::vector<std::vector<Timing>> timings;
    // The `launch` item at each shape and number of calls per interval: judge_ms its interval,
    // event_ms its kernels' events, overhead_ms (= time_ms) the calibration subtracted.
    std::vector<Timing> calibration;
    nlohmann::json device;              // peak, clocks at start and end, L2 size (results `device`)
    std::vector<std::string> restarts;  // why a runner had to be restarted, if one had to
    // Every runner this plan started, in order: its stage ("" for the grader's own). A runner that an
    // earlier plan of the same run started serves this one too and is not listed again.
    std::vector<std::string> runners;
};

struct BenchRunOptions {
    double call_timeout_seconds = 30;  // a call not done after this long is timed_out
    bool progress = false;             // redraw a progress line on the terminal
};

// The judge cannot time calls on this machine (no CUDA IPC between processes, no stream memory
// operations, or its own runner does not start): grading must stop, not trust a runner instead.
struct JudgeUnavailable : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Times the plans of one run (their outcomes in the same order) with the runners shared as above.
std::vector<BenchOutcome> run_bench_plans(GpuContext& ctx, const std::vector<BenchPlan>& plans, const BenchRunOptions& opt);
BenchOutcome run_bench_plan(GpuContext& ctx, const BenchPlan& plan, const BenchRunOptions& opt);

}  // namespace gemmlab
