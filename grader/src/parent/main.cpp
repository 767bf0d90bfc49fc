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

#include "common/bound.h"
#include "parent/bench_command.h"
#include "parent/check_command.h"
#include "parent/config.h"
#include "parent/grade_command.h"
#include "parent/environment.h"
#include "common/gpu_probe.h"
#include "parent/results_io.h"
#include "common/shapes.h"
#include "parent/sandbox.h"
#include "common/sides.h"

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
        json variants = json::array(), info = json::array();
        for (const StageVariant& v : s.variants) {
            variants.push_back(v.label);
            // What each precision of the variant multiplies in, and the bound it is held to (bound.h).
            const ErrorBound f = error_bound(Precision::f32, v), d = error_bound(Precision::f64, v);
            info.push_back({{"label", v.label},
                            {"inputs", {{"float", f.inputs}, {"double", d.inputs}}},
                            {"error_bound", {{"float", f.threshold}, {"double", d.threshold}}}});
        }
        stages.push_back({{"name", s.name},
                          {"title", s.title},
                          {"rubric_key", s.rubric_key},
                          {"technique", s.technique},
                          {"operands", s.operands == Operands::pitched ? "pitched" : "dense"},
                          {"baseline", s.baseline},
                          {"tensor_cores", s.tensor_cores},
                          {"variants", variants},
                          {"variant_info", info}});
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
        // Arguments are checked before the machine: a wrong stage, precision or shape is named even
        // where there is no GPU.
        if (*check) {
            CheckOptions opt;
            opt.selection = parse_selection(Side::submission, stage_arg, prec_arg);
            if (int rc = no_gpu_message("check")) return rc;
            prepare_children();
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
        if (*run) {  // one case in-process: in gemmlab-stages, the binary that holds the submission
            const Selection sel = parse_selection(Side::submission, run_stage, run_prec);
            if (sel.precisions.size() != 1) throw std::invalid_argument("gemmlab run takes one precision: float or double");
            if (!run_shape.empty()) {
                std::string err;
                if (!parse_shape(run_shape, &err)) throw std::invalid_argument(err);
            }
            if (int rc = no_gpu_message("sanitize")) return rc;
            const std::string runner = stage_runner_executable();
            argv[0] = const_cast<char*>(runner.c_str());
            execv(runner.c_str(), argv);
            throw std::runtime_error("cannot start " + runner + ": " + strerror(errno));
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
            if (int rc = no_gpu_message("bench")) return rc;
            prepare_children();
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
    } catch (const std::invalid_argument& e) {
        std::cerr << "gemmlab: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "gemmlab: error: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
