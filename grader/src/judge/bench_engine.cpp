// bench_engine.cpp — the judge's benchmark (bench_engine.h): the phases of a run, and one plan's part
// in them (Engine). An item is timed in intervals on the judge's clock (bench_interval.h):
//
//   time of a call = (interval − calibration(n)) / n, the calibration being the same interval around n
//   calls of the grader's own kernel that writes C, less that kernel's own events (bench_calibration.h);
//   every output verified in full against the FP64 reference of its inputs — unless the interval's
//   sample found the poison, which is "unwritten" as it stands (bench_verify.h, interval_verdict.h)
//
// n is 1 unless one call is shorter than [bench] min_interval_ms: then as many calls (a power of two)
// share an interval as make it that long, so the judge's fixed costs (two switches between the
// contexts, about 0.35 ms) weigh on every call alike and little (docs/timing.md).
//
// Engine holds the order of things; what it orders has a class of its own: the runners it uses
// (RunnerSessions, bench_session.h), the current shape's operands (ShapeOperands, bench_operands.h),
// one timed interval (TimedInterval), the calibration (Calibration), the verification of an interval
// (IntervalVerifier) and the rows of the outcome (ItemRows, bench_rows.h).
#include "judge/bench_engine.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>

#include "common/call_time.h"
#include "common/cuda_check.h"
#include "common/peak.h"
#include "judge/bench_calibration.h"
#include "judge/bench_interval.h"
#include "judge/bench_item.h"
#include "judge/bench_operands.h"
#include "judge/bench_rows.h"
#include "judge/bench_session.h"
#include "judge/bench_verify.h"
#include "judge/nvml.h"

