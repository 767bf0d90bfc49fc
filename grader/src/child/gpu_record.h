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

namespace gemmlab {

// What the GPU did between two moments of this process.
struct GpuWindow {
    double busy_span_ms = 0;  // from the first start to the last end of the activities in the window
    int kernels = 0, copies = 0;
    std::set<std::string> kernel_names;
};

class GpuRecord {
public:
    GpuRecord();  // starts recording; never throws: a failure makes the record unavailable
    ~GpuRecord();
    GpuRecord(const GpuRecord&) = delete;
    GpuRecord& operator=(const GpuRecord&) = delete;

    bool available() const { return why_.empty(); }
    const std::string& why_unavailable() const { return why_; }

    // A timestamp on the clock of the activity records (nanoseconds), 0 when unavailable.
    uint64_t now() const;

    // Every activity that overlapped [t0, t1]. Call after the device is synchronized: the records
    // of the window are then complete. Records are consumed: a window is read once.
    GpuWindow collect(uint64_t t0, uint64_t t1);

private:
    std::string why_;
};

}  // namespace gemmlab
