// gpu_probe.cpp — gpu_available (gpu_probe.h).
#include "common/gpu_probe.h"

#include <cuda_runtime.h>

namespace gemmlab {

bool gpu_available(std::string* why) {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        if (why) *why = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(err);
        cudaGetLastError();
        return false;
    }
    if (count == 0) {
        if (why) *why = "no CUDA device is visible (CUDA_VISIBLE_DEVICES may be empty)";
        return false;
    }
    return true;
}

}  // namespace gemmlab
