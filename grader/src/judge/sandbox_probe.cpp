// sandbox_probe.cpp — choose_sandbox (sandbox_probe.h).
#include "judge/sandbox_probe.h"

#include <cstdlib>
#include <vector>

#include <nlohmann/json.hpp>

#include "judge/isolation.h"

namespace gemmlab {
namespace {
std::string g_sandbox_choice;
}

SandboxChoice choose_sandbox(const std::string& runner_path, const std::string& flags_handle) {
    SandboxChoice result;
    const char* set = std::getenv("GEMMLAB_SANDBOX");
    const bool user_set = set && *set;
    // Strongest first. A driver or kernel that refuses CUDA under a layer costs that layer only.
    std::vector<std::string> modes = {"on", "no-landlock", "no-seccomp", "off"};
    if (user_set) modes = {set};
    std::string refused;
    for (const std::string& mode : modes) {
        setenv("GEMMLAB_SANDBOX", mode.c_str(), 1);
        ChildLimits limits;
        limits.idle_seconds = kProbeSeconds;
        limits.total_seconds = kProbeSeconds;
        const ChildOutcome out = run_isolated(runner_path, {"probe", "--flags", flags_handle}, limits, nullptr);
        std::string error = "the probe " + describe_end(out), judge_error;
        for (const nlohmann::json& ev : out.events)
            if (ev.value("event", "") == "probe") {
                if (ev.value("ok", false)) error.clear();
                else error = ev.value("error", error);
                judge_error = ev.value("judge_error", "");
            }
        if (out.finished && (error.empty() || !judge_error.empty())) {
            result.choice = mode;
            if (user_set) result.choice += " (set by GEMMLAB_SANDBOX)";
            else if (!refused.empty()) result.choice += " (" + refused + ")";
            result.judge_problem = judge_error;
            g_sandbox_choice = result.choice;
            return result;
        }
        refused += std::string(refused.empty() ? "" : "; ") + "CUDA did not start with sandbox=" + mode + ": " + error;
    }
    result.choice = "off (" + refused + ")";
    result.judge_problem = "no runner could start CUDA here (" + refused + ")";
    g_sandbox_choice = result.choice;
    return result;
}

const std::string& sandbox_choice() { return g_sandbox_choice; }

}  // namespace gemmlab
