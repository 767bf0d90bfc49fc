// gpu_context.h — what a grader child process sets up once: its stream, cuBLAS, cuRAND.
#pragma once

#include <cstdint>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <curand.h>

namespace gemmlab {

struct GpuContext {
    cudaStream_t stream = nullptr;
    cublasHandle_t cublas = nullptr;
    curandGenerator_t rng = nullptr;

    explicit GpuContext(uint64_t seed);
    ~GpuContext();
    GpuContext(const GpuContext&) = delete;
    GpuContext& operator=(const GpuContext&) = delete;
};

// Row-major C = alpha·A·B + beta·C in double with cuBLAS (FP64; the reference and the gauge).
void reference_dgemm(GpuContext& ctx, int M, int N, int K, double alpha, const double* A, int lda,
                     const double* B, int ldb, double beta, double* C, int ldc);

class ReportChannel;

// `gemmlab child-probe`: starts CUDA, cuBLAS and cuRAND the way a checking child does, runs one
// small FP64 product, and reports {"event":"probe","ok":...}. choose_sandbox (sandbox.h) uses it.
int child_probe(const ReportChannel& report);

}  // namespace gemmlab
