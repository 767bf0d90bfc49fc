// GPU tests of the judge's check engine (judge/check_engine.h): every stage is called in a runner
// process (gemmlab-stages for the submission built beside this binary — student/ —, gemmlab-baselines
// for the reference) and judged in the judge's own context.
#include <string>
#include <vector>

#include "common/bound.h"
#include "common/check_result.h"
#include "common/shapes.h"
#include "common/sides.h"
#include "gpu_test.h"
#include "judge/check_engine.h"
#include "judge/pipeline.h"

using namespace gemmlab;
using nlohmann::json;

namespace {

Shape shape(int M, int N, int K, double alpha, double beta, int lda = 0, int ldb = 0, int ldc = 0) {
    Shape s;
    s.M = M, s.N = N, s.K = K, s.alpha = alpha, s.beta = beta, s.lda = lda, s.ldb = ldb, s.ldc = ldc;
    return s;
}

json check(GpuContext& ctx, Side side, const std::string& stage, const std::string& variant, Precision p,
           const std::vector<Shape>& shapes) {
    CheckRun run;
    run.side = side, run.stage = stage, run.variant = variant, run.precision = p, run.shapes = shapes;
    run.limits.idle_seconds = 60;
    return collect_stage_run(stage, variant, p, shapes.size(), check_stage_run(ctx, run, nullptr));
}

}  // namespace

GPU_TEST_CASE("the naive stage passes in its runner on odd shapes, both precisions, far below the bound") {
    GpuContext ctx(12345);
    const std::vector<Shape> shapes = {shape(1, 1, 1, 1.5, -0.75), shape(33, 31, 65, 1.0, 0.0),
                                       shape(129, 127, 131, -0.5, 1.0, 136, 130, 133), shape(67, 45, 1, 2.0, 0.0),
                                       shape(1000, 8, 200, 1.5, -0.75), shape(40, 40, 40, 0.0, 2.0)};
    for (Precision p : {Precision::f32, Precision::f64}) {
        const json r = check(ctx, Side::submission, "naive", "", p, shapes);
        CHECK_MESSAGE(r["disposition"] == "passed", r.dump());
        REQUIRE(r["cases"].size() == shapes.size());
        for (const json& c : r["cases"]) CHECK(c["max_error_ratio"].get<double>() < 8.0);
        CHECK(r["process"]["sandbox"]["seccomp"] == "on");
    }
}

GPU_TEST_CASE("untouched stubs report not implemented, after one case") {
    GpuContext ctx(7);
    for (const char* name : {"tiled", "unrolled", "pitched", "reuse", "tensor"}) {
        CAPTURE(name);
        const StageInfo* st = find_stage(Side::submission, name);
        REQUIRE(st);
        const json r = check(ctx, Side::submission, name, st->variants[0].label, Precision::f32,
                             {shape(33, 31, 17, 1.5, -0.75), shape(8, 8, 8, 1, 0)});
        CHECK(r["disposition"] == "not_implemented");
        CHECK(r["cases"].size() == 1);
        CHECK(r["problem"].get<std::string>().find("not implemented") != std::string::npos);
    }
}

GPU_TEST_CASE("every reference stage passes every shape of the full set in the grader's own runner") {
    GpuContext ctx(202);
    const std::vector<Shape> shapes = check_shapes(false, 202);
    for (const StageInfo& st : stages(Side::reference)) {
        for (const StageVariant& v : st.variants) {
            for (Precision p : {Precision::f32, Precision::f64}) {
                const json r = check(ctx, Side::reference, st.name, v.label, p, shapes);
                const std::string label = std::string(st.name) + (v.label[0] ? "/" : "") + v.label;
                CAPTURE(label);
                CAPTURE(precision_name(p));
                CHECK_MESSAGE(r["disposition"] == "passed", r["problem"].get<std::string>());
                double worst = 0;
                for (const json& c : r["cases"])
                    if (c["max_error_ratio"].is_number()) worst = std::max(worst, c["max_error_ratio"].get<double>());
                // Full-precision arithmetic stays far below 32 u·G; 3xTF32 drops a_lo·b_lo (up to ~9 u·G at
                // K = 1, docs/correctness.md); rounded inputs stay below half their bound.
                const ErrorBound bound = error_bound(p, v);
                if (bound.threshold > kErrorThreshold) CHECK(worst < bound.threshold / 2 + kErrorThreshold);
                else if (st.tensor_cores && p == Precision::f32) CHECK(worst < kErrorThreshold / 2);
                else CHECK(worst < kErrorThreshold / 4);
                MESSAGE(label << " " << precision_name(p) << ": worst " << worst << " u·G, " << r["seconds"] << " s");
            }
        }
    }
}
