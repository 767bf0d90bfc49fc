// runner.cu — the loop of a runner process (runner.h).
#include "runner/runner.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>

#include "common/gpu_probe.h"
#include "common/stream_memops.h"
#include "runner/stage_call.h"

namespace gemmlab {

using nlohmann::json;

namespace {

std::string cuda_words(cudaError_t e) { return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e); }

// Lines from a descriptor (the judge's requests on stdin).
class LineReader {
public:
    explicit LineReader(int fd) : fd_(fd) {}
    bool next(std::string* line) {
        for (;;) {
            const size_t nl = buf_.find('\n');
            if (nl != std::string::npos) {
                *line = buf_.substr(0, nl);
                buf_.erase(0, nl + 1);
                return true;
            }
            char chunk[65536];
            const ssize_t n = read(fd_, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return false;
            buf_.append(chunk, static_cast<size_t>(n));
        }
    }

private:
    int fd_;
    std::string buf_;
};

struct Mapped {
    char* ptr = nullptr;
    size_t bytes = 0;
};

__global__ void empty_probe_kernel() {}

__global__ void fill_standalone(float* p, size_t n, unsigned long long seed, bool nan) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        unsigned long long x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
        x ^= x >> 31, x *= 0xBF58476D1CE4E5B9ull, x ^= x >> 29;
        p[i] = nan ? __int_as_float(0x7fc00000) : static_cast<float>(x % 2000001) / 1e6f - 1.0f;
    }
}
__global__ void fill_standalone(double* p, size_t n, unsigned long long seed, bool nan) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        unsigned long long x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
        x ^= x >> 31, x *= 0xBF58476D1CE4E5B9ull, x ^= x >> 29;
        p[i] = nan ? __longlong_as_double(0x7ff8000000000000ll) : static_cast<double>(x % 2000001) / 1e6 - 1.0;
    }
}

class Server {
public:
    Server(Provider& provider, const ReportChannel& report) : provider_(provider), report_(report) {}

    int run() {
        if (const cudaError_t e = cudaFree(nullptr); e != cudaSuccess) return fatal("CUDA did not start: " + cuda_words(e));
        if (const std::string why = memops_.load(); !why.empty()) return fatal(why);
        if (const cudaError_t e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking); e != cudaSuccess)
            return fatal("cudaStreamCreate: " + cuda_words(e));
        if (const std::string why = provider_.start(stream_); !why.empty()) return fatal(why);
        report_.send({{"event", "ready"}});
        LineReader in(STDIN_FILENO);
        std::string line;
        while (in.next(&line)) {
            const json msg = json::parse(line, nullptr, false);
            if (msg.is_discarded() || !msg.is_object()) return fatal("a request that is not JSON");
            const std::string op = msg.value("op", "");
            try {
                if (op == "exit") break;
                if (op == "map") {
                    if (!map(msg.at("buffers"))) return 1;
                    report_.send({{"event", "mapped"}});
                } else if (op == "call") {
                    call(msg);
                } else {
                    return fatal("unknown request " + op);
                }
            } catch (const std::exception& e) {
                return fatal(std::string("a request the runner cannot read: ") + e.what());
            }
        }
        report_.send({{"event", "done"}});
        return 0;
    }

