// call_time.cpp — the timing rule of one call (call_time.h).
#include "common/call_time.h"

#include <algorithm>

#include "common/stats.h"

namespace gemmlab {

double call_time_ms(double interval_ms, double calibration) { return std::max(0.0, interval_ms - calibration); }

double calibration_ms(const std::vector<double>& launch_intervals_ms) { return interquartile_mean(launch_intervals_ms); }

bool escaped_stream(double time_ms, double event_ms) {
    return event_ms > 0 && time_ms > std::max(kEscapeFactor * event_ms, event_ms + kEscapeMinMs);
}

}  // namespace gemmlab
