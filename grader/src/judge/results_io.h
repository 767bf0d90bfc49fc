// results_io.h — results files: the schema name and atomic writes (a killed grader never leaves
// a half-written file: write a temporary file beside the target, flush, then rename).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gemmlab {

constexpr const char* kResultsSchema = "gemmlab.results/1";

void write_text_atomically(const std::string& path, const std::string& text);
void write_json_atomically(const std::string& path, const nlohmann::json& j);

}  // namespace gemmlab
