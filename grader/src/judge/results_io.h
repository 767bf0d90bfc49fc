// results_io.h — results files: the schema name, the time they were created, and atomic writes (a
// killed grader never leaves a half-written file: write a temporary file beside the target, flush,
// then rename).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gemmlab {

constexpr const char* kResultsSchema = "gemmlab.results/1";

// "2026-11-21T14:00:00Z": the `created` field of results files (UTC, to the second).
std::string utc_now();

void write_text_atomically(const std::string& path, const std::string& text);
void write_json_atomically(const std::string& path, const nlohmann::json& j);

// Adds the fingerprint of the submission's stage files (the file grader/scripts/fingerprint.py
// --json writes: scheme, name, fingerprint, files) to results.json's `submission` object, as the
// file has it: the grader never hashes the files itself, so every tool reads one definition.
// Throws std::runtime_error naming the file when it cannot be read or has no fingerprint.
void add_fingerprint(nlohmann::json& submission, const std::string& path);

}  // namespace gemmlab
