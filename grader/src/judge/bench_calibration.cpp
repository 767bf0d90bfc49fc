// bench_calibration.cpp — the calibration of the judge's clock (bench_calibration.h).
#include "judge/bench_calibration.h"

#include <string>

#include "common/call_time.h"
#include "common/stats.h"
#include "judge/bench_engine.h"

namespace gemmlab {
namespace {

// The calibration: `launch` intervals at each shape and number of calls per interval, after one warm-up.
constexpr int kCalibrationCalls = 16;

}  // namespace

// Every call must write all of C: the GPU's switch back to the judge costs a little more after written
// memory than after none. The grader's own runner runs no submission code: its events can be believed.
void Calibration::calibrate(size_t si, const Shape& shape, int n,
                            const std::function<CallReport(const ItemRun& r, bool warmup)>& interval) {
    const BenchItem launch = BenchItem::launch();
    ItemRun r;
    r.item = &launch;
    r.result.shape = shape;
    r.result.timed_by = "judge";
    r.warmups_left = 1;
    std::vector<double> intervals, events;
    while (intervals.size() < size_t(kCalibrationCalls)) {
        const bool warmup = r.warmups_left > 0;
        const CallReport c = interval(r, warmup);
        if (c.runner_lost || c.result.status != "ok" || !c.error.empty())
            throw JudgeUnavailable("the calibration of the judge's clock failed: " +
                                   (c.why.empty() ? c.result.status + " " + c.error : c.why));
        if (warmup) {
            --r.warmups_left;
            continue;
        }
        intervals.push_back(c.interval_ms);
        events.push_back(c.event_ms);
    }
    const double overhead = calibration_ms(intervals, events);
    per_shape_[si][n] = overhead;
    const Summary sum = summarize(intervals);
    Timing t;
    t.shape = shape;
    t.disposition = Disposition::passed;
    t.timed_by = "judge";
    t.calls_per_interval = n;
    t.judge_ms = interquartile_mean(intervals);
    t.event_ms = interquartile_mean(events);
    t.overhead_ms = t.time_ms = overhead;
    t.spread_pct = sum.spread_pct;
    t.repetitions = sum.count;
    t.min_ms = sum.min, t.max_ms = sum.max;
    records_.push_back(t);
}

nlohmann::json Calibration::to_json(const std::vector<Timing>& records) {
    nlohmann::json calibration = nlohmann::json::array();
    for (const Timing& t : records)
        calibration.push_back({{"shape", t.shape.dims()}, {"calls_per_interval", t.calls_per_interval},
                               {"interval_ms", t.judge_ms}, {"event_ms", t.event_ms}, {"overhead_ms", t.overhead_ms},
                               {"spread_pct", t.spread_pct}, {"intervals", t.repetitions}});
    return calibration;
}

}  // namespace gemmlab
