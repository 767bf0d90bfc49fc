// binary_names.h — the files a grader build puts beside `gemmlab` (no other dependency: the sandbox,
// which is built without CUDA in its own test, needs these names too).
#pragma once

namespace gemmlab {

// The runner of the submission's stages (runner/submission_main.cpp).
constexpr const char* kStageRunnerName = "gemmlab-stages";
// The runner of the grader's own calls: reference stages, cuBLAS, calibration (runner/baselines_main.cu).
constexpr const char* kBaselineRunnerName = "gemmlab-baselines";
// The submission's shared library, beside gemmlab-stages (runner/submission_library.h); the sandbox
// lets the runner read it and nothing else of the build directory (judge/sandbox.cpp).
constexpr const char* kSubmissionLibraryName = "libgemmlab-submission.so";

}  // namespace gemmlab
