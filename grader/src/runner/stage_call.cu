// stage_call.cu — one call of a stage (stage_call.h).
#include "runner/stage_call.h"

#include <cstdint>
#include <sstream>

namespace gemmlab {
namespace {

using protocol::CallResult;
using protocol::Problem;

// The padding of a pitched C carries this pattern while the stage runs: a change is a write outside C.
constexpr uint8_t kPaddingByte = 0xA5;

const StageInfo* find(const std::vector<StageInfo>& registry, const std::string& name) {
    for (const StageInfo& s : registry)
        if (name == s.name) return &s;
    return nullptr;
}

CallResult from_status(Status st, TakeStageError take_error) {
    CallResult r;
    switch (st) {
        case Status::ok: r.status = "ok"; break;
        case Status::not_implemented: r.status = "not_implemented"; break;
        case Status::unsupported: r.status = "unsupported"; break;
        case Status::cuda_error: {
            r.status = "cuda_error";
            // GEMMLAB_TRY keeps the error it caught (checking an error clears it); a stage that
            // returned cuda_error by hand leaves only what cudaGetLastError still holds.
            cudaError_t err = take_error ? take_error() : cudaSuccess;
            if (err == cudaSuccess) err = cudaGetLastError();
            r.error = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
            break;
        }
        default: r.status = "unsupported"; r.error = "the stage returned an unknown status";
    }
    return r;
}

CallResult failed(const std::string& problem, const char* disposition = "failed") {
    CallResult r;
    r.problem = problem;
    r.disposition = disposition;
    return r;
}

__device__ inline unsigned long long bits_of(float x) { return __float_as_uint(x); }
__device__ inline unsigned long long bits_of(double x) { return static_cast<unsigned long long>(__double_as_longlong(x)); }

// Rows × cols elements of a (lda) and b (ldb) that differ bitwise: count and the first index.
template <typename T>
__global__ void count_mismatch(const T* a, size_t lda, const T* b, size_t ldb, int rows, int cols,
                               unsigned long long* count, unsigned long long* first) {
    const size_t n = size_t(rows) * cols;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        const size_t r = i / cols, c = i % cols;
        if (bits_of(a[r * lda + c]) != bits_of(b[r * ldb + c])) {
            atomicAdd(count, 1ull);
            atomicMin(first, static_cast<unsigned long long>(i));
        }
    }
}

__global__ void padding_changed(const uint8_t* data, size_t pitch, size_t row_bytes, int rows,
                                unsigned long long* count) {
    const size_t pad = pitch - row_bytes, n = pad * rows;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        if (data[(i / pad) * pitch + row_bytes + i % pad] != kPaddingByte) atomicAdd(count, 1ull);
}

struct Mismatch {
    unsigned long long count = 0, first = 0;
};

template <typename T>
Mismatch mismatch(const T* a, size_t lda, const T* b, size_t ldb, int rows, int cols, cudaStream_t s) {
    unsigned long long* d = nullptr;
    Mismatch m;
    if (cudaMalloc(&d, 2 * sizeof(unsigned long long)) != cudaSuccess) return m;
    const unsigned long long init[2] = {0, ~0ull};
    cudaMemcpyAsync(d, init, sizeof init, cudaMemcpyHostToDevice, s);
    count_mismatch<T><<<256, 256, 0, s>>>(a, lda, b, ldb, rows, cols, d, d + 1);
    unsigned long long h[2] = {0, 0};
    cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s);
    cudaStreamSynchronize(s);
    cudaFree(d);
    return {h[0], h[1]};
}

// Pitched operands allocated by the stage's helper, freed here.
template <typename T>
struct PitchedOwner {
    PitchedMatrix<T> m;
    ~PitchedOwner() {
        if (m.data) cudaFree(m.data);
    }
    size_t ld() const { return m.pitch_bytes / sizeof(T); }
};

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

std::string where(unsigned long long first, int cols) {
    std::ostringstream os;
    os << "first at row " << first / cols << ", column " << first % cols;
    return os.str();
}

