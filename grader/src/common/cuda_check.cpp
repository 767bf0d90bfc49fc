// cuda_check.cpp — formatting of the errors raised by CUDA_CHECK and friends.
#include "common/cuda_check.h"

#include <sstream>

namespace gemmlab {

void throw_cuda_error(const char* call, const char* file, int line, int code, const char* name,
                      const char* text) {
    std::ostringstream os;
    os << name << " (" << code << "): " << text << " in " << call << " at " << file << ":" << line;
    throw CudaError(os.str(), code);
}

bool is_out_of_memory(const CudaError& e) {
    const std::string what = e.what();
    return what.find("cudaErrorMemoryAllocation") != std::string::npos ||
           what.find("ALLOC_FAILED") != std::string::npos || what.find("ALLOCATION_FAILED") != std::string::npos;
}

const char* cublas_status_name(cublasStatus_t s) {
    switch (s) {
        case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
        case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
        case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
        case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
        case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
        case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
        case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
        case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
        case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
        default: return "CUBLAS_STATUS_UNKNOWN";
    }
}

const char* curand_status_name(curandStatus_t s) {
    switch (s) {
        case CURAND_STATUS_SUCCESS: return "CURAND_STATUS_SUCCESS";
        case CURAND_STATUS_ALLOCATION_FAILED: return "CURAND_STATUS_ALLOCATION_FAILED";
        case CURAND_STATUS_LAUNCH_FAILURE: return "CURAND_STATUS_LAUNCH_FAILURE";
        case CURAND_STATUS_NOT_INITIALIZED: return "CURAND_STATUS_NOT_INITIALIZED";
        default: return "CURAND_STATUS_ERROR";
    }
}

}  // namespace gemmlab
