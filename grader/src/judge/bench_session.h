// bench_session.h — a runner as the benchmark engine holds it (bench_engine.cpp): its process, the flag
// words the judge shares with it (go, done), and the requests that start, map and end it; the runners
// of one run, and one plan's hold on them (RunnerSessions).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "judge/gpu_context.h"
#include "judge/isolation.h"
#include "judge/runner_launch.h"

namespace gemmlab {

struct BenchSession {
    RunnerKind kind = RunnerKind::baselines;
    std::string stage;  // the submission's stage whose library it opens ("" for the grader's own)
    std::unique_ptr<ChildProcess> proc;
    ExportedBuffer flags;
    uint32_t go = 0;  // the last go word sent
};

// The judge's buffers a runner maps by name ("A", "B", "C").
using NamedBuffers = std::vector<std::pair<const char*, const ExportedBuffer*>>;

// Starts a runner (of the submission's `stage`, or the grader's own for ""), maps its flags and
// `buffers`. Nothing, and *problem saying why, when it does not start or map.
std::optional<BenchSession> start_bench_session(RunnerKind kind, const std::string& stage, const NamedBuffers& buffers,
                                                std::string* problem);

// Maps `buffers` (and the flags, the first time) into a runner; false and *problem when it cannot.
bool map_buffers(BenchSession& s, const NamedBuffers& buffers, bool with_flags, std::string* problem);

// Ends a runner: asked to exit, or killed (`killed_for` says why, as ChildProcess::reap).
void end_bench_session(std::optional<BenchSession>& s, const std::string& killed_for = "");

// The runners of one run of several plans (one per precision): the grader's own, and the current
// submission stage's, which serve every plan in turn.
struct Runners {
    std::optional<BenchSession> baselines, submission;
};

// One plan's hold on the run's runners: it starts, maps and ends them with the current shape's
// buffers, lists every runner it starts in `started` (its stage, "" for the grader's own: the plan's
// BenchOutcome::runners), and keeps why the last start or map failed (problem()).
class RunnerSessions {
public:
    RunnerSessions(Runners& runners, std::vector<std::string>& started) : runners_(runners), started_(started) {}

    std::optional<BenchSession>& baselines() { return runners_.baselines; }
    std::optional<BenchSession>& submission() { return runners_.submission; }
    std::optional<BenchSession>& of(RunnerKind kind) { return kind == RunnerKind::baselines ? baselines() : submission(); }

    // A runner: the grader's own (stage ""), or the submission's for one stage, with that stage's library,
    // holding `buffers`. Nothing when it does not start (problem() says why).
    std::optional<BenchSession> start(RunnerKind kind, const NamedBuffers& buffers, const std::string& stage = "") {
        started_.push_back(stage);
        return start_bench_session(kind, stage, buffers, &problem_);
    }
    bool map(BenchSession& s, const NamedBuffers& buffers) { return map_buffers(s, buffers, false, &problem_); }
    void end(std::optional<BenchSession>& s, const std::string& killed_for = "") { end_bench_session(s, killed_for); }
    const std::string& problem() const { return problem_; }

private:
    Runners& runners_;
    std::vector<std::string>& started_;
    std::string problem_;
};

}  // namespace gemmlab