namespace gemmlab {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

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

// The GPU as a plan times it: its shape, with the highest SM clock NVML reports when that is higher.
GpuShape shape_with_clock(const GpuContext& ctx, const ClockReading& r) {
    GpuShape shape = ctx.shape;
    if (r.max_sm_clock_mhz > shape.max_sm_clock_mhz) shape.max_sm_clock_mhz = r.max_sm_clock_mhz;
    return shape;
}

bool is_submission_stage(const BenchItem& item) {
    return item.kind == BenchItem::Kind::stage && item.side == Side::submission;
}

template <typename T>
class Engine final : public PlanEngine {
public:
    Engine(GpuContext& ctx, const BenchPlan& plan, const BenchRunOptions& opt, BenchOutcome& out, Runners& runners)
        : plan_(plan), opt_(opt), out_(out), sessions_(runners, out.runners), nvml_(ctx.pci_bus_id),
          clocks_start_(nvml_.read()), shape_of_gpu_(shape_with_clock(ctx, clocks_start_)),
          peak_(peak_gflops(plan.precision, shape_of_gpu_)), tensor_peak_(tensor_peak_gflops(plan.precision, shape_of_gpu_)),
          operands_(plan, std::max(peak_, tensor_peak_)),
          interval_(ctx, plan.precision, plan.clear_l2, opt.call_timeout_seconds, operands_), verifier_(ctx, operands_),
          calibration_(out.calibration), rows_(plan, out, peak_, tensor_peak_) {
        out_.device = {{"peak_gflops", peak_},
                       {"l2_bytes", ctx.l2_bytes},
                       {"max_sm_clock_mhz", shape_of_gpu_.max_sm_clock_mhz},
                       {"gpu", ctx.name},
                       {"nvml", nvml_.available() ? "available" : nvml_.why_unavailable()},
                       {"clocks_start", clocks_json(clocks_start_)},
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
        std::optional<BenchSession>& own = sessions_.baselines();
        if (!own) own = sessions_.start(RunnerKind::baselines, operands_.buffers());
        if (!own) throw JudgeUnavailable(sessions_.problem());
        for (size_t si = 0; si < plan_.shapes.size(); ++si) time_own_items(si);
        operands_.leave();
    }

    std::vector<std::string> stages() const override {
        std::vector<std::string> stages;
        for (const BenchItem& item : plan_.items)
            if (is_submission_stage(item) && std::find(stages.begin(), stages.end(), item.stage) == stages.end())
                stages.push_back(item.stage);
        return stages;
    }

    // Phase 2 for one of the submission's stages, at every shape, in that stage's runner (with that
    // stage's library only): the one the previous plan used for it, or a new one; the caller ends it
    // before the next stage's starts.
    void time_stage(const std::string& stage) override {
        for (size_t si = 0; si < plan_.shapes.size(); ++si) time_stage(stage, si);
        operands_.leave();
    }

    size_t free_before_calls() const override { return free_at_shape_; }

    void finish() override {
        out_.device["calibration"] = Calibration::to_json(out_.calibration);
        out_.device["clocks_end"] = clocks_json(nvml_.read());
    }

private:
    // Makes shape si the current one (bench_operands.h): its operands, and room for its calibration.
    void enter_shape(size_t si) {
        operands_.enter(si);
        calibration_.enter(si);
    }

    // Phase 1 at shape si: the calibration (every number of calls per interval an item may use), then
    // the grader's own items, round-robin.
    void time_own_items(size_t si) {
        enter_shape(si);
        std::optional<BenchSession>& own = sessions_.baselines();
        if (!sessions_.map(*own, operands_.buffers()))
            throw JudgeUnavailable("the grader's own runner could not map the buffers: " + sessions_.problem());
        for (int n = 1; n <= operands_.slots(); n *= 2)
            calibration_.calibrate(si, plan_.shapes[si], n, [&](const ItemRun& r, bool warmup) {
                return interval_.call(*own, r, warmup, n, /*fresh_inputs=*/false);
            });
        std::vector<ItemRun> runs;
        for (size_t i = 0; i < plan_.items.size(); ++i)
            if (!is_submission_stage(plan_.items[i])) runs.push_back(rows_.set_up(plan_.items[i], i, si));
        std::vector<ItemRun*> items;
        for (ItemRun& r : runs) items.push_back(&r);
        round_robin(items, own, si);
        for (ItemRun& r : runs) rows_.record(r, si);
    }

    // Phase 2: the items of one of the submission's stages at shape si, in that stage's runner (started
    // at its first shape, another when one is lost; the caller ends it after its last shape).
    void time_stage(const std::string& stage, size_t si) {
        std::optional<BenchSession>& runner = sessions_.submission();
        try {
            enter_shape(si);
        } catch (const CudaError& e) {
            // The judge's own allocations fail only when the GPU's memory is gone: the runner holds it.
            if (!is_out_of_memory(e) || !runner) throw;
            out_.restarts.push_back(stage + " before " + plan_.shapes[si].dims() + ": its runner held the GPU's memory");
            sessions_.end(runner, "holding the GPU's memory");
            await_gpu_memory(free_at_shape_);
            enter_shape(si);
        }
        if (runner && !sessions_.map(*runner, operands_.buffers())) sessions_.end(runner, "not mapping the next shape's buffers");
        free_at_shape_ = gpu_free_bytes();
        std::vector<ItemRun> mine;
        for (size_t i = 0; i < plan_.items.size(); ++i)
            if (is_submission_stage(plan_.items[i]) && plan_.items[i].stage == stage)
                mine.push_back(rows_.set_up(plan_.items[i], i, si));
        std::vector<ItemRun*> items;
        for (ItemRun& r : mine) items.push_back(&r);
        while (std::any_of(items.begin(), items.end(), [](const ItemRun* r) { return !r->done; })) {
            if (!runner) {
                runner = sessions_.start(RunnerKind::submission, operands_.buffers(), stage);
                if (!runner) {
                    for (ItemRun* r : items)
                        if (!r->done) stop_item(*r, Disposition::crashed, sessions_.problem());
                    break;
                }
            }
            round_robin(items, runner, si);
        }
        for (ItemRun& r : mine) rows_.record(r, si);
        operands_.drop_inputs();
    }

    // ---- calls ------------------------------------------------------------------------------------
    void round_robin(const std::vector<ItemRun*>& runs, std::optional<BenchSession>& session, size_t si) {
        for (bool any = true; any;) {
            any = false;
            for (ItemRun* item : runs) {
                ItemRun& r = *item;
                if (r.done) continue;
                any = true;
                if (opt_.progress)
                    std::cout << "\r\033[K  timing " << precision_name(plan_.precision) << " " << operands_.shape().dims()
                              << "  " << r.item->label() << "  call " << r.calls + 1 << std::flush;
                step(r, *session, si);
                if (r.done) finish_item(r, calibration_.at_shape(operands_.index()), operands_.shape(), plan_.precision);
                if (!session) return;  // the runner was lost: the caller starts another
            }
        }
        if (opt_.progress) std::cout << "\r\033[K" << std::flush;
    }

    void step(ItemRun& r, BenchSession& session, size_t si) {
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
    void lose_runner(ItemRun& r, BenchSession& session, size_t si, Disposition d, const std::string& why,
                     const std::string& killed_for) {
        const Shape& shape = operands_.shape();
        stop_item(r, d, why + " while timing " + shape.dims());
        std::optional<BenchSession>& owner = sessions_.of(session.kind);
        const bool baselines = session.kind == RunnerKind::baselines;
        out_.restarts.push_back(r.item->label() + " at " + shape.dims() + ": " + why);
        if (si + 1 < plan_.shapes.size())
            rows_.skip_later(r.index, "not timed: it " + std::string(disposition_name(d)) + " at " + shape.dims());
        sessions_.end(owner, killed_for);
        await_gpu_memory(free_at_shape_);  // the next runner must not find it still taken
        if (baselines) {
            owner = sessions_.start(RunnerKind::baselines, operands_.buffers());
            if (!owner) throw JudgeUnavailable(sessions_.problem());
            if (!sessions_.map(*owner, operands_.buffers())) throw JudgeUnavailable(sessions_.problem());
        }
    }

    // One untimed warm-up call, or one timed interval of the item's calls. The first timed interval
    // holds one call and sizes the rest: kept when one call fills an interval, else only verified.
    void step_once(ItemRun& r, BenchSession& session, size_t si) {
        const auto t_step = Clock::now();
        const bool warmup = r.warmups_left > 0;
        const int n = warmup || r.per_interval == 0 ? 1 : r.per_interval;
        const CallReport c = interval_.call(session, r, warmup, n, /*fresh_inputs=*/true);
        if (c.runner_lost)
            return lose_runner(r, session, si, c.lost_as, c.why,
                               c.lost_as == Disposition::timed_out ? "a call that did not end" : "");
        if (!c.error.empty()) return stop_item(r, Disposition::crashed, "the call ended with a CUDA error: " + c.error);
        if (c.result.status != "ok") {
            const std::string& s = c.result.status;
            if (s == "not_implemented") return stop_item(r, Disposition::not_implemented, "the stage is not implemented");
            if (s == "not_linked") return stop_item(r, Disposition::rejected, "this stage's code is not in the build");
            if (s == "cuda_error")
                return stop_item(r, Disposition::crashed, "the stage returned Status::cuda_error (" + c.result.error + ")");
            if (s == "unsupported")
                return stop_item(r, Disposition::failed,
                                 c.result.error.empty() ? "the stage returned Status::unsupported for this shape" : c.result.error);
            return stop_item(r, Disposition::crashed, "the runner could not make the call: " + c.result.error);
        }
        const ClockReading clock = nvml_.read(/*with_power=*/false);
        if (warmup) {
            --r.warmups_left;
            r.spent += seconds_since(t_step);
            return;
        }
        if (const std::string problem = verifier_.problem(r, c, n); !problem.empty())
            return stop_item(r, Disposition::failed, problem);
        r.calls += n;
        const double per_call_ms = call_time_ms(c.interval_ms, calibration_.overhead(si, n)) / n;
        r.spent += seconds_since(t_step);
        if (r.per_interval == 0) {
            // Sized from the shorter of the judge's time and the call's own events: another context's time
            // slice in this one interval must not leave a short call alone in all of its intervals. (The
            // events come from the stage's process; they can only give its own item more calls an interval.)
            const double events_ms = c.event_ms / n;
            const double call_ms = events_ms > 0 ? std::min(per_call_ms, events_ms) : per_call_ms;
            r.per_interval = calls_per_interval(call_ms, plan_.min_interval_ms, operands_.slots());
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

    const BenchPlan& plan_;
    BenchRunOptions opt_;
    BenchOutcome& out_;
    RunnerSessions sessions_;  // the run's runners (shared by its plans), as this plan uses them
    Nvml nvml_;
    ClockReading clocks_start_;
    GpuShape shape_of_gpu_;
    double peak_ = 0, tensor_peak_ = 0;
    ShapeOperands<T> operands_;
    TimedInterval<T> interval_;
    IntervalVerifier<T> verifier_;
    Calibration calibration_;
    ItemRows rows_;
    size_t free_at_shape_ = 0;  // the GPU's free memory before the current stage's calls at this shape
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
