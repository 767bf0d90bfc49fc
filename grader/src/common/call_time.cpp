// call_time.cpp — the time of one timed call from its clocks (see call_time.h).
#include "common/call_time.h"

#include <algorithm>

namespace gemmlab {

const char* timed_by_name(TimedBy by) {
    switch (by) {
        case TimedBy::gpu_record: return "GPU record";
        case TimedBy::wall_clock: return "wall clock";
        default: return "events";
    }
}

CallTime stage_call_time(const CallClocks& c, const LaunchCosts& launch) {
    const double wall = c.wall_ms - launch.wall_overhead_ms;
    if (!c.gpu_seen) {
        if (wall > c.event_ms) return {wall, TimedBy::wall_clock};
        return {c.event_ms, TimedBy::events};
    }
    CallTime t{c.gpu_busy_ms + launch.launch_event_ms, TimedBy::gpu_record};
    const double allowance = host_allowance_ms(c.gpu_busy_ms);
    if (c.event_ms - allowance > t.ms) t = {c.event_ms - allowance, TimedBy::events};
    if (wall - allowance > t.ms) t = {wall - allowance, TimedBy::wall_clock};
    return t;
}

CallTime library_call_time(const CallClocks& c, const LaunchCosts& launch) {
    if (c.gpu_seen) return {c.gpu_busy_ms + launch.launch_event_ms, TimedBy::gpu_record};
    return stage_call_time(c, launch);
}

bool escaped_stream(double time_ms, double event_ms) {
    return time_ms > std::max(kEscapeFactor * event_ms, event_ms + kEscapeMinMs);
}

}  // namespace gemmlab
