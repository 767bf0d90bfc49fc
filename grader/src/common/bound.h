// bound.h — the correctness criterion, shared by host code and the GPU compare kernel.
//
// For every element, with the gauge  G = |alpha|·(|A||B|) + |beta|·|C_in|  (computed in double)
// and u the unit roundoff of the type under test (2^-24 for float, 2^-53 for double):
//
//     ratio = |C - C_ref| / (u · G)        and the element passes when ratio <= threshold.
//
// The threshold is kErrorThreshold (32) for every stage that multiplies in its own precision.
// docs/correctness.md derives it: an honest kernel in the tested precision, whatever its summation
// order, stays near 1 on the grader's zero-mean random data (the worst element of 16M rarely above
// 5), while rounding the inputs to TF32 or half precision (u = 2^-11) gives ratios in the hundreds
// to thousands for every K the grader uses. NaN never passes.
//
// A variant of a tensor-core stage may declare that its float version rounds A and B to a
// narrower format first (gemmlab/stages.h, InputPrecision). Its bound adds what that rounding can
// cost and nothing more: each operand carries a relative error of at most 2·u_in (u_in for round
// to nearest, 2·u_in when the tensor cores drop the low bits of FP32 data themselves), so a
// product carries at most 4·u_in of it, and the sum of those over k at most 4·u_in·G:
//
//     threshold = 32 + kInputRoundingUnits · u_in / u        (u_in = 2^-11 for TF32 and FP16)
//
// FP16 also has a narrow exponent range: below 2^-14 its spacing stops shrinking (subnormals, every
// 2^-24), so a tiny a loses more than u_in·|a| — at most 2^-25 to rounding, 2^-24 to truncation.
// That absolute error η per operand adds 2η·(|a| + |b|) to a product's; summed over k it is
// 2η·|alpha|·(Σ_k |a_ik| + Σ_k |b_kj|). It is folded into the gauge, so that the test stays one
// ratio against one threshold:
//
//     G' = G + w·|alpha|·(Σ_k |a_ik| + Σ_k |b_kj|),   w = 2η / (threshold · u)
//
// (w = 0, G' = G, for every format with FP32's exponent range: FP32 itself and TF32.)
//
// The ratio stays in units of the output type's u, so the errors of every variant can be compared
// in one table. docs/correctness.md derives it and lists the errors measured.
#pragma once

#include <cmath>

#include "common/vocabulary.h"
#include "gemmlab/stages.h"

#ifdef __CUDACC__
#define GEMMLAB_HD __host__ __device__
#else
#define GEMMLAB_HD
#endif

namespace gemmlab {

constexpr double kErrorThreshold = 32.0;

// A and B each rounded (or truncated) to the input format: at most 2·u_in each, 4·u_in a product.
constexpr double kInputRoundingUnits = 4.0;

// The unit roundoff of the output types, and of the narrow input formats (10 stored mantissa bits:
// TF32 and FP16 alike keep 11 significant bits).
constexpr double kUnitRoundoffFloat = 0x1p-24;
constexpr double kUnitRoundoffDouble = 0x1p-53;
constexpr double kUnitRoundoffTf32 = 0x1p-11;
constexpr double kUnitRoundoffFp16 = 0x1p-11;
// The largest absolute rounding error of a value below the normal range of the input format (half
// the spacing of its subnormals); 0 for formats with FP32's exponent range, whose underflow the
// FP32 bound does not count either.
constexpr double kUnderflowFp16 = 0x1p-25;
// Each operand rounded or truncated: at most 2·η of absolute error each.
constexpr double kInputUnderflowUnits = 2.0;

// How a stage variant is judged in one precision: the unit of the ratio, the largest ratio that
// passes, and the weight w of the underflow term in the gauge (0: the gauge is G itself).
// `inputs` names the declared input precision ("fp32", "fp64", "tf32", "fp16").
struct ErrorBound {
    double u = kUnitRoundoffFloat;
    double threshold = kErrorThreshold;
    const char* inputs = "fp32";
    double underflow_weight = 0;
};

constexpr double input_unit_roundoff(InputPrecision in, double u_output) {
    return in == InputPrecision::tf32 ? kUnitRoundoffTf32 : in == InputPrecision::fp16 ? kUnitRoundoffFp16 : u_output;
}

constexpr const char* input_precision_name(InputPrecision in, bool is_double) {
    return is_double ? "fp64" : in == InputPrecision::tf32 ? "tf32" : in == InputPrecision::fp16 ? "fp16" : "fp32";
}

// The one place the bound of a variant is computed. The double version of every variant multiplies
// in full FP64 (stages.h), so only float looks at the declared inputs.
constexpr ErrorBound error_bound(bool is_double, InputPrecision float_inputs) {
    const double u = is_double ? kUnitRoundoffDouble : kUnitRoundoffFloat;
    const InputPrecision in = is_double ? InputPrecision::full : float_inputs;
    const double u_in = input_unit_roundoff(in, u);
    const double threshold = u_in > u ? kErrorThreshold + kInputRoundingUnits * (u_in / u) : kErrorThreshold;
    const double eta = in == InputPrecision::fp16 ? kUnderflowFp16 : 0.0;
    return ErrorBound{u, threshold, input_precision_name(in, is_double), kInputUnderflowUnits * eta / (threshold * u)};
}
inline ErrorBound error_bound(Precision p, InputPrecision float_inputs) {
    return error_bound(p == Precision::f64, float_inputs);
}
inline ErrorBound error_bound(Precision p, const StageVariant& v) { return error_bound(p, v.float_inputs); }

// The error of one element in units of u·G. An exact match is 0 even where G is 0; any other
// difference where G is 0 is infinite; NaN in either value gives NaN (which fails every test).
GEMMLAB_HD inline double error_ratio(double got, double expected, double gauge, double u) {
    const double diff = fabs(got - expected);
    if (diff == 0.0) return 0.0;
    if (!(gauge > 0.0)) return (diff == diff) ? INFINITY : diff;
    return diff / (u * gauge);
}

GEMMLAB_HD inline bool within_bound(double ratio, double threshold = kErrorThreshold) { return ratio <= threshold; }

// The absolute error allowed at an element with gauge G.
GEMMLAB_HD inline double allowed_error(double gauge, double u, double threshold = kErrorThreshold) {
    return threshold * u * gauge;
}

}  // namespace gemmlab
