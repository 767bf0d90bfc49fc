// bench_engine.cpp — the judge's benchmark (bench_engine.h). One timed interval, in the judge's context:
//
//   host:   fresh random A0, B0 for each of the interval's n calls, in the judge's own memory; ask the
//           runner to arm them (its stream waits on the go word, runs the n calls one after the other
//           on n sets of operands, each between two events, then writes the done word)
//   stream: stamp ─ copy every A0→A, B0→B ─ poison every C ─ flush L2 ─ go := k ─ wait done ≥ k ─
//           sample the n C's ─ stamp
//   host:   time of a call = (interval − calibration(n)) / n, the calibration being the same interval
//           around n calls of the grader's own kernel that writes C, less that kernel's own events;
//           every output verified in full against the FP64 reference of its A0, B0 — unless the sample
//           found the poison, which is "unwritten" as it stands (judge/interval_verdict.h)
//
// n is 1 unless one call is shorter than [bench] min_interval_ms: then as many calls (a power of two)
// share an interval as make it that long, so the judge's fixed costs (two switches between the
// contexts, about 0.35 ms) weigh on every call alike and little. The inputs exist where the runner
// can see them only after the first stamp, and the sample check (secret positions: the poison still
// there, or a value that is not yet the answer, = not done: two counts) runs before the second: no interval is
// measured shorter than the GPU work its calls did with their inputs, whatever the runner's process
// does (docs/timing.md).
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
#include <stdexcept>

#include "common/bound.h"
#include "common/call_time.h"
#include "common/cuda_check.h"
#include "common/peak.h"
#include "common/protocol.h"
#include "common/sample_check.h"
#include "judge/device_buffer.h"
#include "judge/device_ops.h"
#include "judge/interval_verdict.h"
#include "judge/isolation.h"
#include "judge/nvml.h"
#include "judge/reference_gemm.h"
#include "judge/bench_item.h"
#include "judge/bench_session.h"

