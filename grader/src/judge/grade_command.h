// grade_command.h — `gemmlab grade`: the whole pipeline (pipeline.h): the full check, then the
// benchmark of every stage that passed (next to naive, cuBLAS and the reference's own stages, on the
// judge's clock), then the score of course.toml [scoring]. Writes <out>/results.json
// (docs/results-schema.md) and <out>/gradescope.json, and prints a table.
//
// Without a GPU it still writes both files — status "no_gpu", every result no_gpu, score 0 — so
// the cluster tooling always finds a record; the caller then exits with status 3.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "judge/config.h"
#include "judge/gpu_context.h"

namespace gemmlab {

struct GradeOptions {
    std::string out_dir;
    uint64_t seed = 0;
    bool color = false;
    bool progress = false;
    bool with_reference = true;  // time the reference stages too (course.toml measure_reference)
    nlohmann::json submission;   // {name, path, files}
    std::string symbols_path;    // the build's symbols.json (symbol_scan.h); "" = beside the grader
};

// Grades on this machine's GPU; returns the exit status (0: graded).
int run_grade(GpuContext& ctx, const GradeOptions& opt, const CourseConfig& cfg);

// The record of a grade that could not run: no GPU (`reason` says why).
void write_no_gpu_grade(const GradeOptions& opt, const CourseConfig& cfg, const std::string& reason);

}  // namespace gemmlab
