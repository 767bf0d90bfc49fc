// score.h — from measured speeds and correctness to points (course.toml [scoring]). Host-only and
// pure, so every rule is tested in CI (tests/host/test_score.cpp). docs/scoring.md is the
// student-facing explanation.
//
// Per stage and precision:
//   correctness  = correctness_points × (variants that passed) / (variants), where a variant
//                  passes when it passed the full check AND every verified timed call was right;
//   performance  = performance_points × f, with f from the best passing variant that was not
//                  rejected: f = Σ_shapes weight · f_shape / Σ weight, and f_shape grows from 0 at
//                  the naive baseline's speed to 1 at target_pct_reference % of the reference
//                  solution's speed (its fastest variant of the same input precision, timed in the
//                  same grade on the same GPU), logarithmically (each doubling of speed earns the
//                  same) or linearly. Without a reference speed there is no target: the
//                  performance points are left out of the total and the maximum, with a note.
//   unsupported  = a variant the GPU (or the build's arch) cannot run is left out: the stage's
//                  points are shared over the variants it can run, and a stage with none is left
//                  out of total and maximum.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "judge/config.h"
#include "common/vocabulary.h"

namespace gemmlab {

// f for one shape: 0 at or below naive, 1 at or above target, interpolated in between.
double performance_fraction(double gflops, double naive_gflops, double target_gflops, Interpolation how);

// The speeds of one variant at one shape, with the baselines measured beside it.
struct ShapeSpeed {
    Shape shape;
    Disposition disposition = Disposition::skipped;  // of this timing (passed = timed and verified)
    double gflops = 0, naive_gflops = 0, cublas_gflops = 0;
    double reference_gflops = 0;  // the target's base: 0 when the reference was not timed here
};

struct VariantOutcome {
    std::string variant;                            // "" for single-version stages
    Disposition check = Disposition::skipped;       // of the full check
    std::vector<ShapeSpeed> speeds;                 // one per scoring shape that was timed
    std::string problem;                            // why it failed, when it did
};

struct StageScore {
    std::string stage, precision, variant_used;
    Disposition disposition = Disposition::skipped;
    double correctness = 0, correctness_max = 0, performance = 0, performance_max = 0;
    double gflops = 0, x_naive = 0, pct_cublas = 0;  // of variant_used at the headline shape
    double pct_reference = 0, target_gflops = 0;     // ... and the reference's speed, the target there
    std::string note;                                // one sentence a student can act on
    bool extra_credit = false;                       // counted in the total, not in the maximum
};

// Whether a variant's timings count (every scoring shape timed, verified and plausible).
Disposition bench_disposition(const VariantOutcome& v, const std::vector<ScoringShape>& shapes);

StageScore score_stage(const std::string& stage, Precision prec, const StageRubric& rubric,
                       const ScoringConfig& cfg, const std::vector<VariantOutcome>& variants);

// total: every stage's points; max: those of the stages that are not extra credit.
struct Score {
    double total = 0, max = 0;
    std::vector<StageScore> stages;
};
Score total_score(std::vector<StageScore> rows);

// results-schema `score`: {total, max, stages: [...]} and back.
nlohmann::json to_json(const Score& score);
Score score_from_json(const nlohmann::json& j);

// The graded shapes of one precision on a GPU whose peak in it is `peak_gflops` ([scoring]
// max_call_ms_at_peak): every shape's three dimensions are halved together, as often as needed for
// the largest call to take at most that long at peak (never below 256), so that a grade on a GPU
// with slow FP64 stays short. `why` says what changed, or stays empty.
std::vector<ScoringShape> shapes_for_gpu(const ScoringConfig& cfg, double peak_gflops, std::string* why);

// Points are shown and stored with two decimals.
double round_points(double v);

}  // namespace gemmlab
