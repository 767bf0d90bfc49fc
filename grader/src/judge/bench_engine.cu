// bench_engine.cu — the judge's benchmark (bench_engine.h). One timed call, in the judge's context:
//
//   host:   fresh random A0, B0 in the judge's own memory; ask the runner to arm call k (its stream
//           waits on the go word, then runs the call between two events, then writes the done word)
//   stream: stamp ─ copy A0→A, B0→B ─ poison C ─ flush L2 ─ go := k ─ wait done ≥ k ─ sample C ─ stamp
//   host:   interval = second stamp − first; time = interval − calibration (`launch` at this shape);
//           the output verified in full against the FP64 reference of A0, B0
//
// The inputs exist where the runner can see them only after the first stamp, and the sample check
// (secret positions, poison still there = not written) runs before the second: no call is measured
// shorter than the GPU work it did with its inputs, whatever its process does (docs/timing.md).
#include "judge/bench_engine.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>

#include "common/bound.h"
#include "common/call_time.h"
#include "common/cuda_check.h"
#include "common/peak.h"
#include "common/protocol.h"
#include "judge/device_buffer.h"
#include "judge/device_ops.h"
#include "judge/isolation.h"
#include "judge/nvml.h"
#include "judge/reference_gemm.h"
#include "judge/runners.h"

namespace gemmlab {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// How long a runner may take to arm a call (its stage's host code, enqueueing behind the go word)
// before the judge starts the clock anyway: a stage that synchronizes inside its call waits for the
// go word itself, and its host time then counts.
constexpr double kArmSeconds = 0.2;
// How long a runner may take to start CUDA (and the submission's library) and to map the buffers.
constexpr double kRunnerStartSeconds = 60;
constexpr double kRunnerExitSeconds = 5;
// Positions of C sampled after the done word, before the second stamp: a call that said it was done
// with a fraction f of C unwritten passes this with probability (1-f)^kSamples.
constexpr int kSamples = 1024;
// The calibration: `launch` calls at each shape, after one warm-up.
constexpr int kCalibrationCalls = 16;
// The L2 is flushed before a call when the operands are at most this many L2 sizes: after the
// fresh data is written, that much of it could still be resident and make the call look warm.
constexpr double kL2ResidentFactor = 2.0;
// Flushing writes a buffer of this many L2 sizes, which evicts every line of the previous data.
constexpr double kL2FlushFactor = 2.0;
// How often the judge looks whether its stream is done, and whether the runner is still alive.
constexpr useconds_t kPollMicroseconds = 50;

json clocks_json(const ClockReading& r) {
    if (!r.valid) return json();
    return {{"sm_clock_mhz", r.sm_clock_mhz},
            {"max_sm_clock_mhz", r.max_sm_clock_mhz},
            {"temperature_c", r.temperature_c},
            {"power_w", r.power_w},
            {"clock_reasons", clock_reason_names(r.reasons)}};
}

Timing lost(const Shape& s, Disposition d, const std::string& why) {
    Timing t;
    t.shape = s;
    t.disposition = d;
    t.problem = why;
    return t;
}

// One runner process and the flag words the judge shares with it.
struct Session {
    RunnerKind kind = RunnerKind::baselines;
    std::unique_ptr<ChildProcess> proc;
    ExportedBuffer flags;
    uint32_t go = 0;
};

// Where one item's operands sit in the judge's buffers: leading dimensions of the dense layout the
// shape asks for, or of rows at the pitch cudaMallocPitch gives (the pitched stage's timed calls).
struct Layout {
    int lda = 0, ldb = 0, ldc = 0;
};

// One item's state at one shape.
struct ItemRun {
    const BenchItem* item = nullptr;
    size_t index = 0;
    bool pitched = false, done = false;
    int warmups_left = 0;
    std::vector<double> times, intervals, events, clocks;
    uint64_t reasons = 0;
    double spent = 0;  // seconds of set-up, calls and verification at this shape
    ErrorBound bound;
    Timing result;
};

// What happened to one call.
struct CallReport {
    bool runner_lost = false;  // the runner died or hung: the item's call ends it
    Disposition lost_as = Disposition::crashed;
    std::string why;
    protocol::CallResult result;
    std::string error;  // the runner's CUDA error after the call
    double interval_ms = 0, event_ms = 0;
    unsigned unwritten = 0;
};

template <typename T>
class Engine {
public:
    Engine(GpuContext& ctx, const BenchPlan& plan, const BenchRunOptions& opt, BenchOutcome& out)
        : ctx_(ctx), plan_(plan), opt_(opt), out_(out), nvml_(ctx.pci_bus_id), secret_(std::random_device{}()) {
        const ClockReading r = nvml_.read();
        shape_of_gpu_ = ctx.shape;
        if (r.max_sm_clock_mhz > shape_of_gpu_.max_sm_clock_mhz) shape_of_gpu_.max_sm_clock_mhz = r.max_sm_clock_mhz;
        peak_ = peak_gflops(plan.precision, shape_of_gpu_);
        if (plan.clear_l2 && ctx.l2_bytes) flush_ = DeviceBuffer<unsigned char>(size_t(kL2FlushFactor * ctx.l2_bytes));
        out_.device = {{"peak_gflops", peak_},
                       {"l2_bytes", ctx.l2_bytes},
                       {"max_sm_clock_mhz", shape_of_gpu_.max_sm_clock_mhz},
                       {"gpu", ctx.name},
                       {"nvml", nvml_.available() ? "available" : nvml_.why_unavailable()},
                       {"clocks_start", clocks_json(r)},
                       {"timing", "judge"}};
    }

