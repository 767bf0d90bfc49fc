// Tests of bound.h: the error ratio every element is judged by, at its edges.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "common/bound.h"
#include "common/vocabulary.h"

using namespace gemmlab;

namespace {
const double u32 = unit_roundoff(Precision::f32);
const double u64 = unit_roundoff(Precision::f64);
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

TEST_CASE("an exact match is 0, whatever the gauge") {
    CHECK(error_ratio(1.25, 1.25, 3.0, u32) == 0.0);
    CHECK(error_ratio(0.0, 0.0, 0.0, u32) == 0.0);    // alpha = 0 and C = 0: nothing to compare with
    CHECK(error_ratio(-0.0, 0.0, 0.0, u64) == 0.0);   // signed zeros are equal
    CHECK(within_bound(error_ratio(7.0, 7.0, 0.0, u32)));
}

TEST_CASE("the ratio is the error in units of u times the gauge") {
    CHECK(error_ratio(1.0 + 4 * u32, 1.0, 1.0, u32) == doctest::Approx(4.0));
    CHECK(error_ratio(10.0 - 8 * u32 * 10.0, 10.0, 10.0, u32) == doctest::Approx(8.0));
    CHECK(error_ratio(2.0, 2.0 + 8 * u64, 2.0, u64) == doctest::Approx(4.0));  // two ulps of 2.0
    // The error is measured against the gauge, not the value: cancellation does not inflate it.
    CHECK(error_ratio(1e-6 + 2 * u32 * 100.0, 1e-6, 100.0, u32) == doctest::Approx(2.0).epsilon(1e-6));
}

TEST_CASE("the threshold is inclusive, and allowed_error is the same bound in absolute terms") {
    CHECK(within_bound(kErrorThreshold));
    CHECK_FALSE(within_bound(std::nextafter(kErrorThreshold, kInf)));
    const double gauge = 123.0;
    CHECK(allowed_error(gauge, u32) == doctest::Approx(kErrorThreshold * u32 * gauge));
    CHECK(within_bound(error_ratio(1.0 + allowed_error(gauge, u32), 1.0, gauge, u32)));
    CHECK_FALSE(within_bound(error_ratio(1.0 + 2 * allowed_error(gauge, u32), 1.0, gauge, u32)));
}

TEST_CASE("a difference where the gauge is zero is infinitely wrong") {
    CHECK(std::isinf(error_ratio(1e-30, 0.0, 0.0, u32)));
    CHECK_FALSE(within_bound(error_ratio(1e-30, 0.0, 0.0, u32)));
    CHECK(std::isinf(error_ratio(1.0, 0.0, -0.0, u64)));
}

TEST_CASE("NaN and infinity never pass") {
    CHECK(std::isnan(error_ratio(kNaN, 1.0, 1.0, u32)));
    CHECK(std::isnan(error_ratio(1.0, kNaN, 1.0, u32)));
    CHECK_FALSE(within_bound(error_ratio(kNaN, 1.0, 1.0, u32)));
    CHECK_FALSE(within_bound(error_ratio(kNaN, 0.0, 0.0, u32)));  // NaN where the gauge is 0
    CHECK_FALSE(within_bound(error_ratio(kInf, 1.0, 1.0, u32)));
    CHECK_FALSE(within_bound(error_ratio(-kInf, 1.0, 1.0, u64)));
    CHECK_FALSE(within_bound(error_ratio(kInf, kInf, kInf, u32)));  // inf - inf is NaN
    CHECK_FALSE(within_bound(kNaN));
}

TEST_CASE("the threshold separates honest rounding from rounded inputs (docs/correctness.md)") {
    // Honest FP32 on the grader's data stays within a few u·G (worst of millions about 5); inputs
    // rounded to TF32 or half (u = 2^-11) err by about 2^13·0.4/sqrt(K) u·G per element.
    constexpr double kHonestWorst = 5.0;
    CHECK(kErrorThreshold >= 4 * kHonestWorst);
    const double tf32_typical_at_4096 = std::ldexp(1.0, 13) * 0.4 / std::sqrt(4096.0);
    CHECK(tf32_typical_at_4096 > kErrorThreshold);
}

TEST_CASE("one place for every variant's bound: the declared input precision decides it") {
    // FP32-accurate variants and every double version keep the ordinary bound.
    for (InputPrecision in : {InputPrecision::full, InputPrecision::tf32, InputPrecision::fp16}) {
        const ErrorBound d = error_bound(Precision::f64, in);
        CHECK(d.threshold == kErrorThreshold);
        CHECK(d.u == u64);
        CHECK(d.underflow_weight == 0);
        CHECK(std::string(d.inputs) == "fp64");
    }
    const ErrorBound full = error_bound(Precision::f32, InputPrecision::full);
    CHECK(full.threshold == kErrorThreshold);
    CHECK(full.u == u32);
    CHECK(full.underflow_weight == 0);
    CHECK(std::string(full.inputs) == "fp32");
    // TF32 and FP16 keep 11 significant bits: u_in = 2^-11 = 2^13 u, two operands, each rounded or
    // truncated (2·u_in): 32 + 4·2^13 = 32800 u·G.
    const ErrorBound tf32 = error_bound(Precision::f32, InputPrecision::tf32);
    const ErrorBound fp16 = error_bound(Precision::f32, InputPrecision::fp16);
    CHECK(tf32.threshold == doctest::Approx(32800));
    CHECK(fp16.threshold == doctest::Approx(32800));
    CHECK(std::string(tf32.inputs) == "tf32");
    CHECK(std::string(fp16.inputs) == "fp16");
    // Only FP16 has a narrower exponent range than FP32: its underflow term is 2·2^-25 = 2^-24 per
    // unit of |a| + |b|, expressed in the gauge's units (threshold · u).
    CHECK(tf32.underflow_weight == 0);
    CHECK(fp16.underflow_weight * fp16.threshold * fp16.u == doctest::Approx(std::ldexp(1.0, -24)));
    // The registry's variants carry it: a row of stages.h is all it takes.
    const StageVariant v{"x", {}, {}, InputPrecision::fp16};
    CHECK(error_bound(Precision::f32, v).threshold == fp16.threshold);
}

TEST_CASE("the tensor bounds: honest 11-bit inputs pass, 11-bit inputs declared as FP32 fail") {
    // An honest kernel with inputs rounded to nearest errs by at most 2·u_in·G (K = 1, both operands
    // at their worst), truncated ones by 4·u_in·G: both within the bound of TF32/FP16 variants.
    const ErrorBound in11 = error_bound(Precision::f32, InputPrecision::tf32);
    const double gauge = 0.75;
    const double u_in = std::ldexp(1.0, -11);
    CHECK(within_bound(error_ratio(1.0 + 2 * u_in * gauge, 1.0, gauge, in11.u), in11.threshold));
    CHECK(within_bound(error_ratio(1.0 + 4 * u_in * gauge, 1.0, gauge, in11.u), in11.threshold));
    CHECK_FALSE(within_bound(error_ratio(1.0 + 4.01 * u_in * gauge, 1.0, gauge, in11.u), in11.threshold));
    // The same kernel's typical error at K = 4096 (about 2^13·0.4/sqrt(K) u·G) fails the FP32 bound
    // that the 3xtf32 variant declares.
    const ErrorBound fp32 = error_bound(Precision::f32, InputPrecision::full);
    CHECK_FALSE(within_bound(std::ldexp(1.0, 13) * 0.4 / std::sqrt(4096.0), fp32.threshold));
    CHECK(allowed_error(gauge, in11.u, in11.threshold) == doctest::Approx(in11.threshold * in11.u * gauge));
}
