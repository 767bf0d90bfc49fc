// runner_launch.cpp — where the runner binaries are (runner_launch.h).
#include "judge/runner_launch.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "common/binary_names.h"
#include "common/report_channel.h"

namespace gemmlab {

std::string runner_executable(RunnerKind kind) {
    const std::string self = self_executable();
    const char* name = kind == RunnerKind::submission ? kStageRunnerName : kBaselineRunnerName;
    const std::string path = self.substr(0, self.find_last_of('/') + 1) + name;
    if (access(path.c_str(), X_OK) != 0)
        throw std::runtime_error("cannot run " + path + " (" + strerror(errno) + "): it is built beside " + self +
                                 " by the same make target; rebuild with `make grader`");
    return path;
}

std::vector<std::string> serve_arguments(RunnerKind kind, const std::vector<std::string>& stages) {
    std::vector<std::string> args{"serve"};
    if (kind == RunnerKind::submission)
        for (const std::string& stage : stages) args.insert(args.end(), {"--stage", stage});
    return args;
}

SandboxOptions runner_sandbox(RunnerKind kind, const std::vector<std::string>& stages) {
    SandboxOptions o;
    o.gemm_libraries = kind == RunnerKind::baselines;
    if (kind == RunnerKind::submission) {
        const std::string self = self_executable();
        for (const std::string& stage : stages)
            o.readable_files.push_back(self.substr(0, self.find_last_of('/') + 1) + submission_library_name(stage));
    }
    return o;
}

std::string await_event(ChildProcess& runner, const char* want, double seconds, bool* timed_out) {
    for (;;) {
        const auto ev = runner.receive(seconds, timed_out);
        if (!ev) return *timed_out ? "it said nothing for " + std::to_string(int(seconds)) + " s" : "it ended";
        if ((*ev)["event"] == want) return "";
        if ((*ev)["event"] == "fatal") return ev->value("error", "it stopped");
    }
}

}  // namespace gemmlab
