// main.cpp — the `gemmlab` command line. Linked twice: `gemmlab`, the parent, which plans, starts
// children and scores but holds no submission code (parent_registry.cpp), and `gemmlab-stages`,
// which holds the submission and runs its stages in those children (sides.h).
//
//   gemmlab list [--json]                         the stage registry
//   gemmlab check [--stage S] [--prec P] [--full] correctness, each stage in its own process
//   gemmlab run --stage S --prec P --shape MxNxK  one case in-process (for compute-sanitizer)
//   gemmlab bench [--stage S] [--prec P] [--shapes L] GFLOPS next to naive and cuBLAS (quick check first)
//   gemmlab grade --config course.toml --out DIR  full check + bench + score: results.json, gradescope.json
//
// The Makefile wraps these (make check, make sanitize, ...); `gemmlab --help` lists everything.
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench_command.h"
#include "check_command.h"
#include "config.h"
#include "grade_command.h"
#include "environment.h"
#include "gpu_context.h"
#include "results_io.h"
#include "shapes.h"
#include "sandbox.h"
#include "sides.h"

using namespace gemmlab;
using nlohmann::json;

namespace {

// Exit statuses: 0 fine, 1 a stage failed, 2 bad usage, 3 no GPU on this machine.
constexpr int kExitNoGpu = 3;

bool use_color(bool no_color_flag) {
    if (no_color_flag || std::getenv("NO_COLOR")) return false;
    return isatty(STDOUT_FILENO);
}

uint64_t fresh_seed() {
    std::random_device rd;
    return (uint64_t(rd()) << 32 | rd()) % 1000000000ull;  // short enough to type back
}

json stage_list_json(Side side) {
    json stages = json::array();
    for (const StageInfo& s : gemmlab::stages(side)) {
        json variants = json::array();
        for (const StageVariant& v : s.variants) variants.push_back(v.label);
        stages.push_back({{"name", s.name},
                          {"title", s.title},
                          {"rubric_key", s.rubric_key},
                          {"technique", s.technique},
                          {"operands", s.operands == Operands::pitched ? "pitched" : "dense"},
                          {"baseline", s.baseline},
                          {"variants", variants}});
    }
    return stages;
}

// Before the first child process: the strongest sandbox CUDA starts under on this machine.
void prepare_children() {
    const std::string choice = choose_sandbox(stage_runner_executable());
    if (choice.rfind("on", 0) != 0) std::cout << "note: stage sandbox: " << choice << "\n";
}

int no_gpu_message(const std::string& what) {
    std::string why;
    if (gpu_available(&why)) return 0;
    std::cerr << "gemmlab " << what << ": no usable NVIDIA GPU on this machine (" << why << ").\n"
              << "  On the course cluster, run it on a GPU node:  srun --gres=gpu:1 make " << what << "\n"
              << "  or submit for grading from the login node:     make submit\n";
    return kExitNoGpu;
}

// The rubric keys of the registry: the [scoring.stages.<key>] tables course.toml may have.
std::vector<std::string> rubric_keys() {
    std::vector<std::string> keys;
    for (const StageInfo& s : gemmlab::stages(Side::submission)) keys.push_back(s.rubric_key);
    return keys;
}

// results-schema `submission`: the directory given, else the one the Makefile built this grader
// for (its build directory is named sub-<name>-<checksum>).
json submission_json(const std::string& dir) {
    if (!dir.empty()) {
        const std::string trimmed = dir.back() == '/' ? dir.substr(0, dir.size() - 1) : dir;
        return {{"name", trimmed.substr(trimmed.find_last_of('/') + 1)}, {"path", dir}};
    }
    std::string build = self_executable();
    build = build.substr(0, build.find_last_of('/'));
    const std::string leaf = build.substr(build.find_last_of('/') + 1);
    const std::string prefix = "sub-";
    if (leaf.rfind(prefix, 0) == 0 && leaf.find_last_of('-') > prefix.size())
        return {{"name", leaf.substr(prefix.size(), leaf.find_last_of('-') - prefix.size())}, {"path", ""}};
    return {{"name", "unknown"}, {"path", ""}};
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"GEMM Lab grader: checks, benchmarks and scores SGEMM/DGEMM stages"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "gemmlab results schema " + std::string(kResultsSchema));

    // list
    auto* list = app.add_subcommand("list", "print the stage registry");
    bool list_json = false;
    list->add_flag("--json", list_json, "as JSON (what scripts read)");

