// device_ops.h — the judge's own GPU helpers: fresh random data, canaries, conversion to double, the
// comparisons that decide correctness, and the judge's clock (docs/timing.md). Overloaded for float
// and double. They run in the judge's own CUDA context, never in a runner's.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>
#include <curand.h>

#include "judge/guard.h"
#include "common/bound.h"

namespace gemmlab {

// Uniform random values in (-1, 1] (never all zero: zeros hide bugs).
void fill_random(curandGenerator_t gen, float* p, size_t n, cudaStream_t s);
void fill_random(curandGenerator_t gen, double* p, size_t n, cudaStream_t s);

// Every element set to one bit pattern (canary, NaN poison).
void fill_bits(float* p, size_t n, uint32_t bits, cudaStream_t s);
void fill_bits(double* p, size_t n, uint64_t bits, cudaStream_t s);
uint32_t quiet_nan_bits32();
uint64_t quiet_nan_bits64();
constexpr uint64_t kOneBits64 = 0x3FF0000000000000ull;  // 1.0 as a double

// gauge[i][j] += scale · (row_sums[i] + col_sums[j]) for a dense M×N gauge (bound.h's underflow term).
void add_row_col_sums(double* gauge, int M, int N, const double* row_sums, const double* col_sums, double scale,
                      cudaStream_t s);

// Sets the guards and padding columns of a guarded C allocation to the canary; leaves C alone.
void paint_canary(float* base, const GuardedLayout& g, cudaStream_t s);
void paint_canary(double* base, const GuardedLayout& g, cudaStream_t s);

// Sets the bytes of each row between cols*sizeof(T) and pitch to the canary (pitched matrices).
void paint_pitch_padding(float* data, size_t pitch_bytes, int rows, int cols, cudaStream_t s);
void paint_pitch_padding(double* data, size_t pitch_bytes, int rows, int cols, cudaStream_t s);

struct CanaryReport {
    int64_t changed = 0;
    int64_t first = -1, last = -1;  // allocation index (GuardedLayout) or row*pitch_elems+col
};
CanaryReport check_canary(const float* base, const GuardedLayout& g, cudaStream_t s);
CanaryReport check_canary(const double* base, const GuardedLayout& g, cudaStream_t s);
CanaryReport check_pitch_padding(const float* data, size_t pitch_bytes, int rows, int cols, cudaStream_t s);
CanaryReport check_pitch_padding(const double* data, size_t pitch_bytes, int rows, int cols, cudaStream_t s);

// Bitwise comparison of two rows×cols matrices with their own leading dimensions.
CanaryReport count_differences(const float* a, int lda, const float* b, int ldb, int rows, int cols, cudaStream_t s);
CanaryReport count_differences(const double* a, int lda, const double* b, int ldb, int rows, int cols, cudaStream_t s);

// dst (rows×cols, dense, ld = cols) = src (or |src| when take_abs) in double.
void to_double(const float* src, int ld, int rows, int cols, double* dst, bool take_abs, cudaStream_t s);
void to_double(const double* src, int ld, int rows, int cols, double* dst, bool take_abs, cudaStream_t s);

struct CompareReport {
    int64_t wrong = 0;
    double max_ratio = 0;
    int64_t worst_index = -1;  // row * N + col
    double expected = 0, got = 0, gauge = 0;
};
// Compares C (ld = ldc) with the reference (dense, double) element by element under the bound of
// bound.h (ratio in units of u·G, at most `threshold`); writes a 0/1 mask of wrong elements
// (dense M×N) when mask is not null.
CompareReport compare_with_reference(const float* C, int ldc, const double* ref, const double* gauge,
                                     int M, int N, double u, uint8_t* mask, cudaStream_t s,
                                     double threshold = kErrorThreshold);
CompareReport compare_with_reference(const double* C, int ldc, const double* ref, const double* gauge,
                                     int M, int N, double u, uint8_t* mask, cudaStream_t s,
                                     double threshold = kErrorThreshold);

// ---- the judge's clock ------------------------------------------------------------------------

// Writes the GPU's %globaltimer (nanoseconds) into *out when the stream reaches this point.
void stamp_clock(uint64_t* out, cudaStream_t s);

// The virtual architecture the grader's device code was compiled for, e.g. 75 for compute_75 (also
// when the driver JIT-compiles that PTX for a newer GPU): the build runs no instruction newer.
int compiled_arch();

// Adds to *poisoned how many of `samples` positions of C, drawn from `secret`, still hold the judge's
// poison (the bit pattern of quiet_nan_bits32/64, which the judge writes into C before a timed call):
// elements a call was meant to write and had not when it said it was done. A NaN of any other bit
// pattern (what arithmetic makes) was written: it is a wrong value, not poison. C holds `slots` M×N
// matrices (ld = ldc), slot i at C + i·slot_stride elements; the positions are spread over all of them.
void count_unwritten_sample(const float* C, int ldc, int M, int N, int slots, size_t slot_stride, uint64_t secret,
                            int samples, unsigned* poisoned, cudaStream_t s);
void count_unwritten_sample(const double* C, int ldc, int M, int N, int slots, size_t slot_stride, uint64_t secret,
                            int samples, unsigned* poisoned, cudaStream_t s);

// The C's of an interval's `slots` calls and the judge's own copies of their inputs (A0, B0: the
// same layout as the runner's A and B), call i's at i·stride elements.
template <typename T>
struct AnswerSample {
    const T* C = nullptr;
    int ldc = 0;
    size_t stride_c = 0;
    const T* A = nullptr;
    int lda = 0;
    size_t stride_a = 0;
    const T* B = nullptr;
    int ldb = 0;
    size_t stride_b = 0;
    int M = 0, N = 0, K = 0, slots = 1;
};
// Adds to *unanswered how many of `samples` positions of C (sample positions first … first+samples−1 of
// `secret`, common/sample_check.h) do not hold their answer: row r of A times column c of B (alpha 1,
// beta 0), computed in the judge in about twice double precision, within `threshold` units of u·G'
// (bound.h; the item's threshold × kSampleSlack). The poison never passes; with an infinite threshold
// only the poison counts. Those that still hold the judge's poison are also added to *poisoned (as
// count_unwritten_sample counts them). One block per position: a few microseconds for 64 at K = 4096.
void count_unanswered_sample(const AnswerSample<float>& a, uint64_t secret, uint64_t first, int samples, double u,
                             double threshold, double underflow_weight, unsigned* poisoned, unsigned* unanswered,
                             cudaStream_t s);
void count_unanswered_sample(const AnswerSample<double>& a, uint64_t secret, uint64_t first, int samples, double u,
                             double threshold, double underflow_weight, unsigned* poisoned, unsigned* unanswered,
                             cudaStream_t s);

}  // namespace gemmlab