    void run() {
        baselines_ = start_session(RunnerKind::baselines);
        if (!baselines_) throw JudgeUnavailable(start_problem_);
        for (size_t si = 0; si < plan_.shapes.size(); ++si) run_shape(si);
        end_session(baselines_);
        json calibration = json::array();
        for (const Timing& t : out_.calibration) calibration.push_back({{"shape", t.shape.dims()}, {"interval_ms", t.judge_ms}, {"spread_pct", t.spread_pct}, {"calls", t.repetitions}});
        out_.device["calibration"] = calibration;
        out_.device["clocks_end"] = clocks_json(nvml_.read());
    }

private:
    // ---- runner sessions --------------------------------------------------------------------------
    std::optional<Session> start_session(RunnerKind kind) {
        Session s;
        s.kind = kind;
        s.flags = ExportedBuffer(protocol::kExportGranularity);
        CUDA_CHECK(cudaMemset(s.flags.get(), 0, s.flags.bytes()));
        ChildLimits limits;
        s.proc = std::make_unique<ChildProcess>(runner_executable(kind), std::vector<std::string>{"serve"}, limits,
                                                runner_sandbox(kind));
        bool timed_out = false;
        std::string why = await(*s.proc, "ready", kRunnerStartSeconds, &timed_out);
        if (why.empty() && !map(s, true)) why = start_problem_;
        if (!why.empty()) {
            const ChildEnd end = s.proc->reap(0, timed_out ? "its start" : "");
            start_problem_ = std::string(kind == RunnerKind::baselines ? "the grader's own runner" : "the submission's runner") +
                             " did not start: " + why + " (" + describe_end(end) + ")" +
                             (end.output_tail.empty() ? "" : "; it printed: " + end.output_tail);
            return std::nullopt;
        }
        return s;
    }

    // Maps the current shape's buffers (and, the first time, the flags) into the runner.
    bool map(Session& s, bool with_flags) {
        json buffers = json::array();
        auto add = [&](const char* name, const ExportedBuffer& b) {
            buffers.push_back({{"name", name}, {"handle", b.handle_hex()}, {"bytes", b.bytes()}});
        };
        if (with_flags) add("flags", s.flags);
        if (A_.get()) add("A", A_), add("B", B_), add("C", C_);
        bool timed_out = false;
        if (!s.proc->send({{"op", "map"}, {"buffers", buffers}})) {
            start_problem_ = "it stopped reading its requests";
            return false;
        }
        start_problem_ = await(*s.proc, "mapped", kRunnerStartSeconds, &timed_out);
        return start_problem_.empty();
    }

