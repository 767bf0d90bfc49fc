// Tests of score.h: the interpolation, its boundaries, the correctness gate, the choice of
// variant, and the calibration of the defaults (reference speed = full marks, naive = none).
#include <doctest/doctest.h>

#include "judge/config.h"
#include "judge/score.h"

using namespace gemmlab;

namespace {

const std::vector<std::string> kKeys{"naive", "tiled", "unrolled", "pitched", "reuse", "tensor"};

Shape cube(int n) {
    Shape s;
    s.M = s.N = s.K = n;
    return s;
}

ScoringConfig one_shape(Interpolation how = Interpolation::log) {
    ScoringConfig c;
    c.interpolation = how;
    c.shapes = {{cube(4096), 1.0}};
    return c;
}

StageRubric rubric(double correctness, double performance, double target_pct) {
    StageRubric r;
    r.correctness_points = {correctness, correctness};
    r.performance_points = {performance, performance};
    r.target_pct_reference = {target_pct, target_pct};
    return r;
}

// A variant that passed the check and was timed at `gflops` next to naive = 100, cuBLAS = 1000 and
// the reference = 1000.
VariantOutcome timed(const std::string& label, double gflops, const ScoringConfig& cfg,
                     Disposition bench = Disposition::passed) {
    VariantOutcome v;
    v.variant = label;
    v.check = Disposition::passed;
    for (const ScoringShape& s : cfg.shapes) {
        ShapeSpeed sp;
        sp.shape = s.shape;
        sp.disposition = bench;
        sp.gflops = gflops;
        sp.naive_gflops = 100;
        sp.cublas_gflops = 1000;
        sp.reference_gflops = 1000;
        v.speeds.push_back(sp);
    }
    return v;
}

VariantOutcome unchecked(const std::string& label, Disposition d, const std::string& problem = "") {
    VariantOutcome v;
    v.variant = label;
    v.check = d;
    v.problem = problem;
    return v;
}

}  // namespace

TEST_CASE("performance_fraction: 0 at naive, 1 at target, logarithmic in between") {
    const auto log = Interpolation::log, lin = Interpolation::linear;
    CHECK(performance_fraction(50, 100, 400, log) == 0.0);    // slower than naive
    CHECK(performance_fraction(100, 100, 400, log) == 0.0);   // naive itself
    CHECK(performance_fraction(200, 100, 400, log) == doctest::Approx(0.5));  // one of two doublings
    CHECK(performance_fraction(400, 100, 400, log) == 1.0);
    CHECK(performance_fraction(4000, 100, 400, log) == 1.0);  // capped
    CHECK(performance_fraction(250, 100, 400, lin) == doctest::Approx(0.5));
    CHECK(performance_fraction(200, 100, 400, lin) == doctest::Approx(1.0 / 3.0));
    CHECK(performance_fraction(0, 100, 400, log) == 0.0);
    CHECK(performance_fraction(500, 100, 0, log) == 0.0);     // no cuBLAS timing: nothing to earn
    CHECK(performance_fraction(500, 0, 400, log) == 1.0);     // at the target even without naive
    CHECK(performance_fraction(300, 0, 400, log) == 0.0);
    CHECK(performance_fraction(90, 100, 80, log) == 1.0);     // target below naive: reaching it is enough
    CHECK(performance_fraction(70, 100, 80, log) == 0.0);
}

TEST_CASE("a correct stage at its target earns everything; at naive speed only correctness") {
    const ScoringConfig cfg = one_shape();
    const StageRubric r = rubric(5, 10, 40);  // target 400 GFLOPS
    const StageScore full = score_stage("unrolled", Precision::f32, r, cfg, {timed("", 400, cfg)});
    CHECK(full.disposition == Disposition::passed);
    CHECK(full.correctness == 5);
    CHECK(full.performance == 10);
    CHECK(full.pct_cublas == doctest::Approx(40));
    CHECK(full.x_naive == doctest::Approx(4));
    CHECK(full.gflops == doctest::Approx(400));
    const StageScore slow = score_stage("unrolled", Precision::f32, r, cfg, {timed("", 100, cfg)});
    CHECK(slow.correctness == 5);
    CHECK(slow.performance == 0);
    const StageScore half = score_stage("unrolled", Precision::f32, r, cfg, {timed("", 200, cfg)});
    CHECK(half.performance == doctest::Approx(5.0));
}

TEST_CASE("the correctness gate: no performance points without a passed check") {
    const ScoringConfig cfg = one_shape();
    const StageRubric r = rubric(5, 10, 40);
    VariantOutcome failed = timed("", 900, cfg);
    failed.check = Disposition::failed;
    failed.problem = "wrong values";
    const StageScore s = score_stage("reuse", Precision::f64, r, cfg, {failed});
    CHECK(s.correctness == 0);
    CHECK(s.performance == 0);
    CHECK(s.disposition == Disposition::failed);
    CHECK(s.note.find("wrong values") != std::string::npos);
    const StageScore stub =
        score_stage("reuse", Precision::f64, r, cfg, {unchecked("", Disposition::not_implemented, "not implemented yet")});
    CHECK(stub.disposition == Disposition::not_implemented);
    CHECK(stub.correctness + stub.performance == 0);
    CHECK(stub.correctness_max == 5);
    CHECK(stub.performance_max == 10);
}

