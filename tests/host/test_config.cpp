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

TEST_CASE("the grader holds no rubric of its own: no points, no targets, no graded shapes") {
    const CourseConfig c = default_config(kKeys);
    CHECK(c.scoring.stages.empty());
    CHECK(c.scoring.shapes.empty());
    CHECK(c.scoring.max_points() == 0);
    CHECK(c.scoring.interpolation == Interpolation::log);
    CHECK(c.bench.shapes.size() == 1);  // a timing setting, not the rubric
    CHECK(c.notes.empty());
}

TEST_CASE("grading refuses a course.toml without a stage's rubric or graded shapes") {
    const std::string shapes = "[[scoring.shapes]]\nshape = \"1024\"\n";
    std::string all;
    for (const std::string& k : kKeys) all += "[scoring.stages." + k + "]\ncorrectness_points = 1\n";
    CHECK_NOTHROW(require_rubric(parse_config(shapes + all, "course.toml", kKeys), kKeys));
    try {
        require_rubric(parse_config(shapes + "[scoring.stages.naive]\n", "course.toml", kKeys), kKeys);
        FAIL("no error");
    } catch (const ConfigError& e) {
        const std::string m = e.what();
        CHECK(m.find("missing [scoring.stages.tiled], [scoring.stages.unrolled]") != std::string::npos);
    }
    CHECK_THROWS_WITH_AS(require_rubric(parse_config(all, "course.toml", kKeys), kKeys),
                         doctest::Contains("at least one [[scoring.shapes]]"), ConfigError);
    const CourseConfig missing = load_config("/nonexistent/course.toml", kKeys);
    REQUIRE_FALSE(missing.notes.empty());  // check and bench still run on defaults
    CHECK_THROWS_AS(require_rubric(missing, kKeys), ConfigError);
}

TEST_CASE("extra credit counts in the total, not the maximum; extra_credit = false makes it count") {
    const std::string base = "[scoring.stages.tiled]\ncorrectness_points = 5\n[scoring.stages.tensor]\ncorrectness_points = 2.5\n";
    const CourseConfig on = parse_config(base + "extra_credit = true\n", "course.toml", kKeys);
    CHECK(on.scoring.max_points() == doctest::Approx(10.0));
    const CourseConfig off = parse_config(base + "extra_credit = false\n", "course.toml", kKeys);
    CHECK(off.scoring.max_points() == doctest::Approx(15.0));
    CHECK(error_of("[scoring.stages.tensor]\nextra_credit = 1\n").find("extra_credit must be true or false") !=
          std::string::npos);
}

TEST_CASE("a missing file means defaults and a note") {
    const CourseConfig c = load_config("/nonexistent/course.toml", kKeys);
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
min_interval_ms = 2.5
min_repetitions = 3
shapes = ["1024", "512x256x128"]
[scoring]
interpolation = "linear"
max_call_ms_at_peak = 12.5
shapes = ["2048", { shape = "1000x1000x1000", weight = 0.5 }]
[scoring.stages.tiled]
target_pct_reference = 80
correctness_points = 5
performance_points = { float = 4, double = 6 }
)",
                                        "course.toml", kKeys);
    CHECK(c.bench.max_seconds == 0.5);
    CHECK(c.bench.min_timed_ms == 4.5);
    CHECK(c.bench.min_interval_ms == 2.5);
    CHECK(c.bench.min_repetitions == 3);
    REQUIRE(c.bench.shapes.size() == 2);
    CHECK(c.bench.shapes[1].K == 128);
    CHECK(c.scoring.interpolation == Interpolation::linear);
    REQUIRE(c.scoring.shapes.size() == 2);
    CHECK(c.scoring.shapes[1].weight == 0.5);
    CHECK(c.scoring.max_call_ms_at_peak == 12.5);
    CHECK(c.scoring.stages.at("tiled").target_pct_reference.f32 == 80);
    CHECK(c.scoring.stages.at("tiled").target_pct_reference.f64 == 80);
    CHECK(c.scoring.stages.at("tiled").performance_points.f64 == 6);
    CHECK(c.scoring.stages.at("tiled").correctness_points.f32 == 5);
}

