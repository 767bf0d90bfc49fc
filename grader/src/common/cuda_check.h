// cuda_check.h — the one error-check idiom of the grader: CUDA_CHECK / CUBLAS_CHECK / CURAND_CHECK
// stringify the call and throw CudaError with file:line, so a failure says exactly what failed.
#pragma once

#include <stdexcept>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <curand.h>

namespace gemmlab {

struct CudaError : std::runtime_error {
    int code;
    CudaError(const std::string& what, int code_) : std::runtime_error(what), code(code_) {}
};

[[noreturn]] void throw_cuda_error(const char* call, const char* file, int line, int code,
                                   const char* name, const char* text);
const char* cublas_status_name(cublasStatus_t s);
// Whether the error says the GPU's memory ran out (cudaErrorMemoryAllocation, cuBLAS/cuRAND alloc).
bool is_out_of_memory(const CudaError& e);
const char* curand_status_name(curandStatus_t s);

}  // namespace gemmlab

#define CUDA_CHECK(call)                                                                    \
    do {                                                                                    \
        const cudaError_t err_ = (call);                                                    \
        if (err_ != cudaSuccess)                                                            \
            ::gemmlab::throw_cuda_error(#call, __FILE__, __LINE__, static_cast<int>(err_),  \
                                        cudaGetErrorName(err_), cudaGetErrorString(err_));  \
    } while (0)

#define CUBLAS_CHECK(call)                                                                  \
    do {                                                                                    \
        const cublasStatus_t st_ = (call);                                                  \
        if (st_ != CUBLAS_STATUS_SUCCESS)                                                   \
            ::gemmlab::throw_cuda_error(#call, __FILE__, __LINE__, static_cast<int>(st_),   \
                                        ::gemmlab::cublas_status_name(st_), "cuBLAS error"); \
    } while (0)

#define CURAND_CHECK(call)                                                                  \
    do {                                                                                    \
        const curandStatus_t st_ = (call);                                                  \
        if (st_ != CURAND_STATUS_SUCCESS)                                                   \
            ::gemmlab::throw_cuda_error(#call, __FILE__, __LINE__, static_cast<int>(st_),   \
                                        ::gemmlab::curand_status_name(st_), "cuRAND error"); \
    } while (0)

// After a kernel launch of the grader's own.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
