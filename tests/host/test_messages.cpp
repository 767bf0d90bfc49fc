// Tests of check_result.h: what a student reads when a case fails (plain and coloured), the
// picture of wrong elements, and the JSON record of a case.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/bound.h"
#include "common/check_result.h"

using namespace gemmlab;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

CaseResult wrong_values_case() {
    CaseResult r;
    r.shape.M = 33, r.shape.N = 31, r.shape.K = 65, r.shape.ldc = 40;
    r.shape.alpha = 1.5, r.shape.beta = -0.75;
    r.shape.why = "tile size + 1 / - 1";
    r.disposition = Disposition::failed;
    r.problem = "wrong values";
    r.wrong = 62;
    r.max_ratio = 4096.5;
    r.worst = {32, 17, 1.25, 0.5, 3.1e-5, 4096.5};
    return r;
}

}  // namespace

TEST_CASE("a failure names stage, precision, shape, alpha, beta, the worst element and the count") {
    const std::string text = describe_failure("tiled/16", Precision::f64, wrong_values_case(), MessageStyle{false});
    CHECK(contains(text, "failed: stage tiled/16, double"));
    CHECK(contains(text, "M=33 N=31 K=65"));
    CHECK(contains(text, "ldc=40"));
    CHECK(contains(text, "alpha=1.5"));
    CHECK(contains(text, "beta=-0.75"));
    CHECK(contains(text, "[tile size + 1 / - 1]"));
    CHECK(contains(text, "62 of 1023 elements are wrong"));
    CHECK(contains(text, "worst: C[32][17] expected 1.25, got 0.5"));
    CHECK(contains(text, "allowed error 3.1e-05"));
    CHECK(contains(text, "4.1e+03 u·G"));
    CHECK(contains(text, "bound 32 u·G"));
}

TEST_CASE("plain output has no escape codes; a terminal gets colours") {
    const CaseResult r = wrong_values_case();
    const std::string plain = describe_failure("naive", Precision::f32, r, MessageStyle{false});
    const std::string color = describe_failure("naive", Precision::f32, r, MessageStyle{true});
    CHECK(plain.find('\033') == std::string::npos);
    CHECK(contains(color, "\033[31;1mfailed\033[0m"));
    CHECK(paint_disposition(Disposition::passed, MessageStyle{true}) == "\033[32mpassed\033[0m");
    CHECK(paint_disposition(Disposition::passed, MessageStyle{false}) == "passed");
    CHECK(paint_disposition(Disposition::timed_out, MessageStyle{false}) == "timed_out");
}

TEST_CASE("out-of-bounds writes are reported with where they landed") {
    CaseResult r;
    r.shape.M = 3, r.shape.N = 5, r.shape.K = 2;
    r.disposition = Disposition::out_of_bounds;
    r.problem = "the stage wrote outside C";
    r.oob_writes = 2;
    r.oob_first = "row 0, column 5 (a padding column: N = 5, ldc = 8)";
    r.oob_last = "row 3, column 0 (past the last row: M = 3)";
    const std::string text = describe_failure("unrolled", Precision::f32, r, MessageStyle{false});
    CHECK(contains(text, "out_of_bounds: stage unrolled, float"));
    CHECK(contains(text, "the stage wrote outside C"));
    CHECK(contains(text, "2 write(s) outside C: first at row 0, column 5 (a padding column"));
    CHECK(contains(text, "last at row 3, column 0 (past the last row: M = 3)"));
}

TEST_CASE("NaN from a beta = 0 case comes with a hint about reading C") {
    CaseResult r = wrong_values_case();
    r.shape.beta = 0.0;
    r.worst.got = NAN;
    r.worst.ratio = INFINITY;
    const std::string text = describe_failure("reuse", Precision::f32, r, MessageStyle{false});
    CHECK(contains(text, "got nan"));
    CHECK(contains(text, "fills C with NaN"));
    r.shape.beta = 1.0;
    CHECK_FALSE(contains(describe_failure("reuse", Precision::f32, r, MessageStyle{false}), "fills C with NaN"));
}

TEST_CASE("error_picture marks exactly the cells that hold wrong elements") {
    const int M = 10, N = 12;  // small: one character per element
    std::vector<uint8_t> mask(M * N, 0);
    mask[0 * N + 0] = 1;
    mask[9 * N + 11] = 1;
    mask[4 * N + 7] = 1;
    const auto pic = error_picture(mask, M, N);
    REQUIRE(pic.size() == 1 + M);
    CHECK(contains(pic[0], "1x1 block"));
    for (int i = 0; i < M; ++i) {
        const std::string row = pic[1 + i].substr(2);  // after the indent
        REQUIRE(row.size() == N);
        for (int j = 0; j < N; ++j) {
            CAPTURE(i);
            CAPTURE(j);
            CHECK((row[j] == 'X') == bool(mask[i * N + j]));
        }
    }
}

