// reference/tuning/tensor.h — tuning candidates of the tensor stage (instructor tool).
//
// Included at the end of reference/tensor.cu in -DGEMMLAB_TUNE builds only (reference/tuning/run.sh
// --tune): it sees the stage file's own kernel templates and instantiates them with other
// parameters, for reference/tuning/ladder.cu to check and time beside the stage. Their measurements
// are in docs/performance-log.md (docs/reference-kernels.md lists them). The mma.sync candidates run where their scheme's instructions
// exist (run_config launches them unconditionally: time them on sm_80 or later).
#pragma once

#include "candidates.h"

namespace gemmlab::GEMMLAB_NS {

namespace {
template <class Cfg>
tuning::Candidate<typename Cfg::Elem> candidate(const char* label, InputPrecision inputs) {
    return {"tensor", label, &run_config<Cfg>, inputs};
}

}  // namespace

void tensor_candidates(std::vector<tuning::Candidate<float>>& f32, std::vector<tuning::Candidate<double>>& f64) {
    constexpr InputPrecision H = InputPrecision::fp16, T32 = InputPrecision::tf32, F = InputPrecision::full;
    constexpr Scheme X = Scheme::split_tf32;
    // wgmma (sm_90a on an H100/H200 only; elsewhere they run the mma.sync kernel).
    using hopper::WgmmaConfig;
    f32.push_back({"tensor", "3xtf32 wgmma 128x128x32 s3", &wgmma_or_mma<WgmmaConfig<X, 128, 3>>, F});
    f32.push_back({"tensor", "3xtf32 wgmma 128x128x16 s4", &wgmma_or_mma<WgmmaConfig<X, 64, 4>>, F});
    f32.push_back({"tensor", "tf32 wgmma 128x128x16 s8", &wgmma_or_mma<WgmmaConfig<Scheme::tf32, 64, 8>>, T32});
    f32.push_back({"tensor", "tf32 wgmma 128x128x32 s6", &wgmma_or_mma<WgmmaConfig<Scheme::tf32, 128, 6>>, T32});
    f32.push_back({"tensor", "fp16 wgmma 128x128x64 s6", &wgmma_or_mma<WgmmaConfig<Scheme::fp16, 128, 6>>, H});
    f32.push_back({"tensor", "fp16 wgmma 128x128x64 s4", &wgmma_or_mma<WgmmaConfig<Scheme::fp16, 128, 4>>, H});
    //                                                BM   BN  BK  WM  WN  ST  MINB
    f32.push_back(candidate<TensorConfig<X, 128, 128, 32, 64, 32, 3, 1>>("3xtf32 128x128x32 w64x32 s3", F));
    f32.push_back(candidate<TensorConfig<X, 128, 128, 32, 64, 32, 4, 1>>("3xtf32 128x128x32 w64x32 s4", F));
    f32.push_back(candidate<TensorConfig<X, 128, 128, 16, 64, 32, 4, 1>>("3xtf32 128x128x16 w64x32 s4", F));
    f32.push_back(candidate<TensorConfig<X, 128, 128, 32, 32, 64, 4, 1>>("3xtf32 128x128x32 w32x64 s4", F));
    f32.push_back(candidate<TensorConfig<X, 256, 64, 32, 64, 32, 3, 1>>("3xtf32 256x64x32 w64x32 s3", F));
    f32.push_back(candidate<TensorConfig<X, 64, 128, 32, 32, 32, 4, 2>>("3xtf32 64x128x32 w32x32 s4", F));
    // Without the slab sum (one accumulator: fewer registers, larger warp tiles, less accurate at long K).
    f32.push_back(candidate<TensorConfig<X, 128, 128, 32, 64, 32, 4, 1, false>>("3xtf32 128x128x32 w64x32 s4 one-acc", F));
    f32.push_back(candidate<TensorConfig<X, 128, 256, 32, 64, 64, 3, 1, false>>("3xtf32 128x256x32 w64x64 s3 one-acc", F));
    f32.push_back(candidate<TensorConfig<Scheme::tf32, 128, 128, 32, 64, 32, 4, 1>>("tf32 128x128x32 w64x32 s4", T32));
    f32.push_back(candidate<TensorConfig<Scheme::tf32, 128, 128, 32, 64, 32, 3, 2>>("tf32 128x128x32 w64x32 s3 2/SM", T32));
    f32.push_back(candidate<TensorConfig<Scheme::tf32, 128, 256, 32, 64, 64, 3, 1>>("tf32 128x256x32 w64x64 s3", T32));
    f32.push_back(candidate<TensorConfig<Scheme::fp16, 128, 128, 32, 64, 32, 4, 1>>("fp16 128x128x32 w64x32 s4", H));
    f32.push_back(candidate<TensorConfig<Scheme::fp16, 128, 128, 32, 64, 32, 3, 2>>("fp16 128x128x32 w64x32 s3 2/SM", H));
    f32.push_back(candidate<TensorConfig<Scheme::fp16, 128, 256, 32, 64, 64, 3, 1>>("fp16 128x256x32 w64x64 s3", H));
    f64.push_back(candidate<TensorConfig<Scheme::fp64, 64, 128, 16, 32, 64, 4, 2>>("dmma 64x128x16 w32x64 s4", F));
    f64.push_back(candidate<TensorConfig<Scheme::fp64, 128, 128, 16, 64, 32, 3, 1>>("dmma 128x128x16 w64x32 s3", F));
    f64.push_back(candidate<TensorConfig<Scheme::fp64, 64, 64, 16, 32, 32, 3, 4>>("dmma 64x64x16 w32x32 s3", F));
}

}  // namespace gemmlab::GEMMLAB_NS
