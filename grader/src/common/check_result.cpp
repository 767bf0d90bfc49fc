// check_result.cpp — JSON, pictures and messages for checked cases (see check_result.h).
#include "common/check_result.h"

#include "common/bound.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace gemmlab {

namespace {
// The range of worst-element ratios that inputs rounded to TF32 or FP16 produce on the grader's data
// (docs/correctness.md: hundreds to thousands of u·G for every K of the set, up to 4·2^13 at K = 1,
// more where FP16 underflows on a tiny value).
constexpr double kRoundedInputsRatio[2] = {64, 1e6};
}  // namespace

json shape_to_json(const Shape& s) {
    return json{{"M", s.M},          {"N", s.N},         {"K", s.K},
                {"lda", s.eff_lda()}, {"ldb", s.eff_ldb()}, {"ldc", s.eff_ldc()},
                {"alpha", s.alpha},  {"beta", s.beta},   {"why", s.why}};
}

Shape shape_from_json(const json& j) {
    Shape s;
    s.M = j.at("M"), s.N = j.at("N"), s.K = j.at("K");
    s.lda = j.value("lda", 0), s.ldb = j.value("ldb", 0), s.ldc = j.value("ldc", 0);
    s.alpha = j.value("alpha", 1.0), s.beta = j.value("beta", 0.0);
    s.why = j.value("why", "");
    return s;
}

namespace {
// JSON has no NaN or infinity: write them as strings so nothing is lost.
json number(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return v;
}
double unnumber(const json& j) {
    if (j.is_string()) {
        const std::string s = j;
        if (s == "nan") return NAN;
        return s == "-inf" ? -INFINITY : INFINITY;
    }
    return j.get<double>();
}
}  // namespace

json to_json(const CaseResult& r) {
    json j{{"shape", shape_to_json(r.shape)},
           {"disposition", disposition_name(r.disposition)},
           {"problem", r.problem},
           {"max_error_ratio", number(r.max_ratio)},
           {"wrong_elements", r.wrong},
           {"bound", r.bound},
           {"seconds", r.seconds}};
    if (!r.inputs.empty()) j["inputs"] = r.inputs;
    if (r.worst.row >= 0)
        j["worst"] = {{"row", r.worst.row},           {"col", r.worst.col},
                      {"expected", number(r.worst.expected)}, {"got", number(r.worst.got)},
                      {"allowed", number(r.worst.allowed)},   {"ratio", number(r.worst.ratio)}};
    if (r.oob_writes)
        j["out_of_bounds"] = {{"writes", r.oob_writes}, {"first", r.oob_first}, {"last", r.oob_last}};
    if (!r.picture.empty()) j["picture"] = r.picture;
    return j;
}

CaseResult case_from_json(const json& j) {
    CaseResult r;
    r.shape = shape_from_json(j.at("shape"));
    r.disposition = parse_disposition(j.at("disposition").get<std::string>()).value_or(Disposition::crashed);
    r.problem = j.value("problem", "");
    r.max_ratio = j.contains("max_error_ratio") ? unnumber(j["max_error_ratio"]) : 0.0;
    r.wrong = j.value("wrong_elements", int64_t{0});
    r.seconds = j.value("seconds", 0.0);
    r.bound = j.value("bound", kErrorThreshold);
    r.inputs = j.value("inputs", "");
    if (j.contains("worst")) {
        const json& w = j["worst"];
        r.worst.row = w.at("row"), r.worst.col = w.at("col");
        r.worst.expected = unnumber(w.at("expected"));
        r.worst.got = unnumber(w.at("got"));
        r.worst.allowed = unnumber(w.at("allowed"));
        r.worst.ratio = unnumber(w.at("ratio"));
    }
    if (j.contains("out_of_bounds")) {
        r.oob_writes = j["out_of_bounds"].at("writes");
        r.oob_first = j["out_of_bounds"].value("first", "");
        r.oob_last = j["out_of_bounds"].value("last", "");
    }
    if (j.contains("picture")) r.picture = j["picture"].get<std::vector<std::string>>();
    return r;
}

