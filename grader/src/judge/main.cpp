// main.cpp — `gemmlab`, the judge: the grader's command line. It never loads submission code; it opens
// a CUDA context of its own, owns every operand, answer and clock, and runs each stage in a runner
// process (gemmlab-stages for the submission, gemmlab-baselines for the grader's own calls).
//
//   gemmlab list [--json]                         the stage registry
//   gemmlab check [--stage S] [--prec P] [--full] correctness, each stage run in a runner of its own
//   gemmlab run --stage S --prec P --shape MxNxK  one call in gemmlab-stages itself (for compute-sanitizer)
//   gemmlab bench [--stage S] [--prec P] [--shapes L] GFLOPS next to naive and cuBLAS (quick check first)
//   gemmlab grade --config course.toml --out DIR  full check + bench + score: results.json, gradescope.json
//
// main is the table of these commands; each is a function below. check, bench and grade run the steps
// of one pipeline (pipeline.h: check → bench → score), each the steps it needs. The Makefile wraps
// them (make check, make sanitize, ...); `gemmlab --help` lists everything.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <random>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/bound.h"
#include "common/cuda_check.h"
#include "common/gpu_probe.h"
#include "common/protocol.h"
#include "common/shapes.h"
#include "common/sides.h"
#include "judge/bench_command.h"
#include "judge/bench_engine.h"
#include "judge/check_command.h"
#include "judge/config.h"
#include "judge/grade_command.h"
#include "judge/results_io.h"
#include "judge/runner_launch.h"
#include "judge/sandbox_probe.h"

using namespace gemmlab;
using nlohmann::json;

