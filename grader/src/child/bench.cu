// bench.cu — the timed loop, run in a child process (`gemmlab child-bench`; see bench.h for the
// method). Each call of an item is announced on the report channel before it starts, so when the
// process dies the parent knows whose call killed it.
#include "child/bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <set>
#include <sstream>

#include "child/checker.h"
#include "common/bound.h"
#include "common/call_time.h"
#include "common/cuda_check.h"
#include "child/device_buffer.h"
#include "child/device_ops.h"
#include "child/gpu_context.h"
#include "child/gpu_record.h"
#include "common/report_channel.h"
#include "common/nvml.h"
#include "common/peak.h"
#include "child/reference_gemm.h"

namespace gemmlab {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// What one launch costs: the host time of event + empty kernel + event + device synchronize (the
// median of this many tries, after one untimed try that loads the kernel), and the event time of the
// same (the GPU's wait for the launch to arrive, plus an empty kernel): the fastest try, which a
// busy host moves least (call_time.h).
constexpr int kOverheadSamples = 64;
// Timed calls are verified with this probability each (then topped up to verify_repetitions):
// which ones is decided at run time from the OS's entropy, so no stage can know in advance.
constexpr double kVerifyProbability = 0.3;
// The L2 is flushed before a call when the operands are at most this many L2 sizes: after the
// fresh data is written, that much of it could still be resident and make the call look warm.
constexpr double kL2ResidentFactor = 2.0;
// Flushing writes a buffer of this many L2 sizes, which evicts every line of the previous data.
constexpr double kL2FlushFactor = 2.0;
// How far the three clocks of one call may disagree before the call is called forged. The wall
// clock brackets the events and the GPU's activity from outside, so in an honest call it is never
// shorter than either; the tolerances cover the clocks' granularity and the conversion of GPU
// timestamps to the host's time base (docs/timing.md has the measured margins).
constexpr double kClockToleranceFraction = 0.01;
constexpr double kClockToleranceMs = 0.02;

__global__ void empty_kernel() {}

template <typename T>
void fill_nan(T* p, size_t n, cudaStream_t s) {
    if constexpr (std::is_same_v<T, float>) fill_bits(p, n, quiet_nan_bits32(), s);
    else fill_bits(p, n, quiet_nan_bits64(), s);
}

// What the GPU is and how fast it can possibly go.
struct Device {
    GpuShape shape;
    size_t l2_bytes = 0;
    std::string pci_bus_id;
};

Device describe_device() {
    Device d;
    int dev = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    int clock_khz = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
    d.shape.sms = prop.multiProcessorCount;
    d.shape.cc_major = prop.major;
    d.shape.cc_minor = prop.minor;
    d.shape.max_sm_clock_mhz = clock_khz / 1000.0;
    d.l2_bytes = static_cast<size_t>(prop.l2CacheSize);
    char bus[64] = {0};
    CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus - 1, dev));
    d.pci_bus_id = bus;
    return d;
}

struct LaunchCost {
    double wall_ms = 0, event_ms = 0, fastest_event_ms = 0;
};

LaunchCost measure_launch_cost(cudaStream_t stream, cudaEvent_t start, cudaEvent_t stop) {
    std::vector<double> walls, events;
    for (int i = 0; i <= kOverheadSamples; ++i) {
        CUDA_CHECK(cudaDeviceSynchronize());
        const auto t0 = Clock::now();
        CUDA_CHECK(cudaEventRecord(start, stream));
        empty_kernel<<<1, 1, 0, stream>>>();
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaEventRecord(stop, stream));
        CUDA_CHECK(cudaDeviceSynchronize());
        if (i == 0) continue;
        walls.push_back(seconds_since(t0) * 1e3);
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        events.push_back(ms);
    }
    return {median(walls), median(events), *std::min_element(events.begin(), events.end())};
}

json clocks_json(const ClockReading& r) {
    if (!r.valid) return json();
    return {{"sm_clock_mhz", r.sm_clock_mhz},
            {"max_sm_clock_mhz", r.max_sm_clock_mhz},
            {"temperature_c", r.temperature_c},
            {"power_w", r.power_w},
            {"clock_reasons", clock_reason_names(r.reasons)}};
}

