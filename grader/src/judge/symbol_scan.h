// symbol_scan.h — the build's verdicts on the stage files, as `gemmlab check`, `bench` and `grade` see them.
// grader/scripts/scan_symbols.py (make scan; every build) writes $(SUB_BUILD)/symbols.json beside the
// grader binary: per stage, why its file was left out of the submission's library — it does not
// compile (the compiler's first error), it references or defines what a stage may not (the symbol
// and the rule, docs/student-guide.md "What a stage may call"), or it references a name no file
// defines — and, for an entry point no file defines (a forgotten explicit instantiation), the runs
// (variant × precision) that lack it. Those stages, or runs, are `rejected` with that problem; the
// kernels of the linked files come with it.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

namespace gemmlab {

struct SymbolScan {
    std::string path;                              // the file read; "" when there was none
    std::map<std::string, std::string> rejected;   // stage name -> problem: every run of the stage
    // (stage, variant, precision) -> problem: the runs whose entry point no file defines
    std::map<std::tuple<std::string, std::string, std::string>, std::string> rejected_runs;
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

// The problem that rejects this run ("" when the scan rejects neither its stage nor the run).
std::string scan_rejection(const SymbolScan& scan, const std::string& stage, const std::string& variant,
                           const std::string& precision);

// Marks every result (results[] of docs/results-schema.md) of a rejected stage or run `rejected` with
// the scan's problem, keeping its cases and process record; returns how many results it changed.
// Whatever the run's own disposition (no_gpu included): code that is not in the build never ran.
int apply_symbol_scan(const SymbolScan& scan, nlohmann::json& results);

// {"path": ..., "rejected": {stage: problem}, "rejected_runs": [{stage, variant, precision, problem}]}
// — what a results file records of the scan.
nlohmann::json to_json(const SymbolScan& scan);

}  // namespace gemmlab
