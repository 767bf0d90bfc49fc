// score_document.h — the score of a grade from its results document (docs/results-schema.md: the
// results and their timings, the baselines, the reference's timings, the shapes graded) under a
// rubric. Host-only: `gemmlab grade` scores the document it is about to write with it, and
// `gemmlab-config --rescore` applies an edited rubric (points, targets, weights, interpolation) to a
// stored results.json without a GPU — so a rescore is the grade's own arithmetic, not a copy of it.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "judge/config.h"
#include "judge/score.h"

namespace gemmlab {

// A document the rubric cannot score without measuring again: the rubric grades other shapes than
// the document measured (or halves them differently). The message names what differs.
struct NeedsRegrade : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct DocumentScore {
    Score score;
    std::map<Precision, std::vector<ScoringShape>> shapes;  // the shapes scored, per precision, with weights
};

// The score of `doc` (kind "grade", status "graded" or "no_gpu") under `cfg`'s rubric. The shapes
// are those the document says it graded (targets.shapes), weighted by `cfg`. Throws NeedsRegrade.
DocumentScore score_document(const nlohmann::json& doc, const CourseConfig& cfg);

// results-schema `config`: what scored a document.
nlohmann::json scoring_config_json(const CourseConfig& cfg);

// What in `cfg` decides what a grade measures (a change needs a regrade on a GPU) and what only
// turns the measurements into points (a change needs a rescore): the `measurement` and `rubric` of
// `gemmlab-config --json`, which the course tools compare between two course states.
nlohmann::json measurement_json(const CourseConfig& cfg);
nlohmann::json rubric_only_json(const CourseConfig& cfg);

}  // namespace gemmlab
