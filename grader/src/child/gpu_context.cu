// gpu_context.cu — per-process GPU set-up and the FP64 cuBLAS reference.
#include "child/gpu_context.h"

#include "common/cuda_check.h"
#include "child/device_buffer.h"
#include "child/device_ops.h"
#include "common/report_channel.h"

namespace gemmlab {

GpuContext::GpuContext(uint64_t seed) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&cublas));
    CUBLAS_CHECK(cublasSetStream(cublas, stream));
    CUBLAS_CHECK(cublasSetMathMode(cublas, CUBLAS_PEDANTIC_MATH));
    CURAND_CHECK(curandCreateGenerator(&rng, CURAND_RNG_PSEUDO_PHILOX4_32_10));
    CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(rng, seed));
}

GpuContext::~GpuContext() {
    if (rng) curandDestroyGenerator(rng);
    if (cublas) cublasDestroy(cublas);
    if (stream) cudaStreamDestroy(stream);
}

void reference_dgemm(GpuContext& ctx, int M, int N, int K, double alpha, const double* A, int lda,
                     const double* B, int ldb, double beta, double* C, int ldc) {
    // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: swap the operands, keep the storage.
    CUBLAS_CHECK(cublasDgemm(ctx.cublas, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, ldb, A, lda,
                             &beta, C, ldc));
}

int child_probe(const ReportChannel& report) {
    try {
        constexpr int kSide = 64;  // small: the probe asks whether CUDA starts, not how fast it is
        GpuContext ctx(1);
        DeviceBuffer<double> a(kSide * kSide), c(kSide * kSide);
        fill_random(ctx.rng, a.get(), a.size(), ctx.stream);
        reference_dgemm(ctx, kSide, kSide, kSide, 1.0, a.get(), kSide, a.get(), kSide, 0.0, c.get(), kSide);
        CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
        report.send({{"event", "probe"}, {"ok", true}});
    } catch (const CudaError& e) {
        report.send({{"event", "probe"}, {"ok", false}, {"error", e.what()}});
    }
    report.send({{"event", "done"}});
    return 0;
}

}  // namespace gemmlab
