// bench_command.cpp — child orchestration of the benchmark and `gemmlab bench` (see bench_command.h).
#include "parent/bench_command.h"
#include "parent/symbol_scan.h"

#include <algorithm>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include "common/call_time.h"
#include "common/check_result.h"
#include "parent/environment.h"
#include "parent/results_io.h"

namespace gemmlab {

using nlohmann::json;

namespace {

// Total time a child may take, beyond its items' own budgets: process start, CUDA and cuBLAS
// initialisation, the launch-overhead measurement.
constexpr double kChildStartSeconds = 60;
// Per item and shape, beyond max_seconds: warm-up, verification, and the calls that finish a
// round after the budget is spent.
constexpr double kItemSlackFactor = 3;

std::string describe_death(const ChildOutcome& out, const std::string& fatal) {
    if (!fatal.empty()) return "a CUDA error stopped the process: " + fatal;
    std::string s = "the process " + describe_end(out);
    if (!out.timed_out && !out.signal && out.exit_code >= 0) s += " in the middle of the benchmark (a stage must return, not exit)";
    return s;
}

Timing lost(const Shape& s, Disposition d, const std::string& why) {
    Timing t;
    t.shape = s;
    t.disposition = d;
    t.problem = why;
    return t;
}

}  // namespace

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
    plan.clear_l2 = cfg.clear_l2;
    plan.verify_repetitions = cfg.verify_repetitions;
    plan.seed = seed;
    return plan;
}