private:
    int fatal(const std::string& why) {
        report_.send({{"event", "fatal"}, {"error", why}});
        report_.send({{"event", "done"}});
        return 1;
    }

    bool map(const json& buffers) {
        for (const json& b : buffers) {
            const std::string name = b.at("name");
            cudaIpcMemHandle_t handle{};
            if (!protocol::from_hex(b.at("handle").get<std::string>(), &handle, sizeof handle)) {
                fatal("a malformed memory handle for " + name);
                return false;
            }
            if (auto old = mapped_.find(name); old != mapped_.end()) {
                cudaIpcCloseMemHandle(old->second.ptr);
                mapped_.erase(old);
            }
            void* ptr = nullptr;
            const cudaError_t e = cudaIpcOpenMemHandle(&ptr, handle, cudaIpcMemLazyEnablePeerAccess);
            if (e != cudaSuccess) {
                fatal("cudaIpcOpenMemHandle (" + name + "): " + cuda_words(e));
                return false;
            }
            mapped_[name] = {static_cast<char*>(ptr), b.at("bytes").get<size_t>()};
        }
        return true;
    }

    void* resolve(const protocol::Operand& o) {
        auto it = mapped_.find(o.buffer);
        if (it == mapped_.end()) throw std::invalid_argument("no buffer named " + o.buffer);
        if (o.offset > it->second.bytes) throw std::invalid_argument("an offset past the end of " + o.buffer);
        return it->second.ptr + o.offset;
    }

    void call(const json& msg) {
        const BenchItem item = protocol::item_from_json(msg.at("item"));
        std::vector<protocol::Problem> problems;
        for (const json& p : msg.at("problems")) problems.push_back(protocol::problem_from_json(p));
        const bool timed = msg.contains("go");
        uint32_t* flags = nullptr;
        if (timed) flags = static_cast<uint32_t*>(resolve({"flags", 0}));
        while (events_.size() < 2 * problems.size()) {
            cudaEvent_t e = nullptr;
            cudaEventCreate(&e);
            events_.push_back(e);
        }
        json results = json::array();
        cudaError_t enqueue = cudaSuccess;
        if (timed) enqueue = memops_.wait_geq(stream_, flags + protocol::kGoWord, msg.at("go").get<uint32_t>());
        for (size_t i = 0; i < problems.size(); ++i) {
            const protocol::Problem& p = problems[i];
            if (timed) cudaEventRecord(events_[2 * i], stream_);
            const protocol::CallResult r = provider_.call(item, p, resolve(p.a), resolve(p.b), resolve(p.c), stream_);
            if (timed) cudaEventRecord(events_[2 * i + 1], stream_);
            results.push_back(protocol::to_json(r));
        }
        if (timed) {
            const cudaError_t w = memops_.write(stream_, flags + protocol::kDoneWord, msg.at("go").get<uint32_t>());
            if (enqueue == cudaSuccess) enqueue = w;
            report_.send({{"event", "armed"}, {"results", results}});
        }
        const cudaError_t sync = cudaDeviceSynchronize();
        json out;
        if (timed) {
            json times = json::array();
            for (size_t i = 0; i < problems.size(); ++i) {
                float ms = 0;
                if (cudaEventElapsedTime(&ms, events_[2 * i], events_[2 * i + 1]) != cudaSuccess) ms = 0;
                times.push_back(ms);
            }
            out = {{"event", "finished"}, {"event_ms", times}, {"results", results}};
        } else {
            out = {{"event", "returned"}, {"results", results}};
        }
        const cudaError_t err = sync != cudaSuccess ? sync : enqueue != cudaSuccess ? enqueue : cudaGetLastError();
        if (err != cudaSuccess) out["error"] = cuda_words(err);
        report_.send(out);
    }

    Provider& provider_;
    const ReportChannel& report_;
    StreamMemOps memops_;
    cudaStream_t stream_ = nullptr;
    std::map<std::string, Mapped> mapped_;
    std::vector<cudaEvent_t> events_;
};