    // check
    auto* check = app.add_subcommand("check", "check stages for correctness against cuBLAS");
    std::string stage_arg, prec_arg, json_out;
    bool full = false, no_color = false;
    uint64_t seed = 0;
    double idle_timeout = 60;
    check->add_option("--stage", stage_arg, "stage or stage/variant (default: all)");
    check->add_option("--prec", prec_arg, "float, double or all (default: all)");
    check->add_flag("--full", full, "the full grading shape set (default: the quick set)");
    check->add_option("--seed", seed, "seed of the random data and shapes (default: fresh)");
    check->add_option("--json", json_out, "write the results as JSON to this file");
    check->add_option("--timeout", idle_timeout, "seconds a stage may run without finishing a case")
        ->check(CLI::PositiveNumber);
    check->add_flag("--no-color", no_color, "plain output");

    // run (single case, in process)
    auto* run = app.add_subcommand("run", "run one case in this process (for compute-sanitizer, debuggers)");
    std::string run_stage, run_prec = "float", run_shape;
    Shape single = sanitize_shape();
    run->add_option("--stage", run_stage, "stage or stage/variant")->required();
    run->add_option("--prec", run_prec, "float or double");
    run->add_option("--shape", run_shape, "MxNxK[:lda,ldb,ldc] (default: a small odd shape)");
    run->add_option("--alpha", single.alpha, "alpha");
    run->add_option("--beta", single.beta, "beta (0: C starts as NaN)");
    run->add_option("--seed", seed, "seed of the random data");
    run->add_flag("--no-color", no_color, "plain output");

    // child-check (internal: what `check` runs in each child process)
    auto* child = app.add_subcommand("child-check", "internal: one stage run in a child process");
    child->group("");
    std::string side_arg = "submission", variant_arg;
    int report_fd = -1, report_key_fd = -1;  // the report pipe and the pipe of its key (isolation.h)
    child->add_option("--side", side_arg);
    child->add_option("--stage", stage_arg)->required();
    child->add_option("--variant", variant_arg);
    child->add_option("--prec", prec_arg)->required();
    child->add_option("--seed", seed);
    child->add_flag("--full", full);
    child->add_option("--report-fd", report_fd)->required();
    child->add_option("--report-key-fd", report_key_fd);

    // child-probe (internal: can CUDA start under the sandbox? see choose_sandbox in sandbox.h)
    auto* probe = app.add_subcommand("child-probe", "internal: start CUDA in a sandboxed child");
    probe->group("");
    probe->add_option("--report-fd", report_fd)->required();
    probe->add_option("--report-key-fd", report_key_fd);

    // bench
    auto* bench = app.add_subcommand("bench", "GFLOPS of every implemented stage next to naive and cuBLAS");
    std::string bench_stage, bench_prec, bench_shapes, bench_json, config_path = "course.toml", submission_dir;
    double bench_max_seconds = 0;
    bool bench_reference = false;
    bench->add_option("--stage", bench_stage, "stage or stage/variant (default: all)");
    bench->add_option("--prec", bench_prec, "float, double or all (default: all)");
    bench->add_option("--shapes", bench_shapes, "comma-separated MxNxK list (default: [bench] shapes of course.toml)");
    bench->add_option("--config", config_path, "course configuration (default: course.toml)");
    bench->add_option("--json", bench_json, "write the results as JSON to this file");
    bench->add_option("--max-seconds", bench_max_seconds,
                      "time budget of each stage at each shape (default: [bench] max_seconds)")
        ->check(CLI::PositiveNumber);
    bench->add_flag("--reference", bench_reference, "also time the reference solutions of the selected stages");
    bench->add_option("--seed", seed, "seed of the random data (default: fresh)");
    bench->add_option("--submission", submission_dir, "the submission directory, recorded in the JSON");
    bench->add_flag("--no-color", no_color, "plain output");

    // grade
    auto* grade = app.add_subcommand("grade", "full check, benchmark and score: results.json and gradescope.json");
    std::string grade_out = ".";
    bool grade_no_reference = false;
    grade->add_option("--config", config_path, "course configuration (default: course.toml)");
    grade->add_option("--out", grade_out, "directory for results.json and gradescope.json");
    grade->add_option("--seed", seed, "seed of the random data and shapes (default: fresh)");
    grade->add_flag("--no-reference", grade_no_reference, "do not time the reference stages");
    grade->add_option("--submission", submission_dir, "the submission directory, recorded in results.json");
    std::string grade_symbols;
    grade->add_option("--symbols", grade_symbols, "the symbol scan of the build (default: symbols.json beside the grader)");
    grade->add_flag("--no-color", no_color, "plain output");

