// binary_names.h — the files a grader build puts beside `gemmlab` (no other dependency: the child
// sandbox, which is built without CUDA in its own test, needs these names too).
#pragma once

namespace gemmlab {

// The binary whose children run the submission's stages (common/sides.h).
constexpr const char* kStageRunnerName = "gemmlab-stages";
// The submission's shared library, beside gemmlab-stages (child/submission_library.h); the child
// sandbox lets the child read it and nothing else of the build directory (parent/sandbox.cpp).
constexpr const char* kSubmissionLibraryName = "libgemmlab-submission.so";

}  // namespace gemmlab
