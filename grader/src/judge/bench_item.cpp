// bench_item.cpp — what an item's calls come to (bench_item.h).
#include "judge/bench_item.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/peak.h"
#include "common/stats.h"

namespace gemmlab {

nlohmann::json clocks_json(const ClockReading& r) {
    if (!r.valid) return nlohmann::json();
    return {{"sm_clock_mhz", r.sm_clock_mhz},
            {"max_sm_clock_mhz", r.max_sm_clock_mhz},
            {"temperature_c", r.temperature_c},
            {"power_w", r.power_w},
            {"clock_reasons", clock_reason_names(r.reasons)}};
}

void stop_item(ItemRun& r, Disposition d, const std::string& why) {
    r.result.disposition = d;
    r.result.problem = why;
    r.done = true;
}

Timing lost_timing(const Shape& s, Disposition d, const std::string& why) {
    Timing t;
    t.shape = s;
    t.disposition = d;
    t.problem = why;
    return t;
}

void finish_item(ItemRun& r, const std::map<int, double>& calibration, const Shape& shape, Precision precision) {
    Timing& t = r.result;
    t.seconds = r.spent;
    const int n = std::max(r.per_interval, 1);
    t.calls_per_interval = n;
    if (calibration.count(n)) t.overhead_ms = calibration.at(n) / n;
    if (t.disposition == Disposition::skipped && !r.times.empty()) {  // it ran to the end of its repetitions
        const Summary sum = summarize(r.times);
        t.intervals = sum.count;
        t.repetitions = sum.count * n;
        t.time_ms = sum.iqm;
        t.spread_pct = sum.spread_pct;
        t.min_ms = sum.min;
        t.max_ms = sum.max;
        t.judge_ms = interquartile_mean(r.intervals);
        t.event_ms = interquartile_mean(r.events);
        t.gflops = gflops_of(shape, t.time_ms);
        t.disposition = Disposition::passed;
        const bool is_stage = r.item->kind == BenchItem::Kind::stage;
        if (!(t.time_ms > 0) || (is_stage && t.gflops > t.peak_gflops * kPeakTolerance)) {
            std::ostringstream os;
            if (!(t.time_ms > 0))
                os << "its intervals were no longer than the calibration's (the grader's own kernel that writes C, "
                   << t.overhead_ms * n << " ms an interval): the timing cannot be real";
            else
                os << above_peak_problem(precision, r.tensor_cores, t.gflops, t.peak_gflops);
            t.disposition = Disposition::rejected;
            t.problem = os.str();
        }
    }
    if (!r.clocks.empty()) t.sm_clock_mhz = median(r.clocks);
    t.clock_reasons = clock_reason_names(r.reasons);
    t.throttled = is_throttled(r.reasons);
}

}  // namespace gemmlab
