// call_time.h — how the clocks of one timed call become its time (docs/timing.md, "One timed call").
// Host-only, so the rule is tested in CI (tests/host/test_call_time.cpp); the benchmark's child
// (child/bench.cu) applies it to every call.
#pragma once

namespace gemmlab {

// What the harness read around one call.
struct CallClocks {
    double event_ms = 0;     // CUDA events on the stage's stream
    double wall_ms = 0;      // the host clock around the call and a device-wide synchronize
    double gpu_busy_ms = 0;  // the GPU's own record: first start to last end of its kernels and copies
    bool gpu_seen = false;   // the record is available and holds at least one activity of the call
};

// What a launch costs, measured once per process on empty kernels.
struct LaunchCosts {
    double wall_overhead_ms = 0;  // host time of event + empty kernel + event + synchronize (median)
    double launch_event_ms = 0;   // event time of the same: the fastest of the tries, the steadiest
                                  // figure between processes (a median moves with the host's load)
};

// Host-side time a call may spend beyond one launch before its events or wall clock count against
// it: the scheduling noise of a busy host (another grading job on the same machine moved the host
// part of a 0.14 ms call by up to 9 µs) — too short for any host-side work to replace a GEMM.
constexpr double kHostJitterMs = 0.02;
// ... plus this share of the GPU's busy span: on long calls the events and the host clock run apart
// from the GPU's record in proportion to the call (measured on an H100: 0.05–0.07% of a 25–39 ms
// call, 18–26 µs of events above the busy span where one launch is 9 µs), which a fixed allowance
// alone would take for host-side work.
constexpr double kClockRateTolerance = 0.002;
// Both together: how far the events or the wall clock may exceed a call's GPU record plus one launch.
inline double host_allowance_ms(double gpu_busy_ms) { return kHostJitterMs + kClockRateTolerance * gpu_busy_ms; }

// A call's time exceeds its own events by this much (factor, and at least kEscapeMinMs) when its
// work ran outside the stage's stream.
constexpr double kEscapeFactor = 1.2;
constexpr double kEscapeMinMs = 0.05;

enum class TimedBy { gpu_record, events, wall_clock };
const char* timed_by_name(TimedBy by);  // "GPU record", "events", "wall clock"

struct CallTime {
    double ms = 0;
    TimedBy by = TimedBy::events;
};

// A stage's call. With the GPU's record of it: the GPU's busy span plus one launch — what no load on
// the host can move — raised by the events or the wall clock (less its launch overhead) where they
// exceed it by more than host_allowance_ms, so host-side work still counts. Without the record: the
// larger of the events and the wall clock less its launch overhead.
CallTime stage_call_time(const CallClocks& c, const LaunchCosts& launch);

// A cuBLAS baseline (the harness's own call): its kernels plus one launch, with the record; like a
// stage without it. Its host-side work before the kernel is not the library's speed.
CallTime library_call_time(const CallClocks& c, const LaunchCosts& launch);

// Whether a result's time shows work its stream's events did not see.
bool escaped_stream(double time_ms, double event_ms);

}  // namespace gemmlab
