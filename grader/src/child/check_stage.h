// check_stage.h — the child's side of checking: one stage run reported case by case, or one case
// in this process.
#pragma once

#include <cstdint>
#include <string>

#include "common/model.h"
#include "common/report_channel.h"
#include "common/sides.h"

namespace gemmlab {

// The child side: checks one stage run and reports each case on the report channel.
int child_check(Side side, const std::string& stage, const std::string& variant, Precision prec,
                bool quick, uint64_t seed, const ReportChannel& report);

// One case in this process, no isolation (for compute-sanitizer and debugging); prints the result.
int run_single(Side side, const std::string& stage, const std::string& variant, Precision prec,
               const Shape& shape, uint64_t seed, bool color);

}  // namespace gemmlab
