// registry.cpp — compiled once per side (-DGEMMLAB_NS=submission, -DGEMMLAB_NS=reference): turns
// the stage table of gemmlab/stages.h into that side's registry. The grader's parent binary links
// parent_registry.cpp in place of the submission's copy (sides.h).
#include "gemmlab/stages.h"
#include "common/sides.h"

namespace gemmlab::GEMMLAB_NS {

const std::vector<StageInfo>& registry() {
    static const std::vector<StageInfo> table = stage_table();
    return table;
}

bool code_linked() { return true; }  // only the submission side's is asked (sides.h)

}  // namespace gemmlab::GEMMLAB_NS
