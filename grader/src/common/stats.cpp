// stats.cpp — quantiles, summaries and the stop rule of the timed loop (see stats.h).
#include "common/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gemmlab {

double quantile(std::vector<double> samples, double q) {
    if (samples.empty()) return NAN;
    std::sort(samples.begin(), samples.end());
    const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(samples.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, samples.size() - 1);
    const double frac = pos - static_cast<double>(lo);
    return samples[lo] + frac * (samples[hi] - samples[lo]);
}

double median(const std::vector<double>& samples) { return quantile(samples, 0.5); }

double interquartile_mean(std::vector<double> samples) {
    const size_t n = samples.size();
    if (n == 0) return NAN;
    std::sort(samples.begin(), samples.end());
    const size_t drop = std::min((n + 3) / 4, (n - 1) / 2);  // from each end
    const auto first = samples.begin() + static_cast<std::ptrdiff_t>(drop);
    const auto last = samples.end() - static_cast<std::ptrdiff_t>(drop);
    return std::accumulate(first, last, 0.0) / static_cast<double>(last - first);
}

Summary summarize(const std::vector<double>& samples) {
    Summary s;
    s.count = static_cast<int>(samples.size());
    if (samples.empty()) return s;
    s.median = median(samples);
    s.iqm = interquartile_mean(samples);
    s.q1 = quantile(samples, 0.25);
    s.q3 = quantile(samples, 0.75);
    s.min = *std::min_element(samples.begin(), samples.end());
    s.max = *std::max_element(samples.begin(), samples.end());
    s.spread_pct = s.median > 0 ? 100.0 * (s.q3 - s.q1) / s.median : 0.0;
    return s;
}

const char* stop_reason_name(StopReason r) {
    switch (r) {
        case StopReason::converged: return "converged";
        case StopReason::max_repetitions: return "max_repetitions";
        case StopReason::budget: return "budget";
        case StopReason::keep_going: return "";
    }
    return "";
}

StopReason should_stop(const std::vector<double>& samples, double spent_seconds, const StopRule& rule,
                       int calls_per_sample) {
    const int n = static_cast<int>(samples.size());
    if (n >= rule.max_repetitions) return StopReason::max_repetitions;
    if (n >= rule.min_repetitions && summarize(samples).spread_pct <= rule.target_spread_pct &&
        calls_per_sample * std::accumulate(samples.begin(), samples.end(), 0.0) >= rule.min_timed_ms)
        return StopReason::converged;
    if (n >= std::min(kFloorRepetitions, rule.max_repetitions) && spent_seconds >= rule.budget_seconds)
        return StopReason::budget;
    return StopReason::keep_going;
}

}  // namespace gemmlab
