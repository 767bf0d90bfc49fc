// call_time.h — how the judge's clock of one timed call becomes its time (docs/timing.md, "One timed
// call"). Host-only, so the rule is tested in CI (tests/host/test_call_time.cpp); the judge's
// benchmark (judge/bench_engine.cu) applies it to every call.
//
// The judge reads the GPU's %globaltimer from its own CUDA context twice per call: before the call's
// inputs exist in any memory the runner can see, and after the runner's done word arrived and a
// secret sample of C was found written. Between the two stamps the GPU also does the judge's own
// work (copying the inputs in, poisoning C, flushing L2, the sample check) and switches between the
// two contexts twice. The same interval around the cheapest possible call — one empty kernel, run by
// a runner of the grader's own on the same operands — measures all of that: the calibration.
#pragma once

#include <vector>

namespace gemmlab {

// A call's time: its interval less the calibration (never negative).
double call_time_ms(double interval_ms, double calibration_ms);

// The calibration of one shape: the interquartile mean of the `launch` item's intervals. NaN when
// there are none.
double calibration_ms(const std::vector<double>& launch_intervals_ms);

// A call's time exceeds its own events by this much (factor, and at least kEscapeMinMs) when its
// work ran outside the stage's stream, or its events were not what they said.
constexpr double kEscapeFactor = 1.2;
constexpr double kEscapeMinMs = 0.05;
bool escaped_stream(double time_ms, double event_ms);

}  // namespace gemmlab
