// gpu_probe.h — whether this machine has a usable CUDA GPU (the parent asks before it starts any
// child; results files record the answer), and, when not, why in words a student understands.
#pragma once

#include <string>

namespace gemmlab {

// Whether a CUDA GPU is usable here; `why` says what is missing when not (explain_no_gpu's words).
bool gpu_available(std::string* why = nullptr);

// Why CUDA found no usable GPU: plain words first ("this machine has no GPU"), CUDA's own reason in
// parentheses. `cuda_error` is what cudaGetDeviceCount (or the first CUDA call) returned, as an int
// (a cudaError_t); `device_count` the devices it counted; `driver_loaded` whether the NVIDIA kernel
// driver is loaded (/proc/driver/nvidia/version exists); `visible_devices` CUDA_VISIBLE_DEVICES, or
// null when unset; `runtime_version` cudaRuntimeGetVersion's (13000 for CUDA 13.0).
// cudaErrorInsufficientDriver without a loaded driver and cudaErrorNoDevice both mean: no GPU here.
std::string explain_no_gpu(int cuda_error, int device_count, bool driver_loaded, const char* visible_devices,
                           int runtime_version);

// explain_no_gpu for this machine and process, after `cuda_error` (a cudaError_t) from a CUDA call.
std::string explain_no_gpu_here(int cuda_error);

}  // namespace gemmlab