template <typename T>
int run_typed(Provider& provider, const std::string& stage, const std::string& variant, const Shape& s,
              unsigned long long seed) {
    const int lda = s.eff_lda(), ldb = s.eff_ldb(), ldc = s.eff_ldc();
    T *A = nullptr, *B = nullptr, *C = nullptr;
    cudaStream_t stream = nullptr;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    if (const std::string why = provider.start(stream); !why.empty()) {
        std::cerr << why << "\n";
        return 1;
    }
    // Exactly the sizes of the operands: compute-sanitizer sees a write past them as out of bounds.
    if (cudaMalloc(&A, sizeof(T) * size_t(s.M) * lda) != cudaSuccess || cudaMalloc(&B, sizeof(T) * size_t(s.K) * ldb) != cudaSuccess ||
        cudaMalloc(&C, sizeof(T) * size_t(s.M) * ldc) != cudaSuccess) {
        std::cerr << "cudaMalloc failed\n";
        return 1;
    }
    fill_standalone<<<256, 256, 0, stream>>>(A, size_t(s.M) * lda, seed, false);
    fill_standalone<<<256, 256, 0, stream>>>(B, size_t(s.K) * ldb, seed + 1, false);
    fill_standalone<<<256, 256, 0, stream>>>(C, size_t(s.M) * ldc, seed + 2, s.beta == 0);
    cudaStreamSynchronize(stream);
    protocol::Problem p;
    p.precision = sizeof(T) == 4 ? Precision::f32 : Precision::f64;
    p.M = s.M, p.N = s.N, p.K = s.K, p.alpha = s.alpha, p.beta = s.beta;
    p.lda = lda, p.ldb = ldb, p.ldc = ldc;
    p.pitched_flow = true;
    const protocol::CallResult r = provider.call(BenchItem::of_stage(Side::submission, stage, variant), p, A, B, C, stream);
    const cudaError_t sync = cudaDeviceSynchronize();
    const std::string label = variant.empty() ? stage : stage + "/" + variant;
    std::cout << "ran " << label << " " << precision_name(p.precision) << " " << s.label() << ": " << r.status;
    if (!r.error.empty()) std::cout << " (" << r.error << ")";
    if (!r.problem.empty()) std::cout << "; " << r.problem;
    if (sync != cudaSuccess) std::cout << "; the GPU reported " << cuda_words(sync);
    std::cout << "\n(values are not checked here: make check does that)\n";
    cudaFree(A), cudaFree(B), cudaFree(C);
    return r.status == "ok" && r.problem.empty() && sync == cudaSuccess ? 0 : 1;
}

}  // namespace

int serve(Provider& provider, const ReportChannel& report) { return Server(provider, report).run(); }

int probe(const ReportChannel& report, const std::string& flags_handle, unsigned word) {
    std::string error, judge_error;
    StreamMemOps memops;
    if (const cudaError_t e = cudaFree(nullptr); e != cudaSuccess) error = "CUDA did not start: " + cuda_words(e);
    else {
        empty_probe_kernel<<<1, 1>>>();
        if (const cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) error = "a kernel did not run: " + cuda_words(e);
    }
    if (error.empty() && !flags_handle.empty()) {
        // What the judge needs: its buffer mapped by CUDA IPC, and a word written by a stream memory operation.
        cudaIpcMemHandle_t h{};
        void* flags = nullptr;
        cudaStream_t s = nullptr;
        if (!protocol::from_hex(flags_handle, &h, sizeof h)) judge_error = "a malformed memory handle";
        else if (const cudaError_t e = cudaIpcOpenMemHandle(&flags, h, cudaIpcMemLazyEnablePeerAccess); e != cudaSuccess)
            judge_error = "CUDA IPC does not work between processes here (cudaIpcOpenMemHandle: " + cuda_words(e) + ")";
        else if (const std::string why = memops.load(); !why.empty()) judge_error = why;
        else if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess ||
                 memops.write(s, static_cast<uint32_t*>(flags), word) != cudaSuccess || cudaStreamSynchronize(s) != cudaSuccess)
            judge_error = "a stream memory operation on the judge's buffer failed";
        if (flags) cudaIpcCloseMemHandle(flags);
    }
    json ev{{"event", "probe"}, {"ok", error.empty()}};
    if (!error.empty()) ev["error"] = error;
    if (!judge_error.empty()) ev["judge_error"] = judge_error;
    report.send(ev);
    report.send({{"event", "done"}});
    return 0;
}

int run_standalone(Provider& provider, const std::string& stage, const std::string& variant, Precision prec,
                   const Shape& shape, unsigned long long seed) {
    if (const cudaError_t e = cudaFree(nullptr); e != cudaSuccess) {
        std::cerr << "gemmlab-stages needs an NVIDIA GPU: " << explain_no_gpu_here(e) << "\n";
        return 3;
    }
    return prec == Precision::f32 ? run_typed<float>(provider, stage, variant, shape, seed)
                                  : run_typed<double>(provider, stage, variant, shape, seed);
}

}  // namespace gemmlab
