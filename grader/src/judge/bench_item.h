// bench_item.h — one item of the benchmark at one shape, as the engine (bench_engine.cpp) holds it while
// it times it, and what its calls and intervals come to.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/bench_plan.h"
#include "common/bound.h"
#include "common/protocol.h"
#include "judge/nvml.h"

namespace gemmlab {

// Where one item's operands sit in the judge's buffers: leading dimensions of the dense layout the
// shape asks for, or of rows at the pitch cudaMallocPitch gives (the pitched stage's timed calls).
struct Layout {
    int lda = 0, ldb = 0, ldc = 0;
};

// One item's state at one shape.
struct ItemRun {
    const BenchItem* item = nullptr;
    size_t index = 0;
    bool pitched = false, done = false;
    bool tensor_cores = false;  // the stage may use the tensor cores (its ceiling is theirs)
    int warmups_left = 0;
    int per_interval = 0;  // calls per timed interval; 0 until the first timed call has sized it
    int calls = 0;         // timed calls made (and verified)
    // Per call, one entry per kept interval: the time, the raw interval and the events over n.
    std::vector<double> times, intervals, events, clocks;
    uint64_t reasons = 0;
    double spent = 0;  // seconds of set-up, calls and verification at this shape
    ErrorBound bound;
    Timing result;
};

// What happened to one call.
struct CallReport {
    bool runner_lost = false;  // the runner died or hung: the item's call ends it
    Disposition lost_as = Disposition::crashed;
    std::string why;
    protocol::CallResult result;
    std::string error;  // the runner's CUDA error after the call
    double interval_ms = 0, event_ms = 0;  // the whole interval; the events of its calls added up
    // The sample after the done word (judge/interval_verdict.h): elements that still held the judge's
    // poison, and elements compared with their answer that were not it.
    unsigned poisoned = 0, unanswered = 0;
};

// Ends r's run at this shape with disposition d, and why.
void stop_item(ItemRun& r, Disposition d, const std::string& why);

// The NVML reading as results keep it (null when there is none).
nlohmann::json clocks_json(const ClockReading& r);

// The timing of an item that was not timed at shape s, and why.
Timing lost_timing(const Shape& s, Disposition d, const std::string& why);

// An item's timing once it is done at `shape`: its intervals summarized (interquartile mean, spread),
// the calibration of its calls per interval subtracted, and refused when it is not believable (no
// longer than the calibration, or above the GPU's ceiling for the stage).
void finish_item(ItemRun& r, const std::map<int, double>& calibration, const Shape& shape, Precision precision);

}  // namespace gemmlab
