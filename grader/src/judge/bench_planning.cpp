// bench_planning.cpp — what a benchmark times and what its items are compared with (bench_planning.h).
#include "judge/bench_planning.h"

#include "common/sides.h"
#include "judge/score.h"

namespace gemmlab {

using nlohmann::json;

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
    plan.min_interval_ms = cfg.min_interval_ms;
    plan.clear_l2 = cfg.clear_l2;
    plan.seed = seed;
    return plan;
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

std::vector<Shape> scoring_shapes(const CourseConfig& cfg) {
    std::vector<Shape> shapes;
    for (const ScoringShape& s : cfg.scoring.shapes) shapes.push_back(s.shape);
    return shapes;
}

GradedShapes graded_shapes(const ScoringConfig& cfg, const GpuShape& gpu) {
    GradedShapes graded;
    for (Precision p : {Precision::f32, Precision::f64}) {
        std::string why;
        graded.shapes[p] = shapes_for_gpu(cfg, peak_gflops(p, gpu), &why);
        json list = json::array();
        for (const ScoringShape& s : graded.shapes[p]) list.push_back({{"shape", s.shape.dims()}, {"weight", s.weight}});
        graded.used[precision_name(p)] = {{"shapes", list}, {"why", why}};
        if (!why.empty()) graded.notes.push_back(std::string(precision_name(p)) + ": " + why);
    }
    return graded;
}

}  // namespace gemmlab
