// registry.cpp — the reference side's registry: the stage table of gemmlab/stages.h compiled with
// -DGEMMLAB_NS=reference into the reference library, which gemmlab-baselines runs and the judge
// reads names from. (The submission's table lives in its own library: runner/submission_exports.cpp.)
#include "gemmlab/stages.h"
#include "common/sides.h"

namespace gemmlab::GEMMLAB_NS {

const std::vector<StageInfo>& registry() {
    static const std::vector<StageInfo> table = stage_table();
    return table;
}

}  // namespace gemmlab::GEMMLAB_NS
