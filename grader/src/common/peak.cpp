// peak.cpp — peak GEMM rates per architecture (see peak.h).
#include "common/peak.h"

namespace gemmlab {
namespace {

constexpr int kFlopsPerFma = 2;
constexpr double kMegaToGiga = 1e-3;  // MHz × flops per clock = Mflop/s
// Where no table entry applies, assume the most generous CUDA-core rates of recent GPUs, so an
// unknown GPU never rejects an honest result.
constexpr int kUnknownFp32Lanes = 128;
constexpr int kUnknownFp64Lanes = 64;
constexpr int kFp64TensorFactor = 2;  // DMMA doubles the FP64 rate on sm_80 and sm_90

}  // namespace

int fma_lanes_per_sm(Precision p, int major, int minor) {
    const int cc = major * 10 + minor;
    if (p == Precision::f32) {
        switch (cc) {
            case 60: case 70: case 72: case 75: case 80: return 64;
            case 61: case 62: case 86: case 87: case 89: case 90: case 100: case 103: case 120: return 128;
            default: return kUnknownFp32Lanes;
        }
    }
    switch (cc) {
        case 60: case 70: case 80: return 32;
        case 90: case 100: case 103: return 64;
        case 61: case 62: case 72: case 75: case 86: case 87: case 89: case 120: return 2;
        default: return kUnknownFp64Lanes;
    }
}

double peak_gflops(Precision p, const GpuShape& gpu) {
    double per_clock = double(gpu.sms) * fma_lanes_per_sm(p, gpu.cc_major, gpu.cc_minor) * kFlopsPerFma;
    const int cc = gpu.cc_major * 10 + gpu.cc_minor;
    if (p == Precision::f64 && (cc == 80 || cc == 90)) per_clock *= kFp64TensorFactor;
    return per_clock * gpu.max_sm_clock_mhz * kMegaToGiga;
}

}  // namespace gemmlab
