// check_stage.cpp — the child side of `gemmlab check` (one stage run, reported case by case) and
// `gemmlab-stages run` (one case in this process, for compute-sanitizer and debuggers).
#include "child/check_stage.h"

#include <iostream>
#include <stdexcept>
#include <type_traits>

#include "child/checker.h"
#include "child/gpu_context.h"
#include "common/check_result.h"
#include "common/cuda_check.h"
#include "common/selection.h"
#include "common/shapes.h"

namespace gemmlab {

using nlohmann::json;

namespace {

const char* side_name(Side s) { return s == Side::submission ? "submission" : "reference"; }

template <typename T>
int child_check_t(const StageInfo& st, const StageVariant& v, bool quick, uint64_t seed, const ReportChannel& rep) {
    const std::vector<Shape> shapes = check_shapes(quick, seed);
    const ErrorBound bound = error_bound(std::is_same_v<T, double>, v.float_inputs);
    rep.send({{"event", "start"}, {"cases", shapes.size()}});
    try {
        GpuContext ctx(seed);
        for (size_t i = 0; i < shapes.size(); ++i) {
            rep.send({{"event", "case_start"}, {"index", i}, {"shape", shape_to_json(shapes[i])}});
            CaseResult r;
            try {
                r = check_case<T>(ctx, st.operands, v.fns<T>(), shapes[i], bound);
            } catch (const CudaError& e) {
                // A fault in the stage's kernel surfaces at the grader's next CUDA call; the error
                // is sticky, so this case is the last one this process can run.
                r.shape = shapes[i];
                r.disposition = Disposition::crashed;
                r.problem = std::string("the stage crashed the GPU context: ") + e.what();
            }
            rep.send({{"event", "case"}, {"index", i}, {"result", to_json(r)}});
            if (r.disposition == Disposition::not_implemented || r.disposition == Disposition::crashed) break;
        }
    } catch (const CudaError& e) {
        rep.send({{"event", "fatal"}, {"error", e.what()}});
        rep.send({{"event", "done"}});
        return 1;
    }
    rep.send({{"event", "done"}});
    return 0;
}

}  // namespace

int child_check(Side side, const std::string& stage, const std::string& variant, Precision prec, bool quick,
                uint64_t seed, const ReportChannel& report) {
    const StageInfo* st = find_stage(side, stage);
    const StageVariant* v = st ? find_variant(*st, variant) : nullptr;
    if (!v) {
        report.send({{"event", "fatal"}, {"error", "no stage " + stage + "/" + variant + " on side " + side_name(side)}});
        return 2;
    }
    return prec == Precision::f32 ? child_check_t<float>(*st, *v, quick, seed, report)
                                  : child_check_t<double>(*st, *v, quick, seed, report);
}

int run_single(Side side, const std::string& stage, const std::string& variant, Precision prec, const Shape& shape,
               uint64_t seed, bool color) {
    const Selection sel = parse_selection(side, variant.empty() ? stage : stage + "/" + variant, precision_name(prec));
    std::vector<StageRun> runs = expand(side, sel);
    if (runs.empty()) throw std::invalid_argument("nothing to run");
    const StageRun& run = runs.front();
    GpuContext ctx(seed);
    const ErrorBound bound = error_bound(prec, *run.variant);
    const CaseResult r = prec == Precision::f32
                             ? check_case<float>(ctx, run.stage->operands, run.variant->fns<float>(), shape, bound)
                             : check_case<double>(ctx, run.stage->operands, run.variant->fns<double>(), shape, bound);
    if (r.disposition == Disposition::passed) {
        std::cout << paint_disposition(r.disposition, MessageStyle{color}) << ": " << run.label() << " "
                  << precision_name(prec) << " " << shape.label() << ", worst error " << r.max_ratio << " u·G (bound "
                  << r.bound << " u·G)\n";
        return 0;
    }
    std::cout << describe_failure(run.label(), prec, r, MessageStyle{color});
    return r.disposition == Disposition::not_implemented ? 0 : 1;
}

}  // namespace gemmlab
