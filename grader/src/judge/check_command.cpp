// check_command.cpp — `gemmlab check`: plans the stage runs, checks each with a runner of its own
// (check_engine.h) and prints the verdicts (check_command.h).
#include "judge/check_command.h"

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "common/bound.h"
#include "common/check_result.h"
#include "judge/symbol_scan.h"
#include "common/cuda_check.h"
#include "common/shapes.h"
#include "judge/check_engine.h"

namespace gemmlab {

using nlohmann::json;

namespace {

const char* side_name(Side s) { return s == Side::submission ? "submission" : "reference"; }

// The words for a shape inside a sentence: "33x31x65 (alpha=2, beta=0)".
std::string shape_words(const json& shape_json) {
    const Shape s = shape_from_json(shape_json);
    std::ostringstream os;
    os << s.dims() << " (alpha=" << s.alpha << ", beta=" << s.beta << ")";
    return os.str();
}

}  // namespace

json collect_stage_run(const std::string& stage, const std::string& variant, Precision prec,
                       size_t expected_cases, const ChildOutcome& out) {
    json r{{"stage", stage}, {"variant", variant}, {"precision", precision_name(prec)}, {"seconds", out.seconds}};
    json cases = json::array();
    std::vector<Disposition> dispositions;
    json in_progress;   // the shape of a case that started and never reported
    std::string fatal;  // a CUDA error that ended the child outside any case
    bool stopped_by_design = false;  // the child stops after a not-implemented or crashed case
    std::string forged;  // the first report line that did not come from the grader (isolation.h)
    for (const json& ev : out.events) {
        const std::string kind = ev.value("event", "");
        if (kind == "case_start" && ev.contains("shape") && ev["shape"].is_object()) in_progress = ev["shape"];
        if (kind == "case" && ev.contains("result") && ev["result"].is_object() && ev["result"].contains("shape")) {
            const Disposition d =
                parse_disposition(ev["result"].value("disposition", "")).value_or(Disposition::crashed);
            cases.push_back(ev["result"]);
            dispositions.push_back(d);
            stopped_by_design |= d == Disposition::not_implemented || d == Disposition::crashed;
            in_progress = json();
        }
        if (kind == "fatal") fatal = ev.value("error", "unknown error");
        if (kind == "forged" && forged.empty()) forged = ev.value("line", "");
    }

    // How the process ended decides what happened to the case that was running, if any.
    std::string problem;
    auto end_in_progress = [&](Disposition d, const std::string& why) {
        std::string text = why;
        if (!in_progress.is_null()) {
            text += " while running " + shape_words(in_progress);
            cases.push_back({{"shape", in_progress}, {"disposition", disposition_name(d)}, {"problem", text}});
        }
        dispositions.push_back(d);
        problem = text;
    };
    if (!out.finished) {
        std::ostringstream os;
        if (!fatal.empty()) {
            os << "a CUDA error stopped the process: " << fatal;
        } else {
            os << "the process " << describe_end(out);
            if (!out.timed_out && !out.signal) os << " in the middle of the check (a stage must return, not exit)";
        }
        end_in_progress(out.timed_out ? Disposition::timed_out : Disposition::crashed, os.str());
    } else if (!fatal.empty()) {
        end_in_progress(Disposition::crashed, "a CUDA error stopped the process: " + fatal);
    } else if (cases.size() < expected_cases && !stopped_by_design) {
        std::ostringstream os;
        os << "the process reported " << cases.size() << " of " << expected_cases
           << " cases and then said it was done";
        end_in_progress(Disposition::crashed, os.str());
    }

    if (out.forged_lines > 0) {
        // Something in the stage's process wrote into the grader's report pipe: nothing that
        // process reported can be trusted, whatever it says.
        std::ostringstream os;
        os << out.forged_lines << " line(s) on the grader's report channel did not come from the grader, e.g. \""
           << forged << "\": the stage wrote into a descriptor it did not open, so this run's results are void";
        problem = os.str();
    }
    // A forged report voids the run whatever else happened (a forger may also exit or crash).
    const Disposition verdict = out.forged_lines > 0 ? Disposition::rejected : combine(dispositions);
    if (problem.empty())
        for (const json& c : cases)
            if (c.value("disposition", "") != "passed") {
                problem = c.value("problem", "");
                break;
            }
    r["disposition"] = disposition_name(verdict);
    r["problem"] = problem;
    r["cases"] = cases;
    r["expected_cases"] = expected_cases;
    r["process"] = {{"end", describe_end(out)}, {"output_tail", out.output_tail}};
    for (const json& ev : out.events)  // what the child's sandbox enforced (sandbox.h)
        if (ev.value("event", "") == "sandbox") r["process"]["sandbox"] = ev;
    return r;
}

namespace {

// The largest case `make sanitize` is pointed at (2·M·N·K); 2·256³ runs in seconds under memcheck.
constexpr double kSanitizeMaxFlops = 2.0 * 256 * 256 * 256;

std::string padded(const std::string& s, size_t width) {
    return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

void print_verdict(const StageRun& run, const json& r, const CheckOptions& opt, uint64_t seed) {
    const MessageStyle style{opt.color};
    const Disposition d = parse_disposition(r["disposition"]).value_or(Disposition::crashed);
    const json& cases = r["cases"];
    int passed = 0;
    for (const json& c : cases) passed += c.value("disposition", "") == "passed";
    std::cout << "  " << padded(run.label(), 12) << padded(precision_name(run.precision), 8)
              << padded(paint_disposition(d, style), opt.color ? 26 : 16);
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
                  << " SEED=" << seed << (opt.quick ? "" : " FULL=1") << "\n"
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
void print_summary(const json& results, const CheckOptions& opt) {
    std::map<std::string, int> counts;
    for (const json& r : results) ++counts[r.value("disposition", "")];
    std::cout << "Summary:";
    const char* sep = " ";
    for (const auto& [name, n] : counts) {
        const Disposition d = parse_disposition(name).value_or(Disposition::crashed);
        std::cout << sep << n << " " << paint_disposition(d, MessageStyle{opt.color});
        sep = ", ";
    }
    std::cout << " (seed " << opt.seed << ", " << (opt.quick ? "quick" : "full") << " set)\n";
}

}  // namespace

json run_checks(GpuContext& ctx, const CheckOptions& opt) {
    const std::vector<StageRun> runs = expand(Side::submission, opt.selection);
    const std::vector<Shape> shapes = check_shapes(opt.quick, opt.seed);
    json results = json::array();
    // The build's symbol check: a stage it refused is not in the submission's library, and its
    // verdict names the symbol and the rule (judge/symbol_scan.h).
    const SymbolScan scan = load_symbol_scan(default_symbol_scan_path());
    std::cout << "Checking " << runs.size() << " stage run(s) on the " << (opt.quick ? "quick" : "full")
              << " shape set, seed " << opt.seed << "\n";
    // The runs this GPU and build can run, and which of them are stubs (check_engine.h, find_stubs).
    std::vector<CheckRun> planned(runs.size());
    std::vector<CheckRun> to_probe;
    std::vector<size_t> probed;  // index in runs of each to_probe entry
    for (size_t i = 0; i < runs.size(); ++i) {
        CheckRun& cr = planned[i];
        cr.side = Side::submission;
        cr.stage = runs[i].stage->name;
        cr.variant = runs[i].variant->label;
        cr.precision = runs[i].precision;
        cr.shapes = shapes;
        cr.limits = opt.limits;
        if (unsupported_reason(runs[i], ctx.device_arch, ctx.code_arch).empty() &&
            scan_rejection(scan, cr.stage, cr.variant, precision_name(cr.precision)).empty()) {
            to_probe.push_back(cr);
            probed.push_back(i);
        }
    }
    std::vector<StubAnswer> stub(runs.size());
    const std::vector<StubAnswer> answers = find_stubs(ctx, to_probe);
    for (size_t j = 0; j < answers.size(); ++j) stub[probed[j]] = answers[j];
    // Each run's runner is started while the run before it is checked (start_check_runner).
    auto needs_runner = [&](size_t i) { return !stub[i].stub && unsupported_reason(runs[i], ctx.device_arch, ctx.code_arch).empty(); };
    std::unique_ptr<ChildProcess> next;
    size_t next_for = runs.size();
    for (size_t i = 0; i < runs.size(); ++i) {
        const StageRun& run = runs[i];
        std::unique_ptr<ChildProcess> runner = next_for == i ? std::move(next) : nullptr;
        if (needs_runner(i)) {
            next_for = i + 1;
            while (next_for < runs.size() && !needs_runner(next_for)) ++next_for;
            if (next_for < runs.size()) next = start_check_runner(planned[next_for]);
        }
        if (const std::string why = unsupported_reason(run, ctx.device_arch, ctx.code_arch); !why.empty()) {
            json r{{"stage", run.stage->name}, {"variant", run.variant->label}, {"precision", precision_name(run.precision)},
                   {"disposition", "unsupported"}, {"problem", why}, {"cases", json::array()}, {"expected_cases", 0}};
            print_verdict(run, r, opt, opt.seed);
            results.push_back(r);
            continue;
        }
        const CheckRun& cr = planned[i];
        auto on_case = [&](size_t c) {
            if (!opt.progress) return;
            std::cout << "\r\033[K  [" << i + 1 << "/" << runs.size() << "] " << run.label() << " "
                      << precision_name(run.precision) << "  case " << c + 1 << "/" << shapes.size() << "  "
                      << shapes[c].dims() << std::flush;
        };
        const ChildOutcome out = stub[i].stub ? stub_outcome(cr, stub[i]) : check_stage_run(ctx, cr, on_case, std::move(runner));
        if (opt.progress) std::cout << "\r\033[K" << std::flush;
        json r = collect_stage_run(run.stage->name, run.variant->label, run.precision, shapes.size(), out);
        if (stub[i].stub) r["process"]["end"] = kStubProbeEnd;
        const ErrorBound bound = error_bound(run.precision, *run.variant);
        r["error_bound"] = {{"u", bound.u}, {"threshold", bound.threshold}, {"inputs", bound.inputs}};
        json one = json::array({r});
        apply_symbol_scan(scan, one);
        r = one[0];
        print_verdict(run, r, opt, opt.seed);
        results.push_back(r);
    }
    print_summary(results, opt);
    return json{{"seed", opt.seed}, {"set", opt.quick ? "quick" : "full"}, {"results", results}};
}

int exit_status(const json& results) {
    for (const json& r : results)
        if (const std::string d = r.value("disposition", ""); d != "passed" && d != "not_implemented" && d != "unsupported")
            return 1;
    return 0;
}

}  // namespace gemmlab
