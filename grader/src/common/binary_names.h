// binary_names.h — the files a grader build puts beside `gemmlab` (no other dependency: the sandbox,
// which is built without CUDA in its own test, needs these names too).
#pragma once

#include <string>

namespace gemmlab {

// The runner of the submission's stages (runner/submission_main.cpp).
constexpr const char* kStageRunnerName = "gemmlab-stages";
// The runner of the grader's own calls: reference stages, cuBLAS, calibration (runner/baselines_main.cu).
constexpr const char* kBaselineRunnerName = "gemmlab-baselines";
// The library of one stage of the submission, beside gemmlab-stages (runner/submission_library.h): its
// stage file and the files that file calls into. The sandbox lets a runner read the libraries of the
// stages it runs and nothing else of the build directory (judge/runner_launch.cpp, judge/sandbox.cpp).
inline std::string submission_library_name(const std::string& stage) {
    return "libgemmlab-submission-" + stage + ".so";
}

}  // namespace gemmlab
