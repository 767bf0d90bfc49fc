// gemmlab/stages.h — THE stage registry: the one list of stages in GEMM Lab.
//
// The checker, the benchmark, the scoring, the report and the handout all read this table (report/
// through `gemmlab list --json`, grader/scripts/ through registry.py). Adding a stage takes one file
// in student/ (and its solution in reference/), one declaration and one row below.
// docs/ARCHITECTURE.md walks through an example.
//
// Students include this header and never edit it.
#pragma once

#include <vector>

#include "gemmlab/stage_api.h"

namespace gemmlab {

enum class Operands {
    dense,    // A, B, C as the grader allocates them: any leading dimension, any alignment
    pitched,  // A, B, C built with the stage's own pitched_alloc/pitched_upload: aligned rows
};

template <typename T>
struct StageFns {
    GemmFn<T> gemm = nullptr;
    // Only for Operands::pitched: the student-written helpers the grader builds operands with.
    PitchedAllocFn<T> alloc = nullptr;
    PitchedUploadFn<T> upload = nullptr;
    PitchedDownloadFn<T> download = nullptr;
};

// What a variant's float entry point rounds A and B to before multiplying (its double entry point
// always multiplies in full FP64). The grader's error bound and the cuBLAS it is compared with
// follow from it (grader/src/common/bound.h, docs/correctness.md):
//   full  FP32 inputs, or an FP32-accurate scheme (bound 32·u·G, u = 2^-24; compared with SGEMM)
//   tf32  A and B rounded to TF32, 10 mantissa bits (u_in = 2^-11), products summed in FP32
//   fp16  A and B rounded to FP16, 10 mantissa bits (u_in = 2^-11), products summed in FP32
enum class InputPrecision { full, tf32, fp16 };

// One runnable version of a stage, e.g. the tiled stage with a 16×16 tile.
struct StageVariant {
    const char* label;  // "" when the stage has a single version
    StageFns<float> f32;
    StageFns<double> f64;
    InputPrecision float_inputs = InputPrecision::full;
    // The oldest GPU architecture (compute capability × 10) whose instructions the variant needs,
    // per precision; 0: any. On an older GPU, or in a build for an older ARCH, the variant is
    // `unsupported`: never run, not scored (docs/scoring.md).
    int min_arch_f32 = 0, min_arch_f64 = 0;