TEST_CASE("error_picture of a large result uses power-of-two blocks that line up with tiles") {
    const int M = 129, N = 127;  // a wrong last row and a wrong last column, like a missing edge guard
    std::vector<uint8_t> mask(M * N, 0);
    for (int j = 0; j < N; ++j) mask[(M - 1) * N + j] = 1;
    for (int i = 0; i < M; ++i) mask[i * N + (N - 1)] = 1;
    const auto pic = error_picture(mask, M, N);
    CHECK(contains(pic[0], "one character per 8x8 block"));
    const int rows = (M + 7) / 8, cols = (N + 7) / 8;
    REQUIRE(pic.size() == size_t(1 + rows));
    for (int r = 0; r < rows; ++r) {
        const std::string row = pic[1 + r].substr(2);
        REQUIRE(row.size() == size_t(cols));
        for (int c = 0; c < cols; ++c) {
            const bool expect = r == rows - 1 || c == cols - 1;
            CHECK((row[c] == 'X') == expect);
        }
    }
    for (const std::string& line : pic) CHECK(line.size() <= 2 + 48 + 80);  // fits a terminal
}

TEST_CASE("a case survives the JSON round trip, NaN and infinity included") {
    CaseResult r = wrong_values_case();
    r.worst.got = NAN;
    r.max_ratio = INFINITY;
    r.oob_writes = 3;
    r.oob_first = "a";
    r.oob_last = "b";
    r.picture = {"head", "  .X"};
    const json j = to_json(r);
    CHECK(j["disposition"] == "failed");
    CHECK(j["worst"]["got"] == "nan");
    CHECK(j["max_error_ratio"] == "inf");
    const json again = json::parse(j.dump());  // what the parent reads from the pipe
    const CaseResult back = case_from_json(again);
    CHECK(back.disposition == Disposition::failed);
    CHECK(back.shape.M == 33);
    CHECK(back.shape.eff_ldc() == 40);
    CHECK(back.shape.alpha == 1.5);
    CHECK(back.wrong == 62);
    CHECK(back.worst.row == 32);
    CHECK(back.worst.col == 17);
    CHECK(std::isnan(back.worst.got));
    CHECK(std::isinf(back.max_ratio));
    CHECK(back.oob_writes == 3);
    CHECK(back.picture == r.picture);
}

TEST_CASE("a failure names the variant's bound; rounded inputs under the FP32 bound get a hint") {
    // An FP16 kernel handed in as the FP32-accurate tensor variant: bound 32, a hint about 3xTF32.
    CaseResult r = wrong_values_case();
    r.bound = kErrorThreshold, r.inputs = "fp32";
    const std::string split = describe_failure("tensor/3xtf32", Precision::f32, r, MessageStyle{false});
    CHECK(contains(split, "failed: stage tensor/3xtf32, float"));
    CHECK(contains(split, "(error is 4.1e+03 u·G, bound 32 u·G)"));
    CHECK(contains(split, "splits each operand into a high and a low TF32 part"));
    // A variant that declares 11-bit inputs says so with its wider bound.
    r.bound = error_bound(Precision::f32, InputPrecision::fp16).threshold, r.inputs = "fp16";
    const std::string fp16 = describe_failure("tensor/fp16", Precision::f32, r, MessageStyle{false});
    CHECK(contains(fp16, "bound 3.28e+04 u·G for fp16 inputs)"));
    CHECK_FALSE(contains(fp16, "hint: if A and B"));
    // No hint in double (rounded inputs give ratios of 2^29 there), nor for errors of another kind.
    r.bound = kErrorThreshold, r.inputs = "fp64";
    CHECK_FALSE(contains(describe_failure("reuse", Precision::f64, r, MessageStyle{false}), "hint: if A and B"));
    r.inputs = "fp32", r.worst.ratio = 5e9;
    CHECK_FALSE(contains(describe_failure("reuse", Precision::f32, r, MessageStyle{false}), "hint: if A and B"));
}

TEST_CASE("the bound of a case survives its JSON") {
    CaseResult r = wrong_values_case();
    r.bound = 32800, r.inputs = "tf32";
    const CaseResult back = case_from_json(json::parse(to_json(r).dump()));
    CHECK(back.bound == 32800);
    CHECK(back.inputs == "tf32");
    CHECK(case_from_json(json::parse(R"({"shape": {"M": 1, "N": 1, "K": 1}, "disposition": "passed"})")).bound ==
          kErrorThreshold);  // results written before the field existed
}
