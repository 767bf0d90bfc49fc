// bench_operands.h — the operands of the benchmark's current shape (bench_engine.cpp): the judge's
// exported A, B and C, which a runner maps, and its private copies A0 and B0 of the inputs, in
// `slots` sets (call i of an interval on set i, at element offsets i·stride), each set in the larger
// of the dense layout and the pitched one.
#pragma once

#include <cstddef>
#include <vector>

#include "common/bench_plan.h"
#include "judge/bench_item.h"
#include "judge/bench_session.h"
#include "judge/device_buffer.h"
#include "judge/gpu_context.h"

namespace gemmlab {

template <typename T>
class ShapeOperands {
public:
    // `fastest_gflops`: the fastest any item could run (the tensor cores' peak): a shape holds the
    // operands of an interval of min_interval_ms of such calls.
    ShapeOperands(const BenchPlan& plan, double fastest_gflops) : plan_(plan), fastest_gflops_(fastest_gflops) {}

    // Makes shape si the current one: its layouts and operands (the last shape's freed first). The
    // number of operand sets is the first visit's (phase 1), kept for phase 2.
    void enter(size_t si);
    // Frees the current shape's operands (the runner's mapping of them goes with its next map or its end).
    void leave();
    // Frees the private copies of the inputs (a stage's calls at this shape are done).
    void drop_inputs() { A0_ = DeviceBuffer<T>(), B0_ = DeviceBuffer<T>(); }

    const Shape& shape() const { return shape_; }  // the plan's shape, with alpha = 1 and beta = 0
    size_t index() const { return index_; }
    int slots() const { return slots_; }
    Layout layout(bool pitched) const { return pitched ? pitched_ : dense_; }
    // One call's A, B and C in bytes, in the larger of the two layouts.
    size_t call_bytes() const { return call_bytes_; }
    size_t stride_a() const { return stride_a_; }
    size_t stride_b() const { return stride_b_; }
    size_t stride_c() const { return stride_c_; }

    // What a runner maps: "A", "B", "C".
    NamedBuffers buffers() const { return {{"A", &A_}, {"B", &B_}, {"C", &C_}}; }
    T* a() const { return reinterpret_cast<T*>(A_.get()); }
    T* b() const { return reinterpret_cast<T*>(B_.get()); }
    T* c() const { return reinterpret_cast<T*>(C_.get()); }
    T* a0() const { return A0_.get(); }
    T* b0() const { return B0_.get(); }

private:
    int slots_for(const Shape& s) const;
    int pitch_elems(int cols) const;

    const BenchPlan& plan_;
    double fastest_gflops_ = 0;
    Shape shape_;
    size_t index_ = 0;
    Layout dense_, pitched_;
    size_t call_bytes_ = 0;
    int slots_ = 1;
    size_t stride_a_ = 0, stride_b_ = 0, stride_c_ = 0;
    ExportedBuffer A_, B_, C_;
    DeviceBuffer<T> A0_, B0_;
    std::vector<int> slots_of_;  // per shape: the operand sets of its first visit
};

extern template class ShapeOperands<float>;
extern template class ShapeOperands<double>;

}  // namespace gemmlab
