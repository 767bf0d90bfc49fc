// symbol_scan.cpp — reading symbols.json and applying it to results (see symbol_scan.h).
#include "judge/symbol_scan.h"

#include <unistd.h>

#include <climits>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace gemmlab {

std::string default_symbol_scan_path() {
    char buf[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return "symbols.json";
    const std::string exe(buf, static_cast<size_t>(n));
    return exe.substr(0, exe.rfind('/') + 1) + "symbols.json";
}

SymbolScan load_symbol_scan(const std::string& path) {
    SymbolScan scan;
    std::ifstream in(path);
    if (!in) return scan;
    std::stringstream text;
    text << in.rdbuf();
    const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
    if (j.is_discarded() || !j.is_object() || j.value("schema", "") != "gemmlab.symbols/2" ||
        !j.contains("stages") || !j["stages"].is_object())
        throw std::runtime_error(path + " is not a symbol scan (schema gemmlab.symbols/2); rebuild with `make scan`");
    scan.path = path;
    for (const auto& [stage, verdict] : j["stages"].items())
        if (verdict.value("disposition", "") == "rejected") scan.rejected[stage] = verdict.value("problem", "");
    if (j.contains("kernels") && j["kernels"].is_array())
        for (const auto& k : j["kernels"])
            if (k.is_string()) scan.kernels.push_back(k.get<std::string>());
    return scan;
}

int apply_symbol_scan(const SymbolScan& scan, nlohmann::json& results) {
    int changed = 0;
    for (nlohmann::json& r : results) {
        const auto it = scan.rejected.find(r.value("stage", ""));
        if (it == scan.rejected.end()) continue;
        r["disposition"] = "rejected";
        r["problem"] = it->second;
        ++changed;
    }
    return changed;
}

nlohmann::json to_json(const SymbolScan& scan) {
    return {{"path", scan.path}, {"rejected", scan.rejected}};
}

}  // namespace gemmlab
