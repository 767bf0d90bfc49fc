// sandbox_probe.h — which sandbox a runner starts CUDA under on this machine, and whether the judge
// can work here at all. Drivers differ in what they need from the OS; before its first runner the
// judge starts a probe (`gemmlab-stages probe --flags <handle>`: CUDA, one kernel, the judge's flag
// buffer mapped by CUDA IPC and written with a stream memory operation) under the strongest mode
// first (on, no-landlock, no-seccomp, off) and keeps the first one that works, setting
// GEMMLAB_SANDBOX so every later runner gets it. A layer that stops CUDA from starting is dropped,
// and the text (also recorded in results files) says which and why. A GEMMLAB_SANDBOX set by the
// user is kept. A probe that starts CUDA but cannot map the judge's buffer or signal through it means
// the judge cannot keep answers and clocks out of the stage's process here: judge_problem says why.
#pragma once

#include <string>

namespace gemmlab {

constexpr double kProbeSeconds = 60;
// The value the probe writes into the flag word it was given (the judge checks it arrived).
constexpr unsigned kProbeWord = 0x600d;

struct SandboxChoice {
    std::string choice;         // "on", or the weaker mode and why
    std::string judge_problem;  // "" when a runner can map and signal; else why it cannot
};
// flags_handle: the hex IPC handle of a judge buffer whose first word the probe sets to kProbeWord.
SandboxChoice choose_sandbox(const std::string& runner_path, const std::string& flags_handle);
const std::string& sandbox_choice();  // "" until choose_sandbox ran

}  // namespace gemmlab