    template <typename T>
    const StageFns<T>& fns() const;
};
template <>
inline const StageFns<float>& StageVariant::fns<float>() const { return f32; }
template <>
inline const StageFns<double>& StageVariant::fns<double>() const { return f64; }

struct StageInfo {
    const char* name;        // used on command lines and in results: `make check STAGE=tiled`
    const char* title;       // one line for tables, plots and the handout
    const char* rubric_key;  // the [scoring.stages.<key>] table of course.toml that scores it
    const char* technique;   // one sentence: what the stage teaches
    Operands operands;
    bool baseline;           // the stage every speed-up is measured against
    std::vector<StageVariant> variants;
    // The stage may use the tensor cores in float too: its speed is held against the tensor
    // cores' peak instead of the FP32 pipe's, and it is timed beside cuBLAS in TF32 and FP16.
    bool tensor_cores = false;
};

// The grader's one file that builds the submission's table (child/submission_exports.cpp) sees the
// entry points as weak references: a stage whose file the build's symbol check refused is left out
// of the link and shows up as missing, instead of breaking the build of every other stage. Stage
// files see plain declarations.
#ifdef GEMMLAB_WEAK_ENTRY_POINTS
#define GEMMLAB_ENTRY __attribute__((weak))
#else
#define GEMMLAB_ENTRY
#endif

namespace GEMMLAB_NS {

// ---- entry points, one block per stage (definitions live in <submission>/<stage>.cu) ----
template <typename T> GEMMLAB_ENTRY Status gemm_naive(const GemmProblem<T>& p);

template <typename T, int TILE> GEMMLAB_ENTRY Status gemm_tiled(const GemmProblem<T>& p);

template <typename T> GEMMLAB_ENTRY Status gemm_unrolled(const GemmProblem<T>& p);

template <typename T> GEMMLAB_ENTRY Status gemm_pitched(const GemmProblem<T>& p);
template <typename T> GEMMLAB_ENTRY Status pitched_alloc(PitchedMatrix<T>* out, int rows, int cols);
template <typename T> GEMMLAB_ENTRY Status pitched_upload(const PitchedMatrix<T>& dst, const T* src, int ld_src,
                                                          cudaStream_t stream);
template <typename T> GEMMLAB_ENTRY Status pitched_download(T* dst, int ld_dst, const PitchedMatrix<T>& src,
                                                            cudaStream_t stream);

template <typename T> GEMMLAB_ENTRY Status gemm_reuse(const GemmProblem<T>& p);

// IN: what the float version rounds A and B to. Every variant's double version is the one FP64
// kernel gemm_tensor<double, InputPrecision::full> (the FP64 tensor cores lose no precision).
template <typename T, InputPrecision IN> GEMMLAB_ENTRY Status gemm_tensor(const GemmProblem<T>& p);

// ---- the registry: one row per stage, in teaching order ----
template <typename T>
StageFns<T> stage_fns_dense(GemmFn<T> f) { return {f, nullptr, nullptr, nullptr}; }
template <typename T>
StageFns<T> stage_fns_pitched() {
    return {&gemm_pitched<T>, &pitched_alloc<T>, &pitched_upload<T>, &pitched_download<T>};
}

inline std::vector<StageInfo> stage_table() {
    return {
        {"naive", "Naive (one thread per element of C)", "naive",
         "global memory only, coalesced along rows of C", Operands::dense, true,
         {{"", stage_fns_dense<float>(&gemm_naive<float>), stage_fns_dense<double>(&gemm_naive<double>)}}},
        {"tiled", "Shared-memory tiling", "tiled",
         "square tiles of A and B staged in shared memory; tile size is a template parameter",
         Operands::dense, false,
         {{"8", stage_fns_dense<float>(&gemm_tiled<float, 8>), stage_fns_dense<double>(&gemm_tiled<double, 8>)},
          {"16", stage_fns_dense<float>(&gemm_tiled<float, 16>), stage_fns_dense<double>(&gemm_tiled<double, 16>)},
          {"32", stage_fns_dense<float>(&gemm_tiled<float, 32>), stage_fns_dense<double>(&gemm_tiled<double, 32>)}}},
        {"unrolled", "Register blocking with unrolled loops", "unrolled",
         "each thread computes a small tile of C in registers with fully unrolled inner loops",
         Operands::dense, false,
         {{"", stage_fns_dense<float>(&gemm_unrolled<float>), stage_fns_dense<double>(&gemm_unrolled<double>)}}},
        {"pitched", "Pitched memory with aligned rows", "pitched",
         "cudaMallocPitch/cudaMemcpy2D operands whose aligned rows allow vector loads",
         Operands::pitched, false,
         {{"", stage_fns_pitched<float>(), stage_fns_pitched<double>()}}},
        {"reuse", "Maximal shared-memory reuse", "reuse",
         "2D block and warp tiling, transposed A in shared memory, double buffering",
         Operands::dense, false,
         {{"", stage_fns_dense<float>(&gemm_reuse<float>), stage_fns_dense<double>(&gemm_reuse<double>)}}},
        {"tensor", "Tensor cores (WMMA, mma.sync)", "tensor",
         "warp-wide matrix instructions on the tensor cores, by input precision; double on the FP64 tensor cores",
         Operands::dense, false,
         // FP16 mma.sync from sm_75; TF32 and the FP64 tensor cores (DMMA) from sm_80.
         {{"fp16", stage_fns_dense<float>(&gemm_tensor<float, InputPrecision::fp16>),
           stage_fns_dense<double>(&gemm_tensor<double, InputPrecision::full>), InputPrecision::fp16, 75, 80},
          {"tf32", stage_fns_dense<float>(&gemm_tensor<float, InputPrecision::tf32>),
           stage_fns_dense<double>(&gemm_tensor<double, InputPrecision::full>), InputPrecision::tf32, 80, 80},
          {"3xtf32", stage_fns_dense<float>(&gemm_tensor<float, InputPrecision::full>),
           stage_fns_dense<double>(&gemm_tensor<double, InputPrecision::full>), InputPrecision::full, 80, 80}},
         true},
    };
}

}  // namespace GEMMLAB_NS
}  // namespace gemmlab
