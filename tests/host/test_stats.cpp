// Tests of stats.h: quantiles, the spread measure and the stop rule of the timed loop.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/stats.h"

using namespace gemmlab;

TEST_CASE("median and quartiles interpolate between order statistics") {
    CHECK(median({3.0}) == 3.0);
    CHECK(median({1.0, 3.0}) == 2.0);
    CHECK(median({5.0, 1.0, 3.0}) == 3.0);  // order does not matter
    CHECK(quantile({1, 2, 3, 4, 5}, 0.25) == doctest::Approx(2.0));
    CHECK(quantile({1, 2, 3, 4}, 0.75) == doctest::Approx(3.25));
    CHECK(quantile({1, 2, 3, 4}, 0.0) == 1.0);
    CHECK(quantile({1, 2, 3, 4}, 1.0) == 4.0);
    CHECK(std::isnan(median({})));
}

TEST_CASE("the interquartile mean: the median up to 6 calls, then the mean of the middle half") {
    CHECK(interquartile_mean({3.0}) == 3.0);
    CHECK(interquartile_mean({1.0, 3.0}) == 2.0);
    CHECK(interquartile_mean({50.0, 1.0, 3.0}) == 3.0);        // one outlier of three: the median
    CHECK(interquartile_mean({1, 2, 3, 100, 5, 6}) == 4.0);     // (3 + 5) / 2, as the median
    CHECK(interquartile_mean({1, 2, 3, 4, 5, 6, 7, 8}) == 4.5);  // 3..6
    CHECK(interquartile_mean({9, 1, 2, 3, 4, 5, 6, 7, 8}) == 5.0);  // drops 3 from each end: 4, 5, 6
    CHECK(std::isnan(interquartile_mean({})));
    // Two groups of calls of about equal size (a kernel that takes 0.60 or 0.62 ms): 51 fast calls
    // of 100 or 49 move the median from one group to the other, the interquartile mean by 0.0008.
    const auto calls = [](int fast) {
        std::vector<double> v(100, 0.62);
        for (int i = 0; i < fast; ++i) v[static_cast<size_t>(i) * 97 % 100] = 0.60;  // spread over the run
        return v;
    };
    CHECK(median(calls(51)) == doctest::Approx(0.60));
    CHECK(median(calls(49)) == doctest::Approx(0.62));
    CHECK(interquartile_mean(calls(51)) == doctest::Approx(0.6096));  // 26 fast of the middle 50
    CHECK(interquartile_mean(calls(49)) == doctest::Approx(0.6104));
    const Summary s = summarize({1, 2, 3, 4, 5, 6, 7, 80});
    CHECK(s.iqm == doctest::Approx(4.5));
}

TEST_CASE("spread is IQR over median, in percent, and shrugs off one outlier") {
    const Summary s = summarize({10.0, 10.1, 9.9, 10.0, 10.0});
    CHECK(s.count == 5);
    CHECK(s.median == doctest::Approx(10.0));
    CHECK(s.min == doctest::Approx(9.9));
    CHECK(s.max == doctest::Approx(10.1));
    CHECK(s.spread_pct == doctest::Approx(0.0));  // q1 = q3 = 10
    const Summary noisy = summarize({10, 10, 10, 10, 10, 10, 10, 50});  // one OS hiccup
    CHECK(noisy.median == doctest::Approx(10.0));
    CHECK(noisy.spread_pct == doctest::Approx(0.0));
    const Summary wide = summarize({8, 9, 10, 11, 12});
    CHECK(wide.spread_pct == doctest::Approx(20.0));  // (11 - 9) / 10
    CHECK(summarize({7.0}).spread_pct == 0.0);
}

TEST_CASE("the stop rule: converged, budget (never below 3 calls), max repetitions") {
    StopRule rule;
    rule.min_repetitions = 5;
    rule.max_repetitions = 20;
    rule.target_spread_pct = 2.0;
    rule.budget_seconds = 1.0;
    const std::vector<double> steady{1.0, 1.0, 1.001, 0.999, 1.0};
    CHECK(should_stop({1.0, 1.0, 1.0, 1.0}, 0.1, rule) == StopReason::keep_going);  // below min reps
    CHECK(should_stop(steady, 0.1, rule) == StopReason::converged);
    const std::vector<double> noisy{1.0, 1.3, 0.8, 1.2, 0.9};
    CHECK(should_stop(noisy, 0.1, rule) == StopReason::keep_going);
    CHECK(should_stop(noisy, 1.5, rule) == StopReason::budget);
    // Out of budget after 2 calls: still a third one, so the median means something.
    CHECK(should_stop({1.0, 2.0}, 10.0, rule) == StopReason::keep_going);
    CHECK(should_stop({1.0, 2.0, 3.0}, 10.0, rule) == StopReason::budget);
    std::vector<double> many(20);
    for (size_t i = 0; i < many.size(); ++i) many[i] = 1.0 + 0.1 * static_cast<double>(i % 3);
    CHECK(should_stop(many, 0.1, rule) == StopReason::max_repetitions);
    CHECK(std::string(stop_reason_name(StopReason::converged)) == "converged");
    // Short calls: converged only once the timed calls add up to min_timed_ms.
    rule.min_timed_ms = 10.0;
    CHECK(should_stop(steady, 0.1, rule) == StopReason::keep_going);  // 5 ms so far
    const std::vector<double> ten(10, 1.0);
    CHECK(should_stop(ten, 0.1, rule) == StopReason::converged);
    CHECK(should_stop(steady, 1.5, rule) == StopReason::budget);  // the budget still ends it
    // Intervals of two calls each: the same five samples hold 10 ms of calls.
    CHECK(should_stop(steady, 0.1, rule, 2) == StopReason::converged);
}
