// grade_command.cpp — `gemmlab grade` (see grade_command.h).
#include "judge/grade_command.h"

#include <chrono>
#include <iostream>
#include <map>
#include <sstream>
#include <tuple>

#include "judge/bench_command.h"
#include "judge/check_command.h"
#include "common/check_result.h"
#include "judge/environment.h"
#include "judge/gradescope.h"
#include "judge/results_io.h"
#include "judge/score.h"
#include "judge/score_document.h"
#include "common/sides.h"
#include "judge/symbol_scan.h"

namespace gemmlab {

using nlohmann::json;

namespace {

std::vector<Shape> scoring_shapes(const CourseConfig& cfg) {
    std::vector<Shape> shapes;
    for (const ScoringShape& s : cfg.scoring.shapes) shapes.push_back(s.shape);
    return shapes;
}

std::string pad(const std::string& s, size_t width) { return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' '); }
std::string lpad(const std::string& s, size_t width) { return s.size() >= width ? " " + s : std::string(width - s.size(), ' ') + s; }

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

}  // namespace

void write_no_gpu_grade(const GradeOptions& opt, const CourseConfig& cfg, const std::string& reason) {
    const std::string problem = "not run: " + reason;  // gpu_probe.h's words: "this machine has no GPU (...)"
    // What the build left out is known without a GPU: those runs are `rejected`, not no_gpu.
    const SymbolScan scan = load_symbol_scan(opt.symbols_path.empty() ? default_symbol_scan_path() : opt.symbols_path);
    json results = json::array();
    for (Precision p : {Precision::f32, Precision::f64})
        for (const StageInfo& st : stages(Side::submission))
            for (const StageVariant& v : st.variants) {
                const std::string rejected = scan_rejection(scan, st.name, v.label, precision_name(p));
                results.push_back({{"stage", st.name},
                                   {"variant", v.label},
                                   {"precision", precision_name(p)},
                                   {"disposition", rejected.empty() ? "no_gpu" : "rejected"},
                                   {"problem", rejected.empty() ? problem : rejected},
                                   {"cases", json::array()},
                                   {"bench", json::array()}});
            }
    json doc = base_document(opt, cfg);
    doc["status"] = "no_gpu";
    doc["results"] = results;
    doc["symbol_scan"] = to_json(scan);
    doc["baselines"] = json::object();
    doc["reference"] = json::array();
    const Score score = score_document(doc, cfg).score;
    doc["score"] = to_json(score);
    const std::string summary = "Not graded: no usable NVIDIA GPU on the grading machine: " + reason +
                                ". No score; this is a problem of the grading machine, not of the submission.";
    write_outputs(opt, doc, score, summary, 0, cfg);
}

int run_grade(GpuContext& ctx, const GradeOptions& opt, const CourseConfig& cfg) {
    const auto t0 = std::chrono::steady_clock::now();
    const MessageStyle style{opt.color};
    for (const std::string& n : cfg.notes) std::cout << "note: " << n << "\n";

    CheckOptions check;
    check.quick = false;
    check.seed = opt.seed;
    check.color = opt.color;
    check.progress = opt.progress;
    json checked = run_checks(ctx, check);
    // A stage the build's symbol check refused is rejected (its file is not even linked), and is
    // therefore never timed.
    const SymbolScan scan = load_symbol_scan(opt.symbols_path.empty() ? default_symbol_scan_path() : opt.symbols_path);
    if (int changed = apply_symbol_scan(scan, checked["results"]))
        std::cout << "symbol scan (" << scan.path << "): " << changed << " stage run(s) rejected\n";

    // Each precision's graded shapes, fitted to this GPU's peak in it ([scoring] max_call_ms_at_peak).
    std::map<Precision, std::vector<ScoringShape>> graded;
    json shapes_used = json::object();
    std::vector<std::string> shape_notes;
    TimedStagesRequest req;
    for (Precision p : {Precision::f32, Precision::f64}) {
        std::string why;
        graded[p] = shapes_for_gpu(cfg.scoring, peak_gflops(p, ctx.shape), &why);
        json list = json::array();
        for (const ScoringShape& s : graded[p]) {
            list.push_back({{"shape", s.shape.dims()}, {"weight", s.weight}});
            req.shapes_for[p].push_back(s.shape);
        }
        shapes_used[precision_name(p)] = {{"shapes", list}, {"why", why}};
        if (!why.empty()) {
            shape_notes.push_back(std::string(precision_name(p)) + ": " + why);
            std::cout << "note: " << precision_name(p) << ": " << why << "\n";
        }
    }
    req.precisions = {Precision::f32, Precision::f64};
    req.shapes = scoring_shapes(cfg);
    req.config = cfg.bench;
    req.seed = opt.seed;
    req.progress = opt.progress;
    req.checked = checked["results"];
    if (opt.with_reference) req.reference_runs = expand(Side::reference, Selection{});
    const TimedStages timed = time_checked_stages(ctx, req);

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
                      {"shapes", shapes_used}};
    // The score comes from the document itself, as a rescore of it would (score_document.h).
    const Score score = score_document(doc, cfg).score;
    doc["score"] = to_json(score);
    print_score(score, graded, cfg, style);
    for (const std::string& r : timed.notes) std::cout << "  note: " << r << "\n";
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    doc["device"] = timed.devices;
    doc["environment"]["clocks"] = clocks_from_devices(timed.devices);
    doc["symbol_scan"] = to_json(scan);
    doc["notes"] = timed.notes;
    for (const std::string& n : shape_notes) doc["notes"].push_back(n);
    doc["seconds"] = seconds;
    json settings = to_json(plan_from_config(cfg.bench, Precision::f32, scoring_shapes(cfg), opt.seed));
    settings.erase("precision");
    settings.erase("items");
    doc["settings"] = settings;
    std::ostringstream summary;
    summary << "Score " << fixed(score.total, 2) << " / " << fixed(score.max, 2) << " (seed " << opt.seed
            << "; on " << ctx.name << ", speeds measured next to naive, cuBLAS and the reference solution in the same"
            << " run, on the judge's clock; targets are a % of the reference's speed).";
    write_outputs(opt, doc, score, summary.str(), seconds, cfg);
    return 0;
}

}  // namespace gemmlab
