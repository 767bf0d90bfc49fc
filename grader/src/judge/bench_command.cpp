// bench_command.cpp — the benchmark of checked stages, shared by `gemmlab bench` and `gemmlab grade`,
// and `gemmlab bench` itself (see bench_command.h).
#include "judge/bench_command.h"
#include "judge/symbol_scan.h"

#include <algorithm>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include "common/call_time.h"
#include "common/check_result.h"
#include "judge/environment.h"
#include "judge/results_io.h"

namespace gemmlab {

using nlohmann::json;

std::string fixed(double v, int decimals) {
    std::ostringstream os;
    os << std::fixed << std::setprecision(decimals) << v;
    return os.str();
}

BenchItem baseline_item() { return BenchItem::of_stage(Side::reference, baseline_stage().name, ""); }

void add_tensor_core_baselines(BenchPlan& plan) {
    if (plan.precision != Precision::f32) return;
    bool tensor = false;
    for (const BenchItem& i : plan.items)
        if (i.kind == BenchItem::Kind::stage)
            if (const StageInfo* st = find_stage(i.side, i.stage); st && st->tensor_cores) tensor = true;
    if (!tensor) return;
    for (InputPrecision in : {InputPrecision::tf32, InputPrecision::fp16})
        if (item_index(plan, BenchItem::cublas(in)) < 0) plan.items.push_back(BenchItem::cublas(in));
}

BenchItem same_precision_cublas(const BenchPlan& plan, const BenchItem& item) {
    if (item.kind == BenchItem::Kind::stage && plan.precision == Precision::f32)
        if (const StageInfo* st = find_stage(item.side, item.stage))
            if (const StageVariant* v = find_variant(*st, item.variant))
                if (item_index(plan, BenchItem::cublas(v->float_inputs)) >= 0) return BenchItem::cublas(v->float_inputs);
    return BenchItem::cublas();
}

int item_index(const BenchPlan& plan, const BenchItem& item) {
    for (size_t i = 0; i < plan.items.size(); ++i)
        if (plan.items[i] == item) return static_cast<int>(i);
    return -1;
}

BenchPlan plan_from_config(const BenchConfig& cfg, Precision p, std::vector<Shape> shapes, uint64_t seed) {
    BenchPlan plan;
    plan.precision = p;
    plan.shapes = std::move(shapes);
    plan.warmup = cfg.warmup;
    plan.stop.min_repetitions = cfg.min_repetitions;
    plan.stop.max_repetitions = cfg.max_repetitions;
    plan.stop.target_spread_pct = cfg.target_spread_pct;
    plan.stop.budget_seconds = cfg.max_seconds;
    plan.stop.min_timed_ms = cfg.min_timed_ms;
    plan.min_interval_ms = cfg.min_interval_ms;
    plan.clear_l2 = cfg.clear_l2;
    plan.seed = seed;
    return plan;
}

void attach_ratios(BenchOutcome& out, const BenchItem& naive, const BenchItem& cublas) {
    const int n = item_index(out.plan, naive), c = item_index(out.plan, cublas);
    auto speed = [&](int index, size_t s) {
        if (index < 0) return 0.0;
        const Timing& t = out.timings[static_cast<size_t>(index)][s];
        return t.disposition == Disposition::passed ? t.gflops : 0.0;
    };
    for (size_t i = 0; i < out.plan.items.size(); ++i) {
        const BenchItem own_item = same_precision_cublas(out.plan, out.plan.items[i]);
        const int own = item_index(out.plan, own_item);
        for (size_t s = 0; s < out.plan.shapes.size(); ++s) {
            Timing& t = out.timings[i][s];
            if (t.disposition != Disposition::passed) continue;
            const double ng = speed(n, s), cg = speed(c, s), og = speed(own, s);
            t.x_naive = ng > 0 ? t.gflops / ng : 0;
            t.pct_cublas_fp32 = cg > 0 ? 100.0 * t.gflops / cg : 0;
            t.pct_cublas = og > 0 ? 100.0 * t.gflops / og : 0;
            t.cublas_item = own_item.label();
        }
    }
}

json baselines_json(const BenchOutcome& out) {
    const int n = item_index(out.plan, baseline_item()), c = item_index(out.plan, BenchItem::cublas());
    json rows = json::array();
    for (size_t s = 0; s < out.plan.shapes.size(); ++s) {
        const Shape& sh = out.plan.shapes[s];
        json row{{"shape", {{"M", sh.M}, {"N", sh.N}, {"K", sh.K}}}};
        auto put = [&](int index, const char* name) {
            if (index < 0) return;
            const Timing& t = out.timings[static_cast<size_t>(index)][s];
            row[std::string(name) + "_gflops"] = t.disposition == Disposition::passed ? t.gflops : 0.0;
            row[std::string(name) + "_spread_pct"] = t.spread_pct;
            row[std::string(name) + "_disposition"] = disposition_name(t.disposition);
            // Every clock of the baseline and the kernels it ran: what a comparison of two runs needs.
            json detail = to_json(t);
            detail.erase("shape");
            row[std::string(name) + "_timing"] = detail;
        };
        put(n, "naive");
        put(c, "cublas");
        put(item_index(out.plan, BenchItem::cublas(InputPrecision::tf32)), "cublas_tf32");
        put(item_index(out.plan, BenchItem::cublas(InputPrecision::fp16)), "cublas_fp16");
        rows.push_back(row);
    }
    return rows;
}

json clocks_from_devices(const json& devices) {
    json clocks = json::object();
    for (const auto& [prec, device] : devices.items())
        if (device.is_object())
            clocks[prec] = {{"start", device.value("clocks_start", json())}, {"end", device.value("clocks_end", json())}};
    return clocks;
}

json result_with_bench(json r, const std::vector<Timing>& timings) {
    json bench = json::array();
    std::vector<Disposition> ds;
    for (const Timing& t : timings) {
        bench.push_back(to_json(t));
        ds.push_back(t.disposition);
    }
    r["bench"] = bench;
    const Disposition check = parse_disposition(r.value("disposition", "")).value_or(Disposition::crashed);
    const Disposition timed = combine(ds);
    r["check_disposition"] = disposition_name(check);
    r["bench_disposition"] = disposition_name(timed);
    // A failure while being timed (wrong values, a crash, an impossible speed) is the result's.
    if (check == Disposition::passed && timed != Disposition::passed && timed != Disposition::skipped) {
        r["disposition"] = disposition_name(timed);
        for (const Timing& t : timings)
            if (t.disposition == timed) {
                r["problem"] = "while timed at " + t.shape.dims() + ": " + t.problem;
                break;
            }
    }
    return r;
}

namespace {

std::string pad(const std::string& s, size_t width) { return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' '); }
std::string lpad(const std::string& s, size_t width) { return s.size() >= width ? " " + s : std::string(width - s.size(), ' ') + s; }

void print_table(const BenchOutcome& out, const MessageStyle& style) {
    // With tensor-core items: % cuBLAS is to cuBLAS in the variant's own input precision, and two
    // more columns give the ratio to true-FP32 cuBLAS and the worst verified error against its bound.
    const bool tensor = item_index(out.plan, BenchItem::cublas(InputPrecision::tf32)) >= 0 ||
                        item_index(out.plan, BenchItem::cublas(InputPrecision::fp16)) >= 0;
    for (size_t s = 0; s < out.plan.shapes.size(); ++s) {
        std::cout << "\n" << precision_name(out.plan.precision) << "  " << out.plan.shapes[s].dims() << "\n"
                  << "  " << pad("stage", 22) << lpad("GFLOPS", 10) << lpad("spread", 8) << lpad("x naive", 9)
                  << lpad("% cuBLAS", 10) << lpad("SM MHz", 8) << lpad("verified", 10);
        if (tensor) std::cout << lpad("% FP32 cuBLAS", 15) << lpad("max error/bound u·G", 24) << "  cuBLAS of same precision";
        std::cout << "\n";
        for (size_t i = 0; i < out.plan.items.size(); ++i) {
            const Timing& t = out.timings[i][s];
            const BenchItem& item = out.plan.items[i];
            std::string label = item.label();
            if (item == baseline_item()) label = "naive (baseline)";
            std::cout << "  " << pad(label, 22);
            if (t.disposition != Disposition::passed) {
                std::cout << paint_disposition(t.disposition, style) << ": " << t.problem << "\n";
                continue;
            }
            const bool is_stage = item.kind == BenchItem::Kind::stage;
            std::cout << lpad(fixed(t.gflops, 1), 10) << lpad(fixed(t.spread_pct, 1) + "%", 8)
                      << lpad(fixed(t.x_naive, 2), 9) << lpad(fixed(t.pct_cublas, 1) + "%", 10)
                      << lpad(t.sm_clock_mhz > 0 ? fixed(t.sm_clock_mhz, 0) : "?", 8)
                      << lpad(is_stage ? std::to_string(t.verified) : "-", 10);
            if (tensor)
                std::cout << lpad(fixed(t.pct_cublas_fp32, 1) + "%", 15)
                          << lpad(is_stage ? fixed(t.max_error_ratio, 2) + " / " + fixed(t.error_bound, 0) : "-", 24)
                          << "  " << (is_stage ? t.cublas_item : "-");
            if (is_stage && escaped_stream(t.time_ms, t.event_ms))
                std::cout << "  (its own events saw " << fixed(t.event_ms, 3) << " ms: work outside its stream?)";
            if (t.throttled) std::cout << "  (clocks throttled)";
            std::cout << "\n";
        }
    }
    for (const std::string& r : out.restarts) std::cout << "  note: " << r << "\n";
}

}  // namespace