TEST_CASE("wrong values in a timed call cost correctness too; an impossible speed costs performance") {
    const ScoringConfig cfg = one_shape();
    const StageRubric r = rubric(5, 10, 40);
    const StageScore wrong = score_stage("reuse", Precision::f32, r, cfg, {timed("", 900, cfg, Disposition::failed)});
    CHECK(wrong.correctness == 0);
    CHECK(wrong.performance == 0);
    CHECK(wrong.disposition == Disposition::failed);
    const StageScore fake = score_stage("reuse", Precision::f32, r, cfg, {timed("", 1e9, cfg, Disposition::rejected)});
    CHECK(fake.correctness == 5);
    CHECK(fake.performance == 0);
    CHECK(fake.disposition == Disposition::rejected);
}

TEST_CASE("tiled: the best correct variant counts for speed, correctness is shared per variant") {
    const ScoringConfig cfg = one_shape();
    const StageRubric r = rubric(6, 10, 40);
    const StageScore s = score_stage("tiled", Precision::f32, r, cfg,
                                     {timed("8", 150, cfg), timed("16", 400, cfg), timed("32", 250, cfg)});
    CHECK(s.variant_used == "16");
    CHECK(s.performance == 10);
    CHECK(s.correctness == 6);
    // The fastest variant is wrong: it earns nothing, the next best counts, correctness is 2/3.
    VariantOutcome bad = timed("16", 400, cfg);
    bad.check = Disposition::failed;
    const StageScore t = score_stage("tiled", Precision::f32, r, cfg, {timed("8", 150, cfg), bad, timed("32", 200, cfg)});
    CHECK(t.variant_used == "32");
    CHECK(t.correctness == doctest::Approx(4.0));
    CHECK(t.performance == doctest::Approx(5.0));
    CHECK(t.note.find("2 of 3 variants correct") != std::string::npos);
}

TEST_CASE("tiled: of variants that earn as many points, the faster counts (the one the tables show)") {
    const ScoringConfig cfg = one_shape();
    // 8 and 32 both reach the target (full points); 32 is faster, though 8 comes first
    StageScore s = score_stage("tiled", Precision::f32, rubric(3, 10, 100), cfg,
                               {timed("8", 1100, cfg), timed("16", 600, cfg), timed("32", 1400, cfg)});
    CHECK(s.variant_used == "32");
    CHECK(s.performance == doctest::Approx(10));
    CHECK(s.gflops == doctest::Approx(1400));
    // no points at all (each at naive speed or below): still the faster
    s = score_stage("tiled", Precision::f32, rubric(3, 10, 100), cfg, {timed("8", 90, cfg), timed("16", 95, cfg)});
    CHECK(s.variant_used == "16");
    // more points win over speed shown nowhere else
    s = score_stage("tiled", Precision::f32, rubric(3, 10, 100), cfg, {timed("8", 900, cfg), timed("16", 500, cfg)});
    CHECK(s.variant_used == "8");
}

TEST_CASE("shapes are weighted; a shape that was not timed leaves the variant unscored") {
    ScoringConfig cfg;
    cfg.shapes = {{cube(4096), 3.0}, {cube(2048), 1.0}};
    const StageRubric r = rubric(0, 8, 40);
    VariantOutcome v = timed("", 400, cfg);
    v.speeds[1].gflops = 100;  // naive speed at the small shape
    const StageScore s = score_stage("pitched", Precision::f32, r, cfg, {v});
    CHECK(s.performance == doctest::Approx(6.0));  // 8 x (3 x 1 + 1 x 0) / 4
    VariantOutcome partial = timed("", 400, cfg);
    partial.speeds.pop_back();
    CHECK(bench_disposition(partial, cfg.shapes) == Disposition::skipped);
    CHECK(score_stage("pitched", Precision::f32, r, cfg, {partial}).performance == 0);
}