    void end_session(std::optional<Session>& s, const std::string& killed_for = "") {
        if (!s) return;
        if (killed_for.empty()) {
            s->proc->send({{"op", "exit"}});
            bool t = false;
            while (auto ev = s->proc->receive(kRunnerExitSeconds, &t))
                if ((*ev)["event"] == "done") break;
        }
        s->proc->reap(kRunnerExitSeconds, killed_for);
        s.reset();
    }

    static std::string await(ChildProcess& p, const char* want, double seconds, bool* timed_out) {
        for (;;) {
            const auto ev = p.receive(seconds, timed_out);
            if (!ev) return *timed_out ? "it said nothing for " + std::to_string(int(seconds)) + " s" : "it ended";
            if ((*ev)["event"] == want) return "";
            if ((*ev)["event"] == "fatal") return ev->value("error", "it stopped");
        }
    }

    // ---- one shape --------------------------------------------------------------------------------
    Layout layout_of(const ItemRun& r) const { return r.pitched ? pitched_ : dense_; }

    void run_shape(size_t si) {
        Shape s = plan_.shapes[si];
        s.alpha = 1.0, s.beta = 0.0;
        shape_ = s;
        dense_ = {s.eff_lda(), s.eff_ldb(), s.eff_ldc()};
        pitched_ = {pitch_elems(s.K), pitch_elems(s.N), pitch_elems(s.N)};
        const size_t a = size_t(s.M) * std::max(dense_.lda, pitched_.lda), b = size_t(s.K) * std::max(dense_.ldb, pitched_.ldb),
                     c = size_t(s.M) * std::max(dense_.ldc, pitched_.ldc);
        A_ = ExportedBuffer(), B_ = ExportedBuffer(), C_ = ExportedBuffer();  // the last shape's first
        A_ = ExportedBuffer(a * sizeof(T));
        B_ = ExportedBuffer(b * sizeof(T));
        C_ = ExportedBuffer(c * sizeof(T));
        A0_ = DeviceBuffer<T>(a);
        B0_ = DeviceBuffer<T>(b);
        flush_now_ = flush_.size() && (size_t(s.M) * dense_.lda + size_t(s.K) * dense_.ldb + size_t(s.M) * dense_.ldc) *
                                              sizeof(T) <= kL2ResidentFactor * ctx_.l2_bytes;
        if (!map(*baselines_, false)) throw JudgeUnavailable("the grader's own runner could not map the buffers: " + start_problem_);

        // Phase 1: the calibration, then the grader's own items.
        calibrate(si);
        std::vector<ItemRun> own, submitted;
        for (size_t i = 0; i < plan_.items.size(); ++i) {
            ItemRun r = set_up(plan_.items[i], i, si);
            (plan_.items[i].kind == BenchItem::Kind::stage && plan_.items[i].side == Side::submission ? submitted : own)
                .push_back(std::move(r));
        }
        round_robin(own, baselines_, si);
        // Phase 2: the submission's stages, in a runner of their own that ends before anything else runs.
        while (std::any_of(submitted.begin(), submitted.end(), [](const ItemRun& r) { return !r.done; })) {
            if (!submission_) {
                submission_ = start_session(RunnerKind::submission);
                if (!submission_) {
                    for (ItemRun& r : submitted)
                        if (!r.done) stop(r, Disposition::crashed, start_problem_);
                    break;
                }
            }
            round_robin(submitted, submission_, si);
        }
        end_session(submission_);
        for (ItemRun& r : own) out_.timings[r.index][si] = r.result;
        for (ItemRun& r : submitted) out_.timings[r.index][si] = r.result;
        A0_ = DeviceBuffer<T>(), B0_ = DeviceBuffer<T>();
    }

