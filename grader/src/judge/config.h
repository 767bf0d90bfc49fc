// config.h — the [bench] and [scoring] sections of course.toml: how the grader times stages and
// how it turns their speed into points. The settings have defaults here, in code; the rubric
// (points, targets, graded shapes) has none — it lives in course.toml only, and grading refuses a
// file without it (require_rubric). A wrong key or value is an error that names it:
//
//   course.toml: [scoring.stages.tiled] target_pct_reference must be a number between 0 and 1000, got "fast"
//
// Other sections of course.toml ([course], [cluster], [handout], [report], ...) belong to other
// tools and are not looked at here. docs/scoring.md explains the rubric and its calibration.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/vocabulary.h"

namespace gemmlab {

struct ConfigError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum class Interpolation { log, linear };
const char* interpolation_name(Interpolation i);

// A value that may differ by precision: `key = 12` (both) or `key = { float = 12, double = 9 }`.
struct PerPrecision {
    double f32 = 0, f64 = 0;
    double get(Precision p) const { return p == Precision::f32 ? f32 : f64; }
};

// How one stage (one rubric key of the registry) earns points, per precision.
struct StageRubric {
    PerPrecision correctness_points;    // given when every variant passes (shared out per variant)
    PerPrecision performance_points;    // 0 at naive speed, all of them at the target
    // The speed that earns full performance points: this % of the reference solution's speed,
    // measured in the same grade on the same GPU (docs/scoring.md, "Targets").
    PerPrecision target_pct_reference;
    // Extra credit: the stage's points are added to the total but not to the maximum, so the
    // 100-point scale stays as it is (set it to false to make them count toward the maximum).
    bool extra_credit = false;
};

struct ScoringShape {
    Shape shape;
    double weight = 1.0;
};

struct ScoringConfig {
    Interpolation interpolation = Interpolation::log;
    std::vector<ScoringShape> shapes;            // the first one is the headline shape of tables
    std::map<std::string, StageRubric> stages;   // by rubric key (gemmlab/stages.h)
    std::string gradescope_visibility = "visible";
    // grade times the reference stages, whose speeds are the targets; false (tests of the flow
    // only) leaves performance unscored.
    bool measure_reference = true;
    // Each precision's graded shapes are halved (all three dimensions) until one call at the GPU's
    // peak in that precision would take at most this long; 0 keeps them as listed.
    double max_call_ms_at_peak = 0;
    double max_points() const;                   // over both precisions, extra credit not included
};

struct BenchConfig {
    int warmup = 1;                    // untimed calls per stage and shape (clocks up, caches, lazy loading)
    int min_repetitions = 5;
    int max_repetitions = 50;
    double target_spread_pct = 2.0;    // stop once IQR/median is below this...
    double max_seconds = 2.0;          // ...or this many seconds of calls were spent (per stage, per shape)
    double min_timed_ms = 5.0;         // converged needs this many ms of timed calls too (short calls: more of them)
    double min_interval_ms = 2.0;      // shorter calls share a timed interval with others of the same item
    bool clear_l2 = true;              // flush L2 before each timed call when the operands could sit in it
    double call_timeout_seconds = 30;  // a stage silent for this long is killed (timed_out)
    std::vector<Shape> shapes;         // what `make bench` times when no SHAPES= is given
};

struct CourseConfig {
    BenchConfig bench;
    ScoringConfig scoring;
    std::string source;               // the file read, or "defaults"
    std::vector<std::string> notes;   // things worth telling (e.g. "no course.toml: defaults")
};

// The defaults of [bench] and [scoring]'s settings. The rubric itself (points, targets, graded
// shapes) has no defaults: it lives in course.toml only.
CourseConfig default_config(const std::vector<std::string>& rubric_keys);

// What grading needs beyond a valid file: a [scoring.stages.<key>] table for every rubric key and
// at least one graded shape. Throws ConfigError naming what is missing.
void require_rubric(const CourseConfig& c, const std::vector<std::string>& rubric_keys);

// Parses course.toml text; `source` names it in messages. Throws ConfigError.
CourseConfig parse_config(const std::string& text, const std::string& source,
                          const std::vector<std::string>& rubric_keys);

// Reads the file; a missing file gives the defaults and a note. Throws ConfigError.
CourseConfig load_config(const std::string& path, const std::vector<std::string>& rubric_keys);

}  // namespace gemmlab
