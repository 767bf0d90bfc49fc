// nvml.h — the few NVML readings the benchmark logs with every result (SM clock, clock-event
// "throttle" reasons, temperature, power), loaded at run time with dlopen("libnvidia-ml.so.1").
//
// NVML is never linked: the CI machine has no driver, and a grader that fails to start without
// libnvidia-ml would be worse than one that logs "clocks unknown". Without the library, or when
// a call fails, every reading is simply absent (available() is false).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gemmlab {

struct ClockReading {
    bool valid = false;
    unsigned sm_clock_mhz = 0, max_sm_clock_mhz = 0, temperature_c = 0;
    double power_w = 0;
    uint64_t reasons = 0;  // NVML clocks-event reason bits
};

class Nvml {
public:
    // Opens NVML for the CUDA device with this PCI bus id ("0000:3B:00.0"; cudaDeviceGetPCIBusId),
    // so CUDA_VISIBLE_DEVICES reordering cannot make us read another GPU.
    explicit Nvml(const std::string& pci_bus_id);
    ~Nvml();
    Nvml(const Nvml&) = delete;
    Nvml& operator=(const Nvml&) = delete;

    bool available() const { return device_ != nullptr; }
    const std::string& why_unavailable() const { return why_; }
    // Temperature and power are slower to read: with_power = false skips them (per-call readings).
    ClockReading read(bool with_power = true) const;
    // The kernel driver's version ("580.159.04"), or "" when NVML cannot say.
    std::string driver_version() const;

private:
    void* lib_ = nullptr;
    void* device_ = nullptr;
    std::string why_;
    // Entry points, resolved with dlsym (NVML's C types are all ints, unsigned and pointers).
    int (*shutdown_)() = nullptr;
    int (*clock_info_)(void*, int, unsigned*) = nullptr;
    int (*max_clock_info_)(void*, int, unsigned*) = nullptr;
    int (*reasons_)(void*, unsigned long long*) = nullptr;
    int (*temperature_)(void*, int, unsigned*) = nullptr;
    int (*power_)(void*, unsigned*) = nullptr;
    int (*driver_version_)(char*, unsigned) = nullptr;
};

// Names of the reason bits ("sw_power_cap", "hw_thermal_slowdown", ...), in bit order.
std::vector<std::string> clock_reason_names(uint64_t reasons);
// Whether the reasons include a real slowdown (power, thermal, hardware), as opposed to idle or
// an application clock setting: such a result is flagged `throttled`.
bool is_throttled(uint64_t reasons);

}  // namespace gemmlab
