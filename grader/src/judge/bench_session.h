// bench_session.h — a runner as the benchmark engine holds it (bench_engine.cpp): its process, the flag
// words the judge shares with it (go, done), and the requests that start, map and end it.
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

}  // namespace gemmlab
