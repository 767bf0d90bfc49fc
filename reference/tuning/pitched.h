// reference/tuning/pitched.h — tuning candidates of the pitched stage (instructor tool).
//
// Included at the end of reference/pitched.cu in -DGEMMLAB_TUNE builds only (reference/tuning/run.sh
// --tune), inside its namespace: it instantiates the stage's own kernel templates with other
// parameters, for reference/tuning/ladder.cu to check and time beside the stage. Their measurements
// are in the tuning rounds of docs/performance-log.md (docs/reference-kernels.md lists them).
#pragma once

#include "candidates.h"

namespace gemmlab::GEMMLAB_NS {

void pitched_candidates(std::vector<tuning::Candidate<float>>& f32,
                        std::vector<tuning::Candidate<double>>& f64) {
    //                                                                   T  TM TN BK MINB
    f32.push_back({"pitched", "t8x8 bk8 minb2", &run_config<PitchedConfig<float, 8, 8, 8, 2>>});
    f32.push_back({"pitched", "t8x8 bk16 minb2", &run_config<PitchedConfig<float, 8, 8, 16, 2>>});
    f32.push_back({"pitched", "t4x8 bk16 minb3", &run_config<PitchedConfig<float, 4, 8, 16, 3>>});
    f32.push_back({"pitched", "t8x4 bk16 minb3", &run_config<PitchedConfig<float, 8, 4, 16, 3>>});
    f32.push_back({"pitched", "t4x4 bk16 minb4", &run_config<PitchedConfig<float, 4, 4, 16, 4>>});
    f64.push_back({"pitched", "t8x4 bk8 minb1", &run_config<PitchedConfig<double, 8, 4, 8, 1>>});
    f64.push_back({"pitched", "t4x8 bk8 minb2", &run_config<PitchedConfig<double, 4, 8, 8, 2>>});
    f64.push_back({"pitched", "t4x4 bk16 minb3", &run_config<PitchedConfig<double, 4, 4, 16, 3>>});
    f64.push_back({"pitched", "t8x8 bk8 minb1", &run_config<PitchedConfig<double, 8, 8, 8, 1>>});
    f64.push_back({"pitched", "t4x4 bk8 minb3", &run_config<PitchedConfig<double, 4, 4, 8, 3>>});
    f64.push_back({"pitched", "t8x4 bk8 minb2", &run_config<PitchedConfig<double, 8, 4, 8, 2>>});
    // DGEMM on the tensor cores (labels: block tile, warp tile, mma k, blocks per SM).
    //                                                                          BM   BN  BK  WM  WN MMA_K MINB
    f64.push_back({"pitched", "m16n8 64x128x16 w32x32 k4 2/SM", &run_dmma<PitchedDmmaConfig<64, 128, 16, 32, 32, 4, 2>>});
    f64.push_back({"pitched", "m16n8 64x128x16 w32x32 k8 2/SM", &run_dmma<PitchedDmmaConfig<64, 128, 16, 32, 32, 8, 2>>});
    f64.push_back({"pitched", "m16n8 128x128x8 w64x32 k8 1/SM", &run_dmma<PitchedDmmaConfig<128, 128, 8, 64, 32, 8, 1>>});
    f64.push_back({"pitched", "m16n8 128x128x16 w64x32 k16 1/SM", &run_dmma<PitchedDmmaConfig<128, 128, 16, 64, 32, 16, 1>>});
    f64.push_back({"pitched", "m16n8 128x64x8 w64x32 k8 2/SM", &run_dmma<PitchedDmmaConfig<128, 64, 8, 64, 32, 8, 2>>});
}

}  // namespace gemmlab::GEMMLAB_NS
