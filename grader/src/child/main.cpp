// main.cpp — `gemmlab-stages`, the binary that holds the submission (loaded from its shared library,
// child/submission_library.h) and runs its stages. The parent, `gemmlab`, starts it in sandboxed
// child processes (parent/isolation.h, parent/sandbox.h) with one of the internal subcommands below;
// people run it only through `make sanitize` or `gemmlab run`.
//
//   gemmlab-stages run --stage S --prec P [--shape MxNxK]   one case in this process
//   gemmlab-stages child-check | child-bench | child-probe   what the parent's children do
//
// Every child reads its report key (common/report_channel.h) before anything of the submission is
// loaded: the submission's library is opened on the first use of its registry, after that.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "child/bench.h"
#include "child/check_stage.h"
#include "child/gpu_context.h"
#include "common/gpu_probe.h"
#include "common/report_channel.h"
#include "common/shapes.h"
#include "common/sides.h"

using namespace gemmlab;
using nlohmann::json;

namespace {

uint64_t fresh_seed() {
    std::random_device rd;
    return (uint64_t(rd()) << 32 | rd()) % 1000000000ull;  // short enough to type back
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"GEMM Lab stage runner: runs a submission's stages for the gemmlab grader"};
    app.require_subcommand(1);

    // run (single case, in process)
    auto* run = app.add_subcommand("run", "run one case in this process (for compute-sanitizer, debuggers)");
    std::string run_stage, run_prec = "float", run_shape;
    Shape single = sanitize_shape();
    uint64_t seed = 0;
    bool no_color = false;
    run->add_option("--stage", run_stage, "stage or stage/variant")->required();
    run->add_option("--prec", run_prec, "float or double");
    run->add_option("--shape", run_shape, "MxNxK[:lda,ldb,ldc] (default: a small odd shape)");
    run->add_option("--alpha", single.alpha, "alpha");
    run->add_option("--beta", single.beta, "beta (0: C starts as NaN)");
    run->add_option("--seed", seed, "seed of the random data");
    run->add_flag("--no-color", no_color, "plain output");

    // child-check: one stage run, case by case
    auto* child = app.add_subcommand("child-check", "one stage run in a child process");
    std::string side_arg = "submission", stage_arg, variant_arg, prec_arg;
    bool full = false;
    int report_fd = -1, report_key_fd = -1;  // the report pipe and the pipe of its key
    child->add_option("--side", side_arg);
    child->add_option("--stage", stage_arg)->required();
    child->add_option("--variant", variant_arg);
    child->add_option("--prec", prec_arg)->required();
    child->add_option("--seed", seed);
    child->add_flag("--full", full);
    child->add_option("--report-fd", report_fd)->required();
    child->add_option("--report-key-fd", report_key_fd);

    // child-probe: can CUDA start under the sandbox? (parent/sandbox.h, choose_sandbox)
    auto* probe = app.add_subcommand("child-probe", "start CUDA in a sandboxed child");
    probe->add_option("--report-fd", report_fd)->required();
    probe->add_option("--report-key-fd", report_key_fd);

    // child-bench: the timed loop of a benchmark plan
    auto* bench = app.add_subcommand("child-bench", "timed loop in a child process");
    std::string plan_arg;
    bench->add_option("--plan", plan_arg)->required();
    bench->add_option("--report-fd", report_fd)->required();
    bench->add_option("--report-key-fd", report_key_fd);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }

    try {
        if (*bench) {
            const ReportChannel report(report_fd, report_key_fd);
            const json plan = json::parse(plan_arg, nullptr, false);
            if (plan.is_discarded()) {
                report.send({{"event", "fatal"}, {"error", "child-bench: --plan is not JSON"}});
                return 2;
            }
            return child_bench(bench_plan_from_json(plan), report);
        }
        if (*probe) return child_probe(ReportChannel(report_fd, report_key_fd));
        if (*child) {
            const ReportChannel report(report_fd, report_key_fd);
            auto prec = parse_precision(prec_arg);
            const Side side = side_arg == "reference" ? Side::reference : Side::submission;
            return child_check(side, stage_arg, variant_arg, prec.value_or(Precision::f32), !full, seed, report);
        }
        if (*run) {
            std::string why;
            if (!gpu_available(&why)) {
                std::cerr << "gemmlab-stages run: no usable NVIDIA GPU on this machine (" << why << ")\n";
                return 3;
            }
            if (!run_shape.empty()) {
                std::string err;
                auto s = parse_shape(run_shape, &err);
                if (!s) throw std::invalid_argument(err);
                s->alpha = single.alpha, s->beta = single.beta;
                single = *s;
            }
            auto prec = parse_precision(run_prec);
            if (!prec) throw std::invalid_argument("unknown precision '" + run_prec + "': use float or double");
            const auto slash = run_stage.find('/');
            const std::string name = run_stage.substr(0, slash);
            std::string variant = slash == std::string::npos ? "" : run_stage.substr(slash + 1);
            if (variant.empty())
                if (const StageInfo* st = find_stage(Side::submission, name); st && st->variants.size() > 1)
                    variant = st->variants.front().label;
            return run_single(Side::submission, name, variant, *prec, single, seed ? seed : fresh_seed(),
                              isatty(1) && !no_color && !std::getenv("NO_COLOR"));
        }
    } catch (const std::invalid_argument& e) {
        std::cerr << "gemmlab-stages: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "gemmlab-stages: error: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