namespace gemmlab {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// How long a runner may take to arm a call (its stage's host code, enqueueing behind the go word)
// before the judge starts the clock anyway: a stage that synchronizes inside its call waits for the
// go word itself, and its host time then counts.
constexpr double kArmSeconds = 0.2;
// Positions of C sampled after the done word, before the second stamp (over the interval's n C's): an
// interval that said it was done with a fraction f of its C's unwritten passes with probability (1-f)^kSamples.
constexpr int kSamples = 1024;
// Beside them, positions whose value is checked (common/sample_check.h): a stage that wrote anything
// into C first (zeros, a placeholder) while its real work still ran elsewhere passes the poison check
// but not this one. Fewer, since each costs a dot product of length K (a few microseconds for all).
constexpr int kAnswerSamples = 64;
// The calibration: `launch` intervals at each shape and number of calls per interval, after one warm-up.
constexpr int kCalibrationCalls = 16;
// Each call's operands start on a boundary of this many bytes in the exported buffers (what any
// cudaMalloc allocation would give a stage, and more).
constexpr size_t kSlotAlignBytes = 4096;
// The L2 is flushed before a call when the operands are at most this many L2 sizes: after the
// fresh data is written, that much of it could still be resident and make the call look warm.
constexpr double kL2ResidentFactor = 2.0;
// Flushing writes a buffer of this many L2 sizes, which evicts every line of the previous data.
constexpr double kL2FlushFactor = 2.0;
// How often the judge looks whether its stream is done, and whether the runner is still alive.
constexpr useconds_t kPollMicroseconds = 50;

using Session = BenchSession;

// The runners of one run of several plans (one per precision): the grader's own, and the current
// submission stage's, which serve every plan in turn.
struct Runners {
    std::optional<Session> baselines, submission;
};

// One plan's part of a run (run_bench_plans): phase 1 at its shapes, then phase 2 one stage at a time.
class PlanEngine {
public:
    virtual ~PlanEngine() = default;
    virtual void time_baselines() = 0;                         // phase 1, at every shape
    virtual std::vector<std::string> stages() const = 0;       // its submission stages, in plan order
    virtual void time_stage(const std::string& stage) = 0;     // phase 2 for one stage, at every shape
    virtual size_t free_before_calls() const = 0;              // the GPU's free memory before the last calls
    virtual void finish() = 0;                                 // the calibration and clocks into the outcome
};

template <typename T>
class Engine final : public PlanEngine {
public:
    Engine(GpuContext& ctx, const BenchPlan& plan, const BenchRunOptions& opt, BenchOutcome& out, Runners& runners)
        : ctx_(ctx), plan_(plan), opt_(opt), out_(out), baselines_(runners.baselines), submission_(runners.submission),
          nvml_(ctx.pci_bus_id), secret_(std::random_device{}()) {
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

    // Phase 1, at every shape: the calibration, then the grader's own items, in its own runner (the
    // caller ends it once every plan had its phase 1).
    void time_baselines() override {
        {
            size_t free_bytes = 0, total_bytes = 0;
            CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
            const std::string problem = shapes_memory_problem(plan_.shapes, plan_.precision, double(free_bytes), double(total_bytes));
            if (!problem.empty()) throw std::invalid_argument(problem);  // before anything is timed
        }
        if (!baselines_) baselines_ = start_session(RunnerKind::baselines);
        if (!baselines_) throw JudgeUnavailable(start_problem_);
        for (size_t si = 0; si < plan_.shapes.size(); ++si) time_own_items(si);
        leave_shape();
    }

    std::vector<std::string> stages() const override {
        std::vector<std::string> stages;
        for (const BenchItem& item : plan_.items)
            if (item.kind == BenchItem::Kind::stage && item.side == Side::submission &&
                std::find(stages.begin(), stages.end(), item.stage) == stages.end())
                stages.push_back(item.stage);
        return stages;
    }

    // Phase 2 for one of the submission's stages, at every shape, in that stage's runner (with that
    // stage's library only): the one the previous plan used for it, or a new one; the caller ends it
    // before the next stage's starts.
    void time_stage(const std::string& stage) override {
        for (size_t si = 0; si < plan_.shapes.size(); ++si) time_stage(stage, si);
        leave_shape();
    }

    size_t free_before_calls() const override { return free_at_shape_; }

    void finish() override {
        json calibration = json::array();
        for (const Timing& t : out_.calibration)
            calibration.push_back({{"shape", t.shape.dims()}, {"calls_per_interval", t.calls_per_interval},
                                   {"interval_ms", t.judge_ms}, {"event_ms", t.event_ms}, {"overhead_ms", t.overhead_ms},
                                   {"spread_pct", t.spread_pct}, {"intervals", t.repetitions}});
        out_.device["calibration"] = calibration;
        out_.device["clocks_end"] = clocks_json(nvml_.read());
    }

private:
    // ---- runner sessions --------------------------------------------------------------------------
    // A runner: the grader's own (stage ""), or the submission's for one stage, with that stage's library,
    // holding the current shape's buffers.
    std::optional<Session> start_session(RunnerKind kind, const std::string& stage = "") {
        out_.runners.push_back(stage);
        return start_bench_session(kind, stage, buffers(), &start_problem_);
    }
    NamedBuffers buffers() const { return {{"A", &A_}, {"B", &B_}, {"C", &C_}}; }
    bool map(Session& s) { return map_buffers(s, buffers(), false, &start_problem_); }
    void end_session(std::optional<Session>& s, const std::string& killed_for = "") { end_bench_session(s, killed_for); }

    // ---- one shape --------------------------------------------------------------------------------
    Layout layout_of(const ItemRun& r) const { return r.pitched ? pitched_ : dense_; }

    // Makes shape si the current one: its layouts and operands (the last shape's freed first). The
    // number of operand sets and the calibration are the first visit's (phase 1), kept for phase 2.
    void enter_shape(size_t si) {
        Shape s = plan_.shapes[si];
        s.alpha = 1.0, s.beta = 0.0;
        shape_ = s;
        shape_index_ = si;
        dense_ = {s.eff_lda(), s.eff_ldb(), s.eff_ldc()};
        pitched_ = {pitch_elems(s.K), pitch_elems(s.N), pitch_elems(s.N)};
        // One call's A, B and C in the larger of the two layouts (pitched rows may be longer).
        const size_t a = size_t(s.M) * std::max(dense_.lda, pitched_.lda), b = size_t(s.K) * std::max(dense_.ldb, pitched_.ldb),
                     c = size_t(s.M) * std::max(dense_.ldc, pitched_.ldc);
        auto slot = [](size_t elems) { return (elems * sizeof(T) + kSlotAlignBytes - 1) / kSlotAlignBytes * kSlotAlignBytes / sizeof(T); };
        stride_a_ = slot(a), stride_b_ = slot(b), stride_c_ = slot(c);
        // The L2 is flushed before every call of every item at this shape, pitched or dense, and of the
        // calibration, or before none: each call's operands are copied in one after the other, C's poison
        // last, so when one call's A, B and C fit in L2 together the last of them could still be there.
        flush_now_ = flush_.size() && (a + b + c) * sizeof(T) <= kL2ResidentFactor * ctx_.l2_bytes;
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
        if (calibrations_.size() <= si) calibrations_.resize(si + 1);
    }

    // Frees the current shape's operands (the runner's mapping of them goes with its next map or its end).
    void leave_shape() {
        A_ = ExportedBuffer(), B_ = ExportedBuffer(), C_ = ExportedBuffer();
        A0_ = DeviceBuffer<T>(), B0_ = DeviceBuffer<T>();
    }

    // Phase 1 at shape si: the calibration (every number of calls per interval an item may use), then
    // the grader's own items, round-robin.
    void time_own_items(size_t si) {
        enter_shape(si);
        if (!map(*baselines_)) throw JudgeUnavailable("the grader's own runner could not map the buffers: " + start_problem_);
        for (int n = 1; n <= slots_; n *= 2) calibrate(si, n);
        std::vector<ItemRun> own;
        for (size_t i = 0; i < plan_.items.size(); ++i)
            if (!(plan_.items[i].kind == BenchItem::Kind::stage && plan_.items[i].side == Side::submission))
                own.push_back(set_up(plan_.items[i], i, si));
        std::vector<ItemRun*> items;
        for (ItemRun& r : own) items.push_back(&r);
        round_robin(items, baselines_, si);
        for (ItemRun& r : own) out_.timings[r.index][si] = r.result;
    }

    // Phase 2: the items of one of the submission's stages at shape si, in that stage's runner (started
    // at its first shape, another when one is lost; the caller ends it after its last shape).
    void time_stage(const std::string& stage, size_t si) {
        try {
            enter_shape(si);
        } catch (const CudaError& e) {
            // The judge's own allocations fail only when the GPU's memory is gone: the runner holds it.
            if (!is_out_of_memory(e) || !submission_) throw;
            out_.restarts.push_back(stage + " before " + plan_.shapes[si].dims() + ": its runner held the GPU's memory");
            end_session(submission_, "holding the GPU's memory");
            await_gpu_memory(free_at_shape_);
            enter_shape(si);
        }
        if (submission_ && !map(*submission_)) end_session(submission_, "not mapping the next shape's buffers");
        free_at_shape_ = gpu_free_bytes();
        std::vector<ItemRun> mine;
        for (size_t i = 0; i < plan_.items.size(); ++i)
            if (plan_.items[i].kind == BenchItem::Kind::stage && plan_.items[i].side == Side::submission &&
                plan_.items[i].stage == stage)
                mine.push_back(set_up(plan_.items[i], i, si));
        std::vector<ItemRun*> items;
        for (ItemRun& r : mine) items.push_back(&r);
        while (std::any_of(items.begin(), items.end(), [](const ItemRun* r) { return !r->done; })) {
            if (!submission_) {
                submission_ = start_session(RunnerKind::submission, stage);
                if (!submission_) {
                    for (ItemRun* r : items)
                        if (!r->done) stop(*r, Disposition::crashed, start_problem_);
                    break;
                }
            }
            round_robin(items, submission_, si);
        }
        for (ItemRun& r : mine) out_.timings[r.index][si] = r.result;
        A0_ = DeviceBuffer<T>(), B0_ = DeviceBuffer<T>();
    }

    // How many calls' operands this shape holds: enough for an interval of min_interval_ms of calls
    // at the fastest any item could run (the tensor cores' peak), a power of two, within memory.
    int slots_for(const Shape& s) const {
        const double fastest_ms = gflops_of(s, 1.0) / std::max(peak_, tensor_peak_gflops(plan_.precision, shape_of_gpu_));
        size_t free_bytes = 0, total_bytes = 0;
        CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
        const size_t per_slot = (2 * stride_a_ + 2 * stride_b_ + stride_c_) * sizeof(T);  // A, B, C, A0, B0
        return operand_slots(fastest_ms, plan_.min_interval_ms, double(per_slot), double(free_bytes));
    }

    // Calls per interval for an item whose one call took `call_ms`: the least power of two that makes
    // an interval of min_interval_ms, within the shape's slots.
    int per_interval_for(double call_ms) const { return calls_per_interval(call_ms, plan_.min_interval_ms, slots_); }

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
            r.result = lost_timing(plan_.shapes[si], Disposition::skipped, skipped_[index]);
            return r;
        }
        if (item.kind != BenchItem::Kind::stage) return r;
        const StageInfo* st = find_stage(item.side, item.stage);
        const StageVariant* v = st ? find_variant(*st, item.variant) : nullptr;
        if (!v) {
            r.done = true;
            r.result = lost_timing(plan_.shapes[si], Disposition::crashed, "no stage " + item.label() + " in this grader");
            return r;
        }
        // A tensor-core stage may go past the FP32 pipe's peak; it is held to the tensor cores' instead.
        r.tensor_cores = st->tensor_cores;
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

