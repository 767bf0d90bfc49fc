// isolation.h — runs a piece of grading in a child process of the grader binary itself, so a stage
// that faults, hangs, calls exit() or corrupts its CUDA context takes only that child down.
//
// The child reports JSON lines over a pipe it receives as --report-fd; its stdout and stderr go to
// a file (a kernel may print, and nothing it prints is ever parsed). The parent kills the child's
// whole process group when no report arrives within the idle limit or the total limit passes.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/report_channel.h"

namespace gemmlab {

struct ChildLimits {
    double idle_seconds = 60;    // longest silence between two reports
    double total_seconds = 600;  // longest the child may run at all
    size_t output_bytes = 1 << 20;  // the child's stdout+stderr file is capped at this size
};

struct ChildOutcome {
    std::vector<nlohmann::json> events;  // every well-formed report line, in order
    bool finished = false;   // the child sent {"event":"done"}
    int forged_lines = 0;    // lines on the report pipe without the child's key (events: "forged")
    bool timed_out = false;  // killed by the parent (see timeout_reason)
    std::string timeout_reason;
    int exit_code = -1;      // when it exited
    int signal = 0;          // when a signal ended it
    std::string output_tail; // the last lines it printed
    double seconds = 0;
};

// Runs `self_path args... --report-fd N`. on_event sees each report as it arrives (for progress).
ChildOutcome run_isolated(const std::string& self_path, const std::vector<std::string>& args,
                          const ChildLimits& limits,
                          const std::function<void(const nlohmann::json&)>& on_event);

// Words for how a child ended: "killed by signal 11 (Segmentation fault)", "exited with code 0".
std::string describe_end(const ChildOutcome& o);

}  // namespace gemmlab