    int pitch_elems(int cols) const {
        void* p = nullptr;
        size_t pitch = 0;
        CUDA_CHECK(cudaMallocPitch(&p, &pitch, size_t(std::max(cols, 1)) * sizeof(T), 1));
        CUDA_CHECK(cudaFree(p));
        return static_cast<int>(pitch / sizeof(T));
    }

    ItemRun set_up(const BenchItem& item, size_t index, size_t si) {
        ItemRun r;
        r.item = &item;
        r.index = index;
        r.result.shape = plan_.shapes[si];
        r.result.peak_gflops = peak_;
        r.result.timed_by = "judge";
        r.warmups_left = plan_.warmup;
        if (skipped_.count(index)) {
            r.done = true;
            r.result = lost(plan_.shapes[si], Disposition::skipped, skipped_[index]);
            return r;
        }
        if (item.kind != BenchItem::Kind::stage) return r;
        const StageInfo* st = find_stage(item.side, item.stage);
        const StageVariant* v = st ? find_variant(*st, item.variant) : nullptr;
        if (!v) {
            r.done = true;
            r.result = lost(plan_.shapes[si], Disposition::crashed, "no stage " + item.label() + " in this grader");
            return r;
        }
        // A tensor-core stage may go past the FP32 pipe's peak; it is held to the tensor cores' instead.
        if (st->tensor_cores) r.result.peak_gflops = tensor_peak_gflops(plan_.precision, shape_of_gpu_);
        r.bound = error_bound(plan_.precision, *v);
        r.result.error_bound = r.bound.threshold;
        r.pitched = st->operands == Operands::pitched;
        return r;
    }

    void stop(ItemRun& r, Disposition d, const std::string& why) {
        r.result.disposition = d;
        r.result.problem = why;
        r.done = true;
    }

    void calibrate(size_t si) {
        const BenchItem launch = BenchItem::launch();
        ItemRun r;
        r.item = &launch;
        r.result.shape = plan_.shapes[si];
        r.result.timed_by = "judge";
        r.warmups_left = 1;
        std::vector<double> intervals;
        while (intervals.size() < size_t(kCalibrationCalls)) {
            const bool warmup = r.warmups_left > 0;
            const CallReport c = call(*baselines_, r, warmup);
            if (c.runner_lost || c.result.status != "ok" || !c.error.empty())
                throw JudgeUnavailable("the calibration of the judge's clock failed: " +
                                       (c.why.empty() ? c.result.status + " " + c.error : c.why));
            if (warmup) --r.warmups_left;
            else intervals.push_back(c.interval_ms);
        }
        calibration_ms_ = calibration_ms(intervals);
        const Summary sum = summarize(intervals);
        Timing t;
        t.shape = plan_.shapes[si];
        t.disposition = Disposition::passed;
        t.timed_by = "judge";
        t.judge_ms = t.time_ms = calibration_ms_;
        t.spread_pct = sum.spread_pct;
        t.repetitions = sum.count;
        t.min_ms = sum.min, t.max_ms = sum.max;
        out_.calibration.push_back(t);
    }

    // ---- calls ------------------------------------------------------------------------------------
    void round_robin(std::vector<ItemRun>& runs, std::optional<Session>& session, size_t si) {
        for (bool any = true; any;) {
            any = false;
            for (ItemRun& r : runs) {
                if (r.done) continue;
                any = true;
                if (opt_.progress)
                    std::cout << "\r\033[K  timing " << precision_name(plan_.precision) << " " << shape_.dims() << "  "
                              << r.item->label() << "  call " << r.times.size() + 1 << std::flush;
                step(r, *session, si);
                if (r.done) finish(r);
                if (!session) return;  // the runner was lost: the caller starts another
            }
        }
        if (opt_.progress) std::cout << "\r\033[K" << std::flush;
    }