std::string utc_now() {
    const std::time_t now = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    return buf;
}

TimedStages time_checked_stages(GpuContext& ctx, const TimedStagesRequest& req) {
    TimedStages out;
    // One plan per precision, timed in one run: a stage's runner serves both (bench_engine.h).
    struct Planned {
        BenchPlan plan;
        std::vector<json> rows;  // the check results of the stages timed, in plan order after the baselines
        size_t first_reference = 0, end_reference = 0;
    };
    std::vector<Planned> planned;
    for (Precision p : req.precisions) {
        const std::string prec = precision_name(p);
        const auto own = req.shapes_for.find(p);
        Planned pl;
        BenchPlan& plan = pl.plan;
        plan = plan_from_config(req.config, p, own != req.shapes_for.end() ? own->second : req.shapes, req.seed);
        plan.items = {baseline_item(), BenchItem::cublas()};
        for (const json& r : req.checked) {
            if (r.value("precision", "") != prec || r.value("disposition", "") != "passed") continue;
            plan.items.push_back(BenchItem::of_stage(Side::submission, r["stage"], r["variant"]));
            pl.rows.push_back(r);
        }
        pl.first_reference = plan.items.size();
        for (const StageRun& run : req.reference_runs)
            if (run.precision == p && !run.stage->baseline && unsupported_reason(run, ctx.device_arch, ctx.code_arch).empty())
                plan.items.push_back(BenchItem::of_stage(Side::reference, run.stage->name, run.variant->label));
        pl.end_reference = plan.items.size();
        add_tensor_core_baselines(plan);  // after every stage item: their indices stay as above
        std::cout << (planned.empty() ? "\n" : "") << "Timing " << prec << ": " << pl.rows.size() << " stage run(s)"
                  << (pl.end_reference > pl.first_reference
                          ? " and " + std::to_string(pl.end_reference - pl.first_reference) + " of the reference"
                          : "")
                  << " next to naive and " << (plan.items.size() > pl.end_reference ? "cuBLAS (FP32, TF32, FP16)" : "cuBLAS")
                  << ", " << plan.shapes.size() << " shape(s), on the judge's clock\n";
        planned.push_back(std::move(pl));
    }
    BenchRunOptions ro;
    ro.call_timeout_seconds = req.config.call_timeout_seconds;
    ro.progress = req.progress;
    std::vector<BenchPlan> plans;
    for (const Planned& pl : planned) plans.push_back(pl.plan);
    std::vector<BenchOutcome> outcomes = run_bench_plans(ctx, plans, ro);
    for (size_t k = 0; k < planned.size(); ++k) {
        const Planned& pl = planned[k];
        BenchOutcome& bo = outcomes[k];
        const std::string prec = precision_name(pl.plan.precision);
        attach_ratios(bo, baseline_item(), BenchItem::cublas());
        out.baselines[prec] = baselines_json(bo);
        out.devices[prec] = bo.device;
        out.notes.insert(out.notes.end(), bo.restarts.begin(), bo.restarts.end());
        for (size_t r = 0; r < pl.rows.size(); ++r) out.results.push_back(result_with_bench(pl.rows[r], bo.timings[2 + r]));
        for (size_t i = pl.first_reference; i < pl.end_reference; ++i) {
            json r{{"stage", pl.plan.items[i].stage}, {"variant", pl.plan.items[i].variant}, {"precision", prec}};
            json bench = json::array();
            for (const Timing& t : bo.timings[i]) bench.push_back(to_json(t));
            r["bench"] = bench;
            out.reference.push_back(r);
        }
        out.outcomes.emplace(pl.plan.precision, std::move(bo));
    }
    // Every checked result, in the check's order; those that did not pass are untimed.
    json timed = out.results;
    out.results = json::array();
    for (const json& r : req.checked) {
        json row = r;
        row["bench"] = json::array();
        for (const json& t : timed)
            if (t["stage"] == r["stage"] && t["variant"] == r["variant"] && t["precision"] == r["precision"]) row = t;
        out.results.push_back(row);
    }
    return out;
}

