// grade_command.cpp — `gemmlab grade` (see grade_command.h): the check, bench and score steps, and the
// results files they make.
#include "judge/grade_command.h"

#include <chrono>
#include <iostream>
#include <map>
#include <sstream>

#include "common/check_result.h"
#include "common/sides.h"
#include "judge/bench_planning.h"
#include "judge/environment.h"
#include "judge/format.h"
#include "judge/gradescope.h"
#include "judge/pipeline.h"
#include "judge/results_io.h"
#include "judge/score.h"
#include "judge/score_document.h"
#include "judge/symbol_scan.h"

namespace gemmlab {

using nlohmann::json;

namespace {

void write_outputs(const GradeOptions& opt, const json& doc, const Score& score, const std::string& summary,
                   double seconds, const CourseConfig& cfg) {
    const std::string dir = opt.out_dir.empty() ? "." : opt.out_dir;
    write_json_atomically(dir + "/results.json", doc);
    write_json_atomically(dir + "/gradescope.json", gradescope_json(score, summary, seconds, cfg.scoring.gradescope_visibility,
                                                                    doc.value("status", "") != "no_gpu"));
    std::cout << "wrote " << dir << "/results.json and " << dir << "/gradescope.json\n";
}

json base_document(const GradeOptions& opt, const CourseConfig& cfg) {
    return json{{"schema", kResultsSchema},
                {"kind", "grade"},
                {"created", utc_now()},
                {"submission", opt.submission},
                {"seed", opt.seed},
                {"environment", describe_environment()},
                {"config", scoring_config_json(cfg)}};
}

SymbolScan load_scan(const GradeOptions& opt) {
    return load_symbol_scan(opt.symbols_path.empty() ? default_symbol_scan_path() : opt.symbols_path);
}

}  // namespace

void write_no_gpu_grade(const GradeOptions& opt, const CourseConfig& cfg, const std::string& reason) {
    const std::string problem = "not run: " + reason;  // gpu_probe.h's words: "this machine has no GPU (...)"
    // What the build left out is known without a GPU: those runs are `rejected`, not no_gpu.
    const SymbolScan scan = load_scan(opt);
    json results = json::array();
    for (Precision p : {Precision::f32, Precision::f64})
        for (const StageInfo& st : stages(Side::submission))
            for (const StageVariant& v : st.variants) {
                const std::string rejected = scan_rejection(scan, st.name, v.label, precision_name(p));
                results.push_back(not_run_row(st.name, v.label, p, rejected.empty() ? "no_gpu" : "rejected",
                                              rejected.empty() ? problem : rejected));
            }
    json doc = base_document(opt, cfg);
    doc["status"] = "no_gpu";
    doc["results"] = results;
    doc["symbol_scan"] = to_json(scan);
    doc["baselines"] = json::object();
    doc["reference"] = json::array();
    const Score score = score_step(doc, cfg);
    const std::string summary = "Not graded: no usable NVIDIA GPU on the grading machine: " + reason +
                                ". No score; this is a problem of the grading machine, not of the submission.";
    write_outputs(opt, doc, score, summary, 0, cfg);
}

int run_grade(GpuContext& ctx, const GradeOptions& opt, const CourseConfig& cfg) {
    const auto t0 = std::chrono::steady_clock::now();
    const MessageStyle style{opt.color};
    print_notes(cfg.notes);

    // 1. check: the full shape set.
    CheckStepInput check;
    check.quick = false;
    check.seed = opt.seed;
    check.color = opt.color;
    check.progress = opt.progress;
    CheckStepResult checked = check_step(ctx, check);
    // A stage the build's symbol check refused is rejected (its file is not even linked), and is
    // therefore never timed.
    const SymbolScan scan = load_scan(opt);
    if (int changed = apply_symbol_scan(scan, checked.results))
        std::cout << "symbol scan (" << scan.path << "): " << changed << " stage run(s) rejected\n";

    // 2. bench: each precision's graded shapes, fitted to this GPU's peak in it ([scoring] max_call_ms_at_peak).
    const GradedShapes graded = graded_shapes(cfg.scoring, ctx.shape);
    print_notes(graded.notes);
    BenchStepInput req;
    for (const auto& [p, shapes] : graded.shapes)
        for (const ScoringShape& s : shapes) req.shapes_for[p].push_back(s.shape);
    req.precisions = {Precision::f32, Precision::f64};
    req.shapes = scoring_shapes(cfg);
    req.config = cfg.bench;
    req.seed = opt.seed;
    req.progress = opt.progress;
    req.checked = checked.results;
    if (opt.with_reference) req.reference_runs = expand(Side::reference, Selection{});
    const BenchStepResult timed = bench_step(ctx, req);

    // 3. score: the document, scored as a rescore of it would be.
    json doc = base_document(opt, cfg);
    doc["status"] = "graded";
    doc["results"] = timed.results;
    doc["baselines"] = timed.baselines;
    doc["reference"] = timed.reference;
    // Where the targets come from: the reference solution timed in this grade, on this GPU.
    doc["targets"] = {{"source", cfg.scoring.measure_reference && opt.with_reference ? "reference" : "none"},
                      {"gpu", ctx.name},
                      {"gpu_arch", "sm_" + std::to_string(ctx.device_arch)},
                      {"build_arch", "sm_" + std::to_string(ctx.code_arch)},
                      {"measured", "in this grade, beside the submission"},
                      {"shapes", graded.used}};
    const Score score = score_step(doc, cfg);
    print_score(score, graded.shapes, cfg, style);
    print_notes(timed.notes, "  ");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    doc["device"] = timed.devices;
    doc["environment"]["clocks"] = clocks_from_devices(timed.devices);
    doc["symbol_scan"] = to_json(scan);
    doc["notes"] = timed.notes;
    for (const std::string& n : graded.notes) doc["notes"].push_back(n);
    doc["seconds"] = seconds;
    doc["settings"] = settings_json(cfg.bench, scoring_shapes(cfg), opt.seed);
    std::ostringstream summary;
    summary << "Score " << fixed(score.total, 2) << " / " << fixed(score.max, 2) << " (seed " << opt.seed
            << "; on " << ctx.name << ", speeds measured next to naive, cuBLAS and the reference solution in the same"
            << " run, on the judge's clock; targets are a % of the reference's speed).";
    write_outputs(opt, doc, score, summary.str(), seconds, cfg);
    return 0;
}

}  // namespace gemmlab