TEST_CASE("wrong values name the table, the key and what they got") {
    CHECK(error_of("[scoring.stages.tiled]\ntarget_pct_reference = \"fast\"\n") ==
          "course.toml: [scoring.stages.tiled] target_pct_reference must be a number between 0 and 1000, or a table "
          "like { float = 12, double = 9 }, got \"fast\"");
    CHECK(error_of("[scoring.stages.tiled]\ntarget_pct_reference = 1500\n") ==
          "course.toml: [scoring.stages.tiled] target_pct_reference must be a number between 0 and 1000, got 1500");
    CHECK(error_of("[scoring.stages.reuse]\ntarget_pct_reference = { float = 80, double = -1 }\n")
              .find("target_pct_reference.double must be a number between 0 and 1000, got -1") != std::string::npos);
    CHECK(error_of("[scoring.stages.reuse]\ntarget_pct_reference = { half = 3 }\n").find("unknown precision 'half'") !=
          std::string::npos);
    // Performance points need a target; the old cuBLAS-relative key says what replaced it.
    CHECK(error_of("[scoring.stages.reuse]\nperformance_points = 5\n").find("target_pct_reference is missing") !=
          std::string::npos);
    CHECK(error_of("[scoring.stages.reuse]\ntarget_pct_cublas = 79\n").find("write target_pct_reference") !=
          std::string::npos);
    CHECK(error_of("[scoring]\nmax_call_ms_at_peak = -1\n").find("max_call_ms_at_peak must be a number") !=
          std::string::npos);
    CHECK(error_of("[bench]\nmin_repetitions = \"five\"\n") ==
          "course.toml: [bench] min_repetitions must be a whole number between 1 and 100000, got \"five\"");
    CHECK(error_of("[bench]\nmin_repetitions = 10\nmax_repetitions = 5\n").find("max_repetitions must be at least") !=
          std::string::npos);
    CHECK(error_of("[bench]\nclear_l2 = 1\n") == "course.toml: [bench] clear_l2 must be true or false, got 1");
    CHECK(error_of("[bench]\nmin_interval_ms = 5000\n") ==
          "course.toml: [bench] min_interval_ms must be a number between 0 and 1000, got 5000");
    // An interval of short calls must fit its time limit with room to spare.
    CHECK(error_of("[bench]\nmin_interval_ms = 600\ncall_timeout_seconds = 2\n")
              .find("min_interval_ms must be at most a quarter of call_timeout_seconds (2 s = 2000 ms)") !=
          std::string::npos);
    CHECK(error_of("[bench]\nmin_interval_ms = 500\ncall_timeout_seconds = 2\n").empty());
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

TEST_CASE("the course.toml of the repository is a complete rubric: 100 points, targets from the reference") {
    const CourseConfig file = load_config("course.toml", kKeys);  // tests run in the repository root
    CHECK(file.notes.empty());
    CHECK_NOTHROW(require_rubric(file, kKeys));
    CHECK(file.scoring.max_points() == doctest::Approx(100.0));
    CHECK(file.scoring.stages.at("tensor").extra_credit);
    CHECK(file.scoring.max_call_ms_at_peak > 0);
    for (const auto& [key, rubric] : file.scoring.stages) {
        CAPTURE(key);
        for (Precision p : {Precision::f32, Precision::f64})
            if (rubric.performance_points.get(p) > 0) CHECK(rubric.target_pct_reference.get(p) > 0);
    }
    // ... and [bench] shows the timing defaults (docs/timing.md describes both at once).
    const CourseConfig defaults = default_config(kKeys);
    CHECK(file.bench.warmup == defaults.bench.warmup);
    CHECK(file.bench.min_repetitions == defaults.bench.min_repetitions);
    CHECK(file.bench.max_repetitions == defaults.bench.max_repetitions);
    CHECK(file.bench.target_spread_pct == defaults.bench.target_spread_pct);
    CHECK(file.bench.max_seconds == defaults.bench.max_seconds);
    CHECK(file.bench.min_timed_ms == defaults.bench.min_timed_ms);
    CHECK(file.bench.clear_l2 == defaults.bench.clear_l2);
}
