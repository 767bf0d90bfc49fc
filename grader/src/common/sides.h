// sides.h — one grader binary holds two implementations of every stage: the submission being
// graded and the reference it is compared with (naive baseline, reference speed). Each side's
// registry is gemmlab/stages.h compiled in its own namespace (see registry.cpp).
#pragma once

#include <string>
#include <vector>

#include "common/binary_names.h"
#include "gemmlab/stages.h"

namespace gemmlab {

namespace submission {
const std::vector<StageInfo>& registry();
// Whether this binary holds the submission's code. The grader's parent, `gemmlab`, does not: it
// has the stage table's names only (parent_registry.cpp) and runs every stage in a child process
// of `gemmlab-stages`, the binary beside it that holds the submission (isolation.h). So nothing
// of a submission — static initializers included — ever runs in the unsandboxed parent.
bool code_linked();
}  // namespace submission

// The binary whose children run the submission's stages: this one when it holds the submission
// (gemmlab-stages itself, the test binaries), else `gemmlab-stages` beside it. Throws, saying what
// to rebuild, when that file is missing or not executable (stage_runner.cpp).
std::string stage_runner_executable();

namespace reference { const std::vector<StageInfo>& registry(); }

enum class Side { submission, reference };

inline const std::vector<StageInfo>& stages(Side side) {
    return side == Side::submission ? submission::registry() : reference::registry();
}

// The stage called `name` on `side`, or nullptr.
inline const StageInfo* find_stage(Side side, const std::string& name) {
    for (const StageInfo& s : stages(side))
        if (name == s.name) return &s;
    return nullptr;
}

inline const StageVariant* find_variant(const StageInfo& stage, const std::string& label) {
    for (const StageVariant& v : stage.variants)
        if (label == v.label) return &v;
    return nullptr;
}

// The baseline stage (naive) of the reference side: every speed-up is measured against it.
inline const StageInfo& baseline_stage() {
    for (const StageInfo& s : stages(Side::reference))
        if (s.baseline) return s;
    return stages(Side::reference).front();
}

}  // namespace gemmlab
