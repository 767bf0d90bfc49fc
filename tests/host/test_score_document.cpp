// Tests of score_document.h: a grade's score from its results document, as `gemmlab grade` writes it
// and `gemmlab-config --rescore` recomputes it under an edited rubric — the same arithmetic both times;
// a rubric that grades other shapes is refused (a regrade), never scored from speeds it lacks.
#include <cmath>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "judge/config.h"
#include "judge/score_document.h"

using namespace gemmlab;
using nlohmann::json;

namespace {

const std::vector<std::string> kKeys{"naive", "tiled", "unrolled", "pitched", "reuse", "tensor"};

std::string rubric_text(double reuse_performance, const std::string& shapes = "[[scoring.shapes]]\nshape = \"4096x4096x4096\"\nweight = 2\n",
                        double cap = 0) {
    std::string t = "[scoring]\ninterpolation = \"log\"\nmax_call_ms_at_peak = " + std::to_string(cap) + "\n" + shapes;
    for (const std::string& k : kKeys) {
        const bool reuse = k == "reuse";
        t += "[scoring.stages." + k + "]\ncorrectness_points = " + std::string(k == "naive" ? "0" : "5") +
             "\nperformance_points = " + (k == "naive" ? std::string("0") : reuse ? std::to_string(reuse_performance) : "5") +
             "\ntarget_pct_reference = 80\n";
    }
    return t;
}

CourseConfig rubric(double reuse_performance, const std::string& shapes = "[[scoring.shapes]]\nshape = \"4096x4096x4096\"\nweight = 2\n",
                    double cap = 0) {
    return parse_config(rubric_text(reuse_performance, shapes, cap), "course.toml", kKeys);
}

json timing(int n, double gflops, const std::string& disposition = "passed") {
    return {{"shape", {{"M", n}, {"N", n}, {"K", n}}}, {"disposition", disposition}, {"problem", ""},
            {"gflops", gflops}, {"cublas_item", "cublas"}};
}

// A graded document: reuse passed at 4096³ at `gflops` (both precisions) next to naive = 100,
// cuBLAS = 1000 and the reference's reuse = 1000; every other stage not implemented.
json graded_document(const CourseConfig& cfg, double gflops) {
    json results = json::array();
    for (const char* prec : {"float", "double"})
        for (const std::string& st : kKeys) {
            if (st == "reuse") {
                results.push_back({{"stage", st}, {"variant", ""}, {"precision", prec}, {"disposition", "passed"},
                                   {"check_disposition", "passed"}, {"bench_disposition", "passed"}, {"problem", ""},
                                   {"bench", json::array({timing(4096, gflops)})}});
            } else {
                results.push_back({{"stage", st}, {"variant", ""}, {"precision", prec}, {"disposition", "not_implemented"},
                                   {"problem", "the stage is not implemented"}, {"bench", json::array()}});
            }
        }
    json baseline = {{"shape", {{"M", 4096}, {"N", 4096}, {"K", 4096}}}, {"naive_gflops", 100.0}, {"cublas_gflops", 1000.0}};
    json reference = json::array();
    for (const char* prec : {"float", "double"})
        reference.push_back({{"stage", "reuse"}, {"variant", ""}, {"precision", prec}, {"bench", json::array({timing(4096, 1000)})}});
    return {{"kind", "grade"},
            {"status", "graded"},
            {"results", results},
            {"baselines", {{"float", json::array({baseline})}, {"double", json::array({baseline})}}},
            {"reference", reference},
            {"config", scoring_config_json(cfg)},
            {"targets",
             {{"shapes",
               {{"float", {{"shapes", json::array({{{"shape", "4096x4096x4096"}, {"weight", 2}}})}, {"why", ""}}},
                {"double", {{"shapes", json::array({{{"shape", "4096x4096x4096"}, {"weight", 2}}})}, {"why", ""}}}}}}}};
}

const StageScore& row(const Score& s, const std::string& stage, const std::string& prec) {
    for (const StageScore& r : s.stages)
        if (r.stage == stage && r.precision == prec) return r;
    FAIL("no row " << stage << " " << prec);
    return s.stages.front();
}

}  // namespace