BenchOutcome run_bench_plan(const BenchPlan& plan, const BenchRunOptions& opt) {
    BenchOutcome out;
    out.plan = plan;
    out.timings.assign(plan.items.size(), std::vector<Timing>(plan.shapes.size()));
    for (auto& row : out.timings)
        for (size_t s = 0; s < plan.shapes.size(); ++s) row[s].shape = plan.shapes[s];
    const std::string self = stage_runner_executable();

    std::vector<size_t> active(plan.items.size());
    for (size_t i = 0; i < active.size(); ++i) active[i] = i;
    size_t first_shape = 0;
    // Items in whose calls a line appeared on the report pipe that the grader did not write
    // (isolation.h): every timing of theirs is void.
    std::map<size_t, std::string> forgers;
    int unattributed_forged = 0;
    while (first_shape < plan.shapes.size() && !active.empty()) {
        BenchPlan sub = plan;
        sub.items.clear();
        for (size_t i : active) sub.items.push_back(plan.items[i]);
        sub.shapes.assign(plan.shapes.begin() + static_cast<long>(first_shape), plan.shapes.end());

        ChildLimits limits;
        limits.idle_seconds = opt.call_timeout_seconds;
        limits.total_seconds = kChildStartSeconds + double(sub.items.size()) * double(sub.shapes.size()) *
                                                        (kItemSlackFactor * plan.stop.budget_seconds + opt.call_timeout_seconds);
        int shape_at = -1, item_at = -1;  // what was running when the last report came
        std::string fatal;
        auto handle = [&](const json& ev) {
            const std::string kind = ev.value("event", "");
            if (kind == "device" && out.device.is_null()) out.device = ev;
            if (kind == "clocks_end") out.device["clocks_end"] = ev.value("clocks", json());
            if (kind == "fatal") fatal = ev.value("error", "");
            if (kind == "shape_start") shape_at = ev.value("shape_index", 0), item_at = -1;
            if (kind == "call") {
                item_at = ev.value("item", -1);
                if (opt.progress && item_at >= 0 && shape_at >= 0) {
                    const Shape& s = sub.shapes[static_cast<size_t>(shape_at)];
                    std::cout << "\r\033[K  timing " << precision_name(plan.precision) << " " << s.dims() << "  "
                              << sub.items[static_cast<size_t>(item_at)].label() << "  call "
                              << ev.value("rep", 0) + 1 << std::flush;
                }
            }
            if (kind == "forged") {
                if (item_at >= 0) forgers.emplace(active.at(static_cast<size_t>(item_at)), ev.value("line", ""));
                else ++unattributed_forged;
            }
            if (kind == "timing") {
                const size_t item = active.at(ev.at("item").get<size_t>());
                const size_t shape = first_shape + ev.at("shape_index").get<size_t>();
                out.timings.at(item).at(shape) = timing_from_json(ev.at("timing"));
                item_at = -1;
            }
        };
        // A malformed report (which only a stage writing into the report pipe could produce) is
        // ignored rather than allowed to stop the grader.
        auto on_event = [&](const json& ev) {
            try {
                handle(ev);
            } catch (const std::exception&) {
            }
        };
        const ChildOutcome child = run_isolated(self, {"child-bench", "--plan", to_json(sub).dump()}, limits, on_event);
        if (opt.progress) std::cout << "\r\033[K" << std::flush;
        if (child.finished && fatal.empty()) break;

        const Disposition d = child.timed_out ? Disposition::timed_out : Disposition::crashed;
        const std::string why = describe_death(child, fatal);
        if (shape_at < 0) {  // it died before timing anything: nothing to blame, nothing to retry
            for (size_t i : active)
                for (size_t s = first_shape; s < plan.shapes.size(); ++s)
                    out.timings[i][s] = lost(plan.shapes[s], d, why);
            out.restarts.push_back("the benchmark process failed to start: " + why);
            break;
        }
        const size_t at = first_shape + static_cast<size_t>(shape_at);
        if (item_at < 0) {  // during the grader's own set-up of a shape: that shape is lost for all
            for (size_t i : active) out.timings[i][at] = lost(plan.shapes[at], d, why + " while setting up " + plan.shapes[at].dims());
            out.restarts.push_back(plan.shapes[at].dims() + ": " + why);
            first_shape = at + 1;
            continue;
        }
        const size_t culprit = active.at(static_cast<size_t>(item_at));
        out.timings[culprit][at] = lost(plan.shapes[at], d, why + " while timing " + plan.shapes[at].dims());
        for (size_t s = at + 1; s < plan.shapes.size(); ++s)
            out.timings[culprit][s] = lost(plan.shapes[s], Disposition::skipped, "not timed: it " +
                                           std::string(disposition_name(d)) + " at " + plan.shapes[at].dims());
        out.restarts.push_back(plan.items[culprit].label() + " at " + plan.shapes[at].dims() + ": " + why);
        active.erase(std::find(active.begin(), active.end(), culprit));
        first_shape = at;
    }
    for (const auto& [item, line] : forgers) {
        const std::string why = "a line on the grader's report channel during its calls did not come from the grader (\"" +
                                line + "\"): the stage wrote into a descriptor it did not open, so its timings are void";
        for (size_t s = 0; s < plan.shapes.size(); ++s) out.timings[item][s] = lost(plan.shapes[s], Disposition::rejected, why);
        out.restarts.push_back(plan.items[item].label() + ": " + why);
    }
    if (unattributed_forged > 0)
        out.restarts.push_back(std::to_string(unattributed_forged) +
                               " line(s) on the report channel outside any timed call did not come from the grader (ignored)");
    return out;
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
                std::cout << "  (work outside its stream: timed by the " << t.timed_by << ")";
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

int run_bench_command(const BenchCommandOptions& opt) {
    const MessageStyle style{opt.color};
    CheckOptions check;
    check.selection = opt.selection;
    check.quick = true;
    check.seed = opt.seed;
    check.color = opt.color;
    check.progress = opt.progress;
    std::cout << "Before timing, every stage is checked (never time a wrong kernel).\n";
    const json checked = run_checks(check);

    json results = json::array(), baselines = json::object(), reference = json::array(), devices = json::object();
    int status = 0;
    const SymbolScan scan = load_symbol_scan(default_symbol_scan_path());
    for (Precision p : opt.selection.precisions) {
        BenchPlan plan = plan_from_config(opt.config, p, opt.shapes, opt.seed);
        plan.items = {baseline_item(), BenchItem::cublas()};
        plan.submission_kernels = scan.kernels;
        std::vector<json> rows;  // the check results of the stages timed, in plan order after the baselines
        for (const json& r : checked["results"]) {
            if (r.value("precision", "") != precision_name(p)) continue;
            if (r.value("disposition", "") != "passed") continue;
            plan.items.push_back(BenchItem::of_stage(Side::submission, r["stage"], r["variant"]));
            rows.push_back(r);
        }
        const size_t first_reference = plan.items.size();
        if (opt.with_reference)
            for (const StageRun& run : expand(Side::reference, opt.selection)) {
                if (run.precision != p || run.stage->baseline) continue;
                plan.items.push_back(BenchItem::of_stage(Side::reference, run.stage->name, run.variant->label));
            }
        const size_t end_reference = plan.items.size();
        add_tensor_core_baselines(plan);  // after every stage item: their indices stay as above
        std::cout << "\nTiming " << end_reference - 2 << " " << precision_name(p) << " stage run(s) next to naive and "
                  << (plan.items.size() > end_reference ? "cuBLAS (FP32, TF32, FP16)" : "cuBLAS") << ", "
                  << plan.shapes.size() << " shape(s)\n";
        BenchRunOptions ro;
        ro.call_timeout_seconds = opt.config.call_timeout_seconds;
        ro.progress = opt.progress;
        BenchOutcome out = run_bench_plan(plan, ro);
        attach_ratios(out, baseline_item(), BenchItem::cublas());
        print_table(out, style);
        baselines[precision_name(p)] = baselines_json(out);
        devices[precision_name(p)] = out.device;
        for (size_t k = 0; k < rows.size(); ++k) {
            json r = result_with_bench(rows[k], out.timings[2 + k]);
            if (r["disposition"] != "passed") status = 1;
            results.push_back(r);
        }
        for (size_t i = first_reference; i < end_reference; ++i) {
            json r{{"stage", plan.items[i].stage}, {"variant", plan.items[i].variant}, {"precision", precision_name(p)}};
            json bench = json::array();
            for (const Timing& t : out.timings[i]) bench.push_back(to_json(t));
            r["bench"] = bench;
            reference.push_back(r);
        }
    }
    // Stages that did not pass the check are in the results too, untimed.
    for (const json& r : checked["results"]) {
        if (r.value("disposition", "") == "passed") continue;
        json row = r;
        row["bench"] = json::array();
        if (r.value("disposition", "") != "not_implemented") status = 1;
        results.push_back(row);
    }
    if (!opt.json_out.empty()) {
        json doc{{"schema", kResultsSchema},
                 {"kind", "bench"},
                 {"created", utc_now()},
                 {"submission", opt.submission},
                 {"seed", opt.seed},
                 {"environment", describe_environment()},
                 {"settings", to_json(plan_from_config(opt.config, Precision::f32, opt.shapes, opt.seed))},
                 {"device", devices},
                 {"results", results},
                 {"baselines", baselines},
                 {"reference", reference},
                 {"notes", opt.config_notes}};
        doc["environment"]["clocks"] = clocks_from_devices(devices);
        doc["settings"].erase("precision");
        doc["settings"].erase("items");
        write_json_atomically(opt.json_out, doc);
        std::cout << "\nwrote " << opt.json_out << "\n";
    }
    return status;
}

}  // namespace gemmlab
