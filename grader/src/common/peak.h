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

// A measured speed above peak × this is rejected: the clock reading may lag a boost by a few %.
constexpr double kPeakTolerance = 1.05;

}  // namespace gemmlab
