// format.cpp — the rows of results files and the judge's terminal output (format.h).
#include "judge/format.h"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "common/bound.h"
#include "common/call_time.h"
#include "judge/bench_planning.h"

namespace gemmlab {

using nlohmann::json;

namespace {

// The largest case `make sanitize` is pointed at (2·M·N·K); 2·256³ runs in seconds under memcheck.
constexpr double kSanitizeMaxFlops = 2.0 * 256 * 256 * 256;

std::string pad(const std::string& s, size_t width) { return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' '); }
std::string lpad(const std::string& s, size_t width) { return s.size() >= width ? " " + s : std::string(width - s.size(), ' ') + s; }

}  // namespace

std::string fixed(double v, int decimals) {
    std::ostringstream os;
    os << std::fixed << std::setprecision(decimals) << v;
    return os.str();
}

// ---- rows of results files -----------------------------------------------------------------------

json unsupported_row(const StageRun& run, const std::string& why) {
    return {{"stage", run.stage->name}, {"variant", run.variant->label}, {"precision", precision_name(run.precision)},
            {"disposition", "unsupported"}, {"problem", why}, {"cases", json::array()}, {"expected_cases", 0}};
}

json not_run_row(const std::string& stage, const std::string& variant, Precision p, const std::string& disposition,
                 const std::string& problem) {
    return {{"stage", stage},
            {"variant", variant},
            {"precision", precision_name(p)},
            {"disposition", disposition},
            {"problem", problem},
            {"cases", json::array()},
            {"bench", json::array()}};
}

