// environment.cpp — machine and GPU description for results files.
#include "judge/environment.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <curand.h>

#include "common/gpu_probe.h"
#include "judge/nvml.h"
#include "judge/sandbox_probe.h"

namespace gemmlab {

namespace {

// The GPU's UUID as nvidia-smi prints it (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx), so a grade can
// be matched to the board it ran on (which GPU of a node a job was bound to, across jobs).
std::string uuid_text(const cudaUUID_t& uuid) {
    std::string text = "GPU-";
    for (int i = 0; i < 16; ++i) {
        char byte[3];
        std::snprintf(byte, sizeof byte, "%02x", static_cast<unsigned char>(uuid.bytes[i]));
        text += byte;
        if (i == 3 || i == 5 || i == 7 || i == 9) text += '-';
    }
    return text;
}

}  // namespace

nlohmann::json describe_environment() {
    nlohmann::json env;
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    env["host"] = host;
    int runtime = 0, driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    env["cuda_runtime"] = std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10);
    env["cuda_driver_api"] = driver ? std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10) : "none";
    // The versions of the libraries loaded now, not of the headers built against (a build may carry its own:
    // CUDA_LIBS=pruned).
    int major = 0, minor = 0, patch = 0, curand = 0;
    cublasGetProperty(MAJOR_VERSION, &major);
    cublasGetProperty(MINOR_VERSION, &minor);
    cublasGetProperty(PATCH_LEVEL, &patch);
    env["cublas"] = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
    curandGetVersion(&curand);
    env["curand"] = std::to_string(curand / 1000) + "." + std::to_string(curand % 1000 / 100) + "." +
                    std::to_string(curand % 100);
    if (!sandbox_choice().empty()) env["sandbox"] = sandbox_choice();
    std::string why;
    if (!gpu_available(&why)) {
        env["gpu_available"] = false;
        env["no_gpu_reason"] = why;
        return env;
    }
    env["gpu_available"] = true;
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, 0);
    int clock_khz = 0, mem_clock_khz = 0;
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
    cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, 0);
    char bus_id[32] = {0};
    cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, 0);
    const Nvml nvml(bus_id);
    const std::string driver_version = nvml.driver_version();
    env["driver_version"] = !driver_version.empty() ? driver_version
                            : "unknown (" + (nvml.available() ? std::string("NVML gave none") : nvml.why_unavailable()) + ")";
    env["gpu"] = {{"name", prop.name},
                  {"compute_capability", std::to_string(prop.major) + "." + std::to_string(prop.minor)},
                  {"sms", prop.multiProcessorCount},
                  {"max_sm_clock_mhz", clock_khz / 1000},
                  {"memory_bytes", prop.totalGlobalMem},
                  {"l2_bytes", prop.l2CacheSize},
                  {"shared_memory_per_block_optin", prop.sharedMemPerBlockOptin},
                  {"uuid", uuid_text(prop.uuid)},
                  {"pci_bus_id", bus_id}};
    return env;
}

}  // namespace gemmlab
