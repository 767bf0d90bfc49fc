// score.cpp — the scoring rules of score.h.
#include "judge/score.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace gemmlab {

double round_points(double v) { return std::round(v * 100.0) / 100.0; }

double performance_fraction(double gflops, double naive, double target, Interpolation how) {
    // No speed, or no target (cuBLAS could not be timed): nothing to earn.
    if (!(gflops > 0) || !(target > 0)) return 0.0;
    if (gflops >= target) return 1.0;
    if (!(naive > 0) || gflops <= naive) return 0.0;
    // target <= naive cannot be reached "from naive": only reaching target itself counts (above).
    if (target <= naive) return 0.0;
    const double f = how == Interpolation::log ? std::log(gflops / naive) / std::log(target / naive)
                                               : (gflops - naive) / (target - naive);
    return std::clamp(f, 0.0, 1.0);
}

namespace {

const ShapeSpeed* find_speed(const VariantOutcome& v, const Shape& s) {
    for (const ShapeSpeed& sp : v.speeds)
        if (sp.shape.M == s.M && sp.shape.N == s.N && sp.shape.K == s.K) return &sp;
    return nullptr;
}

// A wrong value in a timed call is a correctness failure, like one in the check.
bool wrong_while_timed(const VariantOutcome& v) {
    for (const ShapeSpeed& sp : v.speeds)
        if (sp.disposition == Disposition::failed || sp.disposition == Disposition::out_of_bounds) return true;
    return false;
}

// Whether `a` ran faster than `b` at the headline shape (the first scoring shape).
bool faster_at_headline(const VariantOutcome& a, const VariantOutcome& b, const std::vector<ScoringShape>& shapes) {
    if (shapes.empty()) return false;
    const ShapeSpeed *sa = find_speed(a, shapes.front().shape), *sb = find_speed(b, shapes.front().shape);
    return sa && sb && sa->gflops > sb->gflops;
}

std::string fmt(double v, int digits = 3) {
    std::ostringstream os;
    os.precision(digits);
    os << v;
    return os.str();
}

}  // namespace

Disposition bench_disposition(const VariantOutcome& v, const std::vector<ScoringShape>& shapes) {
    std::vector<Disposition> ds;
    for (const ScoringShape& ws : shapes) {
        const ShapeSpeed* sp = find_speed(v, ws.shape);
        ds.push_back(sp ? sp->disposition : Disposition::skipped);
    }
    // A shape that was not timed at all makes the timing incomplete: it cannot count as passed.
    const Disposition worst = combine(ds);
    const bool incomplete = std::find(ds.begin(), ds.end(), Disposition::skipped) != ds.end();
    return worst == Disposition::passed && incomplete ? Disposition::skipped : worst;
}