// Pitched operands built with the stage's own pitched_alloc and freed by the grader.
template <typename T>
struct Pitched {
    PitchedMatrix<T> m;
    Pitched() = default;
    Pitched(const Pitched&) = delete;
    Pitched& operator=(const Pitched&) = delete;
    ~Pitched() {
        if (m.data) cudaFree(m.data);
    }
    int ld() const { return static_cast<int>(m.pitch_bytes / sizeof(T)); }
};

// One item's state at one shape.
template <typename T>
struct ItemRun {
    const BenchItem* item = nullptr;
    const StageInfo* stage = nullptr;
    const StageVariant* variant = nullptr;
    Pitched<T> pa, pb, pc;      // pitched stages only
    bool pitched = false;
    bool done = false;
    int warmups_left = 0;
    std::vector<double> times, events, walls, gpus, clocks;
    std::set<std::string> kernel_names;  // every kernel the GPU ran during this item's calls
    uint64_t reasons = 0;
    double spent = 0;           // seconds of set-up, calls and verification at this shape
    bool verify_all = false;    // set when the stop rule fired before enough were verified
    int timed_by[3] = {0, 0, 0};  // timed calls per clock that set their time (TimedBy)
    ErrorBound bound;           // the variant's (bound.h), for verified calls
    Timing result;
};

template <typename T>
class Bencher {
public:
    Bencher(const BenchPlan& plan, const ReportChannel& report)
        : plan_(plan), report_(report), ctx_(plan.seed), nvml_(device_.pci_bus_id), pick_(std::random_device{}()) {
        CUDA_CHECK(cudaEventCreate(&start_));
        CUDA_CHECK(cudaEventCreate(&stop_));
        const ClockReading r = nvml_.read();
        if (r.max_sm_clock_mhz > device_.shape.max_sm_clock_mhz) device_.shape.max_sm_clock_mhz = r.max_sm_clock_mhz;
        peak_ = peak_gflops(plan.precision, device_.shape);
        for (const BenchItem& item : plan.items)
            if (item.kind == BenchItem::Kind::cublas && item.cublas_inputs != InputPrecision::full && !fast_) {
                // cuBLAS on the tensor cores: its own handle in the default math mode, since the
                // context's handle is pedantic (true FP32) for the reference and the plain item.
                CUBLAS_CHECK(cublasCreate(&fast_));
                CUBLAS_CHECK(cublasSetStream(fast_, ctx_.stream));
                CUBLAS_CHECK(cublasSetMathMode(fast_, CUBLAS_DEFAULT_MATH));
            }
        const LaunchCost launch = measure_launch_cost(ctx_.stream, start_, stop_);
        launch_ = {launch.wall_ms, launch.fastest_event_ms};
        if (plan.clear_l2 && device_.l2_bytes)
            flush_ = DeviceBuffer<unsigned char>(static_cast<size_t>(kL2FlushFactor * device_.l2_bytes));
        report_.send({{"event", "device"},
                      {"peak_gflops", peak_},
                      {"launch_overhead_us", launch_.wall_overhead_ms * 1e3},
                      {"launch_event_us", launch_.launch_event_ms * 1e3},
                      {"launch_event_median_us", launch.event_ms * 1e3},
                      {"l2_bytes", device_.l2_bytes},
                      {"max_sm_clock_mhz", device_.shape.max_sm_clock_mhz},
                      {"nvml", nvml_.available() ? "available" : nvml_.why_unavailable()},
                      {"clocks_start", clocks_json(r)}});
    }
    ~Bencher() {
        if (fast_) cublasDestroy(fast_);
        cudaEventDestroy(start_);
        cudaEventDestroy(stop_);
    }

