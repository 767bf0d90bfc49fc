// bench_operands.cpp — the operands of the benchmark's current shape (bench_operands.h).
#include "judge/bench_operands.h"

#include <algorithm>

#include "common/call_time.h"
#include "common/cuda_check.h"
#include "common/peak.h"

namespace gemmlab {
namespace {

// Each call's operands start on a boundary of this many bytes in the exported buffers (what any
// cudaMalloc allocation would give a stage, and more).
constexpr size_t kSlotAlignBytes = 4096;

}  // namespace

template <typename T>
void ShapeOperands<T>::enter(size_t si) {
    Shape s = plan_.shapes[si];
    s.alpha = 1.0, s.beta = 0.0;
    shape_ = s;
    index_ = si;
    dense_ = {s.eff_lda(), s.eff_ldb(), s.eff_ldc()};
    pitched_ = {pitch_elems(s.K), pitch_elems(s.N), pitch_elems(s.N)};
    // One call's A, B and C in the larger of the two layouts (pitched rows may be longer).
    const size_t a = size_t(s.M) * std::max(dense_.lda, pitched_.lda), b = size_t(s.K) * std::max(dense_.ldb, pitched_.ldb),
                 c = size_t(s.M) * std::max(dense_.ldc, pitched_.ldc);
    auto slot = [](size_t elems) { return (elems * sizeof(T) + kSlotAlignBytes - 1) / kSlotAlignBytes * kSlotAlignBytes / sizeof(T); };
    stride_a_ = slot(a), stride_b_ = slot(b), stride_c_ = slot(c);
    call_bytes_ = (a + b + c) * sizeof(T);
    A_ = ExportedBuffer(), B_ = ExportedBuffer(), C_ = ExportedBuffer();  // the last shape's first
    A0_ = DeviceBuffer<T>(), B0_ = DeviceBuffer<T>();
    if (slots_of_.size() <= si) slots_of_.resize(si + 1, 0);
    if (!slots_of_[si]) slots_of_[si] = slots_for(s);
    slots_ = slots_of_[si];
    A_ = ExportedBuffer(stride_a_ * slots_ * sizeof(T));
    B_ = ExportedBuffer(stride_b_ * slots_ * sizeof(T));
    C_ = ExportedBuffer(stride_c_ * slots_ * sizeof(T));
    A0_ = DeviceBuffer<T>(stride_a_ * slots_);
    B0_ = DeviceBuffer<T>(stride_b_ * slots_);
}

template <typename T>
void ShapeOperands<T>::leave() {
    A_ = ExportedBuffer(), B_ = ExportedBuffer(), C_ = ExportedBuffer();
    A0_ = DeviceBuffer<T>(), B0_ = DeviceBuffer<T>();
}

// How many calls' operands this shape holds: enough for an interval of min_interval_ms of calls
// at the fastest any item could run (the tensor cores' peak), a power of two, within memory.
template <typename T>
int ShapeOperands<T>::slots_for(const Shape& s) const {
    const double fastest_ms = gflops_of(s, 1.0) / fastest_gflops_;
    size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const size_t per_slot = (2 * stride_a_ + 2 * stride_b_ + stride_c_) * sizeof(T);  // A, B, C, A0, B0
    return operand_slots(fastest_ms, plan_.min_interval_ms, double(per_slot), double(free_bytes));
}

template <typename T>
int ShapeOperands<T>::pitch_elems(int cols) const {
    void* p = nullptr;
    size_t pitch = 0;
    CUDA_CHECK(cudaMallocPitch(&p, &pitch, size_t(std::max(cols, 1)) * sizeof(T), 1));
    CUDA_CHECK(cudaFree(p));
    return static_cast<int>(pitch / sizeof(T));
}

template class ShapeOperands<float>;
template class ShapeOperands<double>;

}  // namespace gemmlab
