// Tests of the timing rule of one call (common/call_time.h): the judge's interval less the
// calibration, and what the runner's own events are still good for (a diagnostic).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "common/call_time.h"

using namespace gemmlab;

TEST_CASE("a call's time is its interval less the calibration, never negative") {
    // Measured on an H100 (tests/probes/judge_probe.cu): SGEMM at 2048³ between the judge's stamps,
    // 711.4 µs; the same interval around an empty call, 363.5 µs.
    CHECK(call_time_ms(0.7114, 0.3635) == doctest::Approx(0.3479));
    CHECK(call_time_ms(0.3600, 0.3635) == 0.0);  // faster than nothing: a noisy empty call, not negative time
}

TEST_CASE("the calibration is the interquartile mean of the writing calls' intervals less their events: "
          "one slow interval cannot move it") {
    // Measured on an H200 (tests/probes/judge_probe.cu, writeback): 16 MiB of C written in 10.3 µs by
    // its events, between stamps 359.0 µs apart.
    const std::vector<double> steady(15, 0.3590), events(16, 0.0103);
    std::vector<double> with_slice = steady;
    with_slice.push_back(2.4);  // a time slice of another context landed in one call
    CHECK(calibration_ms(steady, events) == doctest::Approx(0.3487));
    CHECK(calibration_ms(with_slice, events) == doctest::Approx(0.3487));
    CHECK(calibration_ms(steady, {}) == doctest::Approx(0.3590));  // no events reported: the whole interval
    CHECK(std::isnan(calibration_ms({}, {})));
}

TEST_CASE("an interval of several calls gives each call its share") {
    // 8 calls of 51 µs in one interval, whose calibration with 8 writing calls is 0.380 ms.
    CHECK(call_time_ms(0.380 + 8 * 0.051, 0.380) / 8 == doctest::Approx(0.051));
}

TEST_CASE("a time well above the call's own events says work ran outside its stream") {
    CHECK_FALSE(escaped_stream(0.350, 0.346));  // an honest call: the judge sees a few µs more
    CHECK(escaped_stream(1.5, 0.2));            // the events saw a fifth of the work
    CHECK_FALSE(escaped_stream(0.06, 0.02));    // short calls: below kEscapeMinMs of difference
    CHECK_FALSE(escaped_stream(1.0, 0.0));      // no events reported: nothing to say
}

TEST_CASE("a shape holds operands for as many calls as the fastest possible call needs, within memory") {
    const double gib = 1024.0 * 1024.0 * 1024.0;
    // 2048³ float at an H100's TF32 peak: about 0.03 ms a call; 2 ms needs 64 of them, capped at 32.
    CHECK(operand_slots(0.03, 2.0, 0.08 * gib, 79 * gib) == kMaxCallsPerInterval);
    // 4096³ double at the FP64 peak: about 2 ms a call: one slot is enough.
    CHECK(operand_slots(2.1, 2.0, 0.64 * gib, 79 * gib) == 1);
    CHECK(operand_slots(0.3, 2.0, 0.08 * gib, 79 * gib) == 8);  // 8 × 0.3 ms ≥ 2 ms
    // A small GPU: 40% of 2 GiB free holds 4 slots of 0.2 GiB (0.8 GiB), not 8.
    CHECK(operand_slots(0.03, 2.0, 0.2 * gib, 2 * gib) == 4);
    // Not even one fits: still one (the shape's memory check refuses what cannot run at all).
    CHECK(operand_slots(0.03, 2.0, 3 * gib, 2 * gib) == 1);
    // A power of two every time.
    for (double ms : {0.001, 0.07, 0.13, 0.5, 0.9, 1.99, 2.0, 5.0}) {
        const int n = operand_slots(ms, 2.0, 1.0, 1e12);
        CHECK((n & (n - 1)) == 0);
        CHECK(n >= 1);
        CHECK(n <= kMaxCallsPerInterval);
    }
}

TEST_CASE("calls per interval: the least power of two that makes the interval, within the shape's slots") {
    CHECK(calls_per_interval(0.057, 2.0, 32) == 32);  // the tensor stage's fp16 at 2048³ on an H200
    CHECK(calls_per_interval(0.16, 2.0, 32) == 16);   // 3xTF32 at 2048³: 16 × 0.16 = 2.6 ms
    CHECK(calls_per_interval(1.1, 2.0, 32) == 2);
    CHECK(calls_per_interval(2.0, 2.0, 32) == 1);     // a call of min_interval_ms has its interval to itself
    CHECK(calls_per_interval(5.0, 2.0, 32) == 1);
    CHECK(calls_per_interval(0.057, 2.0, 4) == 4);    // as many as the shape holds operands for
    CHECK(calls_per_interval(0.0, 2.0, 8) == 8);      // an interval no longer than the calibration
    CHECK(calls_per_interval(0.057, 0.0, 32) == 1);   // min_interval_ms = 0: one call an interval
}