    void run() {
        for (size_t si = 0; si < plan_.shapes.size(); ++si) run_shape(si);
        report_.send({{"event", "clocks_end"}, {"clocks", clocks_json(nvml_.read())}});
    }

private:
    void run_shape(size_t si) {
        Shape s = plan_.shapes[si];
        s.alpha = 1.0, s.beta = 0.0;
        shape_ = s;
        report_.send({{"event", "shape_start"}, {"shape_index", si}});
        const int lda = s.eff_lda(), ldb = s.eff_ldb(), ldc = s.eff_ldc();
        A_ = DeviceBuffer<T>(size_t(s.M) * lda);
        B_ = DeviceBuffer<T>(size_t(s.K) * ldb);
        C_ = DeviceBuffer<T>(size_t(s.M) * ldc);
        const size_t operand_bytes = (A_.size() + B_.size() + C_.size()) * sizeof(T);
        flush_now_ = flush_.size() && operand_bytes <= kL2ResidentFactor * device_.l2_bytes;

        std::vector<ItemRun<T>> runs(plan_.items.size());
        for (size_t i = 0; i < runs.size(); ++i) set_up(runs[i], plan_.items[i], si, i);
        for (bool any = true; any;) {  // round-robin: one call of each unfinished item per round
            any = false;
            for (size_t i = 0; i < runs.size(); ++i) {
                if (runs[i].done) continue;
                any = true;
                report_.send({{"event", "call"}, {"shape_index", si}, {"item", i}, {"rep", runs[i].times.size()}});
                step(runs[i]);
                if (runs[i].done) finish(runs[i], si, i);
            }
        }
        A_ = DeviceBuffer<T>(), B_ = DeviceBuffer<T>(), C_ = DeviceBuffer<T>();
    }

    void set_up(ItemRun<T>& r, const BenchItem& item, size_t si, size_t index) {
        r.item = &item;
        r.result.shape = plan_.shapes[si];
        r.result.peak_gflops = peak_;
        r.warmups_left = plan_.warmup;
        if (item.kind == BenchItem::Kind::cublas) return;
        r.stage = find_stage(item.side, item.stage);
        r.variant = r.stage ? find_variant(*r.stage, item.variant) : nullptr;
        if (!r.variant) return stop(r, si, index, Disposition::crashed, "no stage " + item.label() + " in this grader");
        // A tensor-core stage may go past the FP32 pipe's peak (its variants multiply on the tensor
        // cores); it is held to the tensor cores' instead (peak.h).
        if (r.stage->tensor_cores) r.result.peak_gflops = tensor_peak_gflops(plan_.precision, device_.shape);
        r.bound = error_bound(plan_.precision, *r.variant);
        r.result.error_bound = r.bound.threshold;
        if (!entry_points_linked(r.stage->operands, r.variant->template fns<T>()))
            return stop(r, si, index, Disposition::rejected, kNotLinkedProblem);
        r.pitched = r.stage->operands == Operands::pitched;
        if (!r.pitched) return;
        report_.send({{"event", "call"}, {"shape_index", si}, {"item", index}, {"rep", -1}});
        const StageFns<T>& f = r.variant->template fns<T>();
        const Shape& s = shape_;
        const struct { Pitched<T>* p; int rows, cols; const char* name; } ops[] = {
            {&r.pa, s.M, s.K, "A"}, {&r.pb, s.K, s.N, "B"}, {&r.pc, s.M, s.N, "C"}};
        for (const auto& op : ops) {
            const Status st = f.alloc(&op.p->m, op.rows, op.cols);
            CUDA_CHECK(cudaDeviceSynchronize());
            if (st == Status::not_implemented)
                return stop(r, si, index, Disposition::not_implemented, "pitched_alloc is not implemented");
            const size_t row_bytes = size_t(op.cols) * sizeof(T);
            if (st != Status::ok || !op.p->m.data || op.p->m.pitch_bytes < row_bytes ||
                op.p->m.pitch_bytes % sizeof(T) != 0 || op.p->m.rows != op.rows || op.p->m.cols != op.cols)
                return stop(r, si, index, Disposition::failed,
                            std::string("pitched_alloc gave an unusable matrix for ") + op.name);
        }
    }

    void stop(ItemRun<T>& r, size_t si, size_t index, Disposition d, const std::string& why) {
        r.result.disposition = d;
        r.result.problem = why;
        r.done = true;
        send(r, si, index);
    }

