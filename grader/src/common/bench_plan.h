// bench_plan.h — the benchmark: what is timed (items), how (the plan), and what comes back (one
// Timing per item and shape). The judge runs the plan (judge/bench_engine.h): every item's calls run
// in a runner process, on operands the judge owns, timed by the judge's own clock (docs/timing.md):
//   - fresh random A and B for every call, made in the judge's own memory, copied into the operands
//     the runner sees only once the call's clock has started; C poisoned with NaN; L2 flushed when
//     the operands could sit in it;
//   - the interval's time is the GPU's %globaltimer read by the judge before those inputs exist and
//     after the runner's done signal and a check of a secret sample of C, less the judge's overhead
//     (the calibration: the same interval around the grader's own kernel that writes C, `launch`,
//     less that kernel's own events) at the same shape; an interval holds one call, or several
//     when one is shorter than min_interval_ms (a call's time: the interval's over its calls);
//   - every timed output is verified against the FP64 reference the judge computed in its own context;
//   - repetitions stop when IQR/median < target_spread_pct, or the item's time budget is spent;
//     the interquartile mean (the mean of the middle half) is reported with its spread;
//   - a result faster than the GPU's peak (peak.h) is `rejected`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/vocabulary.h"
#include "common/sides.h"
#include "common/stats.h"

namespace gemmlab {

// One thing to time: a stage variant of one side, or cuBLAS itself.
struct BenchItem {
    // launch: one kernel of the grader's own that writes all of C, the cheapest call that does what
    // every call must (the judge's calibration, docs/timing.md)
    enum class Kind { stage, cublas, launch };
    Kind kind = Kind::stage;
    Side side = Side::submission;
    std::string stage, variant;
    // cuBLAS only: full = cublasSgemm/cublasDgemm in true FP32/FP64 (CUBLAS_PEDANTIC_MATH); tf32 and
    // fp16 = cublasGemmEx on the same FP32 operands with CUBLAS_COMPUTE_32F_FAST_TF32 or
    // CUBLAS_COMPUTE_32F_FAST_16F: the tensor cores, A and B rounded like the stage variants that
    // declare those inputs (gemmlab/stages.h), conversions inside the timed call as in the stage's.
    InputPrecision cublas_inputs = InputPrecision::full;

    static BenchItem cublas(InputPrecision inputs = InputPrecision::full);
    static BenchItem launch();
    static BenchItem of_stage(Side side, std::string stage, std::string variant);
    std::string label() const;  // "tiled/16", "reference tiled/16", "cublas", "cublas/tf32", "launch"
    bool operator==(const BenchItem& o) const;
};

struct BenchPlan {
    Precision precision = Precision::f32;
    std::vector<Shape> shapes;        // timed as C = A·B (alpha 1, beta 0)
    std::vector<BenchItem> items;
    int warmup = 1;
    StopRule stop;
    // A call shorter than this shares its timed interval with others of the same item (each on its
    // own fresh operands), as many as make the interval this long: the judge's fixed costs per
    // interval then weigh little on each call.
    double min_interval_ms = 2.0;
    bool clear_l2 = true;
    uint64_t seed = 0;
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
    // Per call. A timed interval holds calls_per_interval calls (docs/timing.md); each interval gives
    // one sample of a call's time: its interval less the calibration, over the calls it held.
    double time_ms = 0;                // interquartile mean of the calls' times (common/call_time.h)
    double judge_ms = 0;               // ... of the judge's raw intervals per call, before the calibration
    double overhead_ms = 0;            // the calibration subtracted, per call
    double event_ms = 0;               // ... of the runner's own CUDA events (a diagnostic, never a time)
    double spread_pct = 0, min_ms = 0, max_ms = 0;
    int repetitions = 0;               // timed calls
    int intervals = 0;                 // timed intervals (repetitions = intervals × calls_per_interval)
    int calls_per_interval = 1;
    std::string stop_reason;           // converged / max_repetitions / budget
    std::string timed_by;              // "judge": the judge's clock (docs/timing.md)
    int verified = 0;                  // timed calls checked in full against the FP64 reference
    double max_error_ratio = 0;        // worst |C − C_ref| / (u·G) over the verified calls
    double gflops = 0;
    double peak_gflops = 0;            // the limit used for `rejected`
    double sm_clock_mhz = 0;           // median over the timed calls (NVML), 0 when unknown
    std::vector<std::string> clock_reasons;  // every NVML clock-event reason seen during them
    bool throttled = false;            // a power/thermal/hardware slowdown was among them
    double seconds = 0;                // wall time spent on this item at this shape
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

// GPU memory (bytes) the judge needs for one call at shape s in precision p: the runner's A, B and C
// and the judge's own copies of A and B (rows padded to 512 bytes, as a pitched stage's may be), and
// the FP64 answer and gauge with the double copies of A and B they are computed from.
double judge_bytes_per_call(const Shape& s, Precision p);

// "" when every shape's call fits in `free_bytes` of GPU memory (with a margin for the runner's own
// context and libraries); else what does not fit, how much it needs and what to do.
std::string shapes_memory_problem(const std::vector<Shape>& shapes, Precision p, double free_bytes, double total_bytes);

}  // namespace gemmlab
