// bench_interval.cpp — one timed interval in the judge's context (bench_interval.h):
//
//   host:   fresh random A0, B0 for each of the interval's n calls, in the judge's own memory; ask the
//           runner to arm them (its stream waits on the go word, runs the n calls one after the other
//           on n sets of operands, each between two events, then writes the done word)
//   stream: stamp ─ copy every A0→A, B0→B ─ poison every C ─ flush L2 ─ go := k ─ wait done ≥ k ─
//           sample the n C's ─ stamp
//
// The inputs exist where the runner can see them only after the first stamp, and the sample check
// (secret positions: the poison still there, or a value that is not yet the answer, = not done: two
// counts) runs before the second: no interval is measured shorter than the GPU work its calls did with
// their inputs, whatever the runner's process does (docs/timing.md).
#include "judge/bench_interval.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <sstream>
#include <string>
#include <type_traits>

#include "common/cuda_check.h"
#include "common/protocol.h"
#include "common/sample_check.h"
#include "judge/device_ops.h"
#include "judge/isolation.h"
#include "judge/runner_launch.h"

namespace gemmlab {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// How long a runner may take to arm a call (its stage's host code, enqueueing behind the go word)
// before the judge starts the clock anyway: a stage that synchronizes inside its call waits for the
// go word itself, and its host time then counts.
constexpr double kArmSeconds = 0.2;
// The L2 is flushed before a call when the operands are at most this many L2 sizes: after the
// fresh data is written, that much of it could still be resident and make the call look warm.
constexpr double kL2ResidentFactor = 2.0;
// Flushing writes a buffer of this many L2 sizes, which evicts every line of the previous data.
constexpr double kL2FlushFactor = 2.0;
// How often the judge looks whether its stream is done, and whether the runner is still alive.
constexpr useconds_t kPollMicroseconds = 50;

}  // namespace

template <typename T>
TimedInterval<T>::TimedInterval(GpuContext& ctx, Precision precision, bool clear_l2, double timeout,
                                const ShapeOperands<T>& operands)
    : ctx_(ctx), precision_(precision), timeout_(timeout), operands_(operands), secret_(std::random_device{}()) {
    if (clear_l2 && ctx.l2_bytes) flush_ = DeviceBuffer<unsigned char>(size_t(kL2FlushFactor * ctx.l2_bytes));
}

