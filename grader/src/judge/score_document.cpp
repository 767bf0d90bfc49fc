// score_document.cpp — a grade's score from its results document (see score_document.h).
#include "judge/score_document.h"

#include <algorithm>
#include <sstream>
#include <tuple>

#include "common/bench_plan.h"
#include "common/sides.h"

namespace gemmlab {

using nlohmann::json;

namespace {

std::string dims_list(const std::vector<std::string>& dims) {
    std::string out;
    for (const std::string& d : dims) out += (out.empty() ? "" : ", ") + d;
    return out.empty() ? "none" : out;
}

std::vector<std::string> listed_dims(const json& shapes) {
    std::vector<std::string> out;
    for (const json& s : shapes) out.push_back(s.value("shape", ""));
    return out;
}

// The reference's speeds, the targets' base: per stage, precision, input precision and shape, the
// fastest of its variants that multiply in that input precision (score.h).
using ReferenceKey = std::tuple<std::string, std::string, int, std::string>;  // stage, precision, inputs, dims
using ReferenceSpeeds = std::map<ReferenceKey, double>;

int inputs_of(const std::string& stage, const std::string& variant, Precision p) {
    if (p == Precision::f64) return static_cast<int>(InputPrecision::full);
    const StageInfo* st = find_stage(Side::reference, stage);
    const StageVariant* v = st ? find_variant(*st, variant) : nullptr;
    return static_cast<int>(v ? v->float_inputs : InputPrecision::full);
}

ReferenceSpeeds reference_speeds(const json& reference) {
    ReferenceSpeeds out;
    for (const json& r : reference) {
        const Precision p = r.value("precision", "") == "double" ? Precision::f64 : Precision::f32;
        const int inputs = inputs_of(r.value("stage", ""), r.value("variant", ""), p);
        for (const json& t : r.value("bench", json::array())) {
            if (t.value("disposition", "") != "passed") continue;
            const Timing tm = timing_from_json(t);
            double& best = out[{r.value("stage", ""), r.value("precision", ""), inputs, tm.shape.dims()}];
            best = std::max(best, tm.gflops);
        }
    }
    return out;
}

// The baselines' speed at a shape: naive, or cuBLAS as a timing names it ("cublas", "cublas/tf32").
double baseline_gflops(const json& baselines, const Shape& s, const std::string& item) {
    std::string key = item;
    std::replace(key.begin(), key.end(), '/', '_');
    for (const json& row : baselines) {
        const json& sh = row.value("shape", json::object());
        if (sh.value("M", -1) == s.M && sh.value("N", -1) == s.N && sh.value("K", -1) == s.K)
            return row.value(key + "_gflops", 0.0);
    }
    return 0.0;
}

// The shapes one precision was graded at, weighted by cfg. The document lists the shapes its grade
// was configured with (config.shapes) and those it graded on its GPU (targets.shapes: halved where a
// call would be long at the GPU's peak); weights follow the listed shapes, by position.
std::vector<ScoringShape> graded_shapes(const json& doc, Precision p, const CourseConfig& cfg) {
    const std::string prec = precision_name(p);
    const json& targets = doc.value("targets", json::object());
    if (!targets.contains("shapes") || !targets["shapes"].contains(prec)) return cfg.scoring.shapes;
    const std::vector<std::string> listed = listed_dims(doc.value("config", json::object()).value("shapes", json::array()));
    std::vector<std::string> wanted;
    for (const ScoringShape& s : cfg.scoring.shapes) wanted.push_back(s.shape.dims());
    if (listed != wanted)
        throw NeedsRegrade("the rubric grades " + dims_list(wanted) + " but the grade measured " + dims_list(listed) +
                           ": the new shapes must be measured on a GPU");
    const double measured_cap = doc.value("config", json::object()).value("max_call_ms_at_peak", 0.0);
    if (measured_cap != cfg.scoring.max_call_ms_at_peak) {
        std::ostringstream os;
        os << "the rubric fits shapes to the GPU with max_call_ms_at_peak = " << cfg.scoring.max_call_ms_at_peak
           << " but the grade used " << measured_cap << ": the shapes must be measured again on a GPU";
        throw NeedsRegrade(os.str());
    }
    const json& used = targets["shapes"][prec].value("shapes", json::array());
    if (used.size() != cfg.scoring.shapes.size())
        throw NeedsRegrade("the grade's " + prec + " shapes (" + dims_list(listed_dims(used)) +
                           ") do not match the rubric's: the shapes must be measured again on a GPU");
    std::vector<ScoringShape> out;
    for (size_t i = 0; i < used.size(); ++i) {
        std::string error;
        const auto shape = parse_shape(used[i].value("shape", ""), &error);
        if (!shape) throw NeedsRegrade("the grade's " + prec + " shape " + used[i].dump() + " cannot be read: " + error);
        out.push_back({*shape, cfg.scoring.shapes[i].weight});
    }
    return out;
}

VariantOutcome variant_outcome(const json& r, const json& baselines, const ReferenceSpeeds& refs,
                               const std::string& stage, const std::string& variant, Precision p) {
    VariantOutcome vo;
    vo.variant = variant;
    // A timed result keeps its check's disposition apart (a failure while timed is the result's own).
    const bool timed = r.contains("check_disposition");
    vo.check = parse_disposition(timed ? r.value("check_disposition", "") : r.value("disposition", ""))
                   .value_or(Disposition::crashed);
    vo.problem = timed ? "" : r.value("problem", "");
    const int inputs = inputs_of(stage, variant, p);
    for (const json& t : r.value("bench", json::array())) {
        const Timing tm = timing_from_json(t);
        ShapeSpeed sp;
        sp.shape = tm.shape;
        sp.disposition = tm.disposition;
        sp.gflops = tm.gflops;
        sp.naive_gflops = baseline_gflops(baselines, tm.shape, "naive");
        sp.cublas_gflops = baseline_gflops(baselines, tm.shape, tm.cublas_item.empty() ? "cublas" : tm.cublas_item);
        const auto ref = refs.find({stage, precision_name(p), inputs, tm.shape.dims()});
        sp.reference_gflops = ref != refs.end() ? ref->second : 0;
        vo.speeds.push_back(sp);
        if (tm.disposition != Disposition::passed && vo.problem.empty())
            vo.problem = "while timed at " + tm.shape.dims() + ": " + tm.problem;
    }
    return vo;
}

}  // namespace

DocumentScore score_document(const json& doc, const CourseConfig& cfg) {
    DocumentScore out;
    const json& results = doc.value("results", json::array());
    const ReferenceSpeeds refs = reference_speeds(doc.value("reference", json::array()));
    std::vector<StageScore> rows;
    for (Precision p : {Precision::f32, Precision::f64}) {
        const std::string prec = precision_name(p);
        ScoringConfig scoring = cfg.scoring;
        scoring.shapes = graded_shapes(doc, p, cfg);
        out.shapes[p] = scoring.shapes;
        const json& baselines = doc.value("baselines", json::object()).value(prec, json::array());
        for (const StageInfo& st : stages(Side::submission)) {
            const auto rubric = cfg.scoring.stages.find(st.rubric_key);
            if (rubric == cfg.scoring.stages.end())
                throw ConfigError(std::string("course.toml has no [scoring.stages.") + st.rubric_key + "] table: the stage " +
                                  st.name + " cannot be scored");
            std::vector<VariantOutcome> variants;
            std::string no_gpu_problem;
            for (const StageVariant& v : st.variants) {
                VariantOutcome vo;
                vo.variant = v.label;
                for (const json& r : results)
                    if (r.value("stage", "") == st.name && r.value("variant", "") == v.label && r.value("precision", "") == prec)
                        vo = variant_outcome(r, baselines, refs, st.name, v.label, p);
                if (vo.check == Disposition::no_gpu && no_gpu_problem.empty()) no_gpu_problem = vo.problem;
                variants.push_back(vo);
            }
            StageScore row = score_stage(st.name, p, rubric->second, scoring, variants);
            if (row.disposition == Disposition::no_gpu && !no_gpu_problem.empty()) row.note = no_gpu_problem;
            rows.push_back(row);
        }
    }
    out.score = total_score(rows);
    return out;
}

json scoring_config_json(const CourseConfig& cfg) {
    json shapes = json::array();
    for (const ScoringShape& s : cfg.scoring.shapes) shapes.push_back({{"shape", s.shape.dims()}, {"weight", s.weight}});
    json stages = json::object();
    for (const auto& [key, r] : cfg.scoring.stages)
        stages[key] = {{"correctness_points", {{"float", r.correctness_points.f32}, {"double", r.correctness_points.f64}}},
                       {"performance_points", {{"float", r.performance_points.f32}, {"double", r.performance_points.f64}}},
                       {"target_pct_reference", {{"float", r.target_pct_reference.f32}, {"double", r.target_pct_reference.f64}}},
                       {"extra_credit", r.extra_credit}};
    return {{"source", cfg.source},
            {"notes", cfg.notes},
            {"interpolation", interpolation_name(cfg.scoring.interpolation)},
            {"max_call_ms_at_peak", cfg.scoring.max_call_ms_at_peak},
            {"shapes", shapes},
            {"stages", stages}};
}

json measurement_json(const CourseConfig& cfg) {
    json shapes = json::array();
    for (const ScoringShape& s : cfg.scoring.shapes) shapes.push_back(s.shape.dims());
    const BenchConfig& b = cfg.bench;
    return {{"scoring_shapes", shapes},
            {"max_call_ms_at_peak", cfg.scoring.max_call_ms_at_peak},
            {"measure_reference", cfg.scoring.measure_reference},
            {"bench",
             {{"warmup", b.warmup},
              {"min_repetitions", b.min_repetitions},
              {"max_repetitions", b.max_repetitions},
              {"target_spread_pct", b.target_spread_pct},
              {"max_seconds", b.max_seconds},
              {"min_timed_ms", b.min_timed_ms},
              {"min_interval_ms", b.min_interval_ms},
              {"clear_l2", b.clear_l2},
              {"call_timeout_seconds", b.call_timeout_seconds}}}};
}

json rubric_only_json(const CourseConfig& cfg) {
    json weights = json::array();
    for (const ScoringShape& s : cfg.scoring.shapes) weights.push_back(s.weight);
    json full = scoring_config_json(cfg);
    return {{"interpolation", full["interpolation"]},
            {"weights", weights},
            {"stages", full["stages"]},
            {"gradescope_visibility", cfg.scoring.gradescope_visibility}};
}

}  // namespace gemmlab
