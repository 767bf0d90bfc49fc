// bench_interval.h — one interval of the benchmark on the judge's clock (docs/timing.md): n calls of
// one item, each on its own operands, armed in a runner behind the go word and timed between two stamps
// of the judge's stream, with the sample of their C's taken before the second (bench_engine.cpp says
// the whole interval; interval_verdict.h what its sample means).
#pragma once

#include <cstdint>
#include <random>

#include <nlohmann/json.hpp>

#include "judge/bench_item.h"
#include "judge/bench_operands.h"
#include "judge/bench_session.h"
#include "judge/device_buffer.h"
#include "judge/gpu_context.h"

namespace gemmlab {

// Positions of C sampled after the done word, before the second stamp (over the interval's n C's): an
// interval that said it was done with a fraction f of its C's unwritten passes with probability (1-f)^kSamples.
constexpr int kSamples = 1024;
// Beside them, positions whose value is checked (common/sample_check.h): a stage that wrote anything
// into C first (zeros, a placeholder) while its real work still ran elsewhere passes the poison check
// but not this one. Fewer, since each costs a dot product of length K (a few microseconds for all).
constexpr int kAnswerSamples = 64;

template <typename T>
class TimedInterval {
public:
    // `clear_l2`: flush the L2 before each call where the operands could still be in it (the plan's
    // clear_l2). `timeout`: the seconds an interval may take ([bench] call_timeout_seconds).
    TimedInterval(GpuContext& ctx, Precision precision, bool clear_l2, double timeout, const ShapeOperands<T>& operands);

    // One interval of n calls of r's item, each on its own operands (slot i of A, B, C): timed (armed
    // behind the go word, between two stamps) or, for a warm-up, plain. Fresh inputs for each call,
    // except for the calibration, whose kernel does not read them (the copies cost the same).
    CallReport call(BenchSession& session, const ItemRun& r, bool warmup, int n, bool fresh_inputs);

private:
    CallReport& await_result(BenchSession& session, CallReport& rep, const char* want, double timeout);
    CallReport& runner_gone(BenchSession& session, CallReport& rep);

    GpuContext& ctx_;
    Precision precision_;
    double timeout_;
    const ShapeOperands<T>& operands_;
    std::mt19937_64 secret_;  // the sample positions: drawn in the judge, never sent anywhere
    DeviceBuffer<uint64_t> stamps_{2};
    // The sample's two counts (CallReport): poisoned, unanswered.
    static constexpr int kPoisonedCount = 0, kUnansweredCount = 1, kSampleCounts = 2;
    DeviceBuffer<unsigned> sample_counts_{kSampleCounts};
    DeviceBuffer<unsigned char> flush_;
    int flush_value_ = 0;
};

extern template class TimedInterval<float>;
extern template class TimedInterval<double>;

}  // namespace gemmlab
