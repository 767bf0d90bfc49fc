// call_time.cpp — the timing rule of one call (call_time.h).
#include "common/call_time.h"

#include <algorithm>

#include "common/stats.h"

namespace gemmlab {

double call_time_ms(double interval_ms, double calibration) { return std::max(0.0, interval_ms - calibration); }

double calibration_ms(const std::vector<double>& launch_intervals_ms, const std::vector<double>& launch_events_ms) {
    std::vector<double> overhead(launch_intervals_ms.size());
    for (size_t i = 0; i < overhead.size(); ++i)
        overhead[i] = launch_intervals_ms[i] - (i < launch_events_ms.size() ? launch_events_ms[i] : 0.0);
    return interquartile_mean(overhead);
}

int operand_slots(double fastest_call_ms, double min_interval_ms, double slot_bytes, double free_bytes) {
    int want = 1;
    while (want < kMaxCallsPerInterval && want * fastest_call_ms < min_interval_ms) want *= 2;
    int fits = 1;
    while (fits < want && 2.0 * fits * slot_bytes <= kSlotMemoryFraction * free_bytes) fits *= 2;
    return std::min(want, fits);
}

int calls_per_interval(double call_ms, double min_interval_ms, int slots) {
    int n = 1;
    while (n < slots && n * call_ms < min_interval_ms) n *= 2;
    return n;
}

bool escaped_stream(double time_ms, double event_ms) {
    return event_ms > 0 && time_ms > std::max(kEscapeFactor * event_ms, event_ms + kEscapeMinMs);
}

}  // namespace gemmlab
