// checker.cu — one checked case, step by step:
//   1. fresh random A and B (padding too), C random (or NaN when beta == 0), canaries around C;
//   2. the FP64 reference C_ref = alpha·A·B + beta·C and the gauge G = |alpha||A||B| + |beta||C|;
//   3. the stage, then a device-wide synchronize (work on any stream counts);
//   4. canaries, A and B unchanged, every element within the variant's bound (bound.h: 32·u·G, more
//      for a tensor-core variant that declares TF32 or FP16 inputs).
// The pitched stage builds its operands with the student's own helpers, whose copies are checked
// to be exact, and its padding carries the canaries.
#include "child/checker.h"
#include "child/submission_library.h"

#include <chrono>
#include <sstream>
#include <vector>

#include "common/bound.h"
#include "common/cuda_check.h"
#include "child/device_buffer.h"
#include "child/device_ops.h"
#include "child/guard.h"
#include "child/reference_gemm.h"

namespace gemmlab {
namespace {

// Results up to this many elements get a picture of where the wrong ones are (a one-byte mask
// per element, copied to the host only when something is wrong): 4096×4096 and below.
constexpr size_t kPictureMaxElements = size_t(1) << 24;

template <typename T>
void fill_nan(T* p, size_t n, cudaStream_t s) {
    if constexpr (std::is_same_v<T, float>) fill_bits(p, n, quiet_nan_bits32(), s);
    else fill_bits(p, n, quiet_nan_bits64(), s);
}

// The FP64 reference and gauge (compute_reference) live in reference_gemm.h, shared with bench.cu.

std::string status_problem(Status st) {
    switch (st) {
        case Status::unsupported: return "the stage returned Status::unsupported for this shape";
        case Status::cuda_error: {
            // GEMMLAB_TRY keeps the error it caught (checking an error clears it); a stage that
            // returned cuda_error by hand leaves only what cudaGetLastError still holds.
            cudaError_t err = take_stage_error();
            if (err == cudaSuccess) err = cudaGetLastError();
            return "the stage returned Status::cuda_error (a CUDA call inside it failed: " +
                   std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err) + ")";
        }
        default: return "the stage returned an unknown status";
    }
}

// Judge C (ld = ldc) against the reference; fills the value part of `r`.
template <typename T>
void judge_values(GpuContext& ctx, const Shape& s, const T* C, int ldc, const Reference& ref, const ErrorBound& bound,
                  CaseResult& r) {
    const size_t n = size_t(s.M) * s.N;
    const bool want_mask = n <= kPictureMaxElements;
    DeviceBuffer<uint8_t> mask(want_mask ? n : 0);
    const double u = bound.u;
    const CompareReport cmp = compare_with_reference(C, ldc, ref.value.get(), ref.gauge.get(), s.M, s.N, u,
                                                     mask.get(), ctx.stream, bound.threshold);
    r.max_ratio = cmp.max_ratio;
    r.wrong = cmp.wrong;
    if (cmp.worst_index >= 0) {
        r.worst.row = static_cast<int>(cmp.worst_index / s.N);
        r.worst.col = static_cast<int>(cmp.worst_index % s.N);
        r.worst.expected = cmp.expected;
        r.worst.got = cmp.got;
        r.worst.allowed = allowed_error(cmp.gauge, u, bound.threshold);
        r.worst.ratio = cmp.max_ratio;
    }
    if (cmp.wrong > 0) {
        if (r.disposition == Disposition::passed) r.disposition = Disposition::failed;
        if (r.problem.empty()) r.problem = "wrong values";
        if (want_mask) {
            std::vector<uint8_t> h(n);
            CUDA_CHECK(cudaMemcpy(h.data(), mask.get(), n, cudaMemcpyDeviceToHost));
            r.picture = error_picture(h, s.M, s.N);
        }
    }
}

void note_oob(CaseResult& r, const CanaryReport& c, const std::string& what, const GuardedLayout& g) {
    if (!c.changed) return;
    r.disposition = Disposition::out_of_bounds;
    r.oob_writes += c.changed;
    r.oob_first = g.describe(static_cast<size_t>(c.first));
    r.oob_last = g.describe(static_cast<size_t>(c.last));
    r.problem = what;
}

void note_input_change(CaseResult& r, const CanaryReport& c, const char* name, int ld) {
    if (!c.changed) return;
    r.disposition = Disposition::out_of_bounds;
    r.oob_writes += c.changed;
    std::ostringstream os;
    os << "the stage wrote into its input " << name << " (" << c.changed << " element(s) changed, first at row "
       << c.first / ld << ", column " << c.first % ld << "): A and B are read-only";
    r.problem = os.str();
}

template <typename T>
void synchronize_after_stage(GpuContext& ctx) {
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    CUDA_CHECK(cudaDeviceSynchronize());  // work the stage left on other streams counts too
}

template <typename T>
CaseResult check_dense(GpuContext& ctx, const StageFns<T>& fns, const Shape& s, const ErrorBound& bound) {
    CaseResult r;
    r.shape = s;
    const int M = s.M, N = s.N, K = s.K, lda = s.eff_lda(), ldb = s.eff_ldb(), ldc = s.eff_ldc();
    const bool read_c = s.beta != 0.0;
    cudaStream_t st = ctx.stream;

    DeviceBuffer<T> A(size_t(M) * lda), B(size_t(K) * ldb), A0(A.size()), B0(B.size()), Cin(size_t(M) * N);
    fill_random(ctx.rng, A.get(), A.size(), st);
    fill_random(ctx.rng, B.get(), B.size(), st);
    CUDA_CHECK(cudaMemcpyAsync(A0.get(), A.get(), A.bytes(), cudaMemcpyDeviceToDevice, st));
    CUDA_CHECK(cudaMemcpyAsync(B0.get(), B.get(), B.bytes(), cudaMemcpyDeviceToDevice, st));
    if (read_c) fill_random(ctx.rng, Cin.get(), Cin.size(), st);
    else fill_nan(Cin.get(), Cin.size(), st);

    const GuardedLayout g = GuardedLayout::make(M, N, ldc);
    DeviceBuffer<T> Cbuf(g.total());
    T* C = Cbuf.get() + g.first();
    paint_canary(Cbuf.get(), g, st);
    CUDA_CHECK(cudaMemcpy2DAsync(C, size_t(ldc) * sizeof(T), Cin.get(), size_t(N) * sizeof(T), size_t(N) * sizeof(T),
                                 M, cudaMemcpyDeviceToDevice, st));
    const Reference ref = compute_reference<T>(ctx, s, A.get(), lda, B.get(), ldb, read_c ? Cin.get() : nullptr,
                                               bound.underflow_weight);
    CUDA_CHECK(cudaStreamSynchronize(st));

    GemmProblem<T> p;
    p.M = M, p.N = N, p.K = K;
    p.alpha = static_cast<T>(s.alpha), p.beta = static_cast<T>(s.beta);
    p.A = A.get(), p.lda = lda, p.B = B.get(), p.ldb = ldb, p.C = C, p.ldc = ldc, p.stream = st;
    const Status status = fns.gemm(p);
    synchronize_after_stage<T>(ctx);
    if (status == Status::not_implemented) {
        r.disposition = Disposition::not_implemented;
        r.problem = "not implemented yet (the stage returns Status::not_implemented)";
        return r;
    }
    if (status != Status::ok) {
        r.disposition = status == Status::cuda_error ? Disposition::crashed : Disposition::failed;
        r.problem = status_problem(status);
        return r;
    }
    note_oob(r, check_canary(Cbuf.get(), g, st), "the stage wrote outside C", g);
    note_input_change(r, count_differences(A.get(), lda, A0.get(), lda, M, lda, st), "A", lda);
    note_input_change(r, count_differences(B.get(), ldb, B0.get(), ldb, K, ldb, st), "B", ldb);
    judge_values(ctx, s, C, ldc, ref, bound, r);
    return r;
}

// Pitched operands allocated by the student's helper and freed by the grader.
template <typename T>
struct PitchedOwner {
    PitchedMatrix<T> m;
    ~PitchedOwner() {
        if (m.data) cudaFree(m.data);
    }
};

// Checks what pitched_alloc returned; "" when it is usable.
template <typename T>
std::string pitched_alloc_problem(const PitchedMatrix<T>& m, int rows, int cols, const char* name) {
    std::ostringstream os;
    os << "pitched_alloc for " << name << " (" << rows << "x" << cols << "): ";
    const size_t row_bytes = size_t(cols) * sizeof(T);
    if (!m.data) return os.str() + "data is null";
    if (m.rows != rows || m.cols != cols) {
        os << "rows/cols were set to " << m.rows << "x" << m.cols << " instead of " << rows << "x" << cols;
        return os.str();
    }
    if (m.pitch_bytes < row_bytes) {
        os << "pitch " << m.pitch_bytes << " bytes is less than a row (" << row_bytes << " bytes)";
        return os.str();
    }
    if (m.pitch_bytes % 16 != 0 || reinterpret_cast<uintptr_t>(m.data) % 16 != 0) {
        os << "rows are not 16-byte aligned (pitch " << m.pitch_bytes << " bytes, data at "
           << static_cast<const void*>(m.data) << "); use cudaMallocPitch";
        return os.str();
    }
    return "";
}

template <typename T>
CaseResult check_pitched(GpuContext& ctx, const StageFns<T>& fns, const Shape& s, const ErrorBound& bound) {
    CaseResult r;
    r.shape = s;
    const int M = s.M, N = s.N, K = s.K, lda = s.eff_lda(), ldb = s.eff_ldb();
    const bool read_c = s.beta != 0.0;
    cudaStream_t st = ctx.stream;
    auto fail = [&](Disposition d, std::string why) {
        r.disposition = d;
        r.problem = std::move(why);
        return r;
    };

    DeviceBuffer<T> A(size_t(M) * lda), B(size_t(K) * ldb), Cin(size_t(M) * N);
    fill_random(ctx.rng, A.get(), A.size(), st);
    fill_random(ctx.rng, B.get(), B.size(), st);
    if (read_c) fill_random(ctx.rng, Cin.get(), Cin.size(), st);
    else fill_nan(Cin.get(), Cin.size(), st);
    const Reference ref = compute_reference<T>(ctx, s, A.get(), lda, B.get(), ldb, read_c ? Cin.get() : nullptr,
                                               bound.underflow_weight);
    CUDA_CHECK(cudaStreamSynchronize(st));

    PitchedOwner<T> pa, pb, pc;
    const struct { PitchedOwner<T>* owner; int rows, cols; const char* name; const T* src; int ld; } ops[] = {
        {&pa, M, K, "A", A.get(), lda}, {&pb, K, N, "B", B.get(), ldb}, {&pc, M, N, "C", Cin.get(), N}};
    for (const auto& op : ops) {
        const Status a = fns.alloc(&op.owner->m, op.rows, op.cols);
        if (a == Status::not_implemented)
            return fail(Disposition::not_implemented, "not implemented yet (pitched_alloc returns Status::not_implemented)");
        if (a != Status::ok) return fail(Disposition::failed, "pitched_alloc: " + status_problem(a));
        if (auto why = pitched_alloc_problem(op.owner->m, op.rows, op.cols, op.name); !why.empty())
            return fail(Disposition::failed, why);
        const Status u = fns.upload(op.owner->m, op.src, op.ld, st);
        CUDA_CHECK(cudaDeviceSynchronize());
        if (u == Status::not_implemented)
            return fail(Disposition::not_implemented, "not implemented yet (pitched_upload returns Status::not_implemented)");
        if (u != Status::ok) return fail(Disposition::failed, "pitched_upload: " + status_problem(u));
        const PitchedMatrix<T>& m = op.owner->m;
        const CanaryReport d = count_differences(m.data, int(m.pitch_bytes / sizeof(T)), op.src, op.ld, op.rows, op.cols, st);
        if (d.changed) {
            std::ostringstream os;
            os << "pitched_upload did not copy " << op.name << " exactly: " << d.changed
               << " element(s) differ, first at row " << d.first / op.cols << ", column " << d.first % op.cols;
            return fail(Disposition::failed, os.str());
        }
    }
    const int pld_a = int(pa.m.pitch_bytes / sizeof(T)), pld_b = int(pb.m.pitch_bytes / sizeof(T)),
              pld_c = int(pc.m.pitch_bytes / sizeof(T));
    paint_pitch_padding(pc.m.data, pc.m.pitch_bytes, M, N, st);

    GemmProblem<T> p;
    p.M = M, p.N = N, p.K = K;
    p.alpha = static_cast<T>(s.alpha), p.beta = static_cast<T>(s.beta);
    p.A = pa.m.data, p.lda = pld_a, p.B = pb.m.data, p.ldb = pld_b, p.C = pc.m.data, p.ldc = pld_c, p.stream = st;
    const Status status = fns.gemm(p);
    synchronize_after_stage<T>(ctx);
    if (status == Status::not_implemented)
        return fail(Disposition::not_implemented, "not implemented yet (gemm_pitched returns Status::not_implemented)");
    if (status != Status::ok)
        return fail(status == Status::cuda_error ? Disposition::crashed : Disposition::failed, status_problem(status));

    GuardedLayout g;  // the padding of the pitched C, as a layout with no guards
    g.rows = M, g.cols = N, g.ld = pld_c, g.guard = 0;
    note_oob(r, check_pitch_padding(pc.m.data, pc.m.pitch_bytes, M, N, st), "the stage wrote into the padding of the pitched C", g);
    note_input_change(r, count_differences(pa.m.data, pld_a, A.get(), lda, M, K, st), "A", K);
    note_input_change(r, count_differences(pb.m.data, pld_b, B.get(), ldb, K, N, st), "B", N);

    // The student's download must copy the pitched result exactly.
    DeviceBuffer<T> Cout(size_t(M) * N);
    const Status d = fns.download(Cout.get(), N, pc.m, st);
    CUDA_CHECK(cudaDeviceSynchronize());
    if (d == Status::not_implemented)
        return fail(Disposition::not_implemented, "not implemented yet (pitched_download returns Status::not_implemented)");
    if (d != Status::ok) return fail(Disposition::failed, "pitched_download: " + status_problem(d));
    const CanaryReport diff = count_differences(Cout.get(), N, pc.m.data, pld_c, M, N, st);
    if (diff.changed && r.disposition == Disposition::passed) {
        std::ostringstream os;
        os << "pitched_download did not copy C exactly: " << diff.changed << " element(s) differ, first at row "
           << diff.first / N << ", column " << diff.first % N;
        r.disposition = Disposition::failed;
        r.problem = os.str();
    }
    judge_values(ctx, s, pc.m.data, pld_c, ref, bound, r);
    return r;
}

}  // namespace

template <typename T>
CaseResult check_case(GpuContext& ctx, Operands operands, const StageFns<T>& fns, const Shape& shape,
                      const ErrorBound& bound) {
    CaseResult r;
    if (!entry_points_linked(operands, fns)) {
        r.shape = shape;
        r.disposition = Disposition::rejected;
        r.problem = kNotLinkedProblem;
    } else {
        const auto t0 = std::chrono::steady_clock::now();
        r = operands == Operands::pitched ? check_pitched<T>(ctx, fns, shape, bound)
                                          : check_dense<T>(ctx, fns, shape, bound);
        r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    r.bound = bound.threshold;
    r.inputs = bound.inputs;
    return r;
}

template CaseResult check_case<float>(GpuContext&, Operands, const StageFns<float>&, const Shape&, const ErrorBound&);
template CaseResult check_case<double>(GpuContext&, Operands, const StageFns<double>&, const Shape&,
                                       const ErrorBound&);

}  // namespace gemmlab