StageScore score_stage(const std::string& stage, Precision prec, const StageRubric& rubric, const ScoringConfig& cfg,
                       const std::vector<VariantOutcome>& all_variants) {
    StageScore s;
    s.stage = stage;
    s.precision = precision_name(prec);
    s.correctness_max = rubric.correctness_points.get(prec);
    s.performance_max = rubric.performance_points.get(prec);
    s.extra_credit = rubric.extra_credit;
    // Variants this GPU or build cannot run are not part of the stage here (score.h).
    std::vector<VariantOutcome> variants;
    std::string unsupported_why;
    for (const VariantOutcome& v : all_variants)
        if (v.check == Disposition::unsupported) {
            if (unsupported_why.empty()) unsupported_why = (v.variant.empty() ? "" : v.variant + ": ") + v.problem;
        } else {
            variants.push_back(v);
        }
    if (variants.empty()) {
        s.correctness_max = s.performance_max = 0;
        s.disposition = all_variants.empty() ? Disposition::skipped : Disposition::unsupported;
        s.note = all_variants.empty() ? "no variants to score" : "not scored on this GPU: " + unsupported_why;
        return s;
    }
    const double target_pct = rubric.target_pct_reference.get(prec);
    double total_weight = 0;
    for (const ScoringShape& ws : cfg.shapes) total_weight += ws.weight;

    int correct = 0;
    double best_f = -1;
    const VariantOutcome* best = nullptr;
    std::vector<Disposition> all;
    std::string first_problem, no_target;
    for (const VariantOutcome& v : variants) {
        const bool passed_check = counts_as_correct(v.check);
        const bool wrong_timed = passed_check && wrong_while_timed(v);
        const Disposition bench = passed_check ? bench_disposition(v, cfg.shapes) : Disposition::skipped;
        Disposition overall = v.check;
        if (passed_check && bench != Disposition::passed && bench != Disposition::skipped) overall = bench;
        all.push_back(overall);
        if (passed_check && !wrong_timed) ++correct;
        if (first_problem.empty() && overall != Disposition::passed && !v.problem.empty())
            first_problem = (v.variant.empty() ? "" : v.variant + ": ") + v.problem;
        if (!passed_check || wrong_timed || bench != Disposition::passed) continue;
        double f = 0;
        bool has_target = true;
        for (const ScoringShape& ws : cfg.shapes) {
            const ShapeSpeed* sp = find_speed(v, ws.shape);
            if (!(sp->reference_gflops > 0)) {
                has_target = false;
                if (no_target.empty()) no_target = ws.shape.dims();
            }
            f += ws.weight * performance_fraction(sp->gflops, sp->naive_gflops,
                                                  target_pct / 100.0 * sp->reference_gflops, cfg.interpolation);
        }
        if (!has_target) f = 0;
        f = total_weight > 0 ? f / total_weight : 0;
        // The variant that earns the most points counts; of variants that earn as many (each at its
        // target, say), the faster at the headline shape, the one the tables show.
        const double points = round_points(s.performance_max * std::max(f, 0.0));
        const double best_points = best ? round_points(s.performance_max * std::max(best_f, 0.0)) : -1;
        if (!best || points > best_points || (points == best_points && faster_at_headline(v, *best, cfg.shapes)))
            best_f = f, best = &v;
    }
    s.correctness = round_points(s.correctness_max * correct / static_cast<double>(variants.size()));
    if (best) {
        s.variant_used = best->variant;
        s.disposition = Disposition::passed;
        std::ostringstream note;
        if (!no_target.empty() && best_f <= 0 && s.performance_max > 0) {
            // No reference speed, no target: the points are not given and not taken (score.h).
            s.performance_max = 0;
            note << "performance not scored: the reference solution was not timed at " << no_target
                 << " in this grade";
        }
        s.performance = round_points(s.performance_max * std::max(best_f, 0.0));
        if (!cfg.shapes.empty())
            if (const ShapeSpeed* head = find_speed(*best, cfg.shapes.front().shape)) {
                s.gflops = head->gflops;
                s.x_naive = head->naive_gflops > 0 ? head->gflops / head->naive_gflops : 0;
                s.pct_cublas = head->cublas_gflops > 0 ? 100.0 * head->gflops / head->cublas_gflops : 0;
                s.pct_reference = head->reference_gflops > 0 ? 100.0 * head->gflops / head->reference_gflops : 0;
                s.target_gflops = target_pct / 100.0 * head->reference_gflops;
            }
        if (s.performance_max > 0)
            note << fmt(s.pct_reference) << "% of the reference at " << cfg.shapes.front().shape.dims()
                 << " (full marks at " << fmt(target_pct) << "%), " << fmt(s.x_naive) << "x naive";
        if (correct < static_cast<int>(variants.size()))
            note << (note.tellp() > 0 ? "; " : "") << correct << " of " << variants.size()
                 << " variants correct" << (first_problem.empty() ? "" : " (" + first_problem + ")");
        if (variants.size() < all_variants.size())
            note << (note.tellp() > 0 ? "; " : "") << all_variants.size() - variants.size()
                 << " variant(s) not scored on this GPU (" << unsupported_why << ")";
        s.note = note.str();
    } else {
        s.disposition = combine(all);
        if (s.disposition == Disposition::passed) s.disposition = Disposition::skipped;  // correct, but never timed
        s.note = s.disposition == Disposition::not_implemented ? "not implemented yet"
                 : !first_problem.empty()                     ? first_problem
                                                              : "no timing of this stage counted";
        if (correct > 0 && correct < static_cast<int>(variants.size()))
            s.note = std::to_string(correct) + " of " + std::to_string(variants.size()) + " variants correct; " + s.note;
    }
    return s;
}

