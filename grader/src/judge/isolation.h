// isolation.h — runner processes: a piece of grading in a process of its own, sandboxed (sandbox.h),
// so a stage that faults, hangs, calls exit() or corrupts its CUDA context takes only that process
// down, and can reach nothing the judge keeps.
//
// A child is started (spawn), talked to (send a JSON line on its stdin; receive its report lines),
// and ended (reap), each a step of its own. Its reports are JSON lines on a pipe given as
// --report-fd, each prefixed with a per-child random key it read (and closed the pipe of) before any
// stage code ran: a line without the key is recorded as forged, never believed. Its stdout and stderr
// go to a file capped in size (a kernel may print, and nothing it prints is ever parsed).
//
// Nothing a child says decides a verdict by itself: the judge checks answers and keeps the clock in
// its own process (docs/ARCHITECTURE.md); a child's reports can only fail or slow its own stage.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/report_channel.h"
#include "judge/sandbox.h"

namespace gemmlab {

struct ChildLimits {
    double idle_seconds = 60;       // longest silence between two reports (run_isolated)
    double total_seconds = 600;     // longest the child may run at all (run_isolated)
    size_t output_bytes = 1 << 20;  // the child's stdout+stderr file is capped at this size
};

// How a child ended, and what it left.
struct ChildEnd {
    bool timed_out = false;  // killed by the judge (see timeout_reason)
    std::string timeout_reason;
    int exit_code = -1;      // when it exited
    int signal = 0;          // when a signal ended it
    std::string output_tail; // the last lines it printed
};

// One running child.
class ChildProcess {
public:
    // Starts `exe args... --report-fd N --report-key-fd M` in a sandbox (sandbox.h). Its stdin is a
    // pipe for send(). Throws std::runtime_error when no process can be started at all.
    ChildProcess(const std::string& exe, const std::vector<std::string>& args, const ChildLimits& limits,
                 const SandboxOptions& sandbox = {});
    ~ChildProcess();  // kills and reaps a child still running
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    pid_t pid() const { return pid_; }
    // The {"event":"sandbox", ...} record of what the child runs under (written by the judge).
    const nlohmann::json& sandbox() const { return sandbox_; }

    // One JSON line to the child's stdin; false when the child no longer reads.
    bool send(const nlohmann::json& message);

    // The next keyed report, waiting at most `seconds`. Nothing when the time ran out (*timed_out)
    // or the report pipe closed (the child ended or closed it). Lines without the key are counted
    // and kept in forged(), in order, never returned.
    std::optional<nlohmann::json> receive(double seconds, bool* timed_out = nullptr);
    int forged_lines() const { return static_cast<int>(forged_.size()); }
    const std::vector<std::string>& forged() const { return forged_; }  // printable samples

    // Whether the child has exited (without waiting).
    bool exited();

    // Ends the child: waits up to `grace_seconds` for it to exit, then kills its process group;
    // removes its scratch directory; returns how it ended. `killed_for` marks a child the judge
    // ended for being too slow (timed_out, with that reason). Idempotent.
    ChildEnd reap(double grace_seconds, const std::string& killed_for = "");

private:
    void kill_group();
    pid_t pid_ = -1;
    int report_fd_ = -1, stdin_fd_ = -1;
    std::string prefix_, pending_, log_path_, scratch_;
    nlohmann::json sandbox_;
    std::vector<std::string> forged_;
    bool reaped_ = false, waited_ = false;
    int status_ = 0;
    ChildEnd end_;
};

// A child that reports on its own until "done": run_isolated starts it, collects its reports with
// the idle and total limits, and reaps it.
struct ChildOutcome {
    std::vector<nlohmann::json> events;  // every keyed report line, in order (and forged ones as events)
    bool finished = false;   // the child sent {"event":"done"}
    int forged_lines = 0;    // lines on the report pipe without the child's key (events: "forged")
    bool timed_out = false;  // killed by the judge (see timeout_reason)
    std::string timeout_reason;
    int exit_code = -1;      // when it exited
    int signal = 0;          // when a signal ended it
    std::string output_tail; // the last lines it printed
    double seconds = 0;
};

ChildOutcome run_isolated(const std::string& exe, const std::vector<std::string>& args, const ChildLimits& limits,
                          const std::function<void(const nlohmann::json&)>& on_event,
                          const SandboxOptions& sandbox = {});

// Words for how a child ended: "killed by signal 11 (Segmentation fault)", "exited with code 0".
std::string describe_end(const ChildEnd& e);
std::string describe_end(const ChildOutcome& o);

}  // namespace gemmlab
