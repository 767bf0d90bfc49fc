// registry.cpp — compiled once per side (-DGEMMLAB_NS=submission, -DGEMMLAB_NS=reference): turns
// the stage table of gemmlab/stages.h into that side's registry.
#include "gemmlab/stages.h"
#include "sides.h"

namespace gemmlab::GEMMLAB_NS {

const std::vector<StageInfo>& registry() {
    static const std::vector<StageInfo> table = stage_table();
    return table;
}

}  // namespace gemmlab::GEMMLAB_NS
