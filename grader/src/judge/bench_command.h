// bench_command.h — `gemmlab bench` (student-facing): the pipeline's check step on the quick shape set
// (never time a wrong kernel), then its bench step: GFLOPS of every stage that passed next to naive and
// cuBLAS (and the reference's own stages, when asked), a table per shape, and a JSON record.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/selection.h"
#include "common/vocabulary.h"
#include "judge/config.h"
#include "judge/gpu_context.h"

namespace gemmlab {

struct BenchCommandOptions {
    Selection selection;
    std::vector<Shape> shapes;
    BenchConfig config;
    bool with_reference = false;
    uint64_t seed = 0;
    bool color = false;
    bool progress = false;
    std::string json_out;
    nlohmann::json submission;
    std::vector<std::string> config_notes;
};

// Runs `gemmlab bench`; returns the exit status (0 fine, 1 a stage failed while being timed).
int run_bench_command(GpuContext& ctx, const BenchCommandOptions& opt);

}  // namespace gemmlab
