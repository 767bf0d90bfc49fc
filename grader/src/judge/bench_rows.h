// bench_rows.h — the rows of a plan's outcome as the benchmark engine fills them (bench_engine.cpp):
// each item's run at a shape set up from the plan and the registry (its bound, its ceiling, its layout),
// the items skipped at later shapes after a runner was lost on them, and each finished run's Timing in
// BenchOutcome::timings[item][shape].
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "common/bench_plan.h"
#include "judge/bench_engine.h"
#include "judge/bench_item.h"

namespace gemmlab {

class ItemRows {
public:
    // `peak_gflops`: the GPU's peak in the plan's precision; `tensor_peak_gflops`: its tensor cores',
    // which a stage that may use them is held to instead.
    ItemRows(const BenchPlan& plan, BenchOutcome& out, double peak_gflops, double tensor_peak_gflops)
        : plan_(plan), out_(out), peak_(peak_gflops), tensor_peak_(tensor_peak_gflops) {}

    // The run of the plan's item `index` at shape si, before its first call: done at once when it was
    // skipped at this shape or names no stage of this grader.
    ItemRun set_up(const BenchItem& item, size_t index, size_t si) const;

    // The item is not timed at the plan's later shapes (its runner was lost on it), and why.
    void skip_later(size_t index, const std::string& why) { skipped_[index] = why; }

    // r's result is its row at shape si.
    void record(const ItemRun& r, size_t si) { out_.timings[r.index][si] = r.result; }

private:
    const BenchPlan& plan_;
    BenchOutcome& out_;
    double peak_ = 0, tensor_peak_ = 0;
    std::map<size_t, std::string> skipped_;  // items lost at an earlier shape
};

}  // namespace gemmlab