std::vector<std::string> error_picture(const std::vector<uint8_t>& wrong_mask, int M, int N) {
    constexpr int kMaxWide = 48, kMaxTall = 24;
    int cell = 1;
    while ((N + cell - 1) / cell > kMaxWide || (M + cell - 1) / cell > kMaxTall) cell *= 2;
    const int rows = (M + cell - 1) / cell, cols = (N + cell - 1) / cell;
    std::vector<std::string> pic;
    std::ostringstream head;
    head << "wrong elements of C (" << M << "x" << N << "), one character per " << cell << "x" << cell
         << " block, X = some wrong:";
    pic.push_back(head.str());
    for (int r = 0; r < rows; ++r) {
        std::string line(static_cast<size_t>(cols), '.');
        for (int i = r * cell; i < std::min(M, (r + 1) * cell); ++i)
            for (int j = 0; j < N; ++j)
                if (wrong_mask[static_cast<size_t>(i) * N + j]) line[static_cast<size_t>(j / cell)] = 'X';
        pic.push_back("  " + line);
    }
    return pic;
}

std::string paint_disposition(Disposition d, const MessageStyle& style) {
    const char* name = disposition_name(d);
    if (!style.color) return name;
    const char* code = "0";
    switch (d) {
        case Disposition::passed: code = "32"; break;                 // green
        case Disposition::not_implemented:
        case Disposition::skipped: code = "33"; break;                // yellow
        case Disposition::no_gpu:
        case Disposition::unsupported: code = "36"; break;            // cyan
        default: code = "31;1"; break;                                // bold red
    }
    return std::string("\033[") + code + "m" + name + "\033[0m";
}

std::string describe_failure(const std::string& stage_label, Precision prec, const CaseResult& r,
                             const MessageStyle& style) {
    std::ostringstream os;
    os << std::setprecision(9);
    const Shape& s = r.shape;
    os << paint_disposition(r.disposition, style) << ": stage " << stage_label << ", "
       << precision_name(prec) << ", M=" << s.M << " N=" << s.N << " K=" << s.K
       << " (lda=" << s.eff_lda() << " ldb=" << s.eff_ldb() << " ldc=" << s.eff_ldc()
       << "), alpha=" << s.alpha << ", beta=" << s.beta;
    if (!s.why.empty()) os << "  [" << s.why << "]";
    os << "\n";
    if (!r.problem.empty()) os << "  " << r.problem << "\n";
    if (r.wrong > 0 && r.worst.row >= 0) {
        const double total = static_cast<double>(s.M) * s.N;
        os << "  " << r.wrong << " of " << static_cast<int64_t>(total) << " elements are wrong ("
           << std::setprecision(3) << 100.0 * r.wrong / total << "%)" << std::setprecision(9) << "\n"
           << "  worst: C[" << r.worst.row << "][" << r.worst.col << "] expected " << r.worst.expected
           << ", got " << r.worst.got << ", allowed error " << std::setprecision(3) << r.worst.allowed
           << " (error is " << r.worst.ratio << " u·G, bound " << r.bound << " u·G"
           << (r.bound > kErrorThreshold ? " for " + r.inputs + " inputs" : std::string()) << ")\n";
        if (prec == Precision::f32 && r.bound == kErrorThreshold && r.worst.ratio >= kRoundedInputsRatio[0] &&
            r.worst.ratio <= kRoundedInputsRatio[1])
            os << "  hint: if A and B are rounded to TF32 or FP16 anywhere (tensor cores), that alone gives errors "
                  "of this size; this stage must be as accurate as FP32 (bound "
               << kErrorThreshold << " u·G): a tensor-core kernel that declares FP32 accuracy splits each "
                  "operand into a high and a low TF32 part (3xTF32)\n";
        if (std::isnan(r.worst.got) && s.beta == 0.0)
            os << "  hint: with beta = 0 the grader fills C with NaN before the call; a NaN result means the "
                  "stage read C (it must not when beta == 0) or never wrote that element\n";
    }
    if (r.oob_writes > 0) {
        os << "  " << r.oob_writes << " write(s) outside C: first at " << r.oob_first;
        if (r.oob_last != r.oob_first) os << ", last at " << r.oob_last;
        os << "\n";
    }
    for (const std::string& line : r.picture) os << "  " << line << "\n";
    return os.str();
}

}  // namespace gemmlab
