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