    void step(ItemRun& r, Session& session, size_t si) {
        try {
            step_once(r, session, si);
        } catch (const CudaError& e) {
            // The judge's own allocations fail only when the GPU's memory is gone: the runner holds it.
            if (!is_out_of_memory(e)) throw;
            lose_runner(r, session, si, Disposition::crashed,
                        std::string("the GPU ran out of memory for the judge while the stage's process held it: ") + e.what(),
                        "holding the GPU's memory");
        }
    }

    // The runner of r's call is gone (or must go): r is charged, skipped at later shapes, and the
    // runner ended; the grader's own runner is started again.
    void lose_runner(ItemRun& r, Session& session, size_t si, Disposition d, const std::string& why,
                     const std::string& killed_for) {
        stop(r, d, why + " while timing " + shape_.dims());
        std::optional<Session>& owner = session.kind == RunnerKind::baselines ? baselines_ : submission_;
        const bool baselines = session.kind == RunnerKind::baselines;
        out_.restarts.push_back(r.item->label() + " at " + shape_.dims() + ": " + why);
        if (si + 1 < plan_.shapes.size())
            skipped_[r.index] = "not timed: it " + std::string(disposition_name(d)) + " at " + shape_.dims();
        end_session(owner, killed_for);
        if (baselines) {
            baselines_ = start_session(RunnerKind::baselines);
            if (!baselines_) throw JudgeUnavailable(start_problem_);
            if (!map(*baselines_, false)) throw JudgeUnavailable(start_problem_);
        }
    }

    void step_once(ItemRun& r, Session& session, size_t si) {
        const auto t_step = Clock::now();
        const bool warmup = r.warmups_left > 0;
        const CallReport c = call(session, r, warmup);
        if (c.runner_lost)
            return lose_runner(r, session, si, c.lost_as, c.why,
                               c.lost_as == Disposition::timed_out ? "a call that did not end" : "");
        if (!c.error.empty()) return stop(r, Disposition::crashed, "the call ended with a CUDA error: " + c.error);
        if (c.result.status != "ok") {
            const std::string& s = c.result.status;
            if (s == "not_implemented") return stop(r, Disposition::not_implemented, "the stage is not implemented");
            if (s == "not_linked") return stop(r, Disposition::rejected, "this stage's code is not in the build");
            if (s == "cuda_error") return stop(r, Disposition::crashed, "the stage returned Status::cuda_error (" + c.result.error + ")");
            if (s == "unsupported")
                return stop(r, Disposition::failed, c.result.error.empty() ? "the stage returned Status::unsupported for this shape"
                                                                          : c.result.error);
            return stop(r, Disposition::crashed, "the runner could not make the call: " + c.result.error);
        }
        const ClockReading clock = nvml_.read(/*with_power=*/false);
        if (warmup) {
            --r.warmups_left;
            r.spent += seconds_since(t_step);
            return;
        }
        if (c.unwritten > 0) {
            std::ostringstream os;
            os << "timed call " << r.times.size() + 1 << " said it was done while " << c.unwritten << " of " << kSamples
               << " elements of C the judge sampled were still unwritten: a call must finish its work on its stream "
                  "before it returns (work left running, or on another stream, is not allowed)";
            return stop(r, Disposition::failed, os.str());
        }
        r.intervals.push_back(c.interval_ms);
        r.times.push_back(call_time_ms(c.interval_ms, calibration_ms_));
        r.events.push_back(c.event_ms);
        if (clock.valid) {
            r.clocks.push_back(clock.sm_clock_mhz);
            r.reasons |= clock.reasons;
        }
        if (r.item->kind == BenchItem::Kind::stage && !verify(r)) return;
        r.spent += seconds_since(t_step);
        const StopReason why = should_stop(r.times, r.spent, plan_.stop);
        if (why == StopReason::keep_going) return;
        r.result.stop_reason = stop_reason_name(why);
        r.done = true;
    }