namespace {

// Exit statuses: 0 fine, 1 a stage failed, 2 bad usage, 3 no GPU on this machine, 4 the judge cannot
// work on this machine (no CUDA IPC or stream memory operations between processes).
constexpr int kExitNoGpu = 3;
constexpr int kExitNoJudge = 4;

// What the command line gave, shared by the commands.
struct Args {
    std::string stage, prec, json_out, shapes, config = "course.toml", submission_dir, out_dir = ".", symbols, fingerprint;
    std::string run_prec = "float", run_shape, gpu_for = "check";
    std::string typed;  // the command to run again on a GPU node (typed_command)
    bool full = false, no_color = false, list_json = false, reference = false, no_reference = false;
    uint64_t seed = 0;
    double idle_timeout = 60, max_seconds = 0;
    Shape single = sanitize_shape();
};

bool use_color(const Args& a) { return !a.no_color && !std::getenv("NO_COLOR") && isatty(STDOUT_FILENO); }

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
            // What each precision of the variant multiplies in, the bound it is held to (bound.h), and the
            // oldest architecture it runs on (compute capability × 10; 0: any): older GPUs and builds for an
            // older ARCH leave it `unsupported`.
            const ErrorBound f = error_bound(Precision::f32, v), d = error_bound(Precision::f64, v);
            info.push_back({{"label", v.label},
                            {"inputs", {{"float", f.inputs}, {"double", d.inputs}}},
                            {"error_bound", {{"float", f.threshold}, {"double", d.threshold}}},
                            {"min_arch", {{"float", v.min_arch_f32}, {"double", v.min_arch_f64}}}});
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

// The command a student typed, to run again on a GPU node: the Makefile passes it in GEMMLAB_COMMAND
// (make, its goals and the variables given, in their order: the one source of these hints, see the
// Makefile); run by hand, this program's own command line.
std::string typed_command(int argc, char** argv) {
    if (const char* typed = std::getenv("GEMMLAB_COMMAND"); typed && *typed) return typed;
    std::string line;
    for (int i = 0; i < argc; ++i) {
        const std::string word = argv[i];
        const bool plain = !word.empty() && word.find_first_not_of(
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,/:@%") == std::string::npos;
        std::string quoted = "'";
        for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
        line += (i ? " " : "") + (plain ? word : quoted + "'");
    }
    return line;
}

bool typed_through_make(const Args& a) { return a.typed == "make" || a.typed.rfind("make ", 0) == 0; }

// `why` is gpu_available's: plain words first, CUDA's reason in parentheses (gpu_probe.h). The hint is
// the very command typed, on a GPU node: nothing else does the same job. The line that gets a GPU node
// is the course's (its partition, account, ...): the Makefile hands it over in GEMMLAB_SRUN (make hint);
// run by hand, the judge names make hint instead.
int no_gpu_message(const Args& a, const std::string& what, const std::string& why) {
    const bool make = typed_through_make(a);
    const char* srun = std::getenv("GEMMLAB_SRUN");
    const bool course_line = srun && *srun;
    std::cerr << "gemmlab " << what << ": " << why << ".\n"
              << "  " << (make ? "make " : "gemmlab ") << what
              << " needs an NVIDIA GPU. On the course cluster, run the same command on a GPU node"
              << (course_line ? ":\n" : ", after the srun line `make hint` prints (the course's partition, account, GPUs):\n")
              << "      " << (course_line ? srun : "srun ...") << " " << a.typed << "\n";
    if (make) std::cerr << "  Nothing ran here (exit status 3, which make reports as \"Error 3\").\n";
    return kExitNoGpu;
}

// Whether this machine has a usable GPU, before a tool that needs one starts (make sanitize asks
// before it looks for compute-sanitizer, make report before it measures): exit 0 quietly, or the
// no-GPU message and kExitNoGpu.
int cmd_gpu(const Args& a) {
    std::string why;
    return gpu_available(&why) ? 0 : no_gpu_message(a, a.gpu_for, why);
}

// The judge: its CUDA context, and the sandbox its runners start under (sandbox_probe.h). Null, with
// the exit status in *rc, where it cannot work here — said in words, never worked around.
std::unique_ptr<GpuContext> open_judge(const Args& a, const std::string& what, uint64_t seed, int* rc) {
    std::string why;
    if (!gpu_available(&why)) {
        *rc = no_gpu_message(a, what, why);
        return nullptr;
    }
    std::unique_ptr<GpuContext> ctx;
    std::string problem;
    try {
        ctx = std::make_unique<GpuContext>(seed);
        ExportedBuffer flags(protocol::kExportGranularity);
        CUDA_CHECK(cudaMemset(flags.get(), 0, sizeof(unsigned)));
        const SandboxChoice sb = choose_sandbox(runner_executable(RunnerKind::submission), flags.handle_hex());
        if (sb.choice.rfind("on", 0) != 0) std::cout << "note: runner sandbox: " << sb.choice << "\n";
        unsigned word = 0;
        CUDA_CHECK(cudaMemcpy(&word, flags.get(), sizeof word, cudaMemcpyDeviceToHost));
        problem = sb.judge_problem;
        if (problem.empty() && word != kProbeWord)
            problem = "a runner's stream memory operation did not reach the judge's buffer";
    } catch (const CudaError& e) {
        problem = std::string("the judge's own CUDA context did not start: ") + e.what();
    } catch (const std::runtime_error& e) {
        problem = e.what();
    }
    if (!problem.empty()) {
        std::cerr << "gemmlab " << what << ": the judge cannot work on this machine: " << problem << ".\n"
                  << "  The judge keeps inputs, answers and the clock in a CUDA context of its own and needs CUDA IPC\n"
                  << "  and stream memory operations between two processes on one GPU (no MPS, no container that\n"
                  << "  blocks them). Nothing was scored. Run it on a node without MPS, or ask the course staff.\n";
        *rc = kExitNoJudge;
        return nullptr;
    }
    return ctx;
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

CourseConfig load_course(const Args& a) { return load_config(a.config, rubric_keys()); }

// ---- the commands ---------------------------------------------------------------------------------

int cmd_list(const Args& a) {
    if (a.list_json) {
        std::cout << json{{"schema", kResultsSchema}, {"stages", stage_list_json(Side::submission)}}.dump(2) << "\n";
        return 0;
    }
    for (const StageInfo& s : stages(Side::submission)) {
        std::cout << s.name << "\t" << s.title;
        if (s.variants.size() > 1) {
            std::cout << "  [variants:";
            for (const StageVariant& v : s.variants) std::cout << " " << v.label;
            std::cout << "]";
        }
        std::cout << "\n";
    }
    return 0;
}

int cmd_check(const Args& a) {
    CheckCommandOptions opt;
    opt.check.selection = parse_selection(Side::submission, a.stage, a.prec);  // named before the machine is asked
    opt.check.seed = a.seed ? a.seed : fresh_seed();
    int rc = 0;
    const auto ctx = open_judge(a, "check", opt.check.seed, &rc);
    if (!ctx) return rc;
    opt.check.quick = !a.full;
    opt.check.color = use_color(a);
    opt.check.progress = isatty(STDOUT_FILENO);
    opt.check.limits.idle_seconds = a.idle_timeout;
    opt.json_out = a.json_out;
    return run_check_command(*ctx, opt);
}

// One call in gemmlab-stages itself, which holds the submission (for compute-sanitizer and debuggers).
int cmd_run(char** argv, const Args& a) {
    const Selection sel = parse_selection(Side::submission, a.stage, a.run_prec);
    if (sel.precisions.size() != 1) throw std::invalid_argument("gemmlab run takes one precision: float or double");
    if (!a.run_shape.empty()) {
        std::string err;
        if (!parse_shape(a.run_shape, &err)) throw std::invalid_argument(err);
    }
    std::string why;
    if (!gpu_available(&why)) return no_gpu_message(a, "sanitize", why);
    const std::string runner = runner_executable(RunnerKind::submission);
    argv[0] = const_cast<char*>(runner.c_str());
    execv(runner.c_str(), argv);
    throw std::runtime_error("cannot start " + runner + ": " + strerror(errno));
}

int cmd_bench(const Args& a) {
    const CourseConfig cfg = load_course(a);
    BenchCommandOptions opt;
    opt.selection = parse_selection(Side::submission, a.stage, a.prec);
    opt.config = cfg.bench;
    if (a.max_seconds > 0) opt.config.max_seconds = a.max_seconds;
    opt.shapes = cfg.bench.shapes;
    if (!a.shapes.empty()) {
        std::string err;
        opt.shapes = parse_shape_list(a.shapes, &err);
        if (opt.shapes.empty()) throw std::invalid_argument(err);
    }
    opt.seed = a.seed ? a.seed : fresh_seed();
    int rc = 0;
    const auto ctx = open_judge(a, "bench", opt.seed, &rc);
    if (!ctx) return rc;
    opt.with_reference = a.reference;
    opt.color = use_color(a);
    opt.progress = isatty(STDOUT_FILENO);
    opt.json_out = a.json_out;
    opt.submission = submission_json(a.submission_dir);
    opt.config_notes = cfg.notes;
    for (const std::string& n : cfg.notes) std::cout << "note: " << n << "\n";
    return run_bench_command(*ctx, opt);
}

int cmd_grade(const Args& a) {
    const CourseConfig cfg = load_course(a);
    require_rubric(cfg, rubric_keys());
    GradeOptions opt;
    opt.out_dir = a.out_dir;
    opt.seed = a.seed ? a.seed : fresh_seed();
    opt.color = use_color(a);
    opt.progress = isatty(STDOUT_FILENO);
    opt.with_reference = cfg.scoring.measure_reference && !a.no_reference;
    opt.submission = submission_json(a.submission_dir);
    opt.symbols_path = a.symbols;
    if (!a.fingerprint.empty()) add_fingerprint(opt.submission, a.fingerprint);
    std::string why;
    if (!gpu_available(&why)) {
        write_no_gpu_grade(opt, cfg, why);
        return no_gpu_message(a, "grade", why);
    }
    int rc = 0;
    const auto ctx = open_judge(a, "grade", opt.seed, &rc);
    if (!ctx) return rc;
    return run_grade(*ctx, opt, cfg);
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"GEMM Lab grader: checks, benchmarks and scores SGEMM/DGEMM stages"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "gemmlab results schema " + std::string(kResultsSchema));
    Args a;
    a.typed = typed_command(argc, argv);

    auto* list = app.add_subcommand("list", "print the stage registry");
    list->add_flag("--json", a.list_json, "as JSON (what scripts read)");

    auto* check = app.add_subcommand("check", "check stages for correctness against cuBLAS");
    check->add_option("--stage", a.stage, "stage or stage/variant (default: all)");
    check->add_option("--prec", a.prec, "float, double or all (default: all)");
    check->add_flag("--full", a.full, "the full grading shape set (default: the quick set)");
    check->add_option("--seed", a.seed, "seed of the random data and shapes (default: fresh)");
    check->add_option("--json", a.json_out, "write the results as JSON to this file");
    check->add_option("--timeout", a.idle_timeout, "seconds a stage may take for one case")->check(CLI::PositiveNumber);
    check->add_flag("--no-color", a.no_color, "plain output");

    auto* run = app.add_subcommand("run", "one call in gemmlab-stages itself (for compute-sanitizer, debuggers)");
    run->add_option("--stage", a.stage, "stage or stage/variant")->required();
    run->add_option("--prec", a.run_prec, "float or double");
    run->add_option("--shape", a.run_shape, "MxNxK[:lda,ldb,ldc] (default: a small odd shape)");
    run->add_option("--alpha", a.single.alpha, "alpha");
    run->add_option("--beta", a.single.beta, "beta (0: C starts as NaN)");
    run->add_option("--seed", a.seed, "seed of the random data");

    auto* gpu = app.add_subcommand("gpu", "exit 0 where a GPU is usable; else say why not and exit 3");
    gpu->add_option("--for", a.gpu_for, "the make target the message names (default: check)");

    auto* bench = app.add_subcommand("bench", "GFLOPS of every implemented stage next to naive and cuBLAS");
    bench->add_option("--stage", a.stage, "stage or stage/variant (default: all)");
    bench->add_option("--prec", a.prec, "float, double or all (default: all)");
    bench->add_option("--shapes", a.shapes, "comma-separated MxNxK list (default: [bench] shapes of course.toml)");
    bench->add_option("--config", a.config, "course configuration (default: course.toml)");
    bench->add_option("--json", a.json_out, "write the results as JSON to this file");
    bench->add_option("--max-seconds", a.max_seconds, "time budget of each stage at each shape (default: [bench] max_seconds)")
        ->check(CLI::PositiveNumber);
    bench->add_flag("--reference", a.reference, "also time the reference solutions of the selected stages");
    bench->add_option("--seed", a.seed, "seed of the random data (default: fresh)");
    bench->add_option("--submission", a.submission_dir, "the submission directory, recorded in the JSON");
    bench->add_flag("--no-color", a.no_color, "plain output");

    auto* grade = app.add_subcommand("grade", "full check, benchmark and score: results.json and gradescope.json");
    grade->add_option("--config", a.config, "course configuration (default: course.toml)");
    grade->add_option("--out", a.out_dir, "directory for results.json and gradescope.json");
    grade->add_option("--seed", a.seed, "seed of the random data and shapes (default: fresh)");
    grade->add_flag("--no-reference", a.no_reference, "do not time the reference stages");
    grade->add_option("--submission", a.submission_dir, "the submission directory, recorded in results.json");
    grade->add_option("--fingerprint", a.fingerprint,
                      "the submission's fingerprint (grader/scripts/fingerprint.py --json), recorded in results.json");
    grade->add_option("--symbols", a.symbols, "the symbol scan of the build (default: symbols.json beside the grader)");
    grade->add_flag("--no-color", a.no_color, "plain output");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }

    const std::vector<std::pair<CLI::App*, std::function<int()>>> commands = {
        {list, [&] { return cmd_list(a); }},
        {check, [&] { return cmd_check(a); }},
        {run, [&] { return cmd_run(argv, a); }},
        {gpu, [&] { return cmd_gpu(a); }},
        {bench, [&] { return cmd_bench(a); }},
        {grade, [&] { return cmd_grade(a); }},
    };
    try {
        for (const auto& [sub, fn] : commands)
            if (*sub) return fn();
    } catch (const ConfigError& e) {
        std::cerr << e.what() << "\n";
        return 2;
    } catch (const JudgeUnavailable& e) {
        std::cerr << "gemmlab: the judge cannot time calls on this machine: " << e.what() << "\n";
        return kExitNoJudge;
    } catch (const std::invalid_argument& e) {
        std::cerr << "gemmlab: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "gemmlab: error: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
