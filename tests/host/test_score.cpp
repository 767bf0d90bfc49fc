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
    r.target_pct_cublas = {target_pct, target_pct};
    return r;
}

// A variant that passed the check and was timed at `gflops` next to naive = 100, cuBLAS = 1000.
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

TEST_CASE("calibration: the reference speeds earn full marks with the defaults, naive speed none") {
    const CourseConfig c = default_config(kKeys);
    // tensor: the share of cuBLAS in the variant's own precision (config.cpp); its float target is
    // met by the 3xtf32 variant, which runs faster than the true-FP32 cuBLAS it is compared with.
    const std::map<std::string, std::pair<double, double>> reference_pct = {
        {"tiled", {19.3, 10.4}}, {"unrolled", {62.1, 36.6}}, {"pitched", {65.9, 79.5}}, {"reuse", {98.9, 103.9}},
        {"tensor", {99.7, 61.6}}};
    std::vector<StageScore> rows, naive_rows;
    for (const auto& [key, pct] : reference_pct)
        for (Precision p : {Precision::f32, Precision::f64}) {
            const double cublas = 1000, naive = 30;  // naive is ~3% of cuBLAS on an H100
            const double ref = (p == Precision::f32 ? pct.first : pct.second) / 100.0 * cublas;
            auto outcome = [&](double g) {
                VariantOutcome v;
                v.check = Disposition::passed;
                for (const ScoringShape& s : c.scoring.shapes) v.speeds.push_back({s.shape, Disposition::passed, g, naive, cublas});
                return v;
            };
            const StageRubric& r = c.scoring.stages.at(key);
            rows.push_back(score_stage(key, p, r, c.scoring, {outcome(ref)}));
            naive_rows.push_back(score_stage(key, p, r, c.scoring, {outcome(naive)}));
            // Even 10% slower than the reference still earns full marks (the margin).
            CHECK(score_stage(key, p, r, c.scoring, {outcome(0.9 * ref)}).performance == r.performance_points.get(p));
        }
    rows.push_back(score_stage("naive", Precision::f32, c.scoring.stages.at("naive"), c.scoring, {}));
    const Score best = total_score(rows);
    CHECK(best.total == doctest::Approx(110.0));  // 100 + the tensor stage's 10 points of extra credit
    CHECK(best.max == doctest::Approx(100.0));
    double naive_perf = 0;
    for (const StageScore& s : naive_rows) naive_perf += s.performance;
    CHECK(naive_perf == 0);
}
