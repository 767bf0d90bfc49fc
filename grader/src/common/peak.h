// peak.h — the fastest a GPU can possibly run GEMM in a precision, from its SM count, its
// highest SM clock and the FMA lanes of one SM. A timing faster than this cannot be real (work
// that escaped the timer, an answer computed before the clock started): its disposition is
// `rejected`. Host-only, tested in CI.
#pragma once

#include "common/model.h"

namespace gemmlab {

struct GpuShape {
    int sms = 0;
    double max_sm_clock_mhz = 0;
    int cc_major = 0, cc_minor = 0;
};

// FMA lanes per SM (one FMA = 2 flops) for the CUDA-core pipes, from NVIDIA's tuning guides.
int fma_lanes_per_sm(Precision p, int cc_major, int cc_minor);

// GFLOPS; for double it allows the FP64 tensor cores where they exist (2× the FP64 FMA rate on
// sm_80 and sm_90), because cuBLAS uses them and a student may too.
double peak_gflops(Precision p, const GpuShape& gpu);

// FP16 multiply-adds per clock and SM on the tensor cores (dense, FP32 accumulation allowed to be
// generous), the fastest any float product can run on this GPU: TF32 runs at half this rate, and
// an FP32-accurate split (3xTF32) at a sixth of it.
int tensor_fp16_fma_per_sm(int cc_major, int cc_minor);

// The speed ceiling of a stage that may use the tensor cores (gemmlab/stages.h tensor_cores): for
// float the FP16 tensor-core rate, for double the FP64 rate with DMMA (peak_gflops).
double tensor_peak_gflops(Precision p, const GpuShape& gpu);

// A measured speed above peak × this is rejected: the clock reading may lag a boost by a few %.
constexpr double kPeakTolerance = 1.05;

}  // namespace gemmlab
