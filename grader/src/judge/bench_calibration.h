// bench_calibration.h — the calibration of the judge's clock (docs/timing.md): at each shape and
// number of calls per interval, the interval around that many calls of the grader's own kernel that
// writes all of C (`launch`, in gemmlab-baselines), less what that kernel's own events measured: the
// judge's overhead, which every timed interval of as many calls at that shape has subtracted.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/bench_plan.h"
#include "judge/bench_item.h"

namespace gemmlab {

class Calibration {
public:
    // `records`: where each calibration's Timing goes (BenchOutcome::calibration).
    explicit Calibration(std::vector<Timing>& records) : records_(records) {}

    // Makes room for shape si (a plan's shapes are entered in order; phase 2 enters them again).
    void enter(size_t si) {
        if (per_shape_.size() <= si) per_shape_.resize(si + 1);
    }

    // Calibrates shape si (`shape`, as the plan has it) for intervals of n calls. `interval(r, warmup)`
    // makes one interval of r (`launch`, no fresh inputs: its kernel does not read them) in the grader's
    // own runner: one warm-up, then kCalibrationCalls timed. Throws JudgeUnavailable when one fails.
    void calibrate(size_t si, const Shape& shape, int n,
                   const std::function<CallReport(const ItemRun& r, bool warmup)>& interval);

    // The judge's overhead in an interval of n calls at shape si (ms), and every n calibrated there.
    double overhead(size_t si, int n) const { return per_shape_[si].at(n); }
    const std::map<int, double>& at_shape(size_t si) const { return per_shape_[si]; }

    // results `device.calibration`: one entry per shape and number of calls per interval.
    static nlohmann::json to_json(const std::vector<Timing>& records);

private:
    std::vector<Timing>& records_;
    std::vector<std::map<int, double>> per_shape_;  // per shape: the overhead per interval by calls per interval
};

}  // namespace gemmlab
