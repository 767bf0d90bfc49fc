// peak.h — the fastest a GPU can possibly run GEMM in a precision, from its SM count, its
// highest SM clock and the FMA lanes of one SM. A timing faster than this is more work than the GPU
// can do in that time (work that escaped the timer, an answer computed before the clock started, or
// units the stage may not use): its disposition is `rejected`. Host-only, tested in CI.
#pragma once

#include <string>

#include "common/vocabulary.h"

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

// The problem of a stage's timing above its ceiling (peak × kPeakTolerance), in words that stay true
// whatever the cause: which ceiling it is (the CUDA cores' FP32 or FP64 peak — FP64 tensor cores
// included —, or for a stage that may use the tensor cores in float, their FP16 peak) and what can go
// past it: work done outside the judge's interval, or, for a stage held to the CUDA cores, units it
// may not use (the tensor cores; the build's tensor-core rule refuses what it can see of them).
std::string above_peak_problem(Precision p, bool tensor_cores, double gflops, double peak_gflops);

}  // namespace gemmlab