TEST_CASE("a graded document scores as the rules of score.h say") {
    const CourseConfig cfg = rubric(10);
    const Score s = score_document(graded_document(cfg, 500), cfg).score;
    // reuse: correct (5), and 500 GFLOPS on a log scale from naive (100) to the target (80% of 1000).
    const double f = std::log(500.0 / 100.0) / std::log(800.0 / 100.0);
    CHECK(row(s, "reuse", "float").correctness == doctest::Approx(5));
    CHECK(row(s, "reuse", "float").performance == doctest::Approx(std::round(10 * f * 100) / 100));
    CHECK(row(s, "reuse", "float").pct_reference == doctest::Approx(50));
    CHECK(row(s, "unrolled", "double").disposition == Disposition::not_implemented);
    CHECK(s.max == doctest::Approx(2 * (5 * 5 + 5 * 4 + 10)));  // correctness of 5 stages, performance of 5
}

TEST_CASE("a rescore under other points is the grade's arithmetic with the new points") {
    const CourseConfig before = rubric(10), after = rubric(20);
    const json doc = graded_document(before, 500);
    const Score a = score_document(doc, before).score, b = score_document(doc, after).score;
    CHECK(row(b, "reuse", "float").performance == doctest::Approx(2 * row(a, "reuse", "float").performance).epsilon(0.01));
    CHECK(b.max == doctest::Approx(a.max + 2 * 10));
    // Speeds at or above the target earn everything, under either rubric.
    const json fast = graded_document(before, 900);
    CHECK(row(score_document(fast, after).score, "reuse", "double").performance == doctest::Approx(20));
}

TEST_CASE("weights of the same shapes rescore; other shapes or another fit need a regrade") {
    const CourseConfig cfg = rubric(10);
    const json doc = graded_document(cfg, 500);
    const CourseConfig reweighted = rubric(10, "[[scoring.shapes]]\nshape = \"4096x4096x4096\"\nweight = 5\n");
    CHECK(score_document(doc, reweighted).shapes.at(Precision::f32).front().weight == doctest::Approx(5));

    const CourseConfig other = rubric(10, "[[scoring.shapes]]\nshape = \"2048x2048x2048\"\nweight = 1\n");
    CHECK_THROWS_WITH_AS(score_document(doc, other), doctest::Contains("2048x2048x2048"), NeedsRegrade);
    const CourseConfig more = rubric(10, "[[scoring.shapes]]\nshape = \"4096x4096x4096\"\nweight = 2\n"
                                         "[[scoring.shapes]]\nshape = \"2048x2048x2048\"\nweight = 1\n");
    CHECK_THROWS_AS(score_document(doc, more), NeedsRegrade);
    const CourseConfig capped = rubric(10, "[[scoring.shapes]]\nshape = \"4096x4096x4096\"\nweight = 2\n", 20);
    CHECK_THROWS_WITH_AS(score_document(doc, capped), doctest::Contains("max_call_ms_at_peak"), NeedsRegrade);
}

TEST_CASE("a document of a grade without a GPU scores nothing and says why") {
    const CourseConfig cfg = rubric(10);
    json doc = {{"kind", "grade"}, {"status", "no_gpu"}, {"config", scoring_config_json(cfg)}, {"results", json::array()}};
    for (const char* prec : {"float", "double"})
        for (const std::string& st : kKeys)
            doc["results"].push_back({{"stage", st}, {"variant", ""}, {"precision", prec}, {"disposition", "no_gpu"},
                                      {"problem", "not run: this machine has no GPU"}, {"bench", json::array()}});
    const Score s = score_document(doc, cfg).score;
    CHECK(s.total == 0);
    CHECK(s.max > 0);
    CHECK(row(s, "reuse", "float").disposition == Disposition::no_gpu);
    CHECK(row(s, "reuse", "float").note == "not run: this machine has no GPU");
}

TEST_CASE("what needs a regrade and what a rescore are told apart") {
    const CourseConfig a = rubric(10), b = rubric(20);
    CHECK(measurement_json(a) == measurement_json(b));
    CHECK(rubric_only_json(a) != rubric_only_json(b));
    const CourseConfig c = rubric(10, "[[scoring.shapes]]\nshape = \"2048x2048x2048\"\nweight = 2\n");
    CHECK(measurement_json(a) != measurement_json(c));
    const CourseConfig w = rubric(10, "[[scoring.shapes]]\nshape = \"4096x4096x4096\"\nweight = 3\n");
    CHECK(measurement_json(a) == measurement_json(w));
    CHECK(rubric_only_json(a) != rubric_only_json(w));
}
