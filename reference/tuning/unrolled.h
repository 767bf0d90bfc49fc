// reference/tuning/unrolled.h — tuning candidates of the unrolled stage (instructor tool).
//
// Included at the end of reference/unrolled.cu in -DGEMMLAB_TUNE builds only (reference/tuning/run.sh
// --tune): it sees the stage file's own kernel templates and instantiates them with other
// parameters, for reference/tuning/ladder.cu to check and time beside the stage. Their
// measurements are in the tuning rounds of docs/performance-log.md (docs/reference-kernels.md lists them).
#pragma once

#include "candidates.h"

namespace gemmlab::GEMMLAB_NS {

void unrolled_candidates(std::vector<tuning::Candidate<float>>& f32,
                         std::vector<tuning::Candidate<double>>& f64) {
    //                                                                    T  TM TN  TY  TX  BK  MINB
    f32.push_back({"unrolled", "t8x8 bk8 minb2", &run_config<UnrolledConfig<float, 8, 8, 16, 16, 8, 2>>});
    f32.push_back({"unrolled", "t8x8 bk16 minb2", &run_config<UnrolledConfig<float, 8, 8, 16, 16, 16, 2>>});
    f64.push_back({"unrolled", "t8x4 bk8 minb2", &run_config<UnrolledConfig<double, 8, 4, 16, 16, 8, 2>>});
    f64.push_back({"unrolled", "t8x4 bk16 minb2", &run_config<UnrolledConfig<double, 8, 4, 16, 16, 16, 2>>});
    f64.push_back({"unrolled", "t4x4 bk8 minb2", &run_config<UnrolledConfig<double, 4, 4, 16, 16, 8, 2>>});
}

}  // namespace gemmlab::GEMMLAB_NS