nlohmann::json to_json(const Score& score) {
    nlohmann::json rows = nlohmann::json::array();
    for (const StageScore& r : score.stages)
        rows.push_back({{"stage", r.stage},
                        {"precision", r.precision},
                        {"variant_used", r.variant_used},
                        {"disposition", disposition_name(r.disposition)},
                        {"correctness", r.correctness},
                        {"correctness_max", r.correctness_max},
                        {"performance", r.performance},
                        {"performance_max", r.performance_max},
                        {"gflops", r.gflops},
                        {"x_naive", r.x_naive},
                        {"pct_cublas", r.pct_cublas},
                        {"pct_reference", r.pct_reference},
                        {"target_gflops", r.target_gflops},
                        {"note", r.note},
                        {"extra_credit", r.extra_credit}});
    return {{"total", score.total}, {"max", score.max}, {"stages", rows}};
}

Score score_from_json(const nlohmann::json& j) {
    Score s;
    s.total = j.at("total");
    s.max = j.at("max");
    for (const nlohmann::json& r : j.at("stages")) {
        StageScore row;
        row.stage = r.at("stage");
        row.precision = r.at("precision");
        row.variant_used = r.value("variant_used", "");
        row.disposition = parse_disposition(r.value("disposition", "")).value_or(Disposition::crashed);
        row.correctness = r.at("correctness");
        row.correctness_max = r.at("correctness_max");
        row.performance = r.at("performance");
        row.performance_max = r.at("performance_max");
        row.gflops = r.value("gflops", 0.0);
        row.x_naive = r.value("x_naive", 0.0);
        row.pct_cublas = r.value("pct_cublas", 0.0);
        row.pct_reference = r.value("pct_reference", 0.0);
        row.target_gflops = r.value("target_gflops", 0.0);
        row.note = r.value("note", "");
        row.extra_credit = r.value("extra_credit", false);
        s.stages.push_back(row);
    }
    return s;
}

std::vector<ScoringShape> shapes_for_gpu(const ScoringConfig& cfg, double peak_gflops, std::string* why) {
    constexpr int kSmallestDimension = 256;
    std::vector<ScoringShape> out = cfg.shapes;
    if (why) why->clear();
    if (!(cfg.max_call_ms_at_peak > 0) || !(peak_gflops > 0) || out.empty()) return out;
    auto largest_ms = [&] {
        double ms = 0;
        for (const ScoringShape& s : out) ms = std::max(ms, s.shape.flops() / (peak_gflops * 1e6));
        return ms;
    };
    auto smallest_dim = [&] {
        int d = 1 << 30;
        for (const ScoringShape& s : out) d = std::min({d, s.shape.M, s.shape.N, s.shape.K});
        return d;
    };
    int halvings = 0;
    while (largest_ms() > cfg.max_call_ms_at_peak && smallest_dim() >= 2 * kSmallestDimension) {
        for (ScoringShape& s : out) {
            s.shape.M /= 2, s.shape.N /= 2, s.shape.K /= 2;
            s.shape.lda = s.shape.ldb = s.shape.ldc = 0;
        }
        ++halvings;
    }
    if (halvings > 0 && why) {
        std::ostringstream os;
        os << cfg.shapes.front().shape.dims() << " would take " << fmt(cfg.shapes.front().shape.flops() / (peak_gflops * 1e6))
           << " ms per call even at this GPU's peak of " << fmt(peak_gflops / 1e3) << " TFLOPS (more than max_call_ms_at_peak = "
           << fmt(cfg.max_call_ms_at_peak) << "): graded at " << out.front().shape.dims() << " instead, every shape's sides halved "
           << halvings << " time(s)";
        *why = os.str();
    }
    return out;
}

Score total_score(std::vector<StageScore> rows) {
    Score sc;
    for (const StageScore& r : rows) {
        sc.total += r.correctness + r.performance;
        if (!r.extra_credit) sc.max += r.correctness_max + r.performance_max;
    }
    sc.total = round_points(sc.total);
    sc.max = round_points(sc.max);
    sc.stages = std::move(rows);
    return sc;
}

}  // namespace gemmlab
