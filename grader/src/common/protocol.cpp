// protocol.cpp — the JSON of the judge-runner messages (protocol.h). Host-only: tested in CI.
#include "common/protocol.h"

#include "common/check_result.h"

namespace gemmlab::protocol {

using nlohmann::json;

std::string to_hex(const void* bytes, size_t n) {
    static const char digits[] = "0123456789abcdef";
    const auto* b = static_cast<const unsigned char*>(bytes);
    std::string s;
    s.reserve(2 * n);
    for (size_t i = 0; i < n; ++i) s += digits[b[i] >> 4], s += digits[b[i] & 15];
    return s;
}

bool from_hex(const std::string& hex, void* bytes, size_t n) {
    if (hex.size() != 2 * n) return false;
    auto value = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    };
    auto* b = static_cast<unsigned char*>(bytes);
    for (size_t i = 0; i < n; ++i) {
        const int hi = value(hex[2 * i]), lo = value(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        b[i] = static_cast<unsigned char>(hi << 4 | lo);
    }
    return true;
}

namespace {
json operand_json(const Operand& o) { return {{"buffer", o.buffer}, {"offset", o.offset}}; }
Operand operand_from(const json& j) { return {j.at("buffer").get<std::string>(), j.at("offset").get<size_t>()}; }
}  // namespace

json to_json(const Problem& p) {
    return {{"precision", precision_name(p.precision)},
            {"M", p.M}, {"N", p.N}, {"K", p.K}, {"alpha", p.alpha}, {"beta", p.beta},
            {"a", operand_json(p.a)}, {"b", operand_json(p.b)}, {"c", operand_json(p.c)},
            {"lda", p.lda}, {"ldb", p.ldb}, {"ldc", p.ldc}, {"pitched_flow", p.pitched_flow}};
}

Problem problem_from_json(const json& j) {
    Problem p;
    const auto prec = parse_precision(j.at("precision").get<std::string>());
    if (!prec) throw std::invalid_argument("unknown precision in a problem");
    p.precision = *prec;
    p.M = j.at("M"), p.N = j.at("N"), p.K = j.at("K");
    p.alpha = j.at("alpha"), p.beta = j.at("beta");
    p.a = operand_from(j.at("a")), p.b = operand_from(j.at("b")), p.c = operand_from(j.at("c"));
    p.lda = j.at("lda"), p.ldb = j.at("ldb"), p.ldc = j.at("ldc");
    p.pitched_flow = j.value("pitched_flow", false);
    return p;
}

json to_json(const CallResult& r) {
    json j{{"status", r.status}};
    if (!r.error.empty()) j["error"] = r.error;
    if (!r.problem.empty()) j["problem"] = r.problem, j["disposition"] = r.disposition;
    return j;
}

CallResult call_result_from_json(const json& j) {
    CallResult r;
    r.status = j.value("status", "missing");
    r.error = j.value("error", "");
    r.problem = j.value("problem", "");
    r.disposition = j.value("disposition", "");
    return r;
}

json item_json(const BenchItem& item) { return to_json(item); }
BenchItem item_from_json(const json& j) { return bench_item_from_json(j); }

}  // namespace gemmlab::protocol