    // The judge's overhead in an interval of n calls at this shape: the interval around n calls of
    // the grader's own kernel that writes all of C (every call must: the GPU's switch back to the
    // judge costs a little more after written memory than after none), less what that kernel's own
    // events measured. The grader's own runner runs no submission code: its events can be believed.
    void calibrate(size_t si, int n) {
        const BenchItem launch = BenchItem::launch();
        ItemRun r;
        r.item = &launch;
        r.result.shape = plan_.shapes[si];
        r.result.timed_by = "judge";
        r.warmups_left = 1;
        std::vector<double> intervals, events;
        while (intervals.size() < size_t(kCalibrationCalls)) {
            const bool warmup = r.warmups_left > 0;
            const CallReport c = call(*baselines_, r, warmup, n, /*fresh_inputs=*/false);
            if (c.runner_lost || c.result.status != "ok" || !c.error.empty())
                throw JudgeUnavailable("the calibration of the judge's clock failed: " +
                                       (c.why.empty() ? c.result.status + " " + c.error : c.why));
            if (warmup) {
                --r.warmups_left;
                continue;
            }
            intervals.push_back(c.interval_ms);
            events.push_back(c.event_ms);
        }
        const double overhead = calibration_ms(intervals, events);
        calibrations_[si][n] = overhead;
        const Summary sum = summarize(intervals);
        Timing t;
        t.shape = plan_.shapes[si];
        t.disposition = Disposition::passed;
        t.timed_by = "judge";
        t.calls_per_interval = n;
        t.judge_ms = interquartile_mean(intervals);
        t.event_ms = interquartile_mean(events);
        t.overhead_ms = t.time_ms = overhead;
        t.spread_pct = sum.spread_pct;
        t.repetitions = sum.count;
        t.min_ms = sum.min, t.max_ms = sum.max;
        out_.calibration.push_back(t);
    }

