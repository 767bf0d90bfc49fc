// GPU tests of the timed loop (bench.cu), in-process: the child side writes its reports to a file
// instead of a pipe, and the test reads them back. Small shapes, so the whole file takes seconds.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "child/bench.h"
#include "gpu_test.h"
#include "parent/bench_command.h"
#include "common/report_channel.h"

using namespace gemmlab;
using nlohmann::json;

namespace {

// Runs child_bench on `plan` in this process; returns every report it sent.
std::vector<json> run_in_process(const BenchPlan& plan) {
    std::FILE* file = std::tmpfile();
    REQUIRE(file != nullptr);
    const ReportChannel channel(fileno(file));
    CHECK(child_bench(plan, channel) == 0);
    std::fflush(file);
    std::rewind(file);
    std::vector<json> events;
    std::string line;
    for (int c; (c = std::fgetc(file)) != EOF;) {
        if (c != '\n') {
            line += static_cast<char>(c);
            continue;
        }
        events.push_back(json::parse(line));
        line.clear();
    }
    std::fclose(file);
    return events;
}

// The timing of item `item` at shape `shape` among the reports.
Timing timing_of(const std::vector<json>& events, size_t item, size_t shape) {
    for (const json& e : events)
        if (e["event"] == "timing" && e["item"] == item && e["shape_index"] == shape) return timing_from_json(e["timing"]);
    FAIL("no timing for item " << item << " at shape " << shape);
    return {};
}

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

GPU_TEST_CASE("naive and cuBLAS are timed, verified and compared; a stub is not implemented") {
    for (Precision p : {Precision::f32, Precision::f64}) {
        CAPTURE(precision_name(p));
        const BenchPlan plan = small_plan(p);
        const std::vector<json> events = run_in_process(plan);
        REQUIRE(events.back()["event"] == "done");
        bool device = false;
        for (const json& e : events) device = device || e["event"] == "device";
        CHECK(device);
        for (size_t s = 0; s < plan.shapes.size(); ++s) {
            const Timing baseline = timing_of(events, 0, s), cublas = timing_of(events, 1, s),
                         naive = timing_of(events, 2, s), stub = timing_of(events, 3, s);
            CHECK(baseline.disposition == Disposition::passed);
            CHECK(cublas.disposition == Disposition::passed);
            CHECK(naive.disposition == Disposition::passed);
            CHECK(naive.verified >= plan.verify_repetitions);  // topped up to the minimum
            CHECK(naive.max_error_ratio < 32);
            CHECK(naive.repetitions >= kFloorRepetitions);
            CHECK(naive.gflops > 0);
            CHECK(naive.gflops < naive.peak_gflops);
            // its work on its stream, its host side within one launch: the GPU's record sets the time
            CHECK(naive.timed_by == (naive.gpu_record == "cupti" ? "GPU record" : "events"));
            CHECK(cublas.verified == 0);  // cuBLAS is the yardstick, not a suspect
            CHECK(stub.disposition == Disposition::not_implemented);
        }
    }
}

GPU_TEST_CASE("the submission's naive and the reference's naive run at the same speed") {
    BenchPlan plan = small_plan(Precision::f32);
    plan.shapes = {*parse_shape("1024")};
    plan.stop.budget_seconds = 0.5;
    const std::vector<json> events = run_in_process(plan);
    const Timing ref = timing_of(events, 0, 0), sub = timing_of(events, 2, 0);
    CHECK(sub.gflops == doctest::Approx(ref.gflops).epsilon(0.1));
}

GPU_TEST_CASE("tensor cores: cuBLAS in TF32 and FP16 beside them, each variant held to its own bound and cuBLAS") {
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
    const std::vector<json> events = run_in_process(plan);
    REQUIRE(events.back()["event"] == "done");
    BenchOutcome out;
    out.plan = plan;
    out.timings.assign(plan.items.size(), std::vector<Timing>(plan.shapes.size()));
    for (size_t i = 0; i < plan.items.size(); ++i)
        for (size_t s = 0; s < plan.shapes.size(); ++s) out.timings[i][s] = timing_of(events, i, s);
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
            CHECK(t.verified >= plan.verify_repetitions);
            CHECK(t.error_bound == bound[k]);
            CHECK(t.max_error_ratio <= t.error_bound);
            CHECK(t.cublas_item == own[k]);
            CHECK(t.pct_cublas > 0);
            CHECK(t.pct_cublas_fp32 > 0);
            CHECK(t.peak_gflops > 10 * out.timings[1][s].peak_gflops);  // held to the tensor cores' peak
            MESSAGE(plan.items[2 + k].label() << " at " << plan.shapes[s].dims() << ": " << t.gflops << " GFLOPS, "
                                              << t.pct_cublas << "% of " << t.cublas_item << ", "
                                              << t.pct_cublas_fp32 << "% of cublas, worst error "
                                              << t.max_error_ratio << " u·G");
        }
    }
}
