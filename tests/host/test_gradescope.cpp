// Tests of gradescope.h against Gradescope's autograder results spec: top-level score, output,
// execution_time and tests[], each test with name, score, max_score, output and visibility.
#include <doctest/doctest.h>

#include <set>

#include "judge/gradescope.h"

using namespace gemmlab;
using nlohmann::json;

namespace {

StageScore row(const char* stage, const char* prec, double c, double cmax, double p, double pmax, Disposition d,
               const char* note) {
    StageScore s;
    s.stage = stage, s.precision = prec;
    s.correctness = c, s.correctness_max = cmax, s.performance = p, s.performance_max = pmax;
    s.disposition = d;
    s.note = note;
    return s;
}

}  // namespace

TEST_CASE("gradescope results carry every required field with the right types") {
    const Score score = total_score({row("naive", "float", 0, 0, 0, 0, Disposition::passed, ""),
                                     row("tiled", "float", 5, 5, 2.5, 5, Disposition::passed, "6% of cuBLAS"),
                                     row("reuse", "double", 0, 5, 0, 10, Disposition::not_implemented, "not implemented yet")});
    const json g = gradescope_json(score, "Score 7.5 / 25", 41.2, "visible");
    CHECK(g.at("score").is_number());
    CHECK(g["score"] == 7.5);
    CHECK(g.at("output").is_string());
    CHECK(g.at("execution_time").is_number_integer());
    CHECK(g["execution_time"] == 42);  // whole seconds, rounded up
    const std::set<std::string> visibilities{"hidden", "after_due_date", "after_published", "visible"};
    REQUIRE(g.at("tests").is_array());
    CHECK(g["tests"].size() == 4);  // naive has no points: no tests
    double sum = 0, max = 0;
    for (const json& t : g["tests"]) {
        CHECK(t.at("name").is_string());
        CHECK(t.at("score").is_number());
        CHECK(t.at("max_score").is_number());
        CHECK(t.at("output").is_string());
        CHECK(visibilities.count(t.at("visibility").get<std::string>()) == 1);
        CHECK(t["score"].get<double>() <= t["max_score"].get<double>());
        sum += t["score"].get<double>();
        max += t["max_score"].get<double>();
    }
    CHECK(sum == doctest::Approx(g["score"].get<double>()));
    CHECK(max == doctest::Approx(score.max));
    CHECK(g["tests"][0]["name"] == "tiled (float): correctness");
    CHECK(g["tests"][1]["name"] == "tiled (float): performance");
    CHECK(g["tests"][3]["output"].get<std::string>().find("not_implemented") != std::string::npos);
    CHECK(gradescope_json(score, "", 0, "hidden")["tests"][0]["visibility"] == "hidden");
}

TEST_CASE("extra credit: Gradescope tests whose score may exceed a max_score of 0") {
    StageScore extra = row("tensor", "float", 2.5, 2.5, 1.0, 2.5, Disposition::passed, "45% of cuBLAS FP16");
    extra.extra_credit = true;
    const Score score = total_score({row("reuse", "float", 5, 5, 10, 10, Disposition::passed, ""), extra});
    CHECK(score.total == doctest::Approx(18.5));
    CHECK(score.max == doctest::Approx(15));
    const json g = gradescope_json(score, "", 1, "visible");
    REQUIRE(g["tests"].size() == 4);
    double sum = 0, max = 0;
    for (const json& t : g["tests"]) sum += t["score"].get<double>(), max += t["max_score"].get<double>();
    CHECK(sum == doctest::Approx(g["score"].get<double>()));
    CHECK(max == doctest::Approx(score.max));  // the maxima still add up to the course's maximum
    CHECK(g["tests"][2]["name"] == "tensor (float, extra credit): correctness");
    CHECK(g["tests"][2]["max_score"] == 0);
    CHECK(g["tests"][2]["score"] == 2.5);
    CHECK(g["tests"][2]["status"] == "passed");
    CHECK(g["tests"][3]["status"] == "failed");  // 1 of its 2.5 points
    CHECK(g["tests"][3]["output"].get<std::string>().find("extra credit: up to 2.5 points") != std::string::npos);
}

TEST_CASE("a grade that never ran on a GPU carries no score to Gradescope, not a zero") {
    Score score;
    score.stages = {row("tiled", "float", 0, 5, 0, 5, Disposition::no_gpu, "not run: this machine has no GPU")};
    score.max = 10;
    const json g = gradescope_json(score, "Not graded: no usable NVIDIA GPU", 0, "visible", /*scored=*/false);
    CHECK_FALSE(g.contains("score"));
    REQUIRE(g["tests"].size() == 1);
    CHECK_FALSE(g["tests"][0].contains("score"));
    CHECK_FALSE(g["tests"][0].contains("max_score"));
    CHECK(g["tests"][0]["output"] == "no_gpu: not run: this machine has no GPU");
    CHECK(g["output"] == "Not graded: no usable NVIDIA GPU");
    CHECK(gradescope_json(score, "graded", 0, "visible").contains("score"));
}