    // The operands of one call, freshly made: random A and B, C poisoned with NaN, L2 flushed.
    struct Operands3 {
        T *A, *B, *C;
        int lda, ldb, ldc;
    };
    Operands3 prepare(ItemRun<T>& r) {
        cudaStream_t st = ctx_.stream;
        Operands3 o;
        if (r.pitched) {
            o = {r.pa.m.data, r.pb.m.data, r.pc.m.data, r.pa.ld(), r.pb.ld(), r.pc.ld()};
            fill_random(ctx_.rng, o.A, size_t(shape_.M) * o.lda, st);
            fill_random(ctx_.rng, o.B, size_t(shape_.K) * o.ldb, st);
            fill_nan(o.C, size_t(shape_.M) * o.ldc, st);
        } else {
            o = {A_.get(), B_.get(), C_.get(), shape_.eff_lda(), shape_.eff_ldb(), shape_.eff_ldc()};
            fill_random(ctx_.rng, o.A, A_.size(), st);
            fill_random(ctx_.rng, o.B, B_.size(), st);
            fill_nan(o.C, C_.size(), st);
        }
        if (flush_now_) {
            flush_value_ ^= 1;  // a different value each time: no write can be skipped as redundant
            CUDA_CHECK(cudaMemsetAsync(flush_.get(), flush_value_, flush_.bytes(), st));
        }
        CUDA_CHECK(cudaDeviceSynchronize());
        return o;
    }

    // The call itself; returns the stage's status (ok for cuBLAS).
    Status call(ItemRun<T>& r, const Operands3& o) {
        const T alpha = T(1), beta = T(0);
        if (r.item->kind == BenchItem::Kind::cublas && r.item->cublas_inputs != InputPrecision::full) {
            // The tensor-core cuBLAS of the variants that declare TF32 or FP16 inputs: the same FP32
            // operands, rounded inside the call (bench_plan.h). Float plans only.
            const cublasComputeType_t compute = r.item->cublas_inputs == InputPrecision::tf32
                                                    ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                    : CUBLAS_COMPUTE_32F_FAST_16F;
            const cudaDataType_t type = std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_64F;
            // A cuBLAS that refuses the compute type loses this item only, with its status named.
            const cublasStatus_t st =
                std::is_same_v<T, float>
                    ? cublasGemmEx(fast_, CUBLAS_OP_N, CUBLAS_OP_N, shape_.N, shape_.M, shape_.K, &alpha, o.B, type,
                                   o.ldb, o.A, type, o.lda, &beta, o.C, type, o.ldc, compute, CUBLAS_GEMM_DEFAULT)
                    : CUBLAS_STATUS_NOT_SUPPORTED;
            if (st == CUBLAS_STATUS_SUCCESS) return Status::ok;
            cublas_refusal_ = std::string("cublasGemmEx with this compute type returned ") + cublas_status_name(st);
            return Status::unsupported;
        }
        if (r.item->kind == BenchItem::Kind::cublas) {
            // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ. The handle uses CUBLAS_PEDANTIC_MATH
            // (gpu_context.cu): true FP32, no TF32 tensor cores.
            if constexpr (std::is_same_v<T, float>)
                CUBLAS_CHECK(cublasSgemm(ctx_.cublas, CUBLAS_OP_N, CUBLAS_OP_N, shape_.N, shape_.M, shape_.K, &alpha,
                                         o.B, o.ldb, o.A, o.lda, &beta, o.C, o.ldc));
            else
                CUBLAS_CHECK(cublasDgemm(ctx_.cublas, CUBLAS_OP_N, CUBLAS_OP_N, shape_.N, shape_.M, shape_.K, &alpha,
                                         o.B, o.ldb, o.A, o.lda, &beta, o.C, o.ldc));
            return Status::ok;
        }
        GemmProblem<T> p;
        p.M = shape_.M, p.N = shape_.N, p.K = shape_.K;
        p.alpha = alpha, p.beta = beta;
        p.A = o.A, p.lda = o.lda, p.B = o.B, p.ldb = o.ldb, p.C = o.C, p.ldc = o.ldc, p.stream = ctx_.stream;
        return r.variant->template fns<T>().gemm(p);
    }

