// vocabulary.h — the grader's vocabulary: precisions, problem shapes, dispositions. Host-only, so the
// logic around it is tested in CI without a GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gemmlab {

enum class Precision { f32, f64 };

const char* precision_name(Precision p);           // "float" / "double"
std::optional<Precision> parse_precision(const std::string& s);  // float|single|f32|s, double|f64|d
size_t precision_bytes(Precision p);
double unit_roundoff(Precision p);                 // 2^-24, 2^-53

// One GEMM problem the grader runs. Leading dimensions of 0 mean "tight" (= the width).
struct Shape {
    int M = 1, N = 1, K = 1;
    int lda = 0, ldb = 0, ldc = 0;
    double alpha = 1.0, beta = 0.0;
    std::string why;  // why this shape is in the set, e.g. "tile size + 1"

    int eff_lda() const { return lda ? lda : K; }
    int eff_ldb() const { return ldb ? ldb : N; }
    int eff_ldc() const { return ldc ? ldc : N; }
    double flops() const { return 2.0 * M * N * K; }
    std::string dims() const;   // "129x127x131"
    std::string label() const;  // dims, then leading dimensions and alpha/beta when not default
};

// Parses "MxNxK" (also "N" for a cube), optionally followed by ":lda,ldb,ldc".
std::optional<Shape> parse_shape(const std::string& text, std::string* error = nullptr);
std::vector<Shape> parse_shape_list(const std::string& text, std::string* error = nullptr);

// What happened to one stage × variant × precision (or to one case of it), like a profiler's
// disposition. Ordered from best to worst: the worst case decides a stage's disposition.
enum class Disposition {
    passed,
    not_implemented,
    failed,         // wrong values (or a helper that copies wrongly, or refused arguments)
    out_of_bounds,  // wrote outside C, into a pitched matrix's padding, or into A or B
    crashed,        // a CUDA error, a signal, or the process ended in the middle
    timed_out,      // killed after its time limit
    rejected,       // benchmark result above the GPU's peak, or an unverified output; a stage file the build refused
    no_gpu,         // nothing could run: no CUDA GPU on this machine
    skipped,        // not run (e.g. not asked for)
    unsupported,    // not run: this GPU, or the arch the grader was built for, lacks what the variant
                    // needs (gemmlab/stages.h min_arch); not scored, never a failure
};

const char* disposition_name(Disposition d);
std::optional<Disposition> parse_disposition(const std::string& s);
int severity(Disposition d);
// The disposition of a whole stage from those of its cases: any not_implemented case makes the
// stage not implemented; otherwise the most severe case wins.
Disposition combine(const std::vector<Disposition>& cases);
bool counts_as_correct(Disposition d);  // passed only

}  // namespace gemmlab
