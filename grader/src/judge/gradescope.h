// gradescope.h — the score in Gradescope's autograder format (results.json of an autograder:
// https://gradescope-autograders.readthedocs.io/en/latest/specs/): top-level `score`, `output`,
// `execution_time`, and `tests[]` with `name`, `score`, `max_score`, `output`, `visibility`.
// One test per stage and precision for correctness, and one for performance where it has points.
// Host-only, tested in CI against the spec's required fields.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "judge/score.h"

namespace gemmlab {

// scored = false (the grading machine had no GPU): no score, and tests without score or maximum (what is
// known without a GPU: a stage refused at build time, or not run), so an upload to Gradescope carries
// no points rather than a 0 the submission did not earn.
nlohmann::json gradescope_json(const Score& score, const std::string& summary, double execution_seconds,
                               const std::string& visibility, bool scored = true);

}  // namespace gemmlab
