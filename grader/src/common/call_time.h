// call_time.h — how the judge's clock of one timed call becomes its time (docs/timing.md, "One timed
// call"). Host-only, so the rule is tested in CI (tests/host/test_call_time.cpp); the judge's
// benchmark (judge/bench_engine.cpp) applies it to every call.
//
// The judge reads the GPU's %globaltimer from its own CUDA context twice per timed interval (one call,
// or several of one item when a call is short): before the calls' inputs exist in any memory the
// runner can see, and after the runner's done word arrived and a secret sample of C was found
// written. Between the two stamps the GPU also does the judge's own work (copying the inputs in,
// poisoning C, flushing L2, the sample check) and switches between the two contexts twice. The same
// interval around the grader's own kernel that writes C — run by a runner of the grader's own on the
// same operands, with as many calls — less what that kernel's own events measured, is all of that:
// the calibration. (A stage writes C too; the switch back to the judge costs a few microseconds more
// after written memory than after none, so an empty kernel would leave those in every call's time.)
#pragma once

#include <vector>

namespace gemmlab {

// An interval's time: the interval less the calibration (never negative). Over its calls: a call's.
double call_time_ms(double interval_ms, double calibration_ms);

// The calibration of one shape and number of calls per interval: the interquartile mean of the
// `launch` intervals less their own events (the grader's runner: its events can be believed). NaN
// when there are none.
double calibration_ms(const std::vector<double>& launch_intervals_ms, const std::vector<double>& launch_events_ms);

// ---- how many calls share an interval ----------------------------------------------------------

// At most this many calls share one interval (a power of two), each on operands of its own.
constexpr int kMaxCallsPerInterval = 32;
// The operand sets of one shape take at most this fraction of the GPU's free memory (the FP64
// reference of the verification and the runner's own memory need the rest).
constexpr double kSlotMemoryFraction = 0.4;

// How many calls' operands a shape holds: the least power of two (at most kMaxCallsPerInterval) whose
// calls at the fastest any item could run (`fastest_call_ms`, at the GPU's peak) add up to
// `min_interval_ms`, as far as `slot_bytes` each fit in kSlotMemoryFraction of `free_bytes`; at least 1.
int operand_slots(double fastest_call_ms, double min_interval_ms, double slot_bytes, double free_bytes);

// Calls per interval for an item whose first call took `call_ms` (the shorter of the judge's time and
// the call's own events, when those are known): the least power of two that makes an interval of
// min_interval_ms, within the shape's `slots`.
int calls_per_interval(double call_ms, double min_interval_ms, int slots);

// A call's time exceeds its own events by this much (factor, and at least kEscapeMinMs) when its
// work ran outside the stage's stream, or its events were not what they said.
constexpr double kEscapeFactor = 1.2;
constexpr double kEscapeMinMs = 0.05;
bool escaped_stream(double time_ms, double event_ms);

}  // namespace gemmlab