int run_bench_command(GpuContext& ctx, const BenchCommandOptions& opt) {
    const MessageStyle style{opt.color};
    CheckOptions check;
    check.selection = opt.selection;
    check.quick = true;
    check.seed = opt.seed;
    check.color = opt.color;
    check.progress = opt.progress;
    std::cout << "Before timing, every stage is checked (never time a wrong kernel).\n";
    const json checked = run_checks(ctx, check);

    TimedStagesRequest req;
    req.precisions = opt.selection.precisions;
    req.shapes = opt.shapes;
    req.config = opt.config;
    req.seed = opt.seed;
    req.progress = opt.progress;
    req.checked = checked["results"];
    if (opt.with_reference) req.reference_runs = expand(Side::reference, opt.selection);
    const TimedStages timed = time_checked_stages(ctx, req);
    for (const auto& [p, out] : timed.outcomes) print_table(out, style);
    for (const std::string& n : timed.notes) std::cout << "  note: " << n << "\n";
    int status = 0;
    for (const json& r : timed.results)
        if (const std::string d = r.value("disposition", ""); d != "passed" && d != "not_implemented" && d != "unsupported")
            status = 1;
    if (!opt.json_out.empty()) {
        json doc{{"schema", kResultsSchema},
                 {"kind", "bench"},
                 {"created", utc_now()},
                 {"submission", opt.submission},
                 {"seed", opt.seed},
                 {"environment", describe_environment()},
                 {"settings", to_json(plan_from_config(opt.config, Precision::f32, opt.shapes, opt.seed))},
                 {"device", timed.devices},
                 {"results", timed.results},
                 {"baselines", timed.baselines},
                 {"reference", timed.reference},
                 {"notes", opt.config_notes}};
        doc["environment"]["clocks"] = clocks_from_devices(timed.devices);
        doc["settings"].erase("precision");
        doc["settings"].erase("items");
        write_json_atomically(opt.json_out, doc);
        std::cout << "\nwrote " << opt.json_out << "\n";
    }
    return status;
}

}  // namespace gemmlab