    static std::string status_words(Status st) {
        switch (st) {
            case Status::not_implemented: return "the stage is not implemented";
            case Status::unsupported: return "the stage returned Status::unsupported for this shape";
            case Status::cuda_error: return "the stage returned Status::cuda_error";
            default: return "the stage returned an unknown status";
        }
    }

    void step(ItemRun<T>& r) {
        const auto t_step = Clock::now();
        const Operands3 o = prepare(r);
        const bool warmup = r.warmups_left > 0;
        gpu_.mark(ctx_.stream);  // the GPU's record of this call starts here (gpu_record.h)
        const auto t0 = Clock::now();
        CUDA_CHECK(cudaEventRecord(start_, ctx_.stream));
        const Status st = call(r, o);
        CUDA_CHECK(cudaEventRecord(stop_, ctx_.stream));
        CUDA_CHECK(cudaDeviceSynchronize());  // work on every stream counts
        const double wall_ms = seconds_since(t0) * 1e3;
        gpu_.mark(ctx_.stream);  // ... and ends here
        float event_ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&event_ms, start_, stop_));
        const GpuWindow gpu = gpu_.collect_marked();
        if (r.item->kind == BenchItem::Kind::cublas) library_kernels_.insert(gpu.kernel_names.begin(), gpu.kernel_names.end());
        r.kernel_names.insert(gpu.kernel_names.begin(), gpu.kernel_names.end());
        if (const std::string forged = clocks_disagree(event_ms, wall_ms, gpu); !forged.empty()) {
            r.result.disposition = Disposition::rejected;
            r.result.problem = forged;
            r.done = true;
            return;
        }
        // A failed launch the stage did not check would otherwise surface in the grader's next
        // launch and be blamed on the next item: clear it here and charge it to this one.
        if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess && st == Status::ok) {
            r.result.disposition = Disposition::crashed;
            r.result.problem = std::string("a CUDA call of the stage failed unchecked: ") + cudaGetErrorString(err);
            r.done = true;
            return;
        }
        if (st != Status::ok) {
            r.result.disposition = st == Status::not_implemented ? Disposition::not_implemented
                                   : st == Status::cuda_error    ? Disposition::crashed
                                                                 : Disposition::failed;
            r.result.problem = r.item->kind == BenchItem::Kind::cublas ? cublas_refusal_ : status_words(st);
            r.done = true;
            return;
        }
        const ClockReading clock = nvml_.read(/*with_power=*/false);
        if (warmup) {
            --r.warmups_left;
            r.spent += seconds_since(t_step);
            return;
        }
        r.events.push_back(event_ms);
        r.walls.push_back(wall_ms);
        r.gpus.push_back(gpu.busy_span_ms);
        // The call's time from its clocks (call_time.h, docs/timing.md): a stage by the GPU's record
        // of its work plus one launch, raised by its events or wall clock where they exceed that by
        // more than the host's jitter; cuBLAS, the harness's own call, by its kernels plus one
        // launch — its host-side work before the kernel (20 to 120 µs, and up to 10% of a 2048³
        // call apart between two processes) is not the library's speed.
        const CallClocks clocks{event_ms, wall_ms, gpu.busy_span_ms,
                                gpu_.available() && gpu.kernels + gpu.copies > 0};
        const CallTime timed = r.item->kind == BenchItem::Kind::cublas ? library_call_time(clocks, launch_)
                                                                       : stage_call_time(clocks, launch_);
        ++r.timed_by[static_cast<int>(timed.by)];
        r.times.push_back(timed.ms);
        if (clock.valid) {
            r.clocks.push_back(clock.sm_clock_mhz);
            r.reasons |= clock.reasons;
        }
        const bool verify = r.item->kind == BenchItem::Kind::stage &&
                            (r.verify_all || std::bernoulli_distribution(kVerifyProbability)(pick_));
        if (verify && !verify_call(r, o)) {
            r.done = true;
            return;
        }
        r.spent += seconds_since(t_step);
        const StopReason why = should_stop(r.times, r.spent, plan_.stop);
        if (why == StopReason::keep_going) return;
        const bool needs_more = r.item->kind == BenchItem::Kind::stage && r.result.verified < plan_.verify_repetitions;
        if (needs_more) {
            r.verify_all = true;  // the next calls are timed and verified until there are enough
            return;
        }
        r.result.stop_reason = stop_reason_name(why);
        r.done = true;
    }

    // Checks the output of a timed call; false (and the item failed) when it is wrong.
    bool verify_call(ItemRun<T>& r, const Operands3& o) {
        gpu_.collect_kernel_names();  // what ran before: not the reference's
        const Reference ref = compute_reference<T>(ctx_, shape_, o.A, o.lda, o.B, o.ldb, nullptr, r.bound.underflow_weight);
        CUDA_CHECK(cudaDeviceSynchronize());
        const std::set<std::string> lib = gpu_.collect_kernel_names();  // the FP64 cuBLAS kernels of the reference
        library_kernels_.insert(lib.begin(), lib.end());
        const CompareReport cmp = compare_with_reference(o.C, o.ldc, ref.value.get(), ref.gauge.get(), shape_.M, shape_.N,
                                                         r.bound.u, nullptr, ctx_.stream, r.bound.threshold);
        ++r.result.verified;
        if (cmp.max_ratio > r.result.max_error_ratio || std::isnan(cmp.max_ratio)) r.result.max_error_ratio = cmp.max_ratio;
        if (cmp.wrong == 0) return true;
        std::ostringstream os;
        os << "timed call " << r.times.size() << " gave wrong values: " << cmp.wrong << " of "
           << int64_t(shape_.M) * shape_.N << " elements outside the bound (worst C["
           << cmp.worst_index / shape_.N << "][" << cmp.worst_index % shape_.N << "] expected " << cmp.expected
           << ", got " << cmp.got << "); the stage must compute every call from its inputs";
        r.result.disposition = Disposition::failed;
        r.result.problem = os.str();
        return false;
    }

    void finish(ItemRun<T>& r, size_t si, size_t index) {
        Timing& t = r.result;
        t.seconds = r.spent;
        if (t.disposition == Disposition::skipped) {  // it ran to the end of its repetitions
            const Summary sum = summarize(r.times);
            t.repetitions = sum.count;
            t.time_ms = sum.iqm;
            t.spread_pct = sum.spread_pct;
            t.min_ms = sum.min;
            t.max_ms = sum.max;
            t.event_ms = interquartile_mean(r.events);
            t.wall_ms = interquartile_mean(r.walls);
            t.gpu_ms = interquartile_mean(r.gpus);
            t.gflops = gflops_of(shape_, t.time_ms);
            // The clock that set the time of most calls.
            const int* n = r.timed_by;
            const int most = static_cast<int>(std::max_element(n, n + 3) - n);
            t.timed_by = timed_by_name(static_cast<TimedBy>(most));
            t.disposition = Disposition::passed;
            if (const std::string foreign = foreign_kernel_among(r); !foreign.empty()) {
                t.disposition = Disposition::rejected;
                t.problem = "the GPU ran " + foreign + " during the stage's calls, a kernel that is not in the "
                            "submission's build: a stage's work is the kernels it compiles itself";
            } else if (const std::string lib = r.item->kind == BenchItem::Kind::stage
                                                   ? library_kernel_among(r.kernel_names)
                                                   : std::string();
                       !lib.empty()) {
                t.disposition = Disposition::rejected;
                t.problem = "the GPU ran " + lib + ", a kernel of cuBLAS (the harness ran it for the cuBLAS "
                            "item or the verification), during the stage's calls: a stage must compute the "
                            "product itself";
            } else if (!(t.time_ms > 0) ||
                       (r.item->kind == BenchItem::Kind::stage && t.gflops > t.peak_gflops * kPeakTolerance)) {
                std::ostringstream os;
                os << "measured " << t.gflops << " GFLOPS, above this GPU's peak of " << t.peak_gflops
                   << " GFLOPS for " << precision_name(plan_.precision)
                   << (r.stage && r.stage->tensor_cores ? " on the tensor cores" : "")
                   << ": the timing cannot be real (work done outside the timed call?)";
                t.disposition = Disposition::rejected;
                t.problem = os.str();
            }
        }
        t.gpu_record = gpu_.available() ? "cupti" : "unavailable: " + gpu_.why_unavailable();
        t.kernels.assign(r.kernel_names.begin(), r.kernel_names.end());
        if (!r.clocks.empty()) t.sm_clock_mhz = median(r.clocks);
        t.clock_reasons = clock_reason_names(r.reasons);
        t.throttled = is_throttled(r.reasons);
        send(r, si, index);
    }

    // Why the clocks of one call cannot all be true, or "" when they agree (see kClockTolerance*).
    std::string clocks_disagree(double event_ms, double wall_ms, const GpuWindow& gpu) const {
        auto beyond = [](double longer, double shorter) {
            return longer > shorter * (1 + kClockToleranceFraction) + kClockToleranceMs;
        };
        std::ostringstream os;
        if (beyond(event_ms, wall_ms))
            os << "the host clock measured " << wall_ms << " ms for a call whose CUDA events measured " << event_ms
               << " ms: a wall time below the event time cannot happen in an honest call (a clock function was "
                  "replaced, or the grader's memory altered)";
        else if (gpu_.available() && gpu.kernels >= 0 && beyond(gpu.busy_span_ms, wall_ms))
            os << "the GPU's own record shows " << gpu.busy_span_ms << " ms of work (" << gpu.kernels
               << " kernel(s), " << gpu.copies << " copies) during a call the host clock measured at " << wall_ms
               << " ms: the GPU cannot be busy longer than the call (a clock function was replaced, or the "
                  "grader's memory altered)";
        return os.str();
    }

    // The first kernel of a submission stage's calls that its build does not hold, or "" (also when
    // the plan carries no list: no symbol check, as in the GPU unit tests).
    std::string foreign_kernel_among(const ItemRun<T>& r) const {
        if (plan_.submission_kernels.empty() || r.item->kind != BenchItem::Kind::stage ||
            r.item->side != Side::submission)
            return "";
        for (const std::string& n : r.kernel_names)
            if (std::find(plan_.submission_kernels.begin(), plan_.submission_kernels.end(), n) ==
                plan_.submission_kernels.end())
                return n;
        return "";
    }

    // The first of `names` that the harness saw cuBLAS run, or "".
    std::string library_kernel_among(const std::set<std::string>& names) const {
        for (const std::string& n : names)
            if (library_kernels_.count(n)) return n;
        return "";
    }

    void send(ItemRun<T>& r, size_t si, size_t index) {
        report_.send({{"event", "timing"}, {"shape_index", si}, {"item", index}, {"timing", to_json(r.result)}});
    }

    const BenchPlan& plan_;
    const ReportChannel& report_;
    GpuContext ctx_;
    cublasHandle_t fast_ = nullptr;  // cuBLAS in the default math mode, for the tensor-core items
    std::string cublas_refusal_;     // why cuBLAS refused a tensor-core item
    Device device_ = describe_device();
    Nvml nvml_;
    GpuRecord gpu_;                        // the GPU's own record of every call (gpu_record.h)
    std::set<std::string> library_kernels_;  // kernels the harness's own cuBLAS calls ran
    std::mt19937_64 pick_;
    cudaEvent_t start_ = nullptr, stop_ = nullptr;
    double peak_ = 0;
    LaunchCosts launch_;  // what one launch costs: wall overhead, and what a one-kernel call pays beyond its kernel
    DeviceBuffer<unsigned char> flush_;
    bool flush_now_ = false;
    int flush_value_ = 0;
    Shape shape_;
    DeviceBuffer<T> A_, B_, C_;  // dense operands shared by the dense items at the current shape
};

}  // namespace

int child_bench(const BenchPlan& plan, const ReportChannel& report) {
    report.send({{"event", "start"}, {"items", plan.items.size()}, {"shapes", plan.shapes.size()}});
    try {
        if (plan.precision == Precision::f32) Bencher<float>(plan, report).run();
        else Bencher<double>(plan, report).run();
    } catch (const CudaError& e) {
        report.send({{"event", "fatal"}, {"error", e.what()}});
        report.send({{"event", "done"}});
        return 1;
    }
    report.send({{"event", "done"}});
    return 0;
}

}  // namespace gemmlab
