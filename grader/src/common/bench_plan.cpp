// bench_plan.cpp — names and JSON of the benchmark's items, plans and timings (see bench.h).
// Host-only: the plan crosses the process boundary as JSON, and its round trip is tested in CI.
#include "common/bench_plan.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/check_result.h"

namespace gemmlab {

using nlohmann::json;

namespace {

const char* inputs_suffix(InputPrecision in) {
    return in == InputPrecision::tf32 ? "tf32" : in == InputPrecision::fp16 ? "fp16" : "";
}

}  // namespace

BenchItem BenchItem::cublas(InputPrecision inputs) {
    BenchItem i;
    i.kind = Kind::cublas;
    i.side = Side::reference;
    i.cublas_inputs = inputs;
    return i;
}

BenchItem BenchItem::launch() {
    BenchItem i;
    i.kind = Kind::launch;
    i.side = Side::reference;
    return i;
}

BenchItem BenchItem::of_stage(Side side, std::string stage, std::string variant) {
    BenchItem i;
    i.side = side;
    i.stage = std::move(stage);
    i.variant = std::move(variant);
    return i;
}

std::string BenchItem::label() const {
    if (kind == Kind::launch) return "launch";
    if (kind == Kind::cublas)
        return cublas_inputs == InputPrecision::full ? "cublas" : std::string("cublas/") + inputs_suffix(cublas_inputs);
    std::string name = variant.empty() ? stage : stage + "/" + variant;
    return side == Side::reference ? "reference " + name : name;
}

bool BenchItem::operator==(const BenchItem& o) const {
    return kind == o.kind && side == o.side && stage == o.stage && variant == o.variant &&
           cublas_inputs == o.cublas_inputs;
}

json to_json(const BenchItem& item) {
    if (item.kind == BenchItem::Kind::launch) return json{{"kind", "launch"}};
    if (item.kind == BenchItem::Kind::cublas) {
        json j{{"kind", "cublas"}};
        if (item.cublas_inputs != InputPrecision::full) j["inputs"] = inputs_suffix(item.cublas_inputs);
        return j;
    }
    return json{{"kind", "stage"},
                {"side", item.side == Side::reference ? "reference" : "submission"},
                {"stage", item.stage},
                {"variant", item.variant}};
}

BenchItem bench_item_from_json(const json& j) {
    if (j.at("kind") == "launch") return BenchItem::launch();
    if (j.at("kind") == "cublas") {
        const std::string in = j.value("inputs", "");
        return BenchItem::cublas(in == "tf32" ? InputPrecision::tf32 : in == "fp16" ? InputPrecision::fp16
                                                                                   : InputPrecision::full);
    }
    return BenchItem::of_stage(j.at("side") == "reference" ? Side::reference : Side::submission,
                               j.at("stage").get<std::string>(), j.value("variant", ""));
}

json to_json(const BenchPlan& p) {
    json shapes = json::array(), items = json::array();
    for (const Shape& s : p.shapes) shapes.push_back(shape_to_json(s));
    for (const BenchItem& i : p.items) items.push_back(to_json(i));
    return json{{"precision", precision_name(p.precision)},
                {"shapes", shapes},
                {"items", items},
                {"warmup", p.warmup},
                {"min_repetitions", p.stop.min_repetitions},
                {"max_repetitions", p.stop.max_repetitions},
                {"target_spread_pct", p.stop.target_spread_pct},
                {"max_seconds", p.stop.budget_seconds},
                {"min_timed_ms", p.stop.min_timed_ms},
                {"min_interval_ms", p.min_interval_ms},
                {"clear_l2", p.clear_l2},
                {"seed", p.seed}};
}

BenchPlan bench_plan_from_json(const json& j) {
    BenchPlan p;
    p.precision = parse_precision(j.at("precision").get<std::string>()).value_or(Precision::f32);
    for (const json& s : j.at("shapes")) p.shapes.push_back(shape_from_json(s));
    for (const json& i : j.at("items")) p.items.push_back(bench_item_from_json(i));
    p.warmup = j.value("warmup", p.warmup);
    p.stop.min_repetitions = j.value("min_repetitions", p.stop.min_repetitions);
    p.stop.max_repetitions = j.value("max_repetitions", p.stop.max_repetitions);
    p.stop.target_spread_pct = j.value("target_spread_pct", p.stop.target_spread_pct);
    p.stop.budget_seconds = j.value("max_seconds", p.stop.budget_seconds);
    p.stop.min_timed_ms = j.value("min_timed_ms", p.stop.min_timed_ms);
    p.min_interval_ms = j.value("min_interval_ms", p.min_interval_ms);
    p.clear_l2 = j.value("clear_l2", p.clear_l2);
    p.seed = j.value("seed", p.seed);
    return p;
}

double gflops_of(const Shape& s, double ms) {
    constexpr double kGigaPerMilli = 1e-6;  // flop/ms → GFLOP/s
    return ms > 0 ? s.flops() / ms * kGigaPerMilli : 0.0;
}

json to_json(const Timing& t) {
    json j{{"shape", {{"M", t.shape.M}, {"N", t.shape.N}, {"K", t.shape.K}}},
           {"disposition", disposition_name(t.disposition)},
           {"problem", t.problem},
           {"gflops", t.gflops},
           {"time_ms", t.time_ms},
           {"judge_ms", t.judge_ms},
           {"overhead_ms", t.overhead_ms},
           {"event_ms", t.event_ms},
           {"spread_pct", t.spread_pct},
           {"min_ms", t.min_ms},
           {"max_ms", t.max_ms},
           {"repetitions", t.repetitions},
           {"intervals", t.intervals},
           {"calls_per_interval", t.calls_per_interval},
           {"stop_reason", t.stop_reason},
           {"timed_by", t.timed_by},
           {"verified", t.verified},
           // JSON has no NaN or infinity: a NaN in C is written as the string "nan", like check does.
           {"max_error_ratio", std::isfinite(t.max_error_ratio) ? json(t.max_error_ratio)
                               : json(std::isnan(t.max_error_ratio) ? "nan" : "inf")},
           {"x_naive", t.x_naive},
           {"pct_cublas", t.pct_cublas},
           {"pct_cublas_fp32", t.pct_cublas_fp32},
           {"cublas_item", t.cublas_item},
           {"error_bound", t.error_bound},
           {"peak_gflops", t.peak_gflops},
           {"sm_clock_mhz", t.sm_clock_mhz},
           {"clock_reasons", t.clock_reasons},
           {"throttled", t.throttled},
           {"seconds", t.seconds}};
    if (t.shape.lda || t.shape.ldb || t.shape.ldc) {
        j["shape"]["lda"] = t.shape.eff_lda();
        j["shape"]["ldb"] = t.shape.eff_ldb();
        j["shape"]["ldc"] = t.shape.eff_ldc();
    }
    return j;
}

Timing timing_from_json(const json& j) {
    Timing t;
    const json& s = j.at("shape");
    t.shape.M = s.at("M"), t.shape.N = s.at("N"), t.shape.K = s.at("K");
    t.shape.lda = s.value("lda", 0), t.shape.ldb = s.value("ldb", 0), t.shape.ldc = s.value("ldc", 0);
    t.disposition = parse_disposition(j.value("disposition", "")).value_or(Disposition::crashed);
    t.problem = j.value("problem", "");
    t.gflops = j.value("gflops", 0.0);
    t.time_ms = j.value("time_ms", 0.0);
    t.judge_ms = j.value("judge_ms", 0.0);
    t.overhead_ms = j.value("overhead_ms", 0.0);
    t.event_ms = j.value("event_ms", 0.0);
    t.spread_pct = j.value("spread_pct", 0.0);
    t.min_ms = j.value("min_ms", 0.0);
    t.max_ms = j.value("max_ms", 0.0);
    t.repetitions = j.value("repetitions", 0);
    t.intervals = j.value("intervals", 0);
    t.calls_per_interval = j.value("calls_per_interval", 1);
    t.stop_reason = j.value("stop_reason", "");
    t.timed_by = j.value("timed_by", "");
    t.verified = j.value("verified", 0);
    if (j.contains("max_error_ratio")) {
        const json& r = j["max_error_ratio"];
        t.max_error_ratio = r.is_number() ? r.get<double>() : r == "nan" ? NAN : INFINITY;
    }
    t.x_naive = j.value("x_naive", 0.0);
    t.pct_cublas = j.value("pct_cublas", 0.0);
    t.pct_cublas_fp32 = j.value("pct_cublas_fp32", 0.0);
    t.cublas_item = j.value("cublas_item", "");
    t.error_bound = j.value("error_bound", 0.0);
    t.peak_gflops = j.value("peak_gflops", 0.0);
    t.sm_clock_mhz = j.value("sm_clock_mhz", 0.0);
    t.clock_reasons = j.value("clock_reasons", std::vector<std::string>{});
    t.throttled = j.value("throttled", false);
    t.seconds = j.value("seconds", 0.0);
    return t;
}

double judge_bytes_per_call(const Shape& s, Precision p) {
    const double elem = p == Precision::f64 ? 8.0 : 4.0;
    auto padded = [&](int cols) { return std::ceil(cols * elem / 512.0) * 512.0 / elem; };
    const double a = double(s.M) * std::max<double>(s.eff_lda(), padded(s.K));
    const double b = double(s.K) * std::max<double>(s.eff_ldb(), padded(s.N));
    const double c = double(s.M) * std::max<double>(s.eff_ldc(), padded(s.N));
    const double operands = (2 * a + 2 * b + c) * elem;  // A, B, C, and the judge's A0, B0
    const double answer = 8.0 * (double(s.M) * s.K + double(s.K) * s.N + 2.0 * double(s.M) * s.N);
    return operands + answer;
}

std::string shapes_memory_problem(const std::vector<Shape>& shapes, Precision p, double free_bytes, double total_bytes) {
    // The runner's context, its libraries and cuBLAS's workspace live beside the judge's buffers.
    constexpr double kUsable = 0.85;
    const double gib = 1024.0 * 1024.0 * 1024.0;
    for (const Shape& s : shapes) {
        const double need = judge_bytes_per_call(s, p);
        if (need <= kUsable * free_bytes) continue;
        std::ostringstream os;
        os.setf(std::ios::fixed);
        os.precision(1);
        os << "shape " << s.dims() << " in " << precision_name(p) << " needs about " << need / gib
           << " GiB of GPU memory for one timed call (the operands, the judge's copies of the inputs and its FP64 "
              "answer); this GPU has "
           << total_bytes / gib << " GiB, " << free_bytes / gib
           << " GiB of it free: time smaller shapes (SHAPES=...), or free the GPU of other work";
        return os.str();
    }
    return "";
}

}  // namespace gemmlab
