// symbol_scan.h — the build's symbol check as `gemmlab check` and `gemmlab grade` see it.
// grader/scripts/scan_symbols.py (make scan; every build) writes $(SUB_BUILD)/symbols.json beside the
// grader binary: per stage, what its files reference or define outside the allowlists (such a file is
// not linked into the submission's library), and the kernels of the linked files. A stage it names is
// `rejected` with the symbol and the rule (docs/student-guide.md, "What a stage may call").
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gemmlab {

struct SymbolScan {
    std::string path;                              // the file read; "" when there was none
    std::map<std::string, std::string> rejected;   // stage name -> problem (names the symbol)
    // The kernels of the files linked into the submission's library, by the name the GPU reports:
    // the only kernels a stage's timed call may run (the benchmark's plan carries them).
    std::vector<std::string> kernels;
};

// The file beside the running grader: <directory of /proc/self/exe>/symbols.json.
std::string default_symbol_scan_path();

// Reads a symbols.json (schema gemmlab.symbols/2). A file that does not exist gives an empty scan
// with path ""; an unreadable or malformed one throws std::runtime_error (a grade must not quietly
// skip the scan).
SymbolScan load_symbol_scan(const std::string& path);

// Marks every result (results[] of docs/results-schema.md) of a rejected stage `rejected` with the
// scan's problem, keeping its cases and process record; returns how many results it changed.
int apply_symbol_scan(const SymbolScan& scan, nlohmann::json& results);

// {"path": ..., "rejected": {stage: problem}} — what a results file records of the scan.
nlohmann::json to_json(const SymbolScan& scan);

}  // namespace gemmlab
