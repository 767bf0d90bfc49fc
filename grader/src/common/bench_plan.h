// bench_plan.h — the benchmark: what is timed (items), how (the plan a child process receives), and
// what comes back (one Timing per item and shape). The timed loop itself runs in a child process
// (`gemmlab-stages child-bench`, child/bench.cu), so a stage that crashes or hangs while being timed becomes a
// disposition instead of a dead grader; bench_command.cpp drives the children.
//
// How a stage is timed (docs/timing.md says it for students):
//   - all items of a precision — the student's stages, the reference's naive baseline, cuBLAS and,
//     when asked, the reference's own stages — are timed in one process, round-robin: one call of
//     each per round, so a clock change or a noisy neighbour hits them all alike;
//   - before every call, untimed: fresh random A and B (cuRAND), C poisoned with NaN, L2 flushed
//     when the operands could sit in it, then a device-wide synchronize;
//   - the call is bracketed by CUDA events on the stage's stream AND by the host clock around
//     call + cudaDeviceSynchronize() AND by the GPU's own record of every kernel and copy that ran
//     in that window, on any stream (CUPTI, child/gpu_record.h); its time is the GPU's busy span
//     plus one launch, raised by the events or the wall clock where they exceed that by more than
//     the host's jitter (common/call_time.h), so work launched on another stream, left running, or
//     done on the host is still counted, and a busy host does not move an honest call's time;
//   - the three must agree: a wall time below the event time, or a GPU busy span longer than the
//     wall time, cannot happen in an honest call (a clock was replaced or the grader's memory
//     altered) and makes the item `rejected`; so does a cuBLAS kernel (one the harness itself ran
//     for the cuBLAS item or the verification) among the kernels of a stage's call;
//   - randomly chosen timed calls (chosen at run time, at least verify_repetitions per shape) are
//     checked against the FP64 cuBLAS reference; a wrong one fails the stage;
//   - repetitions stop when IQR/median < target_spread_pct, or the item's time budget is spent;
//     the interquartile mean (the mean of the middle half) is reported with its spread;
//   - a result faster than the GPU's peak (peak.h) is `rejected`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/model.h"
#include "common/sides.h"
#include "common/stats.h"

namespace gemmlab {

// One thing to time: a stage variant of one side, or cuBLAS itself.
struct BenchItem {
    enum class Kind { stage, cublas };
    Kind kind = Kind::stage;
    Side side = Side::submission;
    std::string stage, variant;
    // cuBLAS only: full = cublasSgemm/cublasDgemm in true FP32/FP64 (CUBLAS_PEDANTIC_MATH); tf32 and
    // fp16 = cublasGemmEx on the same FP32 operands with CUBLAS_COMPUTE_32F_FAST_TF32 or
    // CUBLAS_COMPUTE_32F_FAST_16F: the tensor cores, A and B rounded like the stage variants that
    // declare those inputs (gemmlab/stages.h), conversions inside the timed call as in the stage's.
    InputPrecision cublas_inputs = InputPrecision::full;

    static BenchItem cublas(InputPrecision inputs = InputPrecision::full);
    static BenchItem of_stage(Side side, std::string stage, std::string variant);
    std::string label() const;  // "tiled/16", "reference tiled/16", "cublas", "cublas/tf32"
    bool operator==(const BenchItem& o) const;
};

struct BenchPlan {
    Precision precision = Precision::f32;
    std::vector<Shape> shapes;        // timed as C = A·B (alpha 1, beta 0)
    std::vector<BenchItem> items;
    int warmup = 1;
    StopRule stop;
    bool clear_l2 = true;
    int verify_repetitions = 2;
    uint64_t seed = 0;
    // The kernels the submission's build holds (the symbol check's list): during a timed call of a
    // submission stage the GPU may run these and no others. Empty: the rule is off (no symbol check).
    std::vector<std::string> submission_kernels;
};

nlohmann::json to_json(const BenchItem& item);
BenchItem bench_item_from_json(const nlohmann::json& j);
nlohmann::json to_json(const BenchPlan& plan);
BenchPlan bench_plan_from_json(const nlohmann::json& j);

// One item timed at one shape: one entry of results[].bench[] (docs/results-schema.md).
struct Timing {
    Shape shape;
    Disposition disposition = Disposition::skipped;
    std::string problem;               // "" when passed
    double time_ms = 0;                // interquartile mean of the calls' times (common/call_time.h)
    double event_ms = 0, wall_ms = 0;  // interquartile means of each clock, to show what was hidden
    double gpu_ms = 0;                 // ... of the GPU's own record's busy span (child/gpu_record.h)
    std::string gpu_record;            // "cupti", or "unavailable: <why>"
    double spread_pct = 0, min_ms = 0, max_ms = 0;
    int repetitions = 0;
    std::string stop_reason;           // converged / max_repetitions / budget
    std::string timed_by;              // the clock that set most calls' times: "GPU record", "events", "wall clock"
    int verified = 0;                  // timed calls checked against the FP64 reference
    double max_error_ratio = 0;        // worst |C − C_ref| / (u·G) over the verified calls
    double gflops = 0;
    double peak_gflops = 0;            // the limit used for `rejected`
    double sm_clock_mhz = 0;           // median over the timed calls (NVML), 0 when unknown
    std::vector<std::string> clock_reasons;  // every NVML clock-event reason seen during them
    bool throttled = false;            // a power/thermal/hardware slowdown was among them
    double seconds = 0;                // wall time spent on this item at this shape
    std::vector<std::string> kernels;  // every kernel the GPU ran during the timed calls (its own record)
    double error_bound = 0;            // the largest error ratio that passes (bound.h), 0 for cuBLAS
    // Filled in by the parent: ratios to the baselines timed in the same process. pct_cublas is to
    // cuBLAS in the precision the variant declares (cublas_item names it), pct_cublas_fp32 to the
    // true-FP32/FP64 cuBLAS: the two differ for tensor-core variants with TF32 or FP16 inputs.
    double x_naive = 0, pct_cublas = 0, pct_cublas_fp32 = 0;
    std::string cublas_item;
};

nlohmann::json to_json(const Timing& t);
Timing timing_from_json(const nlohmann::json& j);

// GFLOPS of a GEMM shape done in `ms` milliseconds (0 for a non-positive time).
double gflops_of(const Shape& s, double ms);

}  // namespace gemmlab