    // ---- calls ------------------------------------------------------------------------------------
    void round_robin(const std::vector<ItemRun*>& runs, std::optional<Session>& session, size_t si) {
        for (bool any = true; any;) {
            any = false;
            for (ItemRun* item : runs) {
                ItemRun& r = *item;
                if (r.done) continue;
                any = true;
                if (opt_.progress)
                    std::cout << "\r\033[K  timing " << precision_name(plan_.precision) << " " << shape_.dims() << "  "
                              << r.item->label() << "  call " << r.calls + 1 << std::flush;
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
        await_gpu_memory(free_at_shape_);  // the next runner must not find it still taken
        if (baselines) {
            baselines_ = start_session(RunnerKind::baselines);
            if (!baselines_) throw JudgeUnavailable(start_problem_);
            if (!map(*baselines_)) throw JudgeUnavailable(start_problem_);
        }
    }

    // One untimed warm-up call, or one timed interval of the item's calls. The first timed interval
    // holds one call and sizes the rest: kept when one call fills an interval, else only verified.
    void step_once(ItemRun& r, Session& session, size_t si) {
        const auto t_step = Clock::now();
        const bool warmup = r.warmups_left > 0;
        const int n = warmup || r.per_interval == 0 ? 1 : r.per_interval;
        const CallReport c = call(session, r, warmup, n, /*fresh_inputs=*/true);
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
        {
            // Poison in the sample is "unwritten" as it stands; otherwise the full check (made after the
            // runner synchronized the device) says whether values that were not yet the answer are wrong or
            // were late. The grader's own items are held to the poison only.
            const bool stage = r.item->kind == BenchItem::Kind::stage;
            IntervalSample sample;
            sample.first_call = r.calls + 1, sample.calls = n;
            sample.sampled = kSamples + kAnswerSamples, sample.poisoned = c.poisoned;
            sample.checked = stage ? kAnswerSamples : 0, sample.unanswered = c.unanswered;
            const std::optional<WrongCall> wrong = stage && full_check_decides(sample) ? verify(r, n) : std::nullopt;
            const std::string problem = interval_problem(sample, wrong);
            if (!problem.empty()) return stop(r, Disposition::failed, problem);
        }
        r.calls += n;
        const double per_call_ms = call_time_ms(c.interval_ms, calibrations_[si].at(n)) / n;
        r.spent += seconds_since(t_step);
        if (r.per_interval == 0) {
            // Sized from the shorter of the judge's time and the call's own events: another context's time
            // slice in this one interval must not leave a short call alone in all of its intervals. (The
            // events come from the stage's process; they can only give its own item more calls an interval.)
            const double events_ms = c.event_ms / n;
            r.per_interval = per_interval_for(events_ms > 0 ? std::min(per_call_ms, events_ms) : per_call_ms);
            if (r.per_interval > 1) return;  // sized: the intervals of several calls are what counts
        }
        r.intervals.push_back(c.interval_ms / n);
        r.times.push_back(per_call_ms);
        r.events.push_back(c.event_ms / n);
        if (clock.valid) {
            r.clocks.push_back(clock.sm_clock_mhz);
            r.reasons |= clock.reasons;
        }
        const StopReason why = should_stop(r.times, r.spent, plan_.stop, n);
        if (why == StopReason::keep_going) return;
        r.result.stop_reason = stop_reason_name(why);
        r.done = true;
    }

    // One interval of n calls of r's item, each on its own operands (slot i of A, B, C): timed (armed
    // behind the go word, between two stamps) or, for a warm-up, plain. Fresh inputs for each call,
    // except for the calibration, whose kernel does not read them (the copies cost the same).
    CallReport call(Session& session, const ItemRun& r, bool warmup, int n, bool fresh_inputs) {
        CallReport rep;
        const Layout L = layout_of(r);
        const Shape& s = shape_;
        cudaStream_t st = ctx_.stream;
        T* A = reinterpret_cast<T*>(A_.get());
        T* B = reinterpret_cast<T*>(B_.get());
        T* C = reinterpret_cast<T*>(C_.get());
        const size_t a_n = size_t(s.M) * L.lda, b_n = size_t(s.K) * L.ldb, c_n = size_t(s.M) * L.ldc;
        // This interval's inputs, in the judge's own memory only.
        if (fresh_inputs) {
            for (int i = 0; i < n; ++i) {
                fill_random(ctx_.rng, A0_.get() + i * stride_a_, a_n, st);
                fill_random(ctx_.rng, B0_.get() + i * stride_b_, b_n, st);
            }
        }
        CUDA_CHECK(cudaStreamSynchronize(st));

        json problems = json::array();
        for (int i = 0; i < n; ++i) {
            protocol::Problem p;
            p.precision = plan_.precision;
            p.M = s.M, p.N = s.N, p.K = s.K, p.alpha = 1, p.beta = 0;
            p.a = {"A", i * stride_a_ * sizeof(T)}, p.b = {"B", i * stride_b_ * sizeof(T)}, p.c = {"C", i * stride_c_ * sizeof(T)};
            p.lda = L.lda, p.ldb = L.ldb, p.ldc = L.ldc;
            problems.push_back(protocol::to_json(p));
        }
        json request{{"op", "call"}, {"item", to_json(*r.item)}, {"problems", problems}};
        auto copy_inputs_in = [&] {
            for (int i = 0; i < n; ++i) {
                CUDA_CHECK(cudaMemcpyAsync(A + i * stride_a_, A0_.get() + i * stride_a_, a_n * sizeof(T), cudaMemcpyDeviceToDevice, st));
                CUDA_CHECK(cudaMemcpyAsync(B + i * stride_b_, B0_.get() + i * stride_b_, b_n * sizeof(T), cudaMemcpyDeviceToDevice, st));
                if constexpr (std::is_same_v<T, float>) fill_bits(C + i * stride_c_, c_n, quiet_nan_bits32(), st);
                else fill_bits(C + i * stride_c_, c_n, quiet_nan_bits64(), st);
            }
        };
        // One limit per interval: an interval of several calls holds about min_interval_ms of work.
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
        // "armed": its calls are enqueued behind the go word (or, after kArmSeconds, the clock starts anyway).
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
        CUDA_CHECK(cudaMemsetAsync(sample_counts_.get(), 0, sample_counts_.bytes(), st));
        stamp_clock(stamps, st);
        copy_inputs_in();
        if (flush_now_) {
            flush_value_ ^= 1;  // a different value each time: no write can be skipped as redundant
            CUDA_CHECK(cudaMemsetAsync(flush_.get(), flush_value_, flush_.bytes(), st));
        }
        CUDA_CHECK(ctx_.memops.write(st, flags + protocol::kGoWord, k));
        CUDA_CHECK(ctx_.memops.wait_geq(st, flags + protocol::kDoneWord, k));
        const uint64_t secret = secret_();
        unsigned* poisoned = sample_counts_.get() + kPoisonedCount;
        unsigned* unanswered = sample_counts_.get() + kUnansweredCount;
        count_unwritten_sample(C, L.ldc, s.M, s.N, n, stride_c_, secret, kSamples, poisoned, st);
        {
            // The grader's own items (baselines, the calibration's kernel) are not held to an answer here:
            // only the poison counts for them, at the same cost.
            const bool stage = r.item->kind == BenchItem::Kind::stage;
            AnswerSample<T> a;
            a.C = C, a.ldc = L.ldc, a.stride_c = stride_c_;
            a.A = A0_.get(), a.lda = L.lda, a.stride_a = stride_a_;
            a.B = B0_.get(), a.ldb = L.ldb, a.stride_b = stride_b_;
            a.M = s.M, a.N = s.N, a.K = s.K, a.slots = n;
            count_unanswered_sample(a, secret, kSamples, kAnswerSamples, r.bound.u,
                                    stage ? r.bound.threshold * kSampleSlack : INFINITY, r.bound.underflow_weight,
                                    poisoned, unanswered, st);
        }
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
        unsigned counts[kSampleCounts] = {0, 0};
        CUDA_CHECK(cudaMemcpy(counts, sample_counts_.get(), sizeof counts, cudaMemcpyDeviceToHost));
        rep.poisoned = counts[kPoisonedCount], rep.unanswered = counts[kUnansweredCount];
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
            // The first call that did not return ok speaks for the interval (they are calls of one item).
            rep.result.status = "missing";
            if (results.is_array())
                for (const json& one : results) {
                    rep.result = protocol::call_result_from_json(one);
                    if (rep.result.status != "ok") break;
                }
            const json times = ev->value("event_ms", json::array());
            if (times.is_array())
                for (const json& t : times)
                    if (t.is_number()) rep.event_ms += t.get<double>();
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

    // Checks the outputs of a timed interval's n calls in full, up to the first wrong one (which it returns).
    std::optional<WrongCall> verify(ItemRun& r, int n) {
        const Layout L = layout_of(r);
        for (int i = 0; i < n; ++i) {
            const Reference ref = compute_reference<T>(ctx_, shape_, A0_.get() + i * stride_a_, L.lda, B0_.get() + i * stride_b_,
                                                       L.ldb, nullptr, r.bound.underflow_weight);
            const CompareReport cmp =
                compare_with_reference(reinterpret_cast<const T*>(C_.get()) + i * stride_c_, L.ldc, ref.value.get(),
                                       ref.gauge.get(), shape_.M, shape_.N, r.bound.u, nullptr, ctx_.stream, r.bound.threshold);
            ++r.result.verified;
            if (cmp.max_ratio > r.result.max_error_ratio || std::isnan(cmp.max_ratio)) r.result.max_error_ratio = cmp.max_ratio;
            if (cmp.wrong == 0) continue;
            WrongCall w;
            w.call = r.calls + i + 1;
            w.wrong = cmp.wrong, w.elements = int64_t(shape_.M) * shape_.N;
            w.row = cmp.worst_index / shape_.N, w.col = cmp.worst_index % shape_.N;
            w.expected = cmp.expected, w.got = cmp.got;
            return w;
        }
        return std::nullopt;
    }

    void finish(ItemRun& r) { finish_item(r, calibrations_[shape_index_], shape_, plan_.precision); }

    GpuContext& ctx_;
    const BenchPlan& plan_;
    BenchRunOptions opt_;
    BenchOutcome& out_;
    std::optional<Session>& baselines_;  // Runners: shared by the run's plans
    std::optional<Session>& submission_;
    Nvml nvml_;
    std::mt19937_64 secret_;  // the sample positions: drawn in the judge, never sent anywhere
    GpuShape shape_of_gpu_;
    double peak_ = 0;
    size_t free_at_shape_ = 0;              // the GPU's free memory before the current stage's calls at this shape
    std::string start_problem_;
    std::map<size_t, std::string> skipped_;  // items lost at an earlier shape
    DeviceBuffer<uint64_t> stamps_{2};
    // The sample's two counts (CallReport): poisoned, unanswered.
    static constexpr int kPoisonedCount = 0, kUnansweredCount = 1, kSampleCounts = 2;
    DeviceBuffer<unsigned> sample_counts_{kSampleCounts};
    DeviceBuffer<unsigned char> flush_;
    bool flush_now_ = false;  // at this shape (run_shape)
    int flush_value_ = 0;
    Shape shape_;
    size_t shape_index_ = 0;
    Layout dense_, pitched_;
    // The shape's operands: slots_ sets, call i of an interval on set i (element offsets i·stride).
    int slots_ = 1;
    size_t stride_a_ = 0, stride_b_ = 0, stride_c_ = 0;
    ExportedBuffer A_, B_, C_;
    DeviceBuffer<T> A0_, B0_;
    // Per shape (phase 1): the operand sets, and the judge's overhead per interval by calls per interval.
    std::vector<int> slots_of_;
    std::vector<std::map<int, double>> calibrations_;
};

}  // namespace

std::vector<BenchOutcome> run_bench_plans(GpuContext& ctx, const std::vector<BenchPlan>& plans, const BenchRunOptions& opt) {
    std::vector<BenchOutcome> outs(plans.size());
    for (size_t i = 0; i < plans.size(); ++i) {
        outs[i].plan = plans[i];
        outs[i].timings.assign(plans[i].items.size(), std::vector<Timing>(plans[i].shapes.size()));
        for (auto& row : outs[i].timings)
            for (size_t s = 0; s < plans[i].shapes.size(); ++s) row[s].shape = plans[i].shapes[s];
    }
    Runners runners;
    std::vector<std::unique_ptr<PlanEngine>> engines;
    // Phase 1 of every plan in the grader's own runner; it ends before any submission runner starts.
    for (size_t i = 0; i < plans.size(); ++i) {
        if (plans[i].precision == Precision::f32) engines.push_back(std::make_unique<Engine<float>>(ctx, plans[i], opt, outs[i], runners));
        else engines.push_back(std::make_unique<Engine<double>>(ctx, plans[i], opt, outs[i], runners));
        engines.back()->time_baselines();
    }
    end_bench_session(runners.baselines);
    // Phase 2: one runner per stage, for every plan that times it, ended before the next stage's starts.
    std::vector<std::string> stages;
    for (const auto& e : engines)
        for (const std::string& s : e->stages())
            if (std::find(stages.begin(), stages.end(), s) == stages.end()) stages.push_back(s);
    for (const std::string& stage : stages) {
        size_t level = 0;
        for (const auto& e : engines) {
            const std::vector<std::string> mine = e->stages();
            if (std::find(mine.begin(), mine.end(), stage) == mine.end()) continue;
            e->time_stage(stage);
            level = std::max(level, e->free_before_calls());
        }
        end_bench_session(runners.submission);
        await_gpu_memory(level);  // what it held, back before the next stage
    }
    for (const auto& e : engines) e->finish();
    return outs;
}

BenchOutcome run_bench_plan(GpuContext& ctx, const BenchPlan& plan, const BenchRunOptions& opt) {
    return std::move(run_bench_plans(ctx, {plan}, opt).front());
}

}  // namespace gemmlab
