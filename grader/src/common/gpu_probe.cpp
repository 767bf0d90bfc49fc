// gpu_probe.cpp — gpu_available and explain_no_gpu (gpu_probe.h).
#include "common/gpu_probe.h"

#include <cuda_runtime.h>
#include <unistd.h>

#include <cstdlib>

namespace gemmlab {

namespace {

// CUDA's own words: `CUDA: cudaErrorNoDevice, "no CUDA-capable device is detected"`.
std::string cuda_reason(int cuda_error) {
    const auto e = static_cast<cudaError_t>(cuda_error);
    return std::string("CUDA: ") + cudaGetErrorName(e) + ", \"" + cudaGetErrorString(e) + "\"";
}

std::string cuda_release(int runtime_version) {
    return std::to_string(runtime_version / 1000) + "." + std::to_string(runtime_version % 1000 / 10);
}

}  // namespace

std::string explain_no_gpu(int cuda_error, int device_count, bool driver_loaded, const char* visible_devices,
                           int runtime_version) {
    if (cuda_error == cudaErrorInsufficientDriver) {
        if (!driver_loaded)
            return "this machine has no GPU (no NVIDIA driver is loaded; " + cuda_reason(cuda_error) + ")";
        return "this machine's NVIDIA driver is too old for CUDA " + cuda_release(runtime_version) +
               " (" + cuda_reason(cuda_error) + "; a newer driver, or a build with an older toolkit, CUDA_HOME=, fixes it)";
    }
    if (cuda_error == cudaErrorNoDevice || (cuda_error == cudaSuccess && device_count == 0)) {
        const std::string reason = cuda_error == cudaSuccess ? "CUDA: 0 devices" : cuda_reason(cuda_error);
        if (visible_devices)
            return "no GPU is visible to this program (CUDA_VISIBLE_DEVICES=\"" + std::string(visible_devices) +
                   "\" names none that CUDA can use; " + reason + ")";
        return "this machine has no GPU (" + reason + ")";
    }
    return "CUDA cannot use a GPU on this machine (" + cuda_reason(cuda_error) + ")";
}

std::string explain_no_gpu_here(int cuda_error) {
    int count = 0, runtime = 0;
    if (cuda_error == cudaSuccess) cudaGetDeviceCount(&count);
    cudaRuntimeGetVersion(&runtime);
    return explain_no_gpu(cuda_error, count, access("/proc/driver/nvidia/version", F_OK) == 0,
                          std::getenv("CUDA_VISIBLE_DEVICES"), runtime);
}

bool gpu_available(std::string* why) {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        if (why) *why = explain_no_gpu_here(err);
        cudaGetLastError();
        return false;
    }
    return true;
}

}  // namespace gemmlab
