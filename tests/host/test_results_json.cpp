// Round trips of the JSON the benchmark and grade write (docs/results-schema.md): plans crossing
// the process boundary, timings, and scores come back as they went out.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "common/bench_plan.h"
#include "common/protocol.h"
#include "judge/score.h"

using namespace gemmlab;
using nlohmann::json;

TEST_CASE("a bench plan survives its JSON") {
    BenchPlan p;
    p.precision = Precision::f64;
    p.shapes = {*parse_shape("4096"), *parse_shape("1000x2000x300:320,2000,2000")};
    p.items = {BenchItem::of_stage(Side::reference, "naive", ""), BenchItem::cublas(),
               BenchItem::of_stage(Side::submission, "tiled", "16"), BenchItem::cublas(InputPrecision::tf32),
               BenchItem::cublas(InputPrecision::fp16), BenchItem::launch()};
    p.warmup = 2;
    p.stop.min_repetitions = 7;
    p.stop.max_repetitions = 70;
    p.stop.target_spread_pct = 1.5;
    p.stop.budget_seconds = 0.25;
    p.stop.min_timed_ms = 7.5;
    p.min_interval_ms = 0.75;
    p.clear_l2 = false;
    p.seed = 123456789;
    const BenchPlan q = bench_plan_from_json(json::parse(to_json(p).dump()));
    CHECK(q.precision == Precision::f64);
    REQUIRE(q.shapes.size() == 2);
    CHECK(q.shapes[1].eff_lda() == 320);
    CHECK(q.shapes[1].eff_ldb() == 2000);
    REQUIRE(q.items.size() == 6);
    CHECK(q.items[5] == BenchItem::launch());
    CHECK(q.items[5].label() == "launch");
    CHECK(q.items[0] == p.items[0]);
    CHECK(q.items[1] == BenchItem::cublas());
    CHECK(q.items[2] == p.items[2]);
    CHECK(q.items[3] == BenchItem::cublas(InputPrecision::tf32));
    CHECK(q.items[4] == BenchItem::cublas(InputPrecision::fp16));
    CHECK_FALSE(q.items[3] == q.items[1]);  // cuBLAS in TF32 is another item than true-FP32 cuBLAS
    CHECK(q.items[1].label() == "cublas");
    CHECK(q.items[3].label() == "cublas/tf32");
    CHECK(q.items[4].label() == "cublas/fp16");
    CHECK(q.items[2].label() == "tiled/16");
    CHECK(q.items[0].label() == "reference naive");
    CHECK(q.warmup == 2);
    CHECK(q.stop.min_repetitions == 7);
    CHECK(q.stop.max_repetitions == 70);
    CHECK(q.stop.target_spread_pct == 1.5);
    CHECK(q.stop.budget_seconds == 0.25);
    CHECK(q.stop.min_timed_ms == 7.5);
    CHECK(q.min_interval_ms == 0.75);
    CHECK_FALSE(q.clear_l2);
    CHECK(q.seed == 123456789);
}