// make check's call of the pitched stage: its helpers build the operands from the judge's A, B, C.
template <typename T>
CallResult pitched_flow(const StageFns<T>& f, const Problem& p, T* A, T* B, T* C, cudaStream_t s,
                        TakeStageError take_error) {
    PitchedOwner<T> pa, pb, pc;
    const struct { PitchedOwner<T>* owner; int rows, cols; const char* name; const T* src; int ld; } ops[] = {
        {&pa, p.M, p.K, "A", A, p.lda}, {&pb, p.K, p.N, "B", B, p.ldb}, {&pc, p.M, p.N, "C", C, p.ldc}};
    for (const auto& op : ops) {
        const Status a = f.alloc(&op.owner->m, op.rows, op.cols);
        if (a != Status::ok) {
            CallResult r = from_status(a, take_error);
            if (a == Status::not_implemented) return r;
            return failed("pitched_alloc: returned " + r.status + (r.error.empty() ? "" : " (" + r.error + ")"));
        }
        if (std::string why = pitched_alloc_problem(op.owner->m, op.rows, op.cols, op.name); !why.empty())
            return failed(why);
        const Status u = f.upload(op.owner->m, op.src, op.ld, s);
        const cudaError_t sync = cudaDeviceSynchronize();
        if (u != Status::ok) {
            CallResult r = from_status(u, take_error);
            if (u == Status::not_implemented) return r;
            return failed("pitched_upload: returned " + r.status + (r.error.empty() ? "" : " (" + r.error + ")"));
        }
        if (sync != cudaSuccess) {
            CallResult r;
            r.status = "cuda_error";
            r.error = std::string(cudaGetErrorName(sync)) + ": " + cudaGetErrorString(sync) + " (in pitched_upload)";
            return r;
        }
        const Mismatch d = mismatch(op.owner->m.data, op.owner->ld(), op.src, size_t(op.ld), op.rows, op.cols, s);
        if (d.count)
            return failed(std::string("pitched_upload did not copy ") + op.name + " exactly: " + std::to_string(d.count) +
                          " element(s) differ, " + where(d.first, op.cols));
    }
    const size_t row_bytes = size_t(p.N) * sizeof(T);
    if (pc.m.pitch_bytes > row_bytes)
        cudaMemset2DAsync(reinterpret_cast<uint8_t*>(pc.m.data) + row_bytes, pc.m.pitch_bytes, kPaddingByte,
                          pc.m.pitch_bytes - row_bytes, p.M, s);
    cudaStreamSynchronize(s);

    GemmProblem<T> g;
    g.M = p.M, g.N = p.N, g.K = p.K;
    g.alpha = static_cast<T>(p.alpha), g.beta = static_cast<T>(p.beta);
    g.A = pa.m.data, g.lda = int(pa.ld()), g.B = pb.m.data, g.ldb = int(pb.ld()), g.C = pc.m.data, g.ldc = int(pc.ld());
    g.stream = s;
    const Status st = f.gemm(g);
    CallResult r = from_status(st, take_error);
    if (const cudaError_t sync = cudaDeviceSynchronize(); sync != cudaSuccess) {
        r.status = "cuda_error";
        r.error = std::string(cudaGetErrorName(sync)) + ": " + cudaGetErrorString(sync);
    }
    if (r.status != "ok") return r;

    if (pc.m.pitch_bytes > row_bytes) {
        unsigned long long* d = nullptr, h = 0;
        if (cudaMalloc(&d, sizeof h) == cudaSuccess) {
            cudaMemsetAsync(d, 0, sizeof h, s);
            padding_changed<<<256, 256, 0, s>>>(reinterpret_cast<const uint8_t*>(pc.m.data), pc.m.pitch_bytes, row_bytes,
                                                p.M, d);
            cudaMemcpyAsync(&h, d, sizeof h, cudaMemcpyDeviceToHost, s);
            cudaStreamSynchronize(s);
            cudaFree(d);
        }
        if (h) return failed("the stage wrote into the padding of the pitched C (" + std::to_string(h) + " byte(s) changed)",
                             "out_of_bounds");
    }
    for (const auto& op : {ops[0], ops[1]}) {
        const Mismatch d = mismatch(op.owner->m.data, op.owner->ld(), op.src, size_t(op.ld), op.rows, op.cols, s);
        if (d.count)
            return failed(std::string("the stage wrote into its input ") + op.name + " (" + std::to_string(d.count) +
                              " element(s) changed, " + where(d.first, op.cols) + "): A and B are read-only",
                          "out_of_bounds");
    }
    // The student's download must copy the pitched result exactly, into the judge's C.
    const Status d = f.download(C, p.ldc, pc.m, s);
    const cudaError_t sync = cudaDeviceSynchronize();
    if (d != Status::ok) {
        CallResult dr = from_status(d, take_error);
        if (d == Status::not_implemented) return dr;
        return failed("pitched_download: returned " + dr.status + (dr.error.empty() ? "" : " (" + dr.error + ")"));
    }
    if (sync != cudaSuccess) {
        r.status = "cuda_error";
        r.error = std::string(cudaGetErrorName(sync)) + ": " + cudaGetErrorString(sync) + " (in pitched_download)";
        return r;
    }
    const Mismatch diff = mismatch(C, size_t(p.ldc), pc.m.data, pc.ld(), p.M, p.N, s);
    if (diff.count)
        return failed("pitched_download did not copy C exactly: " + std::to_string(diff.count) + " element(s) differ, " +
                      where(diff.first, p.N));
    return r;
}

template <typename T>
CallResult call_typed(const StageInfo& st, const StageVariant& v, const Problem& p, void* A, void* B, void* C,
                      cudaStream_t s, TakeStageError take_error) {
    const StageFns<T>& f = v.fns<T>();
    const bool pitched = st.operands == Operands::pitched;
    if (!f.gemm || (pitched && (!f.alloc || !f.upload || !f.download))) {
        CallResult r;
        r.status = "not_linked";
        return r;
    }
    if (pitched && p.pitched_flow)
        return pitched_flow<T>(f, p, static_cast<T*>(A), static_cast<T*>(B), static_cast<T*>(C), s, take_error);
    GemmProblem<T> g;
    g.M = p.M, g.N = p.N, g.K = p.K;
    g.alpha = static_cast<T>(p.alpha), g.beta = static_cast<T>(p.beta);
    g.A = static_cast<const T*>(A), g.lda = p.lda, g.B = static_cast<const T*>(B), g.ldb = p.ldb;
    g.C = static_cast<T*>(C), g.ldc = p.ldc, g.stream = s;
    return from_status(f.gemm(g), take_error);
}

}  // namespace

CallResult call_stage(const std::vector<StageInfo>& registry, TakeStageError take_error, const std::string& stage,
                      const std::string& variant, const Problem& p, void* A, void* B, void* C, cudaStream_t stream) {
    const StageInfo* st = find(registry, stage);
    const StageVariant* v = nullptr;
    if (st)
        for (const StageVariant& x : st->variants)
            if (variant == x.label) v = &x;
    if (!v) {
        CallResult r;
        r.status = "missing";
        r.error = "no stage " + stage + (variant.empty() ? "" : "/" + variant) + " in this build";
        return r;
    }
    return p.precision == Precision::f32 ? call_typed<float>(*st, *v, p, A, B, C, stream, take_error)
                                         : call_typed<double>(*st, *v, p, A, B, C, stream, take_error);
}

}  // namespace gemmlab
