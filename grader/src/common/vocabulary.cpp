// vocabulary.cpp — parsing and naming for the grader's vocabulary (see vocabulary.h).
#include "common/vocabulary.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

namespace gemmlab {

const char* precision_name(Precision p) { return p == Precision::f32 ? "float" : "double"; }

std::optional<Precision> parse_precision(const std::string& s) {
    std::string t;
    for (char c : s) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (t == "float" || t == "single" || t == "f32" || t == "fp32" || t == "s" || t == "sgemm")
        return Precision::f32;
    if (t == "double" || t == "f64" || t == "fp64" || t == "d" || t == "dgemm")
        return Precision::f64;
    return std::nullopt;
}

size_t precision_bytes(Precision p) { return p == Precision::f32 ? 4 : 8; }

double unit_roundoff(Precision p) {
    return p == Precision::f32 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -53);
}

std::string Shape::dims() const {
    std::ostringstream os;
    os << M << "x" << N << "x" << K;
    return os.str();
}

std::string Shape::label() const {
    std::ostringstream os;
    os << dims();
    if (lda || ldb || ldc) os << " (lda=" << eff_lda() << " ldb=" << eff_ldb() << " ldc=" << eff_ldc() << ")";
    os << " alpha=" << alpha << " beta=" << beta;
    return os.str();
}

namespace {

bool parse_positive(const std::string& s, int* out) {
    if (s.empty() || s.size() > 9) return false;
    for (char c : s)
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    const long v = std::stol(s);
    if (v < 1) return false;
    *out = static_cast<int>(v);
    return true;
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> parts;
    std::string cur;
    for (char c : s) {
        if (c == sep) {
            parts.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    parts.push_back(cur);
    return parts;
}

}  // namespace

std::optional<Shape> parse_shape(const std::string& text, std::string* error) {
    auto fail = [&](const std::string& why) -> std::optional<Shape> {
        if (error)
            *error = "bad shape '" + text + "': " + why +
                     " (write MxNxK, e.g. 4096x4096x4096, or one number for a cube; "
                     "leading dimensions may follow as :lda,ldb,ldc)";
        return std::nullopt;
    };
    std::string dims = text, lds;
    if (auto colon = text.find(':'); colon != std::string::npos) {
        dims = text.substr(0, colon);
        lds = text.substr(colon + 1);
    }
    auto parts = split(dims, 'x');
    Shape s;
    if (parts.size() == 1) {
        if (!parse_positive(parts[0], &s.M)) return fail("not a positive whole number");
        s.N = s.K = s.M;
    } else if (parts.size() == 3) {
        if (!parse_positive(parts[0], &s.M) || !parse_positive(parts[1], &s.N) ||
            !parse_positive(parts[2], &s.K))
            return fail("M, N and K must be positive whole numbers");
    } else {
        return fail("expected three sizes");
    }
    if (!lds.empty()) {
        auto ld = split(lds, ',');
        if (ld.size() != 3 || !parse_positive(ld[0], &s.lda) || !parse_positive(ld[1], &s.ldb) ||
            !parse_positive(ld[2], &s.ldc))
            return fail("leading dimensions must be three positive numbers");
        if (s.lda < s.K) return fail("lda must be at least K");
        if (s.ldb < s.N) return fail("ldb must be at least N");
        if (s.ldc < s.N) return fail("ldc must be at least N");
    }
    const double elems = std::max({double(s.M) * s.eff_lda(), double(s.K) * s.eff_ldb(),
                                   double(s.M) * s.eff_ldc()});
    if (elems > double(1u << 31) - 1) return fail("a matrix that large does not fit int indexing");
    return s;
}

std::vector<Shape> parse_shape_list(const std::string& text, std::string* error) {
    std::vector<Shape> out;
    for (const std::string& item : split(text, ',')) {
        if (item.empty()) continue;
        auto s = parse_shape(item, error);
        if (!s) return {};
        out.push_back(*s);
    }
    if (out.empty() && error) *error = "no shapes given";
    return out;
}

const char* disposition_name(Disposition d) {
    switch (d) {
        case Disposition::passed: return "passed";
        case Disposition::not_implemented: return "not_implemented";
        case Disposition::failed: return "failed";
        case Disposition::out_of_bounds: return "out_of_bounds";
        case Disposition::crashed: return "crashed";
        case Disposition::timed_out: return "timed_out";
        case Disposition::rejected: return "rejected";
        case Disposition::no_gpu: return "no_gpu";
        case Disposition::skipped: return "skipped";
        case Disposition::unsupported: return "unsupported";
    }
    return "unknown";
}

std::optional<Disposition> parse_disposition(const std::string& s) {
    for (Disposition d : {Disposition::passed, Disposition::not_implemented, Disposition::failed,
                          Disposition::out_of_bounds, Disposition::crashed, Disposition::timed_out,
                          Disposition::rejected, Disposition::no_gpu, Disposition::skipped, Disposition::unsupported})
        if (s == disposition_name(d)) return d;
    return std::nullopt;
}

int severity(Disposition d) {
    switch (d) {
        case Disposition::skipped: return 0;
        case Disposition::unsupported: return 0;
        case Disposition::passed: return 1;
        case Disposition::not_implemented: return 2;
        case Disposition::failed: return 3;
        case Disposition::rejected: return 4;
        case Disposition::out_of_bounds: return 5;
        case Disposition::crashed: return 6;
        case Disposition::timed_out: return 7;
        case Disposition::no_gpu: return 8;
    }
    return 9;
}

Disposition combine(const std::vector<Disposition>& cases) {
    if (cases.empty()) return Disposition::skipped;
    if (std::find(cases.begin(), cases.end(), Disposition::not_implemented) != cases.end())
        return Disposition::not_implemented;
    Disposition worst = Disposition::skipped;
    for (Disposition d : cases)
        if (severity(d) > severity(worst)) worst = d;
    return worst;
}

bool counts_as_correct(Disposition d) { return d == Disposition::passed; }

}  // namespace gemmlab