template <typename T>
CallReport TimedInterval<T>::call(BenchSession& session, const ItemRun& r, bool warmup, int n, bool fresh_inputs) {
    CallReport rep;
    const ShapeOperands<T>& ops = operands_;
    const Layout L = ops.layout(r.pitched);
    const Shape& s = ops.shape();
    const size_t stride_a = ops.stride_a(), stride_b = ops.stride_b(), stride_c = ops.stride_c();
    cudaStream_t st = ctx_.stream;
    T* A = ops.a();
    T* B = ops.b();
    T* C = ops.c();
    const size_t a_n = size_t(s.M) * L.lda, b_n = size_t(s.K) * L.ldb, c_n = size_t(s.M) * L.ldc;
    // This interval's inputs, in the judge's own memory only.
    if (fresh_inputs) {
        for (int i = 0; i < n; ++i) {
            fill_random(ctx_.rng, ops.a0() + i * stride_a, a_n, st);
            fill_random(ctx_.rng, ops.b0() + i * stride_b, b_n, st);
        }
    }
    CUDA_CHECK(cudaStreamSynchronize(st));

    json problems = json::array();
    for (int i = 0; i < n; ++i) {
        protocol::Problem p;
        p.precision = precision_;
        p.M = s.M, p.N = s.N, p.K = s.K, p.alpha = 1, p.beta = 0;
        p.a = {"A", i * stride_a * sizeof(T)}, p.b = {"B", i * stride_b * sizeof(T)}, p.c = {"C", i * stride_c * sizeof(T)};
        p.lda = L.lda, p.ldb = L.ldb, p.ldc = L.ldc;
        problems.push_back(protocol::to_json(p));
    }
    json request{{"op", "call"}, {"item", to_json(*r.item)}, {"problems", problems}};
    auto copy_inputs_in = [&] {
        for (int i = 0; i < n; ++i) {
            CUDA_CHECK(cudaMemcpyAsync(A + i * stride_a, ops.a0() + i * stride_a, a_n * sizeof(T), cudaMemcpyDeviceToDevice, st));
            CUDA_CHECK(cudaMemcpyAsync(B + i * stride_b, ops.b0() + i * stride_b, b_n * sizeof(T), cudaMemcpyDeviceToDevice, st));
            if constexpr (std::is_same_v<T, float>) fill_bits(C + i * stride_c, c_n, quiet_nan_bits32(), st);
            else fill_bits(C + i * stride_c, c_n, quiet_nan_bits64(), st);
        }
    };
    // One limit per interval: an interval of several calls holds about min_interval_ms of work.
    const double timeout = timeout_;
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
    // The L2 is flushed before every call of every item at this shape, pitched or dense, and of the
    // calibration, or before none: each call's operands are copied in one after the other, C's poison
    // last, so when one call's A, B and C fit in L2 together the last of them could still be there.
    const bool flush_now = flush_.size() && ops.call_bytes() <= kL2ResidentFactor * ctx_.l2_bytes;
    uint32_t* flags = reinterpret_cast<uint32_t*>(session.flags.get());
    uint64_t* stamps = stamps_.get();
    CUDA_CHECK(cudaMemsetAsync(sample_counts_.get(), 0, sample_counts_.bytes(), st));
    stamp_clock(stamps, st);
    copy_inputs_in();
    if (flush_now) {
        flush_value_ ^= 1;  // a different value each time: no write can be skipped as redundant
        CUDA_CHECK(cudaMemsetAsync(flush_.get(), flush_value_, flush_.bytes(), st));
    }
    CUDA_CHECK(ctx_.memops.write(st, flags + protocol::kGoWord, k));
    CUDA_CHECK(ctx_.memops.wait_geq(st, flags + protocol::kDoneWord, k));
    const uint64_t secret = secret_();
    unsigned* poisoned = sample_counts_.get() + kPoisonedCount;
    unsigned* unanswered = sample_counts_.get() + kUnansweredCount;
    count_unwritten_sample(C, L.ldc, s.M, s.N, n, stride_c, secret, kSamples, poisoned, st);
    {
        // The grader's own items (baselines, the calibration's kernel) are not held to an answer here:
        // only the poison counts for them, at the same cost.
        const bool stage = r.item->kind == BenchItem::Kind::stage;
        AnswerSample<T> a;
        a.C = C, a.ldc = L.ldc, a.stride_c = stride_c;
        a.A = ops.a0(), a.lda = L.lda, a.stride_a = stride_a;
        a.B = ops.b0(), a.ldb = L.ldb, a.stride_b = stride_b;
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
template <typename T>
CallReport& TimedInterval<T>::await_result(BenchSession& session, CallReport& rep, const char* want, double timeout) {
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

template <typename T>
CallReport& TimedInterval<T>::runner_gone(BenchSession& session, CallReport& rep) {
    rep.runner_lost = true;
    const ChildEnd end = session.proc->reap(kRunnerExitSeconds);
    rep.lost_as = end.timed_out ? Disposition::timed_out : Disposition::crashed;
    rep.why = "the process " + describe_end(end);
    if (!end.signal && end.exit_code >= 0) rep.why += " in the middle of the benchmark (a stage must return, not exit)";
    if (!end.output_tail.empty()) rep.why += "; it printed: " + end.output_tail.substr(0, 500);
    return rep;
}

template class TimedInterval<float>;
template class TimedInterval<double>;

}  // namespace gemmlab
