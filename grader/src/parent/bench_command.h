// bench_command.h — `gemmlab bench` (student-facing: quick check, then GFLOPS of every
// implemented stage next to naive and cuBLAS) and the engine `gemmlab grade` shares with it:
// running a BenchPlan in child processes, restarting past a stage that crashes or hangs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/bench_plan.h"
#include "parent/check_command.h"
#include "parent/config.h"
#include "parent/isolation.h"

namespace gemmlab {

// Every item timed at every shape of a plan: timings[item][shape].
struct BenchOutcome {
    BenchPlan plan;
    std::vector<std::vector<Timing>> timings;
    nlohmann::json device;              // the child's "device" report (peak, launch overhead, NVML)
    std::vector<std::string> restarts;  // why a child had to be restarted, if one had to
};

struct BenchRunOptions {
    double call_timeout_seconds = 30;  // silence after which a child is killed
    bool progress = false;             // redraw a progress line on the terminal
};

// Runs the plan in child processes; a crash or hang is charged to the item whose call was running,
// which is then dropped, and the others go on from that shape in a fresh child.
BenchOutcome run_bench_plan(const BenchPlan& plan, const BenchRunOptions& opt);

// Fills x_naive, pct_cublas (to cuBLAS in the item's own input precision: same_precision_cublas),
// pct_cublas_fp32 (to `cublas`, the true-FP32/FP64 one) and cublas_item of every timing from the
// baselines of its shape.
void attach_ratios(BenchOutcome& out, const BenchItem& naive, const BenchItem& cublas);

// Appends cuBLAS in TF32 and in FP16 (bench_plan.h) to a float plan that times a stage that may use
// the tensor cores (gemmlab/stages.h tensor_cores); call it after the stage items.
void add_tensor_core_baselines(BenchPlan& plan);

// The cuBLAS item a plan's item is compared with: cuBLAS in the input precision its variant declares
// when the plan has it, else the true-FP32/FP64 one.
BenchItem same_precision_cublas(const BenchPlan& plan, const BenchItem& item);

// The baselines item of the reference side (naive) and the index of an item in a plan (-1: none).
BenchItem baseline_item();
int item_index(const BenchPlan& plan, const BenchItem& item);

// results-schema `baselines` for one precision: per shape, naive_gflops and cublas_gflops (and
// cublas_tf32_gflops, cublas_fp16_gflops when the plan timed them).
nlohmann::json baselines_json(const BenchOutcome& out);

// The plan settings of [bench] in course.toml.
BenchPlan plan_from_config(const BenchConfig& cfg, Precision p, std::vector<Shape> shapes, uint64_t seed);

struct BenchCommandOptions {
    Selection selection;
    std::vector<Shape> shapes;
    BenchConfig config;
    bool with_reference = false;
    uint64_t seed = 0;
    bool color = false;
    bool progress = false;
    std::string json_out;
    nlohmann::json submission;
    std::vector<std::string> config_notes;
};

// Runs `gemmlab bench`; returns the exit status (0 fine, 1 a stage failed while being timed).
int run_bench_command(const BenchCommandOptions& opt);

// A result row of the submission: the check's record plus its timings (results[].bench).
nlohmann::json result_with_bench(nlohmann::json check_result, const std::vector<Timing>& timings);

// environment.clocks of results files: per precision, the NVML readings at the start and the end
// of its timing process ({"float": {"start": ..., "end": ...}, ...}), from the `device` reports.
nlohmann::json clocks_from_devices(const nlohmann::json& devices);

// Formatting shared with grade: "1234.5", "12.3x", "45.6%".
std::string fixed(double v, int decimals);
// "2026-11-21T14:00:00Z": the `created` field of results files.
std::string utc_now();

}  // namespace gemmlab