    // child-bench (internal: what bench and grade run in each child process)
    auto* child_bench_cmd = app.add_subcommand("child-bench", "internal: timed loop in a child process");
    child_bench_cmd->group("");
    std::string plan_arg;
    child_bench_cmd->add_option("--plan", plan_arg)->required();
    child_bench_cmd->add_option("--report-fd", report_fd)->required();
    child_bench_cmd->add_option("--report-key-fd", report_key_fd);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }

    try {
        if (*list) {
            if (list_json) {
                std::cout << json{{"schema", kResultsSchema}, {"stages", stage_list_json(Side::submission)}}.dump(2)
                          << "\n";
            } else {
                for (const StageInfo& s : stages(Side::submission)) {
                    std::cout << s.name << "\t" << s.title;
                    if (s.variants.size() > 1) {
                        std::cout << "  [variants:";
                        for (const StageVariant& v : s.variants) std::cout << " " << v.label;
                        std::cout << "]";
                    }
                    std::cout << "\n";
                }
            }
            return 0;
        }
        if (*check) {
            if (int rc = no_gpu_message("check")) return rc;
            prepare_children();
            CheckOptions opt;
            opt.selection = parse_selection(Side::submission, stage_arg, prec_arg);
            opt.quick = !full;
            opt.seed = seed ? seed : fresh_seed();
            opt.color = use_color(no_color);
            opt.progress = isatty(STDOUT_FILENO);
            opt.limits.idle_seconds = idle_timeout;
            json out = run_checks(opt);
            out["schema"] = kResultsSchema;
            out["kind"] = "check";
            out["environment"] = describe_environment();
            if (!json_out.empty()) write_json_atomically(json_out, out);
            return exit_status(out["results"]);
        }
        if (*run) {
            if (int rc = no_gpu_message("sanitize")) return rc;
            if (!submission::code_linked()) {  // in-process: the binary that holds the submission
                const std::string runner = stage_runner_executable();
                argv[0] = const_cast<char*>(runner.c_str());
                execv(runner.c_str(), argv);
                throw std::runtime_error("cannot start " + runner + ": " + strerror(errno));
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
                              use_color(no_color));
        }
        if (*bench || *grade) {
            CourseConfig cfg;
            try {
                cfg = load_config(config_path, rubric_keys());
            } catch (const ConfigError& e) {
                std::cerr << e.what() << "\n";
                return 2;
            }
            if (*grade) {
                GradeOptions opt;
                opt.out_dir = grade_out;
                opt.seed = seed ? seed : fresh_seed();
                opt.color = use_color(no_color);
                opt.progress = isatty(STDOUT_FILENO);
                opt.with_reference = cfg.scoring.measure_reference && !grade_no_reference;
                opt.submission = submission_json(submission_dir);
                opt.symbols_path = grade_symbols;
                std::string why;
                if (!gpu_available(&why)) {
                    write_no_gpu_grade(opt, cfg, why);
                    return no_gpu_message("grade");
                }
                prepare_children();
                return run_grade(opt, cfg);
            }
            if (int rc = no_gpu_message("bench")) return rc;
            prepare_children();
            BenchCommandOptions opt;
            opt.selection = parse_selection(Side::submission, bench_stage, bench_prec);
            opt.config = cfg.bench;
            if (bench_max_seconds > 0) opt.config.max_seconds = bench_max_seconds;
            opt.shapes = cfg.bench.shapes;
            if (!bench_shapes.empty()) {
                std::string err;
                opt.shapes = parse_shape_list(bench_shapes, &err);
                if (opt.shapes.empty()) throw std::invalid_argument(err);
            }
            opt.with_reference = bench_reference;
            opt.seed = seed ? seed : fresh_seed();
            opt.color = use_color(no_color);
            opt.progress = isatty(STDOUT_FILENO);
            opt.json_out = bench_json;
            opt.submission = submission_json(submission_dir);
            opt.config_notes = cfg.notes;
            for (const std::string& n : cfg.notes) std::cout << "note: " << n << "\n";
            return run_bench_command(opt);
        }
        if (*child_bench_cmd) {
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
    } catch (const std::invalid_argument& e) {
        std::cerr << "gemmlab: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "gemmlab: error: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
