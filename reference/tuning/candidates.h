// reference/tuning/candidates.h — tuning candidates of the reference stages (instructor tool).
//
// Only compiled with -DGEMMLAB_TUNE: a stage file that has tunable parameters then defines
// <stage>_candidates(), which lists several instantiations of its kernel (e.g. tile shapes of
// the reuse stage) so that reference/tuning/ladder.cu can check and time them side by side in one
// run. Normal builds (the grader's) never see these symbols.
#pragma once

#include <string>
#include <vector>

#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace tuning {

template <typename T>
struct Candidate {
    const char* stage;  // the registry name of the stage it could replace, e.g. "reuse"
    std::string label;  // its parameters, e.g. "128x128x8 w64x64 t16x8 s4"
    GemmFn<T> fn;
    InputPrecision inputs = InputPrecision::full;  // what its float version rounds A and B to (stages.h)
};

}  // namespace tuning

void tiled_candidates(std::vector<tuning::Candidate<float>>& f32, std::vector<tuning::Candidate<double>>& f64);
void unrolled_candidates(std::vector<tuning::Candidate<float>>& f32,
                         std::vector<tuning::Candidate<double>>& f64);
void pitched_candidates(std::vector<tuning::Candidate<float>>& f32,
                        std::vector<tuning::Candidate<double>>& f64);
void reuse_candidates(std::vector<tuning::Candidate<float>>& f32,
                      std::vector<tuning::Candidate<double>>& f64);
void tensor_candidates(std::vector<tuning::Candidate<float>>& f32,
                       std::vector<tuning::Candidate<double>>& f64);

}  // namespace gemmlab::GEMMLAB_NS
