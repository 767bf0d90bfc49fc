// GPU tests of the judge's benchmark engine (judge/bench_engine.h): items timed in runner processes on
// the judge's clock, calibrated, every timed call verified. Small shapes: the file takes seconds.
// (How close the judge's clock comes to a runner's own events is measured by the benchmarks in
// docs/performance.md, not asserted here.)
#include <map>
#include <string>
#include <vector>

#include "gpu_test.h"
#include "judge/bench_engine.h"
#include "judge/bench_planning.h"

using namespace gemmlab;

namespace {

BenchPlan small_plan(Precision p) {
    BenchPlan plan;
    plan.precision = p;
    plan.shapes = {*parse_shape("512"), *parse_shape("257x129x65:70,140,131")};
    plan.items = {BenchItem::of_stage(Side::reference, "naive", ""), BenchItem::cublas(),
                  BenchItem::of_stage(Side::submission, "naive", ""), BenchItem::of_stage(Side::submission, "reuse", "")};
    plan.stop.budget_seconds = 0.2;
    plan.seed = 42;
    return plan;
}

}  // namespace

GPU_TEST_CASE("naive and cuBLAS are timed by the judge, every call verified; a stub is not implemented") {
    GpuContext ctx(5);
    for (Precision p : {Precision::f32, Precision::f64}) {
        CAPTURE(precision_name(p));
        const BenchPlan plan = small_plan(p);
        const BenchOutcome out = run_bench_plan(ctx, plan, {});
        CHECK(out.device["timing"] == "judge");
        for (size_t s = 0; s < plan.shapes.size(); ++s) {
            CAPTURE(plan.shapes[s].dims());
            // One calibration per number of calls an interval may hold at this shape: 1, 2, 4, ...
            std::map<int, Timing> calibration;
            for (const Timing& c : out.calibration)
                if (c.shape.dims() == plan.shapes[s].dims()) calibration[c.calls_per_interval] = c;
            REQUIRE(calibration.count(1) == 1);
            for (const auto& entry : calibration) {
                const int n = entry.first;
                const Timing& c = entry.second;
                CAPTURE(n);
                CHECK((n & (n - 1)) == 0);
                CHECK(c.judge_ms > c.event_ms);
                CHECK(c.event_ms > 0);  // the calibration's kernel writes C: its events saw it
                CHECK(c.overhead_ms == doctest::Approx(c.judge_ms - c.event_ms).epsilon(0.05));
                CHECK(c.judge_ms < 5.0);  // two context switches and the judge's copies: well under a ms
            }
            const Timing &baseline = out.timings[0][s], &cublas = out.timings[1][s], &naive = out.timings[2][s],
                         &stub = out.timings[3][s];
            CHECK_MESSAGE(baseline.disposition == Disposition::passed, baseline.problem);
            CHECK_MESSAGE(cublas.disposition == Disposition::passed, cublas.problem);
            CHECK_MESSAGE(naive.disposition == Disposition::passed, naive.problem);
            CHECK(naive.timed_by == "judge");
            // every timed call, in full (the first interval, which sized the rest, too: one more call
            // when that interval was not kept)
            CHECK(naive.verified == naive.repetitions + (naive.calls_per_interval > 1 ? 1 : 0));
            CHECK(naive.max_error_ratio < 32);
            CHECK(naive.intervals >= kFloorRepetitions);
            CHECK(naive.repetitions == naive.intervals * naive.calls_per_interval);
            CHECK(naive.gflops > 0);
            CHECK(naive.gflops < naive.peak_gflops);
            REQUIRE(calibration.count(naive.calls_per_interval) == 1);
            CHECK(naive.overhead_ms ==
                  doctest::Approx(calibration[naive.calls_per_interval].overhead_ms / naive.calls_per_interval));
            CHECK(naive.judge_ms > naive.time_ms);
            // Calls of a few tens of µs share their intervals: more than one call in each.
            CHECK(cublas.calls_per_interval > 1);
            // The runner's own events saw the same kernel: the judge's time is not far from them. Both
            // bounds allow a few tens of µs: at these small shapes a call is ~10 µs, and the
            // calibration subtracted from it (~0.4 ms) varies by about that much between calls.
            CHECK(naive.time_ms < 1.5 * naive.event_ms + 0.05);
            CHECK(naive.time_ms > 0.5 * naive.event_ms - 0.02);
            CHECK(cublas.verified == 0);  // cuBLAS is the yardstick, not a suspect
            CHECK(stub.disposition == Disposition::not_implemented);
        }
        // One runner for the grader's own items at every shape, then one per submission stage for all
        // of its shapes (not one per stage and shape: each start is CUDA's set-up again).
        CHECK(out.runners == std::vector<std::string>{"", "naive", "reuse"});
        CHECK(out.restarts.empty());
    }
}

