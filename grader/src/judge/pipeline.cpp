// pipeline.cpp — the judge's pipeline: the check, bench and score steps (pipeline.h).
#include "judge/pipeline.h"

#include <iostream>
#include <memory>
#include <sstream>

#include "common/bound.h"
#include "common/check_result.h"
#include "common/shapes.h"
#include "judge/bench_planning.h"
#include "judge/check_engine.h"
#include "judge/format.h"
#include "judge/score_document.h"
#include "judge/symbol_scan.h"

namespace gemmlab {

using nlohmann::json;

namespace {

// The words for a shape inside a sentence: "33x31x65 (alpha=2, beta=0)".
std::string shape_words(const json& shape_json) {
    const Shape s = shape_from_json(shape_json);
    std::ostringstream os;
    os << s.dims() << " (alpha=" << s.alpha << ", beta=" << s.beta << ")";
    return os.str();
}

}  // namespace

// ---- 1. check --------------------------------------------------------------------------------------

json CheckStepResult::to_json() const { return json{{"seed", seed}, {"set", quick ? "quick" : "full"}, {"results", results}}; }

CheckStepResult check_step(GpuContext& ctx, const CheckStepInput& in) {
    const std::vector<StageRun> runs = expand(Side::submission, in.selection);
    const std::vector<Shape> shapes = check_shapes(in.quick, in.seed);
    CheckStepResult out;
    out.seed = in.seed;
    out.quick = in.quick;
    json& results = out.results;
    // The build's symbol check: a stage it refused is not in the submission's library, and its
    // verdict names the symbol and the rule (judge/symbol_scan.h).
    const SymbolScan scan = load_symbol_scan(default_symbol_scan_path());
    print_check_start(runs.size(), in.quick, in.seed);
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
        cr.limits = in.limits;
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
            const json r = unsupported_row(run, why);
            print_verdict(run, r, in.color, in.quick, in.seed);
            results.push_back(r);
            continue;
        }
        const CheckRun& cr = planned[i];
        auto on_case = [&](size_t c) {
            if (in.progress) print_case_progress(i, runs.size(), run, c, shapes);
        };
        const ChildOutcome outcome = stub[i].stub ? stub_outcome(cr, stub[i]) : check_stage_run(ctx, cr, on_case, std::move(runner));
        if (in.progress) clear_progress_line();
        json r = collect_stage_run(run.stage->name, run.variant->label, run.precision, shapes.size(), outcome);
        if (stub[i].stub) r["process"]["end"] = kStubProbeEnd;
        const ErrorBound bound = error_bound(run.precision, *run.variant);
        r["error_bound"] = {{"u", bound.u}, {"threshold", bound.threshold}, {"inputs", bound.inputs}};
        json one = json::array({r});
        apply_symbol_scan(scan, one);
        r = one[0];
        print_verdict(run, r, in.color, in.quick, in.seed);
        results.push_back(r);
    }
    print_check_summary(results, in.color, in.quick, in.seed);
    return out;
}

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

int exit_status(const json& results) {
    for (const json& r : results)
        if (const std::string d = r.value("disposition", ""); d != "passed" && d != "not_implemented" && d != "unsupported")
            return 1;
    return 0;
}

// ---- 2. bench --------------------------------------------------------------------------------------

BenchStepResult bench_step(GpuContext& ctx, const BenchStepInput& in) {
    BenchStepResult out;
    // One plan per precision, timed in one run: a stage's runner serves both (bench_engine.h).
    struct Planned {
        BenchPlan plan;
        std::vector<json> rows;  // the check results of the stages timed, in plan order after the baselines
        size_t first_reference = 0, end_reference = 0;
    };
    std::vector<Planned> planned;
    for (Precision p : in.precisions) {
        const std::string prec = precision_name(p);
        const auto own = in.shapes_for.find(p);
        Planned pl;
        BenchPlan& plan = pl.plan;
        plan = plan_from_config(in.config, p, own != in.shapes_for.end() ? own->second : in.shapes, in.seed);
        plan.items = {baseline_item(), BenchItem::cublas()};
        for (const json& r : in.checked) {
            if (r.value("precision", "") != prec || r.value("disposition", "") != "passed") continue;
            plan.items.push_back(BenchItem::of_stage(Side::submission, r["stage"], r["variant"]));
            pl.rows.push_back(r);
        }
        pl.first_reference = plan.items.size();
        for (const StageRun& run : in.reference_runs)
            if (run.precision == p && !run.stage->baseline && unsupported_reason(run, ctx.device_arch, ctx.code_arch).empty())
                plan.items.push_back(BenchItem::of_stage(Side::reference, run.stage->name, run.variant->label));
        pl.end_reference = plan.items.size();
        add_tensor_core_baselines(plan);  // after every stage item: their indices stay as above
        print_timing_plan(planned.empty(), plan, pl.rows.size(), pl.end_reference - pl.first_reference,
                          plan.items.size() > pl.end_reference);
        planned.push_back(std::move(pl));
    }
    BenchRunOptions ro;
    ro.call_timeout_seconds = in.config.call_timeout_seconds;
    ro.progress = in.progress;
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
        for (size_t i = pl.first_reference; i < pl.end_reference; ++i)
            out.reference.push_back(reference_row(pl.plan.items[i], pl.plan.precision, bo.timings[i]));
        out.outcomes.emplace(pl.plan.precision, std::move(bo));
    }
    // Every checked result, in the check's order; those that did not pass are untimed.
    json timed = out.results;
    out.results = json::array();
    for (const json& r : in.checked) {
        json row = r;
        row["bench"] = json::array();
        for (const json& t : timed)
            if (t["stage"] == r["stage"] && t["variant"] == r["variant"] && t["precision"] == r["precision"]) row = t;
        out.results.push_back(row);
    }
    return out;
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

// ---- 3. score --------------------------------------------------------------------------------------

Score score_step(json& document, const CourseConfig& cfg) {
    const Score score = score_document(document, cfg).score;
    document["score"] = to_json(score);
    return score;
}

}  // namespace gemmlab