TEST_CASE("course.toml: the reference's own speed earns full marks, naive speed none, on any GPU") {
    const CourseConfig c = load_config("course.toml", kKeys);  // tests run in the repository root
    // Two GPUs far apart: what counts is the reference's speed on the same GPU, whatever it is.
    for (const double scale : {1.0, 1.0 / 32}) {
        CAPTURE(scale);
        std::vector<StageScore> rows, naive_rows;
        for (const auto& [key, r] : c.scoring.stages)
            for (Precision p : {Precision::f32, Precision::f64}) {
                const double naive = 30 * scale, reference = 600 * scale;
                auto outcome = [&](double g) {
                    VariantOutcome v;
                    v.check = Disposition::passed;
                    for (const ScoringShape& s : c.scoring.shapes) {
                        ShapeSpeed sp{s.shape, Disposition::passed, g, naive, 1000 * scale};
                        sp.reference_gflops = reference;
                        v.speeds.push_back(sp);
                    }
                    return v;
                };
                rows.push_back(score_stage(key, p, r, c.scoring, {outcome(reference)}));
                naive_rows.push_back(score_stage(key, p, r, c.scoring, {outcome(naive)}));
                // A few % slower than the reference, as a second measurement may be, still earns everything.
                CHECK(score_stage(key, p, r, c.scoring, {outcome(0.96 * reference)}).performance == r.performance_points.get(p));
            }
        const Score best = total_score(rows);
        CHECK(best.total == doctest::Approx(110.0));  // 100 + the tensor stage's 10 points of extra credit
        CHECK(best.max == doctest::Approx(100.0));
        double naive_perf = 0;
        for (const StageScore& s : naive_rows) naive_perf += s.performance;
        CHECK(naive_perf == 0);
    }
}

TEST_CASE("the target is the reference's speed measured beside the submission; without it, no performance points either way") {
    const ScoringConfig cfg = one_shape();
    const StageRubric r = rubric(5, 10, 80);
    VariantOutcome v = timed("", 400, cfg);
    v.speeds[0].reference_gflops = 500;  // 400 is 80% of 500: full marks
    StageScore s = score_stage("reuse", Precision::f32, r, cfg, {v});
    CHECK(s.performance == 10);
    CHECK(s.pct_reference == doctest::Approx(80.0));
    CHECK(s.target_gflops == doctest::Approx(400.0));
    CHECK(s.note.find("80% of the reference") != std::string::npos);
    v.speeds[0].reference_gflops = 0;  // the reference was not timed: no target, no wrong zero
    s = score_stage("reuse", Precision::f32, r, cfg, {v});
    CHECK(s.performance == 0);
    CHECK(s.performance_max == 0);
    CHECK(s.correctness == 5);
    CHECK(s.note.find("performance not scored") != std::string::npos);
    CHECK(total_score({s}).max == 5);
}

TEST_CASE("unsupported variants are left out: their share goes to the others; a stage with none leaves the maximum") {
    const ScoringConfig cfg = one_shape();
    const StageRubric r = rubric(6, 4, 80);
    VariantOutcome fp16 = timed("fp16", 1000, cfg);
    VariantOutcome tf32 = unchecked("tf32", Disposition::unsupported, "needs sm_80 or newer; this GPU is sm_75");
    VariantOutcome x3 = unchecked("3xtf32", Disposition::unsupported, "needs sm_80 or newer; this GPU is sm_75");
    const StageScore some = score_stage("tensor", Precision::f32, r, cfg, {fp16, tf32, x3});
    CHECK(some.correctness == 6);  // the one variant this GPU runs carries the stage
    CHECK(some.performance == 4);
    CHECK(some.note.find("2 variant(s) not scored on this GPU") != std::string::npos);
    const StageScore none = score_stage("tensor", Precision::f64, r, cfg, {tf32, x3});
    CHECK(none.disposition == Disposition::unsupported);
    CHECK(none.correctness_max + none.performance_max == 0);
    CHECK(none.note.find("not scored on this GPU: tf32: needs sm_80") != std::string::npos);
    CHECK(total_score({some, none}).max == 10);
}

TEST_CASE("shapes fit the GPU: halved together until a call at peak fits max_call_ms_at_peak") {
    ScoringConfig cfg;
    cfg.shapes = {{cube(4096), 2.0}, {cube(2048), 1.0}};
    cfg.max_call_ms_at_peak = 20;
    std::string why;
    // H100 FP64 (DMMA, ~67 TFLOPS): 4096^3 takes 2 ms at peak: kept.
    CHECK(shapes_for_gpu(cfg, 67000, &why)[0].shape.M == 4096);
    CHECK(why.empty());
    // T4 FP64 (~0.25 TFLOPS): 550 ms at peak -> 1024^3 (8.6 ms), 2048^3 -> 512^3; weights kept.
    const auto t4 = shapes_for_gpu(cfg, 254, &why);
    CHECK(t4[0].shape.M == 1024);
    CHECK(t4[0].shape.K == 1024);
    CHECK(t4[1].shape.N == 512);
    CHECK(t4[0].weight == 2.0);
    CHECK(why.find("graded at 1024x1024x1024 instead") != std::string::npos);
    // Never below 256 on a side; 0 turns the rule off.
    CHECK(shapes_for_gpu(cfg, 0.001, &why)[1].shape.M == 256);
    cfg.max_call_ms_at_peak = 0;
    CHECK(shapes_for_gpu(cfg, 254, &why)[0].shape.M == 4096);
}
