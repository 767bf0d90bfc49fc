// The GPU unit tests' main (doctest). Every GPU test is declared with GPU_TEST_CASE, which skips
// it — visibly, counted in the summary — when this machine has no usable GPU. Before the tests, the
// runners' sandbox is chosen as `gemmlab` chooses it (judge/sandbox_probe.h).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "common/cuda_check.h"
#include "common/protocol.h"
#include "gpu_test.h"
#include "judge/runner_launch.h"
#include "judge/sandbox_probe.h"

int main(int argc, char** argv) {
    if (!gemmlab::testing::no_gpu()) {
        gemmlab::GpuContext ctx(1);
        gemmlab::ExportedBuffer flags(gemmlab::protocol::kExportGranularity);
        CUDA_CHECK(cudaMemset(flags.get(), 0, sizeof(unsigned)));
        const gemmlab::SandboxChoice sb =
            gemmlab::choose_sandbox(gemmlab::runner_executable(gemmlab::RunnerKind::submission), flags.handle_hex());
        std::printf("runner sandbox: %s%s%s\n", sb.choice.c_str(), sb.judge_problem.empty() ? "" : "; the judge: ",
                    sb.judge_problem.c_str());
    }
    doctest::Context context(argc, argv);
    return context.run();
}
