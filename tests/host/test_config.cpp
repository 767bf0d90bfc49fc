// Tests of config.h: defaults, reading course.toml, and errors that name the key at fault.
#include <doctest/doctest.h>

#include <string>

#include "judge/config.h"

using namespace gemmlab;

namespace {

const std::vector<std::string> kKeys{"naive", "tiled", "unrolled", "pitched", "reuse", "tensor"};

// The message of the ConfigError that parsing `text` raises ("" when it parses).
std::string error_of(const std::string& text) {
    try {
        parse_config(text, "course.toml", kKeys);
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("defaults: every rubric key scored, 100 points, targets 80% of the reference speeds") {
    const CourseConfig c = default_config(kKeys);
    CHECK(c.scoring.max_points() == doctest::Approx(100.0));
    CHECK(c.scoring.interpolation == Interpolation::log);
    REQUIRE(c.scoring.shapes.size() == 2);
    CHECK(c.scoring.shapes[0].shape.M == 4096);
    CHECK(c.scoring.stages.at("naive").performance_points.f32 == 0);
    CHECK(c.scoring.stages.at("tiled").target_pct_cublas.f32 == 15);   // floor(0.8 x 19.3)
    CHECK(c.scoring.stages.at("tiled").target_pct_cublas.f64 == 9);    // not floor(0.8 x 10.4) = 8: above naive
    CHECK(c.scoring.stages.at("reuse").target_pct_cublas.f32 == 79);   // floor(0.8 x 98.9)
    CHECK(c.scoring.stages.at("reuse").target_pct_cublas.f64 == 83);   // floor(0.8 x 103.9)
    CHECK(c.bench.shapes.size() == 1);
    CHECK(c.notes.empty());
}

TEST_CASE("a stage the defaults do not know gets correctness points only, and a note") {
    const CourseConfig c = default_config({"naive", "warp"});
    CHECK(c.scoring.stages.at("warp").performance_points.f32 == 0);
    CHECK(c.scoring.stages.at("warp").correctness_points.f32 > 0);
    REQUIRE(c.notes.size() == 1);
    CHECK(c.notes[0].find("warp") != std::string::npos);
}

TEST_CASE("the tensor stage is extra credit by default; extra_credit = false makes it count") {
    const CourseConfig c = default_config(kKeys);
    const StageRubric& t = c.scoring.stages.at("tensor");
    CHECK(t.extra_credit);
    CHECK(t.correctness_points.f32 + t.performance_points.f32 + t.correctness_points.f64 + t.performance_points.f64 ==
          doctest::Approx(10.0));
    CHECK(c.scoring.max_points() == doctest::Approx(100.0));  // the 100-point scale is unchanged
    for (const auto& [key, rubric] : c.scoring.stages)
        if (key != "tensor") CHECK_FALSE(rubric.extra_credit);
    const CourseConfig counted = parse_config("[scoring.stages.tensor]\nextra_credit = false\n", "course.toml", kKeys);
    CHECK_FALSE(counted.scoring.stages.at("tensor").extra_credit);
    CHECK(counted.scoring.max_points() == doctest::Approx(110.0));
    CHECK(error_of("[scoring.stages.tensor]\nextra_credit = 1\n").find("extra_credit must be true or false") !=
          std::string::npos);
}

TEST_CASE("a missing file means defaults and a note") {
    const CourseConfig c = load_config("/nonexistent/course.toml", kKeys);
    CHECK(c.scoring.max_points() == doctest::Approx(100.0));
    REQUIRE_FALSE(c.notes.empty());
    CHECK(c.notes[0].find("defaults") != std::string::npos);
}

TEST_CASE("values are read; other sections are left to their tools") {
    const CourseConfig c = parse_config(R"(
[course]
name = "x"
[cluster]
anything = 1
[bench]
max_seconds = 0.5
min_timed_ms = 4.5
min_repetitions = 3
shapes = ["1024", "512x256x128"]
[scoring]
interpolation = "linear"
shapes = ["2048", { shape = "1000x1000x1000", weight = 0.5 }]
[scoring.stages.tiled]
target_pct_cublas = 10
performance_points = { float = 4, double = 6 }
)",
                                        "course.toml", kKeys);
    CHECK(c.bench.max_seconds == 0.5);
    CHECK(c.bench.min_timed_ms == 4.5);
    CHECK(c.bench.min_repetitions == 3);
    REQUIRE(c.bench.shapes.size() == 2);
    CHECK(c.bench.shapes[1].K == 128);
    CHECK(c.scoring.interpolation == Interpolation::linear);
    REQUIRE(c.scoring.shapes.size() == 2);
    CHECK(c.scoring.shapes[1].weight == 0.5);
    CHECK(c.scoring.stages.at("tiled").target_pct_cublas.f32 == 10);
    CHECK(c.scoring.stages.at("tiled").target_pct_cublas.f64 == 10);
    CHECK(c.scoring.stages.at("tiled").performance_points.f64 == 6);
    CHECK(c.scoring.stages.at("tiled").correctness_points.f32 == 5);  // untouched default
}

TEST_CASE("wrong values name the table, the key and what they got") {
    CHECK(error_of("[scoring.stages.tiled]\ntarget_pct_cublas = \"fast\"\n") ==
          "course.toml: [scoring.stages.tiled] target_pct_cublas must be a number between 0 and 100, or a table "
          "like { float = 12, double = 9 }, got \"fast\"");
    CHECK(error_of("[scoring.stages.tiled]\ntarget_pct_cublas = 150\n") ==
          "course.toml: [scoring.stages.tiled] target_pct_cublas must be a number between 0 and 100, got 150");
    CHECK(error_of("[scoring.stages.reuse]\ntarget_pct_cublas = { float = 80, double = -1 }\n")
              .find("target_pct_cublas.double must be a number between 0 and 100, got -1") != std::string::npos);
    CHECK(error_of("[scoring.stages.reuse]\ntarget_pct_cublas = { half = 3 }\n").find("unknown precision 'half'") !=
          std::string::npos);
    CHECK(error_of("[bench]\nmin_repetitions = \"five\"\n") ==
          "course.toml: [bench] min_repetitions must be a whole number between 1 and 100000, got \"five\"");
    CHECK(error_of("[bench]\nmin_repetitions = 10\nmax_repetitions = 5\n").find("max_repetitions must be at least") !=
          std::string::npos);
    CHECK(error_of("[bench]\nclear_l2 = 1\n") == "course.toml: [bench] clear_l2 must be true or false, got 1");
    CHECK(error_of("[scoring]\ninterpolation = \"cubic\"\n") ==
          "course.toml: [scoring] interpolation must be one of \"log\", \"linear\", got \"cubic\"");
    CHECK(error_of("[bench]\nshapes = [\"4096x0x1\"]\n").find("[bench] shapes[0] is not a shape") != std::string::npos);
    CHECK(error_of("[scoring]\nshapes = []\n").find("[scoring] shapes must be a non-empty list") != std::string::npos);
    CHECK(error_of("[[scoring.shapes]]\nweight = 2\n").find("shape is missing") != std::string::npos);
    CHECK(error_of("bench = 3\n").find("bench must be a table") != std::string::npos);
}

TEST_CASE("unknown keys and stages are errors, with the likely typo") {
    const std::string typo = error_of("[bench]\nmin_repetitons = 3\n");
    CHECK(typo.find("[bench] has an unknown key 'min_repetitons'") != std::string::npos);
    CHECK(typo.find("did you mean 'min_repetitions'") != std::string::npos);
    const std::string stage = error_of("[scoring.stages.tiles]\ncorrectness_points = 3\n");
    CHECK(stage.find("[scoring.stages] has an unknown key 'tiles'") != std::string::npos);
    CHECK(stage.find("did you mean 'tiled'") != std::string::npos);
    CHECK(error_of("[scoring.stages.tiled]\npoints = 3\n").find("[scoring.stages.tiled] has an unknown key 'points'") !=
          std::string::npos);
}

TEST_CASE("broken TOML says where") {
    const std::string e = error_of("[bench\nwarmup = 1\n");
    CHECK(e.find("course.toml:1:") == 0);
    CHECK(e.find("not valid TOML") != std::string::npos);
}

TEST_CASE("the course.toml of the repository parses and keeps the calibrated defaults") {
    const CourseConfig file = load_config("course.toml", kKeys);  // tests run in the repository root
    const CourseConfig defaults = default_config(kKeys);
    CHECK(file.notes.empty());
    CHECK(file.scoring.max_points() == doctest::Approx(defaults.scoring.max_points()));
    for (const auto& [key, rubric] : defaults.scoring.stages) {
        CAPTURE(key);
        CHECK(file.scoring.stages.at(key).target_pct_cublas.f32 == rubric.target_pct_cublas.f32);
        CHECK(file.scoring.stages.at(key).target_pct_cublas.f64 == rubric.target_pct_cublas.f64);
    }
    // ... and the timing settings the defaults have (docs/timing.md describes both at once).
    CHECK(file.bench.warmup == defaults.bench.warmup);
    CHECK(file.bench.min_repetitions == defaults.bench.min_repetitions);
    CHECK(file.bench.max_repetitions == defaults.bench.max_repetitions);
    CHECK(file.bench.target_spread_pct == defaults.bench.target_spread_pct);
    CHECK(file.bench.max_seconds == defaults.bench.max_seconds);
    CHECK(file.bench.min_timed_ms == defaults.bench.min_timed_ms);
    CHECK(file.bench.clear_l2 == defaults.bench.clear_l2);
}
