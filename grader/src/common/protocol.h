// protocol.h — what the judge (`gemmlab`) and a runner (`gemmlab-stages`, `gemmlab-baselines`) say to
// each other. The judge owns every buffer: it allocates A, B, C and two flag words in its own CUDA
// context and exports them by CUDA IPC; the runner maps them by name, calls what it is asked to call
// on the judge's operands, and says what the call returned. Messages to the runner are JSON lines on
// its stdin; its reports are keyed JSON lines on its report pipe (common/report_channel.h).
//
//   judge -> runner                                   runner -> judge
//   {"op":"map","buffers":[{"name","handle"}]}         {"event":"mapped"} | {"event":"fatal","error"}
//   {"op":"call","item",..,"problems":[..]}            {"event":"returned","results":[..]}
//   {"op":"call",..,"go":k}  (a timed call)            {"event":"armed","results":[..]}, then
//                                                      {"event":"finished","event_ms":[..],"error"}
//   {"op":"exit"}                                      {"event":"done"}
//
// A timed call: the runner's stream waits until the judge writes k into the go word (a stream memory
// operation of the judge's), runs the calls between events of its own, and writes k into the done
// word, all enqueued before it says "armed". The judge stamps the GPU's clock before it copies the
// call's inputs in and after it has seen the done word and checked a secret sample of C
// (docs/timing.md). Nothing a runner says decides a verdict: its words can fail its own stage only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/bench_plan.h"
#include "common/vocabulary.h"

namespace gemmlab::protocol {

// The flag words in the buffer named "flags".
constexpr int kGoWord = 0;
constexpr int kDoneWord = 1;
// Every exported allocation is a multiple of this size: the CUDA runtime may sub-allocate smaller
// cudaMalloc allocations from a shared block, and IPC then maps the whole block (the CUDA
// Programming Guide's advice for IPC: share only allocations of a 2 MiB-aligned size).
constexpr size_t kExportGranularity = size_t(2) << 20;
inline size_t export_size(size_t bytes) {
    return (bytes + kExportGranularity - 1) / kExportGranularity * kExportGranularity;
}

std::string to_hex(const void* bytes, size_t n);
bool from_hex(const std::string& hex, void* bytes, size_t n);

// An operand: a byte offset into a named exported buffer.
struct Operand {
    std::string buffer;
    size_t offset = 0;
};

// One product the runner is asked for: C = alpha·A·B + beta·C, row-major, on the judge's buffers.
// `pitched_flow`: the pitched stage builds its own operands from these with its own helpers
// (pitched_alloc, pitched_upload), multiplies, and downloads the result into C (make check).
struct Problem {
    Precision precision = Precision::f32;
    int M = 0, N = 0, K = 0;
    double alpha = 1, beta = 0;
    Operand a, b, c;
    int lda = 0, ldb = 0, ldc = 0;
    bool pitched_flow = false;
};

nlohmann::json to_json(const Problem& p);
Problem problem_from_json(const nlohmann::json& j);

// What one call returned, as the runner saw it.
struct CallResult {
    std::string status = "ok";  // ok | not_implemented | unsupported | cuda_error | not_linked | missing
    std::string error;          // the CUDA error behind cuda_error, or why an item cannot run
    // A problem the runner found itself (the pitched stage's helpers: an inexact copy, a write into
    // the padding). It can only fail the stage: "failed" or "out_of_bounds".
    std::string problem, disposition;
};

nlohmann::json to_json(const CallResult& r);
CallResult call_result_from_json(const nlohmann::json& j);

// The item kinds of common/bench_plan.h, plus `launch`: one empty kernel, what the cheapest possible
// stage costs (the judge's calibration of its own clock).
nlohmann::json item_json(const BenchItem& item);
BenchItem item_from_json(const nlohmann::json& j);

}  // namespace gemmlab::protocol
