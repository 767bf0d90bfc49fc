// config_main.cpp — `gemmlab-config`: the grader's own reading of course.toml ([bench], [scoring]),
// on its own. It needs no GPU and no submission, so the course staff's tools run it on a login node
// before anything is queued: a rubric the grader would refuse stops the sweep there, with the
// grader's own message, instead of failing in every grading job.
//
//   gemmlab-config --config course.toml [--json]
//
// Exit 0: valid (prints the rubric as the grader will apply it); 2: the first mistake, named.
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/sides.h"
#include "judge/config.h"

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
            {"notes", c.notes}};
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"GEMM Lab: check course.toml's [bench] and [scoring] as the grader reads them (no GPU needed)"};
    std::string path;
    bool as_json = false;
    app.add_option("--config", path, "the course configuration")->required();
    app.add_flag("--json", as_json, "print the rubric as JSON");
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
