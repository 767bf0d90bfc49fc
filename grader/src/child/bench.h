// bench.h — the timed loop of the benchmark, run in a child process; common/bench_plan.h says what is
// timed and how, parent/bench_command.cpp starts the children and reads their reports.
#pragma once

#include "common/bench_plan.h"
#include "common/report_channel.h"

namespace gemmlab {

// The child side: times the plan, reporting {"event":"call"|"timing"|"device"|"fatal"|"done"}.
int child_bench(const BenchPlan& plan, const ReportChannel& report);

}  // namespace gemmlab