    // One call of r's item on fresh inputs: timed (armed behind the go word, between two stamps) or,
    // for a warm-up, plain.
    CallReport call(Session& session, const ItemRun& r, bool warmup) {
        CallReport rep;
        const Layout L = layout_of(r);
        const Shape& s = shape_;
        cudaStream_t st = ctx_.stream;
        T* A = reinterpret_cast<T*>(A_.get());
        T* B = reinterpret_cast<T*>(B_.get());
        T* C = reinterpret_cast<T*>(C_.get());
        const size_t a_n = size_t(s.M) * L.lda, b_n = size_t(s.K) * L.ldb, c_n = size_t(s.M) * L.ldc;
        // This call's inputs, in the judge's own memory only.
        fill_random(ctx_.rng, A0_.get(), a_n, st);
        fill_random(ctx_.rng, B0_.get(), b_n, st);
        CUDA_CHECK(cudaStreamSynchronize(st));

        protocol::Problem p;
        p.precision = plan_.precision;
        p.M = s.M, p.N = s.N, p.K = s.K, p.alpha = 1, p.beta = 0;
        p.a = {"A", 0}, p.b = {"B", 0}, p.c = {"C", 0};
        p.lda = L.lda, p.ldb = L.ldb, p.ldc = L.ldc;
        json request{{"op", "call"}, {"item", to_json(*r.item)}, {"problems", json::array({protocol::to_json(p)})}};
        auto copy_inputs_in = [&] {
            CUDA_CHECK(cudaMemcpyAsync(A, A0_.get(), a_n * sizeof(T), cudaMemcpyDeviceToDevice, st));
            CUDA_CHECK(cudaMemcpyAsync(B, B0_.get(), b_n * sizeof(T), cudaMemcpyDeviceToDevice, st));
            if constexpr (std::is_same_v<T, float>) fill_bits(C, c_n, quiet_nan_bits32(), st);
            else fill_bits(C, c_n, quiet_nan_bits64(), st);
        };
        const double timeout = opt_.call_timeout_seconds;
        if (warmup) {
            copy_inputs_in();
            CUDA_CHECK(cudaStreamSynchronize(st));
            if (!session.proc->send(request)) return runner_gone(session, rep);
            return await_result(session, rep, "returned", timeout);
        }
        const uint32_t k = ++session.go;
        request["go"] = k;
        if (!session.proc->send(request)) return runner_gone(session, rep);
        // "armed": its call is enqueued behind the go word (or, after kArmSeconds, the clock starts anyway).
        {
            const auto t0 = Clock::now();
            bool armed = false;
            while (!armed && seconds_since(t0) < kArmSeconds) {
                bool t = false;
                const auto ev = session.proc->receive(kArmSeconds - seconds_since(t0), &t);
                if (!ev) {
                    if (!t) return runner_gone(session, rep);
                    break;
                }
                if ((*ev)["event"] == "armed") armed = true;
                if ((*ev)["event"] == "fatal") {
                    rep.runner_lost = true;
                    rep.why = "the runner stopped: " + ev->value("error", "");
                    return rep;
                }
            }
        }
        uint32_t* flags = reinterpret_cast<uint32_t*>(session.flags.get());
        uint64_t* stamps = stamps_.get();
        CUDA_CHECK(cudaMemsetAsync(unwritten_.get(), 0, sizeof(unsigned), st));
        stamp_clock(stamps, st);
        copy_inputs_in();
        if (flush_now_) {
            flush_value_ ^= 1;  // a different value each time: no write can be skipped as redundant
            CUDA_CHECK(cudaMemsetAsync(flush_.get(), flush_value_, flush_.bytes(), st));
        }
        CUDA_CHECK(ctx_.memops.write(st, flags + protocol::kGoWord, k));
        CUDA_CHECK(ctx_.memops.wait_geq(st, flags + protocol::kDoneWord, k));
        count_unwritten_sample(C, L.ldc, s.M, s.N, secret_(), kSamples, unwritten_.get(), st);
        stamp_clock(stamps + 1, st);
        // Wait for the judge's stream, watching the runner: if it dies or hangs, release the stream.
        cudaEvent_t done = nullptr;
        CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
        CUDA_CHECK(cudaEventRecord(done, st));
        const auto t0 = Clock::now();
        bool released = false;
        for (;;) {
            const cudaError_t q = cudaEventQuery(done);
            if (q == cudaSuccess) break;
            if (q != cudaErrorNotReady) CUDA_CHECK(q);
            const bool dead = session.proc->exited();
            if (!released && (dead || seconds_since(t0) > timeout)) {
                CUDA_CHECK(ctx_.memops.write(ctx_.rescue, flags + protocol::kDoneWord, k));
                released = true;
                rep.runner_lost = true;
                rep.lost_as = dead ? Disposition::crashed : Disposition::timed_out;
            }
            usleep(kPollMicroseconds);
        }
        CUDA_CHECK(cudaEventDestroy(done));
        if (released) {
            if (rep.lost_as == Disposition::timed_out) {
                std::ostringstream os;
                os << "a call did not finish within " << timeout << " s";
                rep.why = os.str();
            } else {
                return runner_gone(session, rep);
            }
            return rep;
        }
        uint64_t h[2] = {0, 0};
        CUDA_CHECK(cudaMemcpy(h, stamps, sizeof h, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(&rep.unwritten, unwritten_.get(), sizeof(unsigned), cudaMemcpyDeviceToHost));
        rep.interval_ms = h[1] > h[0] ? double(h[1] - h[0]) * 1e-6 : 0.0;
        return await_result(session, rep, "finished", timeout);
    }

    // The runner's last word on a call: "returned" (plain) or "finished" (timed).
    CallReport& await_result(Session& session, CallReport& rep, const char* want, double timeout) {
        for (;;) {
            bool t = false;
            const auto ev = session.proc->receive(timeout, &t);
            if (!ev) {
                if (t) {
                    rep.runner_lost = true;
                    rep.lost_as = Disposition::timed_out;
                    std::ostringstream os;
                    os << "a call did not return within " << timeout << " s";
                    rep.why = os.str();
                    return rep;
                }
                return runner_gone(session, rep);
            }
            const std::string kind = ev->value("event", "");
            if (kind == "fatal") {
                rep.runner_lost = true;
                rep.why = "the runner stopped: " + ev->value("error", "");
                return rep;
            }
            if (kind != want) continue;
            const json results = ev->value("results", json::array());
            if (results.is_array() && !results.empty()) rep.result = protocol::call_result_from_json(results[0]);
            else rep.result.status = "missing";
            const json times = ev->value("event_ms", json::array());
            if (times.is_array() && !times.empty() && times[0].is_number()) rep.event_ms = times[0].get<double>();
            rep.error = ev->value("error", "");
            return rep;
        }
    }

    CallReport& runner_gone(Session& session, CallReport& rep) {
        rep.runner_lost = true;
        const ChildEnd end = session.proc->reap(kRunnerExitSeconds);
        rep.lost_as = end.timed_out ? Disposition::timed_out : Disposition::crashed;
        rep.why = "the process " + describe_end(end);
        if (!end.signal && end.exit_code >= 0) rep.why += " in the middle of the benchmark (a stage must return, not exit)";
        if (!end.output_tail.empty()) rep.why += "; it printed: " + end.output_tail.substr(0, 500);
        return rep;
    }

    // Checks the output of a timed call in full; false (and the item failed) when it is wrong.
    bool verify(ItemRun& r) {
        const Layout L = layout_of(r);
        const Reference ref = compute_reference<T>(ctx_, shape_, A0_.get(), L.lda, B0_.get(), L.ldb, nullptr,
                                                   r.bound.underflow_weight);
        const CompareReport cmp = compare_with_reference(reinterpret_cast<const T*>(C_.get()), L.ldc, ref.value.get(),
                                                         ref.gauge.get(), shape_.M, shape_.N, r.bound.u, nullptr,
                                                         ctx_.stream, r.bound.threshold);
        ++r.result.verified;
        if (cmp.max_ratio > r.result.max_error_ratio || std::isnan(cmp.max_ratio)) r.result.max_error_ratio = cmp.max_ratio;
        if (cmp.wrong == 0) return true;
        std::ostringstream os;
        os << "timed call " << r.times.size() << " gave wrong values: " << cmp.wrong << " of "
           << int64_t(shape_.M) * shape_.N << " elements outside the bound (worst C[" << cmp.worst_index / shape_.N << "]["
           << cmp.worst_index % shape_.N << "] expected " << cmp.expected << ", got " << cmp.got
           << "); the stage must compute every call from its inputs";
        stop(r, Disposition::failed, os.str());
        return false;
    }

    void finish(ItemRun& r) {
        Timing& t = r.result;
        t.seconds = r.spent;
        t.overhead_ms = calibration_ms_;
        if (t.disposition == Disposition::skipped && !r.times.empty()) {  // it ran to the end of its repetitions
            const Summary sum = summarize(r.times);
            t.repetitions = sum.count;
            t.time_ms = sum.iqm;
            t.spread_pct = sum.spread_pct;
            t.min_ms = sum.min;
            t.max_ms = sum.max;
            t.judge_ms = interquartile_mean(r.intervals);
            t.event_ms = interquartile_mean(r.events);
            t.gflops = gflops_of(shape_, t.time_ms);
            t.disposition = Disposition::passed;
            const bool is_stage = r.item->kind == BenchItem::Kind::stage;
            if (!(t.time_ms > 0) || (is_stage && t.gflops > t.peak_gflops * kPeakTolerance)) {
                std::ostringstream os;
                os << "measured " << t.gflops << " GFLOPS, above this GPU's peak of " << t.peak_gflops << " GFLOPS for "
                   << precision_name(plan_.precision) << ": the timing cannot be real";
                t.disposition = Disposition::rejected;
                t.problem = os.str();
            }
        }
        if (!r.clocks.empty()) t.sm_clock_mhz = median(r.clocks);
        t.clock_reasons = clock_reason_names(r.reasons);
        t.throttled = is_throttled(r.reasons);
    }

    GpuContext& ctx_;
    const BenchPlan& plan_;
    BenchRunOptions opt_;
    BenchOutcome& out_;
    Nvml nvml_;
    std::mt19937_64 secret_;  // the sample positions: drawn in the judge, never sent anywhere
    GpuShape shape_of_gpu_;
    double peak_ = 0;
    std::optional<Session> baselines_, submission_;
    std::string start_problem_;
    std::map<size_t, std::string> skipped_;  // items lost at an earlier shape
    DeviceBuffer<uint64_t> stamps_{2};
    DeviceBuffer<unsigned> unwritten_{1};
    DeviceBuffer<unsigned char> flush_;
    bool flush_now_ = false;
    int flush_value_ = 0;
    Shape shape_;
    Layout dense_, pitched_;
    ExportedBuffer A_, B_, C_;
    DeviceBuffer<T> A0_, B0_;
    double calibration_ms_ = 0;
};

}  // namespace

BenchOutcome run_bench_plan(GpuContext& ctx, const BenchPlan& plan, const BenchRunOptions& opt) {
    BenchOutcome out;
    out.plan = plan;
    out.timings.assign(plan.items.size(), std::vector<Timing>(plan.shapes.size()));
    for (auto& row : out.timings)
        for (size_t s = 0; s < plan.shapes.size(); ++s) row[s].shape = plan.shapes[s];
    if (plan.precision == Precision::f32) Engine<float>(ctx, plan, opt, out).run();
    else Engine<double>(ctx, plan, opt, out).run();
    return out;
}

}  // namespace gemmlab
