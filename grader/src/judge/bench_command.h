// bench_command.h — the benchmark of the stages that passed their check (time_checked_stages: plans,
// the judge's engine, ratios, the results' rows), which `gemmlab bench` (student-facing: quick check,
// then GFLOPS of every implemented stage next to naive and cuBLAS) and `gemmlab grade` share.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/bench_plan.h"
#include "judge/check_command.h"
#include "judge/config.h"
#include "judge/bench_engine.h"
#include "judge/gpu_context.h"

namespace gemmlab {

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
int run_bench_command(GpuContext& ctx, const BenchCommandOptions& opt);

// What to time: every checked result that passed, in each precision, next to naive and cuBLAS (and the
// reference's own runs, when given).
struct TimedStagesRequest {
    std::vector<Precision> precisions;
    std::vector<Shape> shapes;
    std::map<Precision, std::vector<Shape>> shapes_for;  // a precision's own shapes, where given
    BenchConfig config;
    uint64_t seed = 0;
    bool progress = false;
    nlohmann::json checked = nlohmann::json::array();  // the check's results
    std::vector<StageRun> reference_runs;              // reference stages to time too
};
struct TimedStages {
    std::map<Precision, BenchOutcome> outcomes;
    nlohmann::json results = nlohmann::json::array();    // every checked result, with its bench[]
    nlohmann::json reference = nlohmann::json::array();  // the reference's runs, with their bench[]
    nlohmann::json baselines = nlohmann::json::object(), devices = nlohmann::json::object();
    std::vector<std::string> notes;                      // restarts of runners, and why
};
TimedStages time_checked_stages(GpuContext& ctx, const TimedStagesRequest& req);

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
