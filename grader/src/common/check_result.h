// check_result.h — what checking one case produced, how it reads for a student, and its JSON.
// Host-only: formatting and the picture of wrong elements are tested in CI.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/vocabulary.h"

namespace gemmlab {

using json = nlohmann::json;

struct WorstElement {
    int row = -1, col = -1;
    double expected = 0, got = 0, allowed = 0, ratio = 0;
};

struct CaseResult {
    Shape shape;
    Disposition disposition = Disposition::passed;
    std::string problem;          // what went wrong, one sentence ("" when passed)
    double max_ratio = 0;         // worst |C - C_ref| / (u·G) over all elements
    int64_t wrong = 0;            // elements over the bound
    WorstElement worst;           // the element with the largest ratio
    int64_t oob_writes = 0;       // canary elements changed
    std::string oob_first, oob_last;  // where (words from GuardedLayout::describe)
    std::vector<std::string> picture;  // where the wrong elements are, for a quick look
    double seconds = 0;
    double bound = 32;                 // the largest ratio that passes (bound.h threshold)
    std::string inputs;                // the declared input precision ("fp32", "tf32", ...), "" unknown
};

json to_json(const CaseResult& r);
CaseResult case_from_json(const json& j);
json shape_to_json(const Shape& s);
Shape shape_from_json(const json& j);

// A coarse map of the wrong elements of an M×N result: one character per cell of cell×cell
// elements ('.' all right, 'X' some wrong), at most 48 cells wide and 24 tall, cell a power of 2
// so tile boundaries line up. The first line says the cell size.
std::vector<std::string> error_picture(const std::vector<uint8_t>& wrong_mask, int M, int N);

struct MessageStyle {
    bool color = false;
};

// The failure report for one case: stage, precision, shape, alpha, beta, the worst element
// (row, col, expected, got, allowed), how many are wrong, out-of-bounds writes, the picture.
std::string describe_failure(const std::string& stage_label, Precision prec, const CaseResult& r,
                             const MessageStyle& style);

// "passed" in green, "failed" in red... (plain when style.color is false).
std::string paint_disposition(Disposition d, const MessageStyle& style);

}  // namespace gemmlab
