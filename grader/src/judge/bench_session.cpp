// bench_session.cpp — starting, mapping and ending the benchmark's runners (bench_session.h).
#include "judge/bench_session.h"

#include "common/cuda_check.h"
#include "common/protocol.h"

namespace gemmlab {

bool map_buffers(BenchSession& s, const NamedBuffers& buffers, bool with_flags, std::string* problem) {
    nlohmann::json list = nlohmann::json::array();
    auto add = [&](const char* name, const ExportedBuffer& b) {
        list.push_back({{"name", name}, {"handle", b.handle_hex()}, {"bytes", b.bytes()}});
    };
    if (with_flags) add("flags", s.flags);
    for (const auto& [name, b] : buffers)
        if (b->get()) add(name, *b);
    if (!s.proc->send({{"op", "map"}, {"buffers", list}})) {
        *problem = "it stopped reading its requests";
        return false;
    }
    bool timed_out = false;
    *problem = await_event(*s.proc, "mapped", kRunnerStartSeconds, &timed_out);
    return problem->empty();
}

std::optional<BenchSession> start_bench_session(RunnerKind kind, const std::string& stage, const NamedBuffers& buffers,
                                                std::string* problem) {
    BenchSession s;
    s.kind = kind;
    s.stage = stage;
    s.flags = ExportedBuffer(protocol::kExportGranularity);
    CUDA_CHECK(cudaMemset(s.flags.get(), 0, s.flags.bytes()));
    const std::vector<std::string> stages = stage.empty() ? std::vector<std::string>{} : std::vector<std::string>{stage};
    s.proc = std::make_unique<ChildProcess>(runner_executable(kind), serve_arguments(kind, stages), ChildLimits{},
                                            runner_sandbox(kind, stages));
    bool timed_out = false;
    std::string why = await_event(*s.proc, "ready", kRunnerStartSeconds, &timed_out);
    if (why.empty() && !map_buffers(s, buffers, true, &why) && why.empty()) why = "it could not map the buffers";
    if (why.empty()) return s;
    const ChildEnd end = s.proc->reap(0, timed_out ? "its start" : "");
    *problem = std::string(kind == RunnerKind::baselines ? "the grader's own runner" : "the submission's runner") +
               " did not start: " + why + " (" + describe_end(end) + ")" +
               (end.output_tail.empty() ? "" : "; it printed: " + end.output_tail);
    return std::nullopt;
}

void end_bench_session(std::optional<BenchSession>& s, const std::string& killed_for) {
    if (!s) return;
    if (killed_for.empty()) {
        s->proc->send({{"op", "exit"}});
        bool t = false;
        while (auto ev = s->proc->receive(kRunnerExitSeconds, &t))
            if ((*ev)["event"] == "done") break;
    }
    s->proc->reap(kRunnerExitSeconds, killed_for);
    s.reset();
}

}  // namespace gemmlab