GPU_TEST_CASE("one run of a float and a double plan: one runner per stage serves both precisions") {
    GpuContext ctx(8);
    const std::vector<BenchPlan> plans = {small_plan(Precision::f32), small_plan(Precision::f64)};
    const std::vector<BenchOutcome> outs = run_bench_plans(ctx, plans, {});
    REQUIRE(outs.size() == 2);
    for (size_t k = 0; k < outs.size(); ++k) {
        CAPTURE(precision_name(plans[k].precision));
        CHECK(outs[k].plan.precision == plans[k].precision);
        CHECK(outs[k].device["clocks_end"].is_object());
        for (size_t s = 0; s < plans[k].shapes.size(); ++s) {
            CAPTURE(plans[k].shapes[s].dims());
            const Timing &baseline = outs[k].timings[0][s], &naive = outs[k].timings[2][s], &stub = outs[k].timings[3][s];
            CHECK_MESSAGE(baseline.disposition == Disposition::passed, baseline.problem);
            CHECK_MESSAGE(naive.disposition == Disposition::passed, naive.problem);
            CHECK(naive.verified >= naive.repetitions);
            CHECK(naive.max_error_ratio < 32);
            CHECK(stub.disposition == Disposition::not_implemented);
        }
        CHECK(outs[k].restarts.empty());
    }
    // The float plan started the grader's runner and one per stage; the double plan was timed in
    // the same runners (the grader's own for its baselines, each stage's for its calls).
    CHECK(outs[0].runners == std::vector<std::string>{"", "naive", "reuse"});
    CHECK(outs[1].runners.empty());
}

GPU_TEST_CASE("the submission's naive and the reference's naive run at the same speed") {
    GpuContext ctx(6);
    BenchPlan plan = small_plan(Precision::f32);
    plan.shapes = {*parse_shape("1024")};
    plan.stop.budget_seconds = 0.5;
    const BenchOutcome out = run_bench_plan(ctx, plan, {});
    const Timing &ref = out.timings[0][0], &sub = out.timings[2][0];
    REQUIRE(ref.disposition == Disposition::passed);
    REQUIRE(sub.disposition == Disposition::passed);
    CHECK(sub.gflops == doctest::Approx(ref.gflops).epsilon(0.1));
}

GPU_TEST_CASE("tensor cores: cuBLAS in TF32 and FP16 beside them, each variant held to its own bound and cuBLAS") {
    GpuContext ctx(7);
    BenchPlan plan;
    plan.precision = Precision::f32;
    plan.shapes = {*parse_shape("1024"), *parse_shape("257x129x65:70,140,131")};
    plan.items = {BenchItem::of_stage(Side::reference, "naive", ""), BenchItem::cublas(),
                  BenchItem::of_stage(Side::reference, "tensor", "fp16"),
                  BenchItem::of_stage(Side::reference, "tensor", "tf32"),
                  BenchItem::of_stage(Side::reference, "tensor", "3xtf32")};
    plan.stop.budget_seconds = 0.2;
    plan.seed = 43;
    add_tensor_core_baselines(plan);
    REQUIRE(plan.items.size() == 7);
    CHECK(plan.items[5] == BenchItem::cublas(InputPrecision::tf32));
    CHECK(plan.items[6] == BenchItem::cublas(InputPrecision::fp16));
    BenchOutcome out = run_bench_plan(ctx, plan, {});
    attach_ratios(out, plan.items[0], BenchItem::cublas());
    const char* own[] = {"cublas/fp16", "cublas/tf32", "cublas"};
    const double bound[] = {32 + 4 * 8192.0, 32 + 4 * 8192.0, 32};
    for (size_t s = 0; s < plan.shapes.size(); ++s) {
        CAPTURE(plan.shapes[s].dims());
        for (size_t i : {5, 6}) {
            CAPTURE(plan.items[i].label());
            CHECK_MESSAGE(out.timings[i][s].disposition == Disposition::passed, out.timings[i][s].problem);
            CHECK(out.timings[i][s].verified == 0);
        }
        for (size_t k = 0; k < 3; ++k) {
            const Timing& t = out.timings[2 + k][s];
            CAPTURE(plan.items[2 + k].label());
            CHECK_MESSAGE(t.disposition == Disposition::passed, t.problem);
            CHECK(t.verified == t.repetitions + (t.calls_per_interval > 1 ? 1 : 0));
            CHECK(t.error_bound == bound[k]);
            CHECK(t.max_error_ratio <= t.error_bound);
            CHECK(t.cublas_item == own[k]);
            CHECK(t.pct_cublas > 0);
            CHECK(t.pct_cublas_fp32 > 0);
            CHECK(t.peak_gflops > 10 * out.timings[1][s].peak_gflops);  // held to the tensor cores' peak
            MESSAGE(plan.items[2 + k].label() << " at " << plan.shapes[s].dims() << ": " << t.gflops << " GFLOPS, "
                                              << t.pct_cublas << "% of " << t.cublas_item << ", judge "
                                              << t.time_ms << " ms, events " << t.event_ms << " ms");
        }
    }
}
