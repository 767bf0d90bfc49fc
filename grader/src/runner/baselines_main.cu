// baselines_main.cu — `gemmlab-baselines`, the runner of the grader's own calls: the reference
// stages (the naive baseline among them), cuBLAS in FP32/FP64 and on the tensor cores, and `launch`,
// one kernel that writes all of C and nothing else, the judge's calibration of its clock. The same loop as gemmlab-stages (runner.h),
// timed the same way, so every ratio compares like with like; no submission code ever runs here.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "common/sides.h"
#include "runner/runner.h"
#include "runner/stage_call.h"

namespace gemmlab {
namespace {

// `launch`: C := 0, row by row (ld = ldc), the cheapest call that writes what every call must.
template <typename T>
__global__ void write_c_kernel(T* C, int M, int N, int ldc) {
    const size_t n = size_t(M) * N;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        C[(i / N) * ldc + i % N] = T(0);
}
constexpr int kWriteThreads = 256;
constexpr int kWriteBlocksPerSm = 8;  // enough blocks in flight to write at the memory's speed

template <typename T>
void write_c(void* C, const protocol::Problem& p, cudaStream_t s) {
    static const int blocks = [] {
        int sms = 0;
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
        return std::max(sms, 1) * kWriteBlocksPerSm;
    }();
    write_c_kernel<T><<<blocks, kWriteThreads, 0, s>>>(static_cast<T*>(C), p.M, p.N, p.ldc);
}

cudaError_t take_reference_error() {
    const cudaError_t err = last_stage_error;  // the reference's stages are linked into this executable
    last_stage_error = cudaSuccess;
    return err;
}

const char* cublas_words(cublasStatus_t s) {
    switch (s) {
        case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
        case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
        case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
        case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
        case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
        default: return "a cuBLAS error";
    }
}

class BaselineProvider : public Provider {
public:
    ~BaselineProvider() override {
        if (pedantic_) cublasDestroy(pedantic_);
        if (fast_) cublasDestroy(fast_);
    }
    std::string start(cudaStream_t stream) override {
        // True FP32/FP64 (no TF32) for the plain baseline; the default math mode for the tensor-core
        // items, which name their compute type.
        if (cublasCreate(&pedantic_) != CUBLAS_STATUS_SUCCESS || cublasCreate(&fast_) != CUBLAS_STATUS_SUCCESS)
            return "cuBLAS did not start";
        cublasSetStream(pedantic_, stream);
        cublasSetMathMode(pedantic_, CUBLAS_PEDANTIC_MATH);
        cublasSetStream(fast_, stream);
        cublasSetMathMode(fast_, CUBLAS_DEFAULT_MATH);
        return "";
    }
    protocol::CallResult call(const BenchItem& item, const protocol::Problem& p, void* A, void* B, void* C,
                              cudaStream_t s) override {
        protocol::CallResult r;
        if (item.kind == BenchItem::Kind::launch) {
            if (p.M > 0 && p.N > 0) {
                if (p.precision == Precision::f64) write_c<double>(C, p, s);
                else write_c<float>(C, p, s);
            }
            return r;
        }
        if (item.kind == BenchItem::Kind::stage)
            return call_stage(reference::registry(), &take_reference_error, item.stage, item.variant, p, A, B, C, s);
        const cublasStatus_t st = cublas_call(item.cublas_inputs, p, A, B, C);
        if (st != CUBLAS_STATUS_SUCCESS) {
            r.status = "unsupported";
            r.error = std::string("cuBLAS returned ") + cublas_words(st);
        }
        return r;
    }
    const std::vector<StageInfo>& registry(const std::string&) override { return reference::registry(); }

private:
    // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: swap the operands, keep the storage.
    cublasStatus_t cublas_call(InputPrecision inputs, const protocol::Problem& p, void* A, void* B, void* C) {
        if (p.precision == Precision::f64) {
            const double alpha = p.alpha, beta = p.beta;
            return cublasDgemm(pedantic_, CUBLAS_OP_N, CUBLAS_OP_N, p.N, p.M, p.K, &alpha, static_cast<double*>(B),
                               p.ldb, static_cast<double*>(A), p.lda, &beta, static_cast<double*>(C), p.ldc);
        }
        const float alpha = static_cast<float>(p.alpha), beta = static_cast<float>(p.beta);
        if (inputs == InputPrecision::full)
            return cublasSgemm(pedantic_, CUBLAS_OP_N, CUBLAS_OP_N, p.N, p.M, p.K, &alpha, static_cast<float*>(B),
                               p.ldb, static_cast<float*>(A), p.lda, &beta, static_cast<float*>(C), p.ldc);
        // The tensor-core cuBLAS of the variants that declare TF32 or FP16 inputs: the same FP32
        // operands, rounded inside the call, as the stage rounds them in its loads.
        const cublasComputeType_t compute =
            inputs == InputPrecision::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F_FAST_16F;
        return cublasGemmEx(fast_, CUBLAS_OP_N, CUBLAS_OP_N, p.N, p.M, p.K, &alpha, B, CUDA_R_32F, p.ldb, A,
                            CUDA_R_32F, p.lda, &beta, C, CUDA_R_32F, p.ldc, compute, CUBLAS_GEMM_DEFAULT);
    }
    cublasHandle_t pedantic_ = nullptr, fast_ = nullptr;
};

}  // namespace
}  // namespace gemmlab

int main(int argc, char** argv) {
    gemmlab::BaselineProvider provider;
    try {
        return gemmlab::runner_main(argc, argv, provider, "GEMM Lab runner of the grader's own calls (started by gemmlab)");
    } catch (const std::exception& e) {
        fprintf(stderr, "gemmlab-baselines: %s\n", e.what());
        return 1;
    }
}
