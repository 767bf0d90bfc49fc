// reference_gemm.h — the FP64 cuBLAS reference C_ref = alpha·A·B + beta·C and the gauge
// G = |alpha|·|A||B| + |beta|·|C| of bound.h, for operands of the type under test. Shared by the
// check engine (checker.cu) and the benchmark (bench.cu), which verifies timed calls with it.
#pragma once

#include "judge/device_buffer.h"
#include "judge/gpu_context.h"
#include "common/vocabulary.h"

namespace gemmlab {

struct Reference {
    DeviceBuffer<double> value, gauge;  // dense M×N (ld = N)
};

// alpha and beta are rounded to T first: the stage receives them as T. Cin is dense M×N, or null
// when beta == 0 (C must then not contribute, even if it holds NaN). underflow_weight > 0 adds
// w·|alpha|·(Σ_k |a_ik| + Σ_k |b_kj|) to the gauge (bound.h: FP16 inputs' underflow).
template <typename T>
Reference compute_reference(GpuContext& ctx, const Shape& s, const T* A, int lda, const T* B, int ldb,
                            const T* Cin, double underflow_weight = 0);

}  // namespace gemmlab
