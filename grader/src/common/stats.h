// stats.h — the statistics of repeated timings: median, quartiles, the mean of the middle half,
// relative spread, and the rule that decides when to stop repeating. Host-only, so it is tested in CI (tests/host/test_stats.cpp).
// docs/timing.md explains the choices for students.
#pragma once

#include <vector>

namespace gemmlab {

// Quantile q in [0, 1] of the samples, interpolating linearly between order statistics (the
// "type 7" rule of R and NumPy's default). NaN for no samples.
double quantile(std::vector<double> samples, double q);
double median(const std::vector<double>& samples);

// The mean of the middle half of the samples (the interquartile mean): the ceil(n/4) smallest and
// the ceil(n/4) largest are dropped, keeping at least the middle one or two, so it is the median
// up to 6 samples. Like the median it ignores the odd slow call; unlike the median it does not
// jump from one mode to the other when a kernel's times fall into two groups of about equal size
// (a 2048³ call that takes either 0.60 or 0.62 ms): it moves smoothly with their proportion.
// NaN for no samples.
double interquartile_mean(std::vector<double> samples);

struct Summary {
    int count = 0;
    double median = 0, q1 = 0, q3 = 0, min = 0, max = 0;
    double iqm = 0;  // interquartile_mean: the time a result reports
    // Interquartile range over median, in percent: robust to the odd slow repetition (an OS
    // hiccup, a clock change) that would dominate a standard deviation. 0 for one sample.
    double spread_pct = 0;
};
Summary summarize(const std::vector<double>& samples);

// When a timed loop stops. Every item gets at least `min_repetitions` timed calls, unless its time
// budget runs out first — and even then at least kFloorRepetitions, so a median exists.
struct StopRule {
    int min_repetitions = 5;
    int max_repetitions = 50;
    double target_spread_pct = 2.0;
    double budget_seconds = 2.0;  // of timed calls of this item at this shape
    // Converged also needs this many milliseconds of timed calls in all: a short call's time
    // needs more calls to be as steady as a long one's (0: no such floor).
    double min_timed_ms = 0;
};

// Three repetitions give a median that one outlier cannot move.
constexpr int kFloorRepetitions = 3;

enum class StopReason { keep_going, converged, max_repetitions, budget };
const char* stop_reason_name(StopReason r);  // "converged", "max_repetitions", "budget", ""

// `samples` are the timed intervals so far, each the time of one call (an interval of several calls
// gives their mean); `spent_seconds` the time they (and their set-up) took; `calls_per_sample` how
// many calls each interval held, for min_timed_ms. Repetitions count intervals.
StopReason should_stop(const std::vector<double>& samples, double spent_seconds, const StopRule& rule,
                       int calls_per_sample = 1);

}  // namespace gemmlab
