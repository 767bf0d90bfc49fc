// peak.cpp — peak GEMM rates per architecture (see peak.h).
#include "common/peak.h"

#include <cmath>
#include <sstream>

namespace gemmlab {
namespace {

constexpr int kFlopsPerFma = 2;
constexpr double kMegaToGiga = 1e-3;  // MHz × flops per clock = Mflop/s
// Where no table entry applies, assume the most generous CUDA-core rates of recent GPUs, so an
// unknown GPU never rejects an honest result.
constexpr int kUnknownFp32Lanes = 128;
constexpr int kUnknownFp64Lanes = 64;
constexpr int kFp64TensorFactor = 2;  // DMMA doubles the FP64 rate on sm_80 and sm_90
constexpr int kUnknownTensorFp16Lanes = 4096;  // sm_100's rate: no newer GPU is rejected

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

int tensor_fp16_fma_per_sm(int major, int minor) {
    // Datasheet dense FP16 rates divided by SMs × boost clock × 2, rounded up to a power of two.
    switch (major * 10 + minor) {
        case 70: case 72: case 75: case 86: case 87: case 89: return 512;
        case 80: case 120: return 1024;
        case 90: return 2048;
        default: return kUnknownTensorFp16Lanes;
    }
}

double tensor_peak_gflops(Precision p, const GpuShape& gpu) {
    if (p == Precision::f64) return peak_gflops(p, gpu);
    return double(gpu.sms) * tensor_fp16_fma_per_sm(gpu.cc_major, gpu.cc_minor) * kFlopsPerFma *
           gpu.max_sm_clock_mhz * kMegaToGiga;
}

double peak_gflops(Precision p, const GpuShape& gpu) {
    double per_clock = double(gpu.sms) * fma_lanes_per_sm(p, gpu.cc_major, gpu.cc_minor) * kFlopsPerFma;
    const int cc = gpu.cc_major * 10 + gpu.cc_minor;
    if (p == Precision::f64 && (cc == 80 || cc == 90)) per_clock *= kFp64TensorFactor;
    return per_clock * gpu.max_sm_clock_mhz * kMegaToGiga;
}

std::string above_peak_problem(Precision p, bool tensor_cores, double gflops, double peak_gflops) {
    std::ostringstream os;
    os << "measured " << std::lround(gflops) << " GFLOPS, above this GPU's ";
    if (p == Precision::f64)
        os << "FP64 peak (its FP64 units and FP64 tensor cores together)";
    else if (tensor_cores)
        os << "FP16 tensor-core peak, the fastest any float product can run on it,";
    else
        os << "FP32 peak on the CUDA cores";
    os << " of " << std::lround(peak_gflops) << " GFLOPS (+" << std::lround((kPeakTolerance - 1) * 100)
       << "% for the clock reading): more work than the GPU can do in the time measured, so part of the "
          "call's work was done outside the judge's interval";
    if (p == Precision::f32 && !tensor_cores)
        os << ", or it ran on units this stage may not use: the tensor cores, which only the tensor stage may "
              "use in float (docs/student-guide.md, \"What a stage may call\")";
    return os.str();
}

}  // namespace gemmlab
