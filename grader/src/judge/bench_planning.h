// bench_planning.h — what a benchmark times and what its items are compared with: the plans of
// [bench] in course.toml, the baselines beside every stage (naive, cuBLAS, and cuBLAS in TF32 and FP16
// beside a stage that may use the tensor cores), the ratios to them, and the shapes a grade times.
// The pipeline's bench step (pipeline.h) plans with it; the engine (bench_engine.h) times the plans.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/bench_plan.h"
#include "common/peak.h"
#include "judge/bench_engine.h"
#include "judge/config.h"

namespace gemmlab {

// The plan settings of [bench] in course.toml.
BenchPlan plan_from_config(const BenchConfig& cfg, Precision p, std::vector<Shape> shapes, uint64_t seed);

// The baselines item of the reference side (naive) and the index of an item in a plan (-1: none).
BenchItem baseline_item();
int item_index(const BenchPlan& plan, const BenchItem& item);

// Appends cuBLAS in TF32 and in FP16 (bench_plan.h) to a float plan that times a stage that may use
// the tensor cores (gemmlab/stages.h tensor_cores); call it after the stage items.
void add_tensor_core_baselines(BenchPlan& plan);

// The cuBLAS item a plan's item is compared with: cuBLAS in the input precision its variant declares
// when the plan has it, else the true-FP32/FP64 one.
BenchItem same_precision_cublas(const BenchPlan& plan, const BenchItem& item);

// Fills x_naive, pct_cublas (to cuBLAS in the item's own input precision: same_precision_cublas),
// pct_cublas_fp32 (to `cublas`, the true-FP32/FP64 one) and cublas_item of every timing from the
// baselines of its shape.
void attach_ratios(BenchOutcome& out, const BenchItem& naive, const BenchItem& cublas);

// [scoring] shapes, as course.toml lists them.
std::vector<Shape> scoring_shapes(const CourseConfig& cfg);

// The shapes a grade times in each precision: [scoring] shapes fitted to the GPU's peak in it
// ([scoring] max_call_ms_at_peak, score.h shapes_for_gpu).
struct GradedShapes {
    std::map<Precision, std::vector<ScoringShape>> shapes;
    nlohmann::json used = nlohmann::json::object();  // results-schema targets.shapes: per precision, shapes and why
    std::vector<std::string> notes;                  // "<precision>: <why>" for each precision whose shapes were fitted
};
GradedShapes graded_shapes(const ScoringConfig& cfg, const GpuShape& gpu);

}  // namespace gemmlab