TEST_CASE("a timing keeps every field of results[].bench[], NaN included") {
    Timing t;
    t.shape = *parse_shape("4096");
    t.disposition = Disposition::failed;
    t.problem = "timed call 3 gave wrong values";
    t.time_ms = 2.5, t.judge_ms = 2.9, t.overhead_ms = 0.4, t.event_ms = 2.4, t.spread_pct = 0.7, t.min_ms = 2.4,
    t.max_ms = 2.7;
    t.repetitions = 9, t.intervals = 3, t.calls_per_interval = 3, t.stop_reason = "converged", t.timed_by = "judge", t.verified = 9;
    t.max_error_ratio = NAN;
    t.gflops = gflops_of(t.shape, t.time_ms);
    t.x_naive = 12.5, t.pct_cublas = 81.0, t.peak_gflops = 66908, t.sm_clock_mhz = 1980;
    t.clock_reasons = {"sw_power_cap"}, t.throttled = true, t.seconds = 0.4;
    t.pct_cublas_fp32 = 640.0, t.cublas_item = "cublas/fp16", t.error_bound = 32800;
    const json j = to_json(t);
    for (const char* field : {"shape", "disposition", "gflops", "time_ms", "spread_pct", "repetitions", "x_naive",
                              "pct_cublas", "sm_clock_mhz", "verified"})
        CHECK_MESSAGE(j.contains(field), field);  // the fields other teams rely on
    CHECK(j["max_error_ratio"] == "nan");
    const Timing u = timing_from_json(json::parse(j.dump()));
    CHECK(u.shape.M == 4096);
    CHECK(u.disposition == Disposition::failed);
    CHECK(u.problem == t.problem);
    CHECK(u.gflops == doctest::Approx(54975.581388));
    CHECK(u.repetitions == 9);
    CHECK(u.intervals == 3);
    CHECK(u.calls_per_interval == 3);
    CHECK(u.verified == 9);
    CHECK(u.judge_ms == 2.9);
    CHECK(u.overhead_ms == 0.4);
    CHECK(u.event_ms == 2.4);
    CHECK(u.timed_by == "judge");
    CHECK(std::isnan(u.max_error_ratio));
    CHECK(u.clock_reasons == t.clock_reasons);
    CHECK(u.throttled);
    CHECK(u.pct_cublas == 81.0);
    CHECK(u.pct_cublas_fp32 == 640.0);  // additive fields of the tensor stage (docs/results-schema.md)
    CHECK(u.cublas_item == "cublas/fp16");
    CHECK(u.error_bound == 32800);
}

TEST_CASE("a score survives its JSON") {
    StageScore r;
    r.stage = "tiled", r.precision = "double", r.variant_used = "32", r.disposition = Disposition::passed;
    r.correctness = 5, r.correctness_max = 5, r.performance = 3.21, r.performance_max = 5;
    r.gflops = 3000, r.x_naive = 2.5, r.pct_cublas = 7.5, r.note = "7.5% of cuBLAS";
    const Score s = total_score({r});
    const json j = to_json(s);
    CHECK(j["total"] == 8.21);
    CHECK(j["stages"][0].contains("variant_used"));
    const Score back = score_from_json(json::parse(j.dump()));
    CHECK(back.total == doctest::Approx(8.21));
    CHECK(back.max == doctest::Approx(10));
    REQUIRE(back.stages.size() == 1);
    CHECK(back.stages[0].variant_used == "32");
    CHECK(back.stages[0].disposition == Disposition::passed);
    CHECK(back.stages[0].note == r.note);
}

TEST_CASE("extra credit counts in the total and not in the maximum, and survives its JSON") {
    StageScore base, extra;
    base.stage = "reuse", base.correctness = 5, base.correctness_max = 5, base.performance = 10, base.performance_max = 10;
    extra.stage = "tensor", extra.extra_credit = true;
    extra.correctness = 2.5, extra.correctness_max = 2.5, extra.performance = 1.25, extra.performance_max = 2.5;
    const Score s = total_score({base, extra});
    CHECK(s.total == doctest::Approx(18.75));
    CHECK(s.max == doctest::Approx(15));
    const Score back = score_from_json(json::parse(to_json(s).dump()));
    REQUIRE(back.stages.size() == 2);
    CHECK_FALSE(back.stages[0].extra_credit);
    CHECK(back.stages[1].extra_credit);
}

