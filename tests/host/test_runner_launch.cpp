// Tests of runner_launch.h: how the judge starts a runner of submission code — for which stages, and with
// which of the build's libraries readable (one per stage, runner/submission_library.h).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "common/report_channel.h"
#include "judge/runner_launch.h"

using namespace gemmlab;

namespace {

std::string beside_me(const std::string& name) {
    const std::string self = self_executable();
    return self.substr(0, self.find_last_of('/') + 1) + name;
}

}  // namespace

TEST_CASE("a runner of submission code is started for its stage and can read that stage's library only") {
    const std::vector<std::string> reuse{"reuse"};
    CHECK(serve_arguments(RunnerKind::submission, reuse) == std::vector<std::string>{"serve", "--stage", "reuse"});
    const SandboxOptions o = runner_sandbox(RunnerKind::submission, reuse);
    CHECK(o.readable_files == std::vector<std::string>{beside_me("libgemmlab-submission-reuse.so")});
    CHECK_FALSE(o.gemm_libraries);
}

TEST_CASE("the stub probe's runner may open every stage it asks, one library each") {
    const std::vector<std::string> stages{"naive", "tensor"};
    CHECK(serve_arguments(RunnerKind::submission, stages) ==
          std::vector<std::string>{"serve", "--stage", "naive", "--stage", "tensor"});
    CHECK(runner_sandbox(RunnerKind::submission, stages).readable_files ==
          std::vector<std::string>{beside_me("libgemmlab-submission-naive.so"), beside_me("libgemmlab-submission-tensor.so")});
}

TEST_CASE("the grader's own runner names no stage and reads no submission library") {
    CHECK(serve_arguments(RunnerKind::baselines, {"naive"}) == std::vector<std::string>{"serve"});
    const SandboxOptions o = runner_sandbox(RunnerKind::baselines, {"naive"});
    CHECK(o.readable_files.empty());
    CHECK(o.gemm_libraries);
}
