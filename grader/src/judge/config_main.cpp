// config_main.cpp — `gemmlab-config`: the grader's own reading of course.toml ([bench], [scoring]),
// on its own. It needs no GPU and no submission, so the course staff's tools run it on a login node
// before anything is queued: a rubric the grader would refuse stops the sweep there, with the
// grader's own message, instead of failing in every grading job.
//
//   gemmlab-config --config course.toml [--json]
//
//   gemmlab-config --config course.toml --rescore results.json --out DIR
//
// Exit 0: valid (prints the rubric as the grader will apply it); 2: the first mistake, named.
// --json also prints `measurement` (what a grade measures: a change needs a regrade on a GPU) and
// `rubric` (what turns measurements into points: a change needs only a rescore), which the course
// tools compare between course states. --rescore scores a stored grade's results.json again under
// this rubric, from its measured speeds (score_document.h), and writes DIR/results.json and
// DIR/gradescope.json; exit 3 when the rubric needs speeds the grade did not measure (regrade it).
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/sides.h"
#include "judge/config.h"
#include "judge/gradescope.h"
#include "judge/results_io.h"
#include "judge/score_document.h"

using namespace gemmlab;
using nlohmann::json;

namespace {

std::vector<std::string> rubric_keys() {
    std::vector<std::string> keys;
    for (const StageInfo& s : stages(Side::submission)) keys.push_back(s.rubric_key);
    return keys;
}

std::string num(double v) {
    std::ostringstream os;
    os << v;
    return os.str();
}

std::string per_precision(const PerPrecision& p) {
    return p.f32 == p.f64 ? num(p.f32) : "float " + num(p.f32) + ", double " + num(p.f64);
}

json rubric_json(const CourseConfig& c) {
    json stages = json::object();
    double extra = 0;
    for (const auto& [key, r] : c.scoring.stages) {
        stages[key] = {{"correctness_points", {{"float", r.correctness_points.f32}, {"double", r.correctness_points.f64}}},
                       {"performance_points", {{"float", r.performance_points.f32}, {"double", r.performance_points.f64}}},
                       {"target_pct_reference", {{"float", r.target_pct_reference.f32}, {"double", r.target_pct_reference.f64}}},
                       {"extra_credit", r.extra_credit}};
        if (r.extra_credit)
            extra += r.correctness_points.f32 + r.correctness_points.f64 + r.performance_points.f32 + r.performance_points.f64;
    }
    json shapes = json::array();
    for (const ScoringShape& s : c.scoring.shapes) shapes.push_back({{"shape", s.shape.dims()}, {"weight", s.weight}});
    json bench_shapes = json::array();
    for (const Shape& s : c.bench.shapes) bench_shapes.push_back(s.dims());
    return {{"source", c.source},
            {"max_points", c.scoring.max_points()},
            {"extra_credit_points", extra},
            {"interpolation", interpolation_name(c.scoring.interpolation)},
            {"max_call_ms_at_peak", c.scoring.max_call_ms_at_peak},
            {"scoring_shapes", shapes},
            {"bench_shapes", bench_shapes},
            {"stages", stages},
            {"notes", c.notes},
            {"measurement", measurement_json(c)},
            {"rubric", rubric_only_json(c)}};
}

// A stored grade scored again under `c`: results.json and gradescope.json written into out_dir.
int rescore(const CourseConfig& c, const std::string& results_path, const std::string& out_dir) {
    std::ifstream in(results_path);
    if (!in) {
        std::cerr << results_path << ": cannot read it\n";
        return 2;
    }
    json doc = json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_object() || doc.value("kind", "") != "grade" || !doc.contains("results")) {
        std::cerr << results_path << ": not the results.json of a grade (kind \"grade\")\n";
        return 2;
    }
    DocumentScore scored;
    try {
        scored = score_document(doc, c);
    } catch (const NeedsRegrade& e) {
        std::cerr << results_path << ": cannot be rescored: " << e.what() << "\n";
        return 3;
    }
    const json before = doc.value("score", json::object());
    json record = {{"at", utc_now()},
                   {"config", c.source},
                   {"total_before", before.value("total", 0.0)},
                   {"max_before", before.value("max", 0.0)},
                   {"config_before", doc.value("config", json::object())}};
    doc["rescored"] = doc.value("rescored", json::array());
    doc["rescored"].push_back(record);
    doc["config"] = scoring_config_json(c);
    doc["score"] = to_json(scored.score);
    std::ostringstream summary;
    if (doc.value("status", "") == "no_gpu")
        summary << "Not graded: no usable NVIDIA GPU on the grading machine.";
    else
        summary << "Score " << num(scored.score.total) << " / " << num(scored.score.max) << " (rescored " << record["at"].get<std::string>()
                << " under the course's current rubric, from the speeds measured in the grade of "
                << doc.value("created", std::string("?")) << " on " << doc.value("targets", json::object()).value("gpu", std::string("?"))
                << "; targets are a % of the reference's speed).";
    write_json_atomically(out_dir + "/results.json", doc);
    write_json_atomically(out_dir + "/gradescope.json",
                          gradescope_json(scored.score, summary.str(), doc.value("seconds", 0.0),
                                          c.scoring.gradescope_visibility, doc.value("status", "") != "no_gpu"));
    std::cout << results_path << ": " << num(before.value("total", 0.0)) << " / " << num(before.value("max", 0.0)) << " -> "
              << num(scored.score.total) << " / " << num(scored.score.max) << "\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"GEMM Lab: check course.toml's [bench] and [scoring] as the grader reads them (no GPU needed)"};
    std::string path;
    bool as_json = false;
    std::string rescore_path, out_dir;
    app.add_option("--config", path, "the course configuration")->required();
    app.add_flag("--json", as_json, "print the rubric as JSON");
    app.add_option("--rescore", rescore_path, "a grade's results.json: score it again under this rubric, without a GPU");
    app.add_option("--out", out_dir, "with --rescore: the directory for results.json and gradescope.json");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    if (!std::ifstream(path)) {
        std::cerr << path << ": no such file; pass --config <course.toml>\n";
        return 2;
    }
    try {
        const CourseConfig c = load_config(path, rubric_keys());
        require_rubric(c, rubric_keys());
        if (!rescore_path.empty()) {
            if (out_dir.empty()) {
                std::cerr << "--rescore needs --out DIR (where results.json and gradescope.json are written)\n";
                return 2;
            }
            return rescore(c, rescore_path, out_dir);
        }
        if (as_json) {
            std::cout << rubric_json(c).dump(1) << "\n";
            return 0;
        }
        std::cout << path << ": [bench] and [scoring] are valid: " << num(c.scoring.max_points()) << " points";
        std::cout << "; graded at";
        for (const ScoringShape& s : c.scoring.shapes) std::cout << " " << s.shape.dims() << " (weight " << num(s.weight) << ")";
        if (c.scoring.max_call_ms_at_peak > 0)
            std::cout << "  (each precision's shapes halved on a GPU where a call would take more than "
                      << num(c.scoring.max_call_ms_at_peak) << " ms at its peak)";
        std::cout << "\n";
        for (const std::string& key : rubric_keys()) {  // in the registry's order
            const StageRubric& r = c.scoring.stages.at(key);
            std::cout << "  " << key << ": correctness " << per_precision(r.correctness_points) << ", performance "
                      << per_precision(r.performance_points) << " in full at " << per_precision(r.target_pct_reference)
                      << " % of the reference solution's speed" << (r.extra_credit ? " (extra credit)" : "") << "\n";
        }
        for (const std::string& n : c.notes) std::cout << "  note: " << n << "\n";
        return 0;
    } catch (const ConfigError& e) {
        std::cerr << e.what() << "\n";
        return 2;
    }
}