TEST_CASE("the judge's requests to a runner survive their JSON, handles included") {
    protocol::Problem p;
    p.precision = Precision::f64;
    p.M = 129, p.N = 127, p.K = 131, p.alpha = 1.5, p.beta = -0.75;
    p.a = {"A", 0}, p.b = {"B", 4096}, p.c = {"C", 2 * 4096 + 256};
    p.lda = 136, p.ldb = 130, p.ldc = 133;
    p.pitched_flow = true;
    const protocol::Problem q = protocol::problem_from_json(json::parse(protocol::to_json(p).dump()));
    CHECK(q.precision == Precision::f64);
    CHECK(q.M == 129);
    CHECK(q.K == 131);
    CHECK(q.alpha == 1.5);
    CHECK(q.beta == -0.75);
    CHECK(q.b.buffer == "B");
    CHECK(q.c.offset == 2 * 4096 + 256);
    CHECK(q.ldc == 133);
    CHECK(q.pitched_flow);

    unsigned char handle[64], back[64];
    for (int i = 0; i < 64; ++i) handle[i] = static_cast<unsigned char>(i * 37 + 5);
    const std::string hex = protocol::to_hex(handle, sizeof handle);
    CHECK(hex.size() == 128);
    REQUIRE(protocol::from_hex(hex, back, sizeof back));
    CHECK(std::equal(handle, handle + 64, back));
    CHECK_FALSE(protocol::from_hex(hex.substr(2), back, sizeof back));  // too short
    CHECK_FALSE(protocol::from_hex(std::string(128, 'x'), back, sizeof back));

    protocol::CallResult r;
    r.status = "ok";
    r.problem = "pitched_upload did not copy A exactly";
    r.disposition = "failed";
    const protocol::CallResult s = protocol::call_result_from_json(json::parse(protocol::to_json(r).dump()));
    CHECK(s.status == "ok");
    CHECK(s.problem == r.problem);
    CHECK(s.disposition == "failed");
}

TEST_CASE("exported buffers are whole blocks of 2 MiB") {
    CHECK(protocol::export_size(1) == protocol::kExportGranularity);
    CHECK(protocol::export_size(protocol::kExportGranularity) == protocol::kExportGranularity);
    CHECK(protocol::export_size(protocol::kExportGranularity + 1) == 2 * protocol::kExportGranularity);
}

TEST_CASE("the memory a timed call needs: operands, the judge's copies and its FP64 answer") {
    Shape s;
    s.M = s.N = s.K = 4096;
    // float: A, B, C and the judge's A0, B0 (64 MiB each), then A and B in double and the answer and
    // gauge (128 MiB each)
    const double mib = 1024.0 * 1024.0;
    CHECK(judge_bytes_per_call(s, Precision::f32) / mib == doctest::Approx(5 * 64 + 4 * 128));
    CHECK(judge_bytes_per_call(s, Precision::f64) / mib == doctest::Approx(5 * 128 + 4 * 128));
    // Rows a pitched stage pads to 512 bytes count padded: 1000 floats take 1024.
    Shape odd;
    odd.M = 1, odd.N = 1000, odd.K = 1000;
    CHECK(judge_bytes_per_call(odd, Precision::f32) ==
          doctest::Approx((2 * 1024 + 2 * 1000.0 * 1024 + 1024) * 4 + 8 * (1000 + 1000.0 * 1000 + 2 * 1000)));
    // An 80 GiB GPU with 79 free holds 4096³ and 16384³ float, not 32768³ double; the message says
    // which shape, how much it needs and what to do.
    const double gib = 1024.0 * mib;
    Shape big;
    big.M = big.N = big.K = 32768;
    CHECK(shapes_memory_problem({s}, Precision::f64, 79 * gib, 80 * gib).empty());
    const std::string why = shapes_memory_problem({s, big}, Precision::f64, 79 * gib, 80 * gib);
    CHECK(why.find("shape 32768x32768x32768 in double needs about 72.0 GiB") != std::string::npos);
    CHECK(why.find("this GPU has 80.0 GiB, 79.0 GiB of it free") != std::string::npos);
    CHECK(why.find("time smaller shapes") != std::string::npos);
    // With little free (another job's memory), even 4096³ may not fit: said before anything is timed.
    CHECK_FALSE(shapes_memory_problem({s}, Precision::f64, 1 * gib, 80 * gib).empty());
}
