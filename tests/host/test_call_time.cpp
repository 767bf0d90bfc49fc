// Tests of call_time.h: how one timed call's clocks become its time.
#include <doctest/doctest.h>

#include <string>

#include "common/call_time.h"

using namespace gemmlab;

namespace {
const LaunchCosts kLaunch{0.012, 0.009};  // 12 µs of host overhead, 9 µs from event to an empty kernel's end
}  // namespace

TEST_CASE("an honest call is its GPU record plus one launch, whatever the host's jitter") {
    // alone: the events saw 0.1396 ms, the wall clock 0.1418; the GPU was busy 0.1278 ms
    const CallTime alone = stage_call_time({0.1396, 0.1418, 0.1278, true}, kLaunch);
    // beside another grading job: the host part grew by 4 µs (events) and 9 µs (wall), the GPU's did not
    const CallTime busy = stage_call_time({0.1432, 0.1491, 0.1280, true}, kLaunch);
    CHECK(alone.by == TimedBy::gpu_record);
    CHECK(busy.by == TimedBy::gpu_record);
    CHECK(alone.ms == doctest::Approx(0.1278 + 0.009));
    CHECK(busy.ms / alone.ms == doctest::Approx(1.0).epsilon(0.002));
}

TEST_CASE("host-side work beyond the jitter allowance counts: events, then the wall clock") {
    // 1 ms on the host before the kernel is launched: the events start before it
    const CallTime events = stage_call_time({1.128, 1.130, 0.120, true}, kLaunch);
    CHECK(events.by == TimedBy::events);
    CHECK(events.ms == doctest::Approx(1.128 - host_allowance_ms(0.120)));
    // the same after the event that ends the call (only the wall clock sees it)
    const CallTime wall = stage_call_time({0.128, 1.142, 0.120, true}, kLaunch);
    CHECK(wall.by == TimedBy::wall_clock);
    CHECK(wall.ms == doctest::Approx(1.142 - kLaunch.wall_overhead_ms - host_allowance_ms(0.120)));
    // within the allowance: the GPU record still sets it
    CHECK(stage_call_time({0.120 + 0.009 + 0.015, 0.150, 0.120, true}, kLaunch).by == TimedBy::gpu_record);
}

TEST_CASE("a long honest call is its GPU record although its events and wall clock drift from it") {
    // tiled double at 4096^3 on an H100: the events 26 µs and the wall clock (less its overhead)
    // 42 µs above the busy span, in proportion to the 38.9 ms call
    const CallTime t = stage_call_time({38.8950, 38.8694 + 0.012 + 0.042, 38.8694, true}, kLaunch);
    CHECK(t.by == TimedBy::gpu_record);
    CHECK(t.ms == doctest::Approx(38.8694 + 0.009));
    CHECK(host_allowance_ms(38.8694) == doctest::Approx(0.02 + 0.0777388));
    // ... but 1 ms of host-side work in a call that long still counts
    const CallTime host = stage_call_time({39.895, 39.930, 38.8694, true}, kLaunch);
    CHECK(host.by == TimedBy::wall_clock);
    CHECK(host.ms == doctest::Approx(39.930 - kLaunch.wall_overhead_ms - host_allowance_ms(38.8694)));
    CHECK(host.ms > 38.8694 + 0.9);
}

TEST_CASE("work on another stream is timed by the GPU record, not by the events that missed it") {
    const CallTime t = stage_call_time({0.010, 0.520, 0.500, true}, kLaunch);
    CHECK(t.by == TimedBy::gpu_record);
    CHECK(t.ms == doctest::Approx(0.509));
    CHECK(escaped_stream(t.ms, 0.010));
    CHECK_FALSE(escaped_stream(0.509, 0.500));
}

TEST_CASE("without the GPU's record: the larger of the events and the wall clock less its overhead") {
    CHECK(stage_call_time({0.300, 0.305, 0, false}, kLaunch).ms == doctest::Approx(0.300));
    CHECK(stage_call_time({0.300, 0.305, 0, false}, kLaunch).by == TimedBy::events);
    const CallTime side = stage_call_time({0.010, 0.520, 0, false}, kLaunch);
    CHECK(side.by == TimedBy::wall_clock);
    CHECK(side.ms == doctest::Approx(0.508));
    // no activity recorded (a stage that launched nothing): nothing to anchor on either
    CHECK(stage_call_time({0.004, 0.016, 0, false}, kLaunch).ms == doctest::Approx(0.004));
}

TEST_CASE("cuBLAS is its kernels plus one launch; its host-side work before the kernel never counts") {
    const CallTime t = library_call_time({0.412, 0.420, 0.341, true}, kLaunch);
    CHECK(t.by == TimedBy::gpu_record);
    CHECK(t.ms == doctest::Approx(0.350));
    CHECK(library_call_time({0.412, 0.420, 0, false}, kLaunch).ms == doctest::Approx(0.412));
}

TEST_CASE("the clocks' names, as results.json spells them") {
    CHECK(std::string(timed_by_name(TimedBy::gpu_record)) == "GPU record");
    CHECK(std::string(timed_by_name(TimedBy::events)) == "events");
    CHECK(std::string(timed_by_name(TimedBy::wall_clock)) == "wall clock");
}