json reference_row(const BenchItem& item, Precision p, const std::vector<Timing>& timings) {
    json r{{"stage", item.stage}, {"variant", item.variant}, {"precision", precision_name(p)}};
    json bench = json::array();
    for (const Timing& t : timings) bench.push_back(to_json(t));
    r["bench"] = bench;
    return r;
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

json settings_json(const BenchConfig& cfg, const std::vector<Shape>& shapes, uint64_t seed) {
    json settings = to_json(plan_from_config(cfg, Precision::f32, shapes, seed));
    settings.erase("precision");
    settings.erase("items");
    return settings;
}

// ---- the terminal: the check -----------------------------------------------------------------------

void print_check_start(size_t runs, bool quick, uint64_t seed) {
    std::cout << "Checking " << runs << " stage run(s) on the " << (quick ? "quick" : "full") << " shape set, seed "
              << seed << "\n";
}

void print_case_progress(size_t i, size_t runs, const StageRun& run, size_t c, const std::vector<Shape>& shapes) {
    std::cout << "\r\033[K  [" << i + 1 << "/" << runs << "] " << run.label() << " " << precision_name(run.precision)
              << "  case " << c + 1 << "/" << shapes.size() << "  " << shapes[c].dims() << std::flush;
}

void clear_progress_line() { std::cout << "\r\033[K" << std::flush; }

void print_verdict(const StageRun& run, const json& r, bool color, bool quick, uint64_t seed) {
    const MessageStyle style{color};
    const Disposition d = parse_disposition(r["disposition"]).value_or(Disposition::crashed);
    const json& cases = r["cases"];
    int passed = 0;
    for (const json& c : cases) passed += c.value("disposition", "") == "passed";
    std::cout << "  " << pad(run.label(), 12) << pad(precision_name(run.precision), 8)
              << pad(paint_disposition(d, style), color ? 26 : 16);
    if (d == Disposition::passed) {
        double worst = 0;
        for (const json& c : cases)
            if (c.contains("max_error_ratio") && c["max_error_ratio"].is_number())
                worst = std::max(worst, c["max_error_ratio"].get<double>());
        std::ostringstream os;
        os << std::setprecision(3) << worst;
        std::cout << passed << " cases, worst error " << os.str() << " u·G";
        // A variant with a wider bound than 32 u·G (TF32 or FP16 inputs, bound.h) says which.
        const double bound = r.contains("error_bound") ? r["error_bound"].value("threshold", kErrorThreshold)
                                                       : kErrorThreshold;
        if (bound > kErrorThreshold) {
            std::ostringstream b;
            b << std::setprecision(3) << bound;
            std::cout << " (bound " << b.str() << " u·G for " << r["error_bound"].value("inputs", "") << " inputs)";
        }
    } else if (d == Disposition::unsupported) {
        std::cout << "not run: " << r.value("problem", "") << " (not scored)";
    } else if (d != Disposition::not_implemented) {
        std::cout << passed << " of " << r.value("expected_cases", cases.size()) << " cases passed";
    }
    std::cout << "\n";
    if (d == Disposition::passed || d == Disposition::not_implemented || d == Disposition::unsupported) return;
    const bool any_failing_case =
        std::any_of(cases.begin(), cases.end(), [](const json& c) { return c.value("disposition", "") != "passed"; });
    if (!any_failing_case) std::cout << "  " << r.value("problem", "") << "\n";  // it ended before any case
    for (const json& c : cases) {
        if (c.value("disposition", "") == "passed") continue;
        CaseResult cr;
        try {
            cr = case_from_json(c);
        } catch (const json::exception&) {
            std::cout << "  (the child reported a case the grader cannot read)\n";
            break;
        }
        std::cout << "\n" << describe_failure(run.label(), run.precision, cr, style);
        std::cout << "  reproduce: make check STAGE=" << run.label() << " PREC=" << precision_name(run.precision)
                  << " SEED=" << seed << (quick ? "" : " FULL=1") << "\n"
                  << "  debug it:  make sanitize STAGE=" << run.label() << " PREC=" << precision_name(run.precision);
        // compute-sanitizer slows a kernel down a hundredfold: hand it the failing shape only when
        // that stays quick, else its own small odd shape.
        if (cr.shape.flops() <= kSanitizeMaxFlops) std::cout << " SHAPE=" << cr.shape.dims();
        std::cout << "\n";
        break;  // the first failing case says enough; the JSON holds them all
    }
    const std::string tail = r["process"].value("output_tail", "");
    if (!tail.empty()) std::cout << "  the stage printed (last lines):\n" << tail << "\n";
    std::cout << "\n";
}

// One closing line: how many stage runs ended how, and the seed that reproduces the run.
void print_check_summary(const json& results, bool color, bool quick, uint64_t seed) {
    std::map<std::string, int> counts;
    for (const json& r : results) ++counts[r.value("disposition", "")];
    std::cout << "Summary:";
    const char* sep = " ";
    for (const auto& [name, n] : counts) {
        const Disposition d = parse_disposition(name).value_or(Disposition::crashed);
        std::cout << sep << n << " " << paint_disposition(d, MessageStyle{color});
        sep = ", ";
    }
    std::cout << " (seed " << seed << ", " << (quick ? "quick" : "full") << " set)\n";
}

// ---- the terminal: the benchmark -------------------------------------------------------------------

void print_timing_plan(bool first, const BenchPlan& plan, size_t stage_runs, size_t reference_runs,
                       bool tensor_baselines) {
    std::cout << (first ? "\n" : "") << "Timing " << precision_name(plan.precision) << ": " << stage_runs
              << " stage run(s)"
              << (reference_runs > 0 ? " and " + std::to_string(reference_runs) + " of the reference" : "")
              << " next to naive and " << (tensor_baselines ? "cuBLAS (FP32, TF32, FP16)" : "cuBLAS") << ", "
              << plan.shapes.size() << " shape(s), on the judge's clock\n";
}

void print_bench_table(const BenchOutcome& out, const MessageStyle& style) {
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
    print_notes(out.restarts, "  ");
}

void print_notes(const std::vector<std::string>& notes, const std::string& indent) {
    for (const std::string& n : notes) std::cout << indent << "note: " << n << "\n";
}

// ---- the terminal: the score -----------------------------------------------------------------------

void print_score(const Score& score, const std::map<Precision, std::vector<ScoringShape>>& shapes, const CourseConfig& cfg,
                 const MessageStyle& style) {
    std::string head;
    for (const auto& [p, list] : shapes)
        if (!list.empty() && head.find(list.front().shape.dims()) == std::string::npos)
            head += (head.empty() ? "" : " / ") + list.front().shape.dims();
    std::cout << "\nScore (speeds at " << head << ", " << interpolation_name(cfg.scoring.interpolation)
              << " scale from naive to the target, a % of the reference solution's speed in this run)\n"
              << "  " << pad("stage", 10) << pad("prec", 8) << pad("variant", 8) << lpad("correct", 12)
              << lpad("speed", 12) << lpad("GFLOPS", 10) << lpad("x naive", 9) << lpad("% cuBLAS", 10)
              << lpad("% ref", 8) << "  \n";
    for (const StageScore& s : score.stages) {
        std::cout << "  " << pad(s.stage + (s.extra_credit ? "*" : ""), 10) << pad(s.precision, 8)
                  << pad(s.variant_used.empty() ? "-" : s.variant_used, 8)
                  << lpad(fixed(s.correctness, 2) + "/" + fixed(s.correctness_max, 0), 12)
                  << lpad(fixed(s.performance, 2) + "/" + fixed(s.performance_max, 0), 12);
        if (s.disposition == Disposition::passed)
            std::cout << lpad(fixed(s.gflops, 0), 10) << lpad(fixed(s.x_naive, 2), 9) << lpad(fixed(s.pct_cublas, 1) + "%", 10)
                      << lpad(s.pct_reference > 0 ? fixed(s.pct_reference, 1) + "%" : "-", 8);
        else
            std::cout << "  " << pad(paint_disposition(s.disposition, style), style.color ? 44 : 35);
        if ((s.disposition != Disposition::passed || s.performance_max == 0) && !s.note.empty()) std::cout << "  " << s.note;
        std::cout << "\n";
    }
    double extra = 0;
    bool any_extra = false;
    for (const StageScore& s : score.stages)
        if (s.extra_credit) extra += s.correctness + s.performance, any_extra = true;
    if (any_extra) std::cout << "  * extra credit: added to the total, not to the maximum (course.toml extra_credit)\n";
    std::cout << "\n  total: " << fixed(score.total, 2) << " / " << fixed(score.max, 2);
    if (extra > 0) std::cout << " (with " << fixed(extra, 2) << " points of extra credit)";
    std::cout << "\n";
}

}  // namespace gemmlab
