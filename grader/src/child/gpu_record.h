// gpu_record.h — the GPU's own record of what ran during a timed call: CUPTI activity records of
// every kernel, copy and memset on every stream of the process, with start and end stamped by the
// GPU. The harness reads them; stage code cannot (its library is linked against the CUDA runtime
// only, and CUPTI is not on the list of what a stage may call), so they are a fact about the call
// that no definition or call inside the stage can change. docs/timing.md says what each of the
// three clocks (events, wall clock, this record) proves.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <cuda_runtime.h>

namespace gemmlab {

// What the GPU did between two moments of this process.
struct GpuWindow {
    double busy_span_ms = 0;  // from the first start to the last end of the activities in the window
    int kernels = 0, copies = 0;
    std::set<std::string> kernel_names;
};

// The harness brackets each call with two markers: a one-thread kernel it launches on its own stream
// and waits for, just before the call, and again after the call and a device-wide synchronize. The
// window is what the GPU ran between the end of the first and the start of the second, read in the
// GPU's own timestamps — so no conversion between the host's clock and the GPU's can move work of
// the harness (the fresh inputs, the L2 flush) into a stage's call, or out of it.
class GpuRecord {
public:
    GpuRecord();  // starts recording; never throws: a failure makes the record unavailable
    ~GpuRecord();
    GpuRecord(const GpuRecord&) = delete;
    GpuRecord& operator=(const GpuRecord&) = delete;

    bool available() const { return why_.empty(); }
    const std::string& why_unavailable() const { return why_; }

    // Launches a marker on `stream` and waits for it (no-op when unavailable). Call it before the
    // call, after the device is idle, and after the call and its device-wide synchronize.
    void mark(cudaStream_t stream) const;

    // Every activity between the last two markers (their own excepted). Records are consumed: a
    // window is read once, and what ran before its first marker is dropped.
    GpuWindow collect_marked();

    // The names of every kernel recorded since the last collect (the harness's own cuBLAS calls).
    std::set<std::string> collect_kernel_names();

private:
    std::string why_;
};

}  // namespace gemmlab
