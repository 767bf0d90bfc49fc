// Tests of bound.h: the error ratio every element is judged by, at its edges.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "common/bound.h"
#include "common/model.h"

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
