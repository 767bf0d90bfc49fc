// nvml.cpp — NVML through dlopen (see nvml.h). The constants below are NVML's documented values
// (nvml.h of the CUDA toolkit / GPU Deployment Kit); they are declared here because the header is
// not on every machine that builds the grader.
#include "judge/nvml.h"

#include <dlfcn.h>

namespace gemmlab {
namespace {

constexpr int kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;              // NVML_CLOCK_SM
constexpr int kNvmlTemperatureGpu = 0;       // NVML_TEMPERATURE_GPU
constexpr double kMilliwattsPerWatt = 1000;  // nvmlDeviceGetPowerUsage reports milliwatts

struct ReasonBit {
    uint64_t bit;
    const char* name;
    bool slows_down;  // a real slowdown, not idle or a deliberate setting
};
constexpr ReasonBit kReasons[] = {
    {0x1, "gpu_idle", false},
    {0x2, "applications_clocks_setting", false},
    {0x4, "sw_power_cap", true},
    {0x8, "hw_slowdown", true},
    {0x10, "sync_boost", false},
    {0x20, "sw_thermal_slowdown", true},
    {0x40, "hw_thermal_slowdown", true},
    {0x80, "hw_power_brake_slowdown", true},
    {0x100, "display_clock_setting", false},
};

template <typename Fn>
Fn symbol(void* lib, const char* name) {
    return reinterpret_cast<Fn>(dlsym(lib, name));
}

}  // namespace

Nvml::Nvml(const std::string& pci_bus_id) {
    lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib_) {
        why_ = "libnvidia-ml.so.1 could not be loaded (no NVIDIA driver here?)";
        return;
    }
    auto init = symbol<int (*)()>(lib_, "nvmlInit_v2");
    auto by_bus = symbol<int (*)(const char*, void**)>(lib_, "nvmlDeviceGetHandleByPciBusId_v2");
    shutdown_ = symbol<int (*)()>(lib_, "nvmlShutdown");
    clock_info_ = symbol<int (*)(void*, int, unsigned*)>(lib_, "nvmlDeviceGetClockInfo");
    max_clock_info_ = symbol<int (*)(void*, int, unsigned*)>(lib_, "nvmlDeviceGetMaxClockInfo");
    // Renamed "clocks event reasons" in newer drivers; the old name remains as an alias.
    reasons_ = symbol<int (*)(void*, unsigned long long*)>(lib_, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!reasons_)
        reasons_ = symbol<int (*)(void*, unsigned long long*)>(lib_, "nvmlDeviceGetCurrentClocksThrottleReasons");
    temperature_ = symbol<int (*)(void*, int, unsigned*)>(lib_, "nvmlDeviceGetTemperature");
    power_ = symbol<int (*)(void*, unsigned*)>(lib_, "nvmlDeviceGetPowerUsage");
    driver_version_ = symbol<int (*)(char*, unsigned)>(lib_, "nvmlSystemGetDriverVersion");
    if (!init || !by_bus || !shutdown_ || !clock_info_) {
        why_ = "libnvidia-ml.so.1 lacks the functions the grader uses";
        return;
    }
    if (init() != kNvmlSuccess) {
        why_ = "nvmlInit failed";
        shutdown_ = nullptr;
        return;
    }
    void* dev = nullptr;
    if (by_bus(pci_bus_id.c_str(), &dev) != kNvmlSuccess || !dev) {
        why_ = "NVML does not know the GPU at PCI bus id " + pci_bus_id;
        return;
    }
    device_ = dev;
}

std::string Nvml::driver_version() const {
    constexpr unsigned kVersionChars = 96;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE is 80
    char buf[kVersionChars] = {0};
    if (!device_ || !driver_version_ || driver_version_(buf, kVersionChars) != kNvmlSuccess) return "";
    return buf;
}

Nvml::~Nvml() {
    if (shutdown_) shutdown_();
    if (lib_) dlclose(lib_);
}

ClockReading Nvml::read(bool with_power) const {
    ClockReading r;
    if (!device_) return r;
    r.valid = clock_info_(device_, kNvmlClockSm, &r.sm_clock_mhz) == kNvmlSuccess;
    if (max_clock_info_) max_clock_info_(device_, kNvmlClockSm, &r.max_sm_clock_mhz);
    unsigned long long reasons = 0;
    if (reasons_ && reasons_(device_, &reasons) == kNvmlSuccess) r.reasons = reasons;
    if (!with_power) return r;
    if (temperature_) temperature_(device_, kNvmlTemperatureGpu, &r.temperature_c);
    unsigned milliwatts = 0;
    if (power_ && power_(device_, &milliwatts) == kNvmlSuccess) r.power_w = milliwatts / kMilliwattsPerWatt;
    return r;
}

std::vector<std::string> clock_reason_names(uint64_t reasons) {
    std::vector<std::string> names;
    for (const ReasonBit& b : kReasons)
        if (reasons & b.bit) names.push_back(b.name);
    return names;
}

bool is_throttled(uint64_t reasons) {
    for (const ReasonBit& b : kReasons)
        if ((reasons & b.bit) && b.slows_down) return true;
    return false;
}

}  // namespace gemmlab
