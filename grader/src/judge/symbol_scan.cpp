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
    for (const auto& [stage, verdict] : j["stages"].items()) {
        if (verdict.value("disposition", "") != "rejected") continue;
        if (!verdict.contains("runs") || !verdict["runs"].is_array()) {
            scan.rejected[stage] = verdict.value("problem", "");
            continue;
        }
        for (const auto& run : verdict["runs"])
            scan.rejected_runs[{stage, run.value("variant", ""), run.value("precision", "")}] =
                run.value("problem", verdict.value("problem", ""));
    }
    if (j.contains("kernels") && j["kernels"].is_array())
        for (const auto& k : j["kernels"])
            if (k.is_string()) scan.kernels.push_back(k.get<std::string>());
    return scan;
}

std::string scan_rejection(const SymbolScan& scan, const std::string& stage, const std::string& variant,
                           const std::string& precision) {
    if (const auto it = scan.rejected.find(stage); it != scan.rejected.end()) return it->second;
    if (const auto it = scan.rejected_runs.find({stage, variant, precision}); it != scan.rejected_runs.end())
        return it->second;
    return "";
}

int apply_symbol_scan(const SymbolScan& scan, nlohmann::json& results) {
    int changed = 0;
    for (nlohmann::json& r : results) {
        const std::string problem =
            scan_rejection(scan, r.value("stage", ""), r.value("variant", ""), r.value("precision", ""));
        if (problem.empty()) continue;
        r["disposition"] = "rejected";
        r["problem"] = problem;
        ++changed;
    }
    return changed;
}

nlohmann::json to_json(const SymbolScan& scan) {
    nlohmann::json runs = nlohmann::json::array();
    for (const auto& [key, problem] : scan.rejected_runs)
        runs.push_back({{"stage", std::get<0>(key)}, {"variant", std::get<1>(key)}, {"precision", std::get<2>(key)},
                        {"problem", problem}});
    return {{"path", scan.path}, {"rejected", scan.rejected}, {"rejected_runs", runs}};
}

}  // namespace gemmlab
