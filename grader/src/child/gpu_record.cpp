// gpu_record.cpp — CUPTI activity records behind GpuRecord (gpu_record.h).
#include "child/gpu_record.h"
#include "child/gpu_record_marker.h"

#include <cupti.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

namespace gemmlab {
namespace {

// One activity as the harness keeps it.
struct Activity {
    uint64_t start, end;
    bool kernel;
    std::string name;
};

// CUPTI hands buffers back from its own thread: the records gathered so far live here.
std::mutex records_mutex;
std::vector<Activity> records;

constexpr size_t kBufferBytes = 8 << 20;  // one activity buffer
constexpr size_t kAlign = 8;              // CUPTI's required buffer alignment

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(kAlign, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;
    *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
    std::vector<Activity> got;
    CUpti_Activity* rec = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        switch (rec->kind) {
            case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
            case CUPTI_ACTIVITY_KIND_KERNEL: {
                const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
                got.push_back({k->start, k->end, true, k->name ? k->name : "?"});
                break;
            }
            case CUPTI_ACTIVITY_KIND_MEMCPY: {
                const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
                got.push_back({m->start, m->end, false, "memcpy"});
                break;
            }
            case CUPTI_ACTIVITY_KIND_MEMSET: {
                const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
                got.push_back({m->start, m->end, false, "memset"});
                break;
            }
            default: break;
        }
    }
    std::free(buffer);
    const std::lock_guard<std::mutex> lock(records_mutex);
    records.insert(records.end(), got.begin(), got.end());
}

std::string cupti_words(const char* call, CUptiResult r) {
    const char* text = nullptr;
    cuptiGetResultString(r, &text);
    return std::string(call) + " failed: " + (text ? text : "unknown CUPTI error");
}

}  // namespace

GpuRecord::GpuRecord() {
    if (CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed); r != CUPTI_SUCCESS) {
        why_ = cupti_words("cuptiActivityRegisterCallbacks", r);
        return;
    }
    for (CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                    CUPTI_ACTIVITY_KIND_MEMSET}) {
        if (CUptiResult r = cuptiActivityEnable(kind); r != CUPTI_SUCCESS) {
            why_ = cupti_words("cuptiActivityEnable", r);
            return;
        }
    }
}

GpuRecord::~GpuRecord() {
    if (!available()) return;
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
    cuptiActivityFlushAll(1);
}

void GpuRecord::mark(cudaStream_t stream) const {
    if (!available()) return;
    launch_window_marker(stream);
    cudaStreamSynchronize(stream);
}

namespace {

std::vector<Activity> take_records() {
    cuptiActivityFlushAll(0);
    std::vector<Activity> mine;
    const std::lock_guard<std::mutex> lock(records_mutex);
    mine.swap(records);
    return mine;
}

bool is_marker(const Activity& a) { return a.kernel && a.name.find(kWindowMarkerName) != std::string::npos; }

}  // namespace

GpuWindow GpuRecord::collect_marked() {
    GpuWindow w;
    if (!available()) return w;
    const std::vector<Activity> mine = take_records();
    // The last two markers bound the window (records arrive in no particular order).
    uint64_t open = 0, close = 0, before_close = 0;
    for (const Activity& a : mine)
        if (is_marker(a)) close = std::max(close, a.start);
    for (const Activity& a : mine)
        if (is_marker(a) && a.start < close) before_close = std::max(before_close, a.start);
    for (const Activity& a : mine)
        if (is_marker(a) && a.start == before_close) open = a.end;
    if (!open || !close) {
        w.kernels = -1;  // no window: the markers were not recorded
        return w;
    }
    uint64_t first = UINT64_MAX, last = 0;
    for (const Activity& a : mine) {
        if (is_marker(a) || a.end <= open || a.start >= close) continue;
        first = std::min(first, a.start);
        last = std::max(last, a.end);
        if (a.kernel) {
            ++w.kernels;
            w.kernel_names.insert(a.name);
        } else {
            ++w.copies;
        }
    }
    if (last > first) w.busy_span_ms = double(last - first) * 1e-6;
    return w;
}

std::set<std::string> GpuRecord::collect_kernel_names() {
    std::set<std::string> names;
    if (!available()) return names;
    for (const Activity& a : take_records())
        if (a.kernel && !is_marker(a)) names.insert(a.name);
    return names;
}

}  // namespace gemmlab
