// sides.h — every stage has two implementations: the submission being graded and the reference it is
// compared with (naive baseline, reference speed). Each side's registry is gemmlab/stages.h compiled
// in its own namespace: the reference's in the reference library (runner/registry.cpp), run by
// gemmlab-baselines; the submission's in its own library, run by gemmlab-stages. The judge sees both
// as tables of names (judge/registry_names.cpp: the submission's entry points are left empty).
#pragma once

#include <string>
#include <vector>

#include "common/binary_names.h"
#include "gemmlab/stages.h"

namespace gemmlab {

namespace submission {
const std::vector<StageInfo>& registry();
}  // namespace submission

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
