// GPU tests of the timed loop (bench.cu), in-process: the child side writes its reports to a file
// instead of a pipe, and the test reads them back. Small shapes, so the whole file takes seconds.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "child/bench.h"
#include "gpu_test.h"
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
            CHECK(naive.timed_by == "events");
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
