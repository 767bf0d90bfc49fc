// check_engine.cpp — the judge's check of a stage run (check_engine.h), case by case:
//   1. in the judge's context: fresh random A and B (padding too), C random (or NaN when beta == 0),
//      canaries around C; private copies of A and B; the FP64 reference and its gauge;
//   2. the runner calls the stage on the judge's buffers and synchronizes its device;
//   3. the judge checks its own buffers: canaries, A and B unchanged, every element within the bound.
#include "judge/check_engine.h"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <vector>

#include "common/bound.h"
#include "common/check_result.h"
#include "common/cuda_check.h"
#include "common/protocol.h"
#include "judge/device_buffer.h"
#include "judge/device_ops.h"
#include "judge/guard.h"
#include "judge/reference_gemm.h"
#include "judge/runner_launch.h"

namespace gemmlab {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Results up to this many elements get a picture of where the wrong ones are (a one-byte mask per
// element, copied to the host only when something is wrong): 4096×4096 and below.
constexpr size_t kPictureMaxElements = size_t(1) << 24;
// How long the stub probe's runner may take to start and map its buffers (find_stubs): past it the
// check goes on without the probe, each run in a runner of its own.
constexpr double kStubProbeStartSeconds = 10;

template <typename T>
void fill_nan(T* p, size_t n, cudaStream_t s) {
    if constexpr (std::is_same_v<T, float>) fill_bits(p, n, quiet_nan_bits32(), s);
    else fill_bits(p, n, quiet_nan_bits64(), s);
}

// Judge C (ld = ldc) against the reference; fills the value part of `r`.
template <typename T>
void judge_values(GpuContext& ctx, const Shape& s, const T* C, int ldc, const Reference& ref, const ErrorBound& bound,
                  CaseResult& r) {
    const size_t n = size_t(s.M) * s.N;
    const bool want_mask = n <= kPictureMaxElements;
    DeviceBuffer<uint8_t> mask(want_mask ? n : 0);
    const CompareReport cmp = compare_with_reference(C, ldc, ref.value.get(), ref.gauge.get(), s.M, s.N, bound.u,
                                                     mask.get(), ctx.stream, bound.threshold);
    r.max_ratio = cmp.max_ratio;
    r.wrong = cmp.wrong;
    if (cmp.worst_index >= 0) {
        r.worst.row = static_cast<int>(cmp.worst_index / s.N);
        r.worst.col = static_cast<int>(cmp.worst_index % s.N);
        r.worst.expected = cmp.expected;
        r.worst.got = cmp.got;
        r.worst.allowed = allowed_error(cmp.gauge, bound.u, bound.threshold);
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

// The words of a not-implemented case (the pitched stage's helpers may say which of them is a stub).
std::string not_implemented_problem(const StageInfo& stage, const std::string& said) {
    return stage.operands == Operands::pitched && !said.empty()
               ? said
               : "not implemented yet (the stage returns Status::not_implemented)";
}

// Largest buffers the cases need, in elements: the judge exports one of each for the whole run.
struct Arena {
    size_t a = 1, b = 1, c = 1;
};
Arena arena_for(const std::vector<Shape>& shapes) {
    Arena z;
    for (const Shape& s : shapes) {
        z.a = std::max(z.a, size_t(s.M) * s.eff_lda());
        z.b = std::max(z.b, size_t(s.K) * s.eff_ldb());
        z.c = std::max(z.c, GuardedLayout::make(s.M, s.N, s.eff_ldc()).total());
    }
    return z;
}

// What the runner said about one call, or why it said nothing.
struct Reply {
    bool ok = false;           // a "returned" report arrived
    protocol::CallResult result;
    std::string error;         // the runner's CUDA error after the call (a fault in the stage's kernel)
    bool timed_out = false;    // the runner said nothing within the case's limit
    std::string fatal;         // the runner stopped with this
};

Reply await_reply(ChildProcess& runner, double seconds) {
    Reply r;
    for (;;) {
        bool timed_out = false;
        const auto ev = runner.receive(seconds, &timed_out);
        if (!ev) {
            r.timed_out = timed_out;
            return r;
        }
        const std::string kind = ev->value("event", "");
        if (kind == "fatal") r.fatal = ev->value("error", "");
        if (kind == "returned") {
            r.ok = true;
            const json results = ev->value("results", json::array());
            if (results.is_array() && !results.empty()) r.result = protocol::call_result_from_json(results[0]);
            else r.result.status = "missing";
            r.error = ev->value("error", "");
            return r;
        }
        if (kind == "done") return r;
    }
}

template <typename T>
class CaseRunner {
public:
    CaseRunner(GpuContext& ctx, const CheckRun& run, const StageInfo& st, const ErrorBound& bound, ChildProcess& runner,
               const Arena& arena)
        : ctx_(ctx), run_(run), stage_(st), bound_(bound), runner_(runner) {
        A_ = ExportedBuffer(arena.a * sizeof(T));
        B_ = ExportedBuffer(arena.b * sizeof(T));
        C_ = ExportedBuffer(arena.c * sizeof(T));
    }

    json map_request() const {
        return {{"op", "map"},
                {"buffers", json::array({{{"name", "A"}, {"handle", A_.handle_hex()}, {"bytes", A_.bytes()}},
                                         {{"name", "B"}, {"handle", B_.handle_hex()}, {"bytes", B_.bytes()}},
                                         {{"name", "C"}, {"handle", C_.handle_hex()}, {"bytes", C_.bytes()}}})}};
    }

    // One case. *stop: the run cannot go on (the runner is gone or its context is broken).
    CaseResult check(const Shape& s, bool* stop) {
        CaseResult r;
        r.shape = s;
        const int M = s.M, N = s.N, K = s.K, lda = s.eff_lda(), ldb = s.eff_ldb(), ldc = s.eff_ldc();
        const bool read_c = s.beta != 0.0;
        cudaStream_t st = ctx_.stream;
        T* A = reinterpret_cast<T*>(A_.get());
        T* B = reinterpret_cast<T*>(B_.get());
        DeviceBuffer<T> A0(size_t(M) * lda), B0(size_t(K) * ldb), Cin(size_t(M) * N);
        fill_random(ctx_.rng, A0.get(), A0.size(), st);
        fill_random(ctx_.rng, B0.get(), B0.size(), st);
        CUDA_CHECK(cudaMemcpyAsync(A, A0.get(), A0.bytes(), cudaMemcpyDeviceToDevice, st));
        CUDA_CHECK(cudaMemcpyAsync(B, B0.get(), B0.bytes(), cudaMemcpyDeviceToDevice, st));
        if (read_c) fill_random(ctx_.rng, Cin.get(), Cin.size(), st);
        else fill_nan(Cin.get(), Cin.size(), st);
        const GuardedLayout g = GuardedLayout::make(M, N, ldc);
        T* base = reinterpret_cast<T*>(C_.get());
        T* C = base + g.first();
        paint_canary(base, g, st);
        CUDA_CHECK(cudaMemcpy2DAsync(C, size_t(ldc) * sizeof(T), Cin.get(), size_t(N) * sizeof(T), size_t(N) * sizeof(T),
                                     M, cudaMemcpyDeviceToDevice, st));
        // The answer, from the judge's private copies: it never exists where the runner can reach.
        const Reference ref = compute_reference<T>(ctx_, s, A0.get(), lda, B0.get(), ldb, read_c ? Cin.get() : nullptr,
                                                   bound_.underflow_weight);
        CUDA_CHECK(cudaStreamSynchronize(st));

        protocol::Problem p;
        p.precision = run_.precision;
        p.M = M, p.N = N, p.K = K, p.alpha = s.alpha, p.beta = s.beta;
        p.a = {"A", 0}, p.b = {"B", 0}, p.c = {"C", g.first() * sizeof(T)};
        p.lda = lda, p.ldb = ldb, p.ldc = ldc;
        p.pitched_flow = stage_.operands == Operands::pitched;
        const BenchItem item = BenchItem::of_stage(run_.side, run_.stage, run_.variant);
        const Reply reply = runner_.send({{"op", "call"}, {"item", to_json(item)}, {"problems", json::array({protocol::to_json(p)})}})
                                ? await_reply(runner_, run_.limits.idle_seconds)
                                : Reply{};
        if (!reply.ok) {
            // No answer: the caller tells from how the runner ended what happened (collect_stage_run).
            *stop = true;
            timed_out_ = reply.timed_out;
            fatal_ = reply.fatal;
            return r;
        }
        const protocol::CallResult& res = reply.result;
        auto stop_with = [&](Disposition d, const std::string& why) {
            r.disposition = d;
            r.problem = why;
            return r;
        };
        if (!reply.error.empty()) {
            *stop = true;  // the runner's context is broken: a fault in the stage's kernel is sticky
            return stop_with(Disposition::crashed, "the stage crashed the GPU context: " + reply.error);
        }
        if (res.status == "not_implemented")
            return stop_with(Disposition::not_implemented, not_implemented_problem(stage_, res.problem));
        if (res.status == "not_linked") return stop_with(Disposition::rejected, kNotLinkedProblem);
        if (res.status == "cuda_error")
            return stop_with(Disposition::crashed,
                             "the stage returned Status::cuda_error (a CUDA call inside it failed: " + res.error + ")");
        if (res.status == "unsupported") return stop_with(Disposition::failed, "the stage returned Status::unsupported for this shape");
        if (res.status != "ok") return stop_with(Disposition::crashed, "the runner could not call the stage: " + res.error);

        note_oob(r, check_canary(base, g, st), "the stage wrote outside C", g);
        note_input_change(r, count_differences(A, lda, A0.get(), lda, M, lda, st), "A", lda);
        note_input_change(r, count_differences(B, ldb, B0.get(), ldb, K, ldb, st), "B", ldb);
        if (!res.problem.empty() && r.disposition == Disposition::passed) {
            // What the runner found in the pitched stage's own buffers can only fail the stage.
            r.disposition = res.disposition == "out_of_bounds" ? Disposition::out_of_bounds : Disposition::failed;
            r.problem = res.problem;
        }
        judge_values(ctx_, s, C, ldc, ref, bound_, r);
        return r;
    }

    bool timed_out() const { return timed_out_; }
    const std::string& fatal() const { return fatal_; }

private:
    GpuContext& ctx_;
    const CheckRun& run_;
    const StageInfo& stage_;
    ErrorBound bound_;
    ChildProcess& runner_;
    ExportedBuffer A_, B_, C_;
    bool timed_out_ = false;
    std::string fatal_;
};

template <typename T>
ChildOutcome check_typed(GpuContext& ctx, const CheckRun& run, const StageInfo& st, const StageVariant& v,
                         const std::function<void(size_t)>& on_case, std::unique_ptr<ChildProcess> started) {
    ChildOutcome out;
    const auto t0 = Clock::now();
    const ErrorBound bound = error_bound(run.precision, v);
    const bool ahead = started != nullptr;
    const std::unique_ptr<ChildProcess> owned = ahead ? std::move(started) : start_check_runner(run);
    ChildProcess& runner = *owned;
    CaseRunner<T> cases(ctx, run, st, bound, runner, arena_for(run.shapes));
    bool timed_out = false;
    std::string failure = await_event(runner, "ready", kRunnerStartSeconds, &timed_out);
    if (failure.empty() && !runner.send(cases.map_request())) failure = "it stopped reading its requests";
    if (failure.empty()) failure = await_event(runner, "mapped", kRunnerStartSeconds, &timed_out);
    if (!failure.empty() && ahead) {  // started beside the run before: its start is not this run's to answer for
        runner.reap(0, timed_out ? "its start" : "");
        return check_typed<T>(ctx, run, st, v, on_case, nullptr);
    }
    out.events.push_back(runner.sandbox());
    out.events.push_back({{"event", "start"}, {"cases", run.shapes.size()}});
    std::string killed_for;
    const size_t free_at_start = failure.empty() ? gpu_free_bytes() : 0;  // before the stage's first call
    if (!failure.empty()) {
        out.events.push_back({{"event", "fatal"}, {"error", "the runner did not start: " + failure}});
        if (timed_out) killed_for = std::to_string(int(kRunnerStartSeconds)) + " s without starting";
    } else {
        bool stop = false, lost = false, oom = false;
        for (size_t i = 0; i < run.shapes.size() && !stop; ++i) {
            if (on_case) on_case(i);
            out.events.push_back({{"event", "case_start"}, {"index", i}, {"shape", shape_to_json(run.shapes[i])}});
            const auto c0 = Clock::now();
            CaseResult r;
            try {
                r = cases.check(run.shapes[i], &stop);
            } catch (const CudaError& e) {
                // The judge's own allocations fail only when the GPU's memory is gone: the runner holds it.
                if (!is_out_of_memory(e)) throw;
                r.shape = run.shapes[i];
                r.disposition = Disposition::crashed;
                r.problem = std::string("the GPU ran out of memory for the judge while the stage's process held it "
                                        "(memory a stage allocates must be freed or reused): ") + e.what();
                killed_for = "holding the GPU's memory";
                stop = true;
                oom = true;
            }
            if (stop && r.disposition == Disposition::passed) {  // no reply: the runner ended or hung
                lost = true;
                if (cases.timed_out()) {
                    std::ostringstream os;
                    os << run.limits.idle_seconds << " s without progress (a case did not finish)";
                    killed_for = os.str();
                }
                if (!cases.fatal().empty()) out.events.push_back({{"event", "fatal"}, {"error", cases.fatal()}});
                break;
            }
            r.seconds = std::chrono::duration<double>(Clock::now() - c0).count();
            r.bound = bound.threshold;
            r.inputs = bound.inputs;
            out.events.push_back({{"event", "case"}, {"index", i}, {"result", to_json(r)}});
            if (r.disposition == Disposition::not_implemented || r.disposition == Disposition::crashed ||
                r.disposition == Disposition::rejected)
                stop = true;
        }
        if (!lost && !oom) {
            runner.send({{"op", "exit"}});
            bool t = false;
            while (auto ev = runner.receive(kRunnerExitSeconds, &t))
                if ((*ev)["event"] == "done") break;
        }
        out.finished = !lost;  // every case the judge ran came to its end
    }
    const ChildEnd end = runner.reap(kRunnerExitSeconds, killed_for);
    // A runner's memory comes back a moment after it ends (at once, when it freed it itself): the next
    // run's runner, started already, must find it back.
    if (free_at_start) await_gpu_memory(free_at_start);
    for (const std::string& f : runner.forged()) out.events.push_back({{"event", "forged"}, {"line", f}});
    out.forged_lines = runner.forged_lines();
    out.timed_out = end.timed_out;
    out.timeout_reason = end.timeout_reason;
    out.exit_code = end.exit_code;
    out.signal = end.signal;
    out.output_tail = end.output_tail;
    if (out.finished) out.events.push_back({{"event", "done"}});
    out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return out;
}

// The problem of a check's first case, on the judge's throwaway buffers (no canaries: nothing is
// checked), as the check sends it.
protocol::Problem first_problem(const CheckRun& run, const StageInfo& st) {
    const Shape& s = run.shapes.front();
    protocol::Problem p;
    p.precision = run.precision;
    p.M = s.M, p.N = s.N, p.K = s.K, p.alpha = s.alpha, p.beta = s.beta;
    p.a = {"A", 0}, p.b = {"B", 0}, p.c = {"C", 0};
    p.lda = s.eff_lda(), p.ldb = s.eff_ldb(), p.ldc = s.eff_ldc();
    p.pitched_flow = st.operands == Operands::pitched;
    return p;
}

}  // namespace

namespace {

void probe_stubs(const std::vector<CheckRun>& runs, std::vector<StubAnswer>& answers) {
    // Buffers for every run's first case, in the wider precision: zeros, read by nobody.
    Arena z;
    for (const CheckRun& r : runs) {
        const Arena a = arena_for({r.shapes.front()});
        z.a = std::max(z.a, a.a), z.b = std::max(z.b, a.b), z.c = std::max(z.c, a.c);
    }
    ExportedBuffer A(z.a * sizeof(double)), B(z.b * sizeof(double)), C(z.c * sizeof(double));
    for (const ExportedBuffer* b : {&A, &B, &C}) CUDA_CHECK(cudaMemset(b->get(), 0, b->bytes()));
    ChildLimits limits = runs.front().limits;
    limits.idle_seconds = kStubProbeSeconds;
    // The one runner that opens several stages' libraries: it believes only `not_implemented`, which
    // costs the stage that answers it (every other answer is checked again in the stage's own runner).
    std::vector<std::string> stages;
    for (const CheckRun& r : runs)
        if (r.side == Side::submission && std::find(stages.begin(), stages.end(), r.stage) == stages.end())
            stages.push_back(r.stage);
    ChildProcess runner(runner_executable(RunnerKind::submission), serve_arguments(RunnerKind::submission, stages),
                        limits, runner_sandbox(RunnerKind::submission, stages));
    bool timed_out = false;
    std::string failure = await_event(runner, "ready", kStubProbeStartSeconds, &timed_out);
    const json map{{"op", "map"},
                   {"buffers", json::array({{{"name", "A"}, {"handle", A.handle_hex()}, {"bytes", A.bytes()}},
                                            {{"name", "B"}, {"handle", B.handle_hex()}, {"bytes", B.bytes()}},
                                            {{"name", "C"}, {"handle", C.handle_hex()}, {"bytes", C.bytes()}}})}};
    if (failure.empty() && !runner.send(map)) failure = "it stopped reading";
    if (failure.empty()) failure = await_event(runner, "mapped", kStubProbeStartSeconds, &timed_out);
    bool intact = failure.empty();
    for (size_t i = 0; i < runs.size() && intact; ++i) {
        const CheckRun& run = runs[i];
        const StageInfo* st = find_stage(run.side, run.stage);
        if (!st || run.side != Side::submission) break;
        const auto t0 = Clock::now();
        const BenchItem item = BenchItem::of_stage(run.side, run.stage, run.variant);
        const Reply reply = runner.send({{"op", "call"}, {"item", to_json(item)},
                                         {"problems", json::array({protocol::to_json(first_problem(run, *st))})}})
                                ? await_reply(runner, kStubProbeSeconds)
                                : Reply{};
        intact = reply.ok && reply.error.empty();
        if (intact && reply.result.status == "not_implemented")
            answers[i] = {true, not_implemented_problem(*st, reply.result.problem),
                          std::chrono::duration<double>(Clock::now() - t0).count()};
    }
    if (intact) {
        runner.send({{"op", "exit"}});
        bool t = false;
        while (auto ev = runner.receive(kRunnerExitSeconds, &t))
            if ((*ev)["event"] == "done") break;
    }
    runner.reap(kRunnerExitSeconds, intact ? "" : "the stub probe");
}

}  // namespace

std::vector<StubAnswer> find_stubs(GpuContext& ctx, const std::vector<CheckRun>& runs) {
    (void)ctx;  // the probe's buffers live in the judge's context, which ctx holds current
    std::vector<StubAnswer> answers(runs.size());
    if (runs.size() < 2) return answers;
    try {
        probe_stubs(runs, answers);
    } catch (const std::exception&) {
        // The probe only saves time: whatever stopped it (no memory for its buffers, no runner), every
        // run it did not answer is checked in a runner of its own, where the same trouble is reported.
    }
    return answers;
}

ChildOutcome stub_outcome(const CheckRun& run, const StubAnswer& answer) {
    CaseResult r;
    r.shape = run.shapes.front();
    r.disposition = Disposition::not_implemented;
    r.problem = answer.problem;
    r.seconds = answer.seconds;
    const StageInfo* st = find_stage(run.side, run.stage);
    const StageVariant* v = st ? find_variant(*st, run.variant) : nullptr;
    if (v) {
        const ErrorBound bound = error_bound(run.precision, *v);
        r.bound = bound.threshold;
        r.inputs = bound.inputs;
    }
    ChildOutcome out;
    out.events = {{{"event", "start"}, {"cases", run.shapes.size()}},
                  {{"event", "case_start"}, {"index", 0}, {"shape", shape_to_json(r.shape)}},
                  {{"event", "case"}, {"index", 0}, {"result", to_json(r)}},
                  {{"event", "done"}}};
    out.finished = true;
    out.exit_code = 0;
    out.seconds = answer.seconds;
    return out;
}

std::unique_ptr<ChildProcess> start_check_runner(const CheckRun& run) {
    const RunnerKind kind = run.side == Side::submission ? RunnerKind::submission : RunnerKind::baselines;
    return std::make_unique<ChildProcess>(runner_executable(kind), serve_arguments(kind, {run.stage}), run.limits,
                                          runner_sandbox(kind, {run.stage}));
}

ChildOutcome check_stage_run(GpuContext& ctx, const CheckRun& run, const std::function<void(size_t)>& on_case,
                             std::unique_ptr<ChildProcess> runner) {
    const StageInfo* st = find_stage(run.side, run.stage);
    const StageVariant* v = st ? find_variant(*st, run.variant) : nullptr;
    if (!v) throw std::invalid_argument("no stage " + run.stage + "/" + run.variant);
    return run.precision == Precision::f32 ? check_typed<float>(ctx, run, *st, *v, on_case, std::move(runner))
                                           : check_typed<double>(ctx, run, *st, *v, on_case, std::move(runner));
}

}  // namespace gemmlab
