// gemmlab/stage_api.h — the contract between a stage and the grader. Students include this
// header (through gemmlab/stages.h) and never edit it.
//
// Every stage computes, for row-major matrices,
//
//     C (M×N)  =  alpha · A (M×K) · B (K×N)  +  beta · C
//
// where element (i,k) of A lives at A[i*lda + k] (lda >= K), element (k,j) of B at B[k*ldb + j]
// (ldb >= N) and element (i,j) of C at C[i*ldc + j] (ldc >= N). All pointers are device
// pointers. The elements between the width and the leading dimension of a row belong to the
// grader: reading them is allowed for A and B (they hold random values), writing them in C is an
// out-of-bounds write. When beta == 0, C must not be read: it may hold NaN.
//
// A stage launches its work on `stream` and returns without synchronizing; the grader times the
// stream. It returns Status::ok, or Status::not_implemented while it is still a stub.
#pragma once

#include <cstddef>
#include <cuda_runtime.h>

// Stage code is compiled twice in one grader binary — once as the submission being graded and
// once as the reference it is compared with — so it lives in a namespace the build chooses.
// Write `namespace gemmlab::GEMMLAB_NS { ... }` around stage code; never name the namespace.
#ifndef GEMMLAB_NS
#define GEMMLAB_NS submission
#endif

namespace gemmlab {

enum class Status : int {
    ok = 0,               // work was launched on the stream
    not_implemented = 1,  // an untouched stub: the grader reports "not implemented"
    unsupported = 2,      // the stage refuses these arguments (counts as a failure)
    cuda_error = 3,       // a CUDA call inside the stage failed
};

template <typename T>
struct GemmProblem {
    int M = 0, N = 0, K = 0;
    T alpha = T(1);
    const T* A = nullptr;
    int lda = 0;
    const T* B = nullptr;
    int ldb = 0;
    T beta = T(0);
    T* C = nullptr;
    int ldc = 0;
    cudaStream_t stream = nullptr;
};

// A matrix whose rows start at aligned addresses: row r begins at
// reinterpret_cast<char*>(data) + r * pitch_bytes, and pitch_bytes >= cols * sizeof(T).
template <typename T>
struct PitchedMatrix {
    T* data = nullptr;
    size_t pitch_bytes = 0;
    int rows = 0;
    int cols = 0;
};

// The signatures every stage entry point has (see gemmlab/stages.h for the list of stages).
template <typename T>
using GemmFn = Status (*)(const GemmProblem<T>&);
template <typename T>
using PitchedAllocFn = Status (*)(PitchedMatrix<T>* out, int rows, int cols);
template <typename T>
using PitchedUploadFn = Status (*)(const PitchedMatrix<T>& dst, const T* src, int ld_src,
                                   cudaStream_t stream);
template <typename T>
using PitchedDownloadFn = Status (*)(T* dst, int ld_dst, const PitchedMatrix<T>& src,
                                     cudaStream_t stream);

}  // namespace gemmlab

namespace gemmlab {
// The CUDA error that made a stage return Status::cuda_error through GEMMLAB_TRY, kept because
// checking an error also clears it: the grader reports this one to the student.
inline thread_local cudaError_t last_stage_error = cudaSuccess;
}  // namespace gemmlab

// For stage code: return Status::cuda_error from the enclosing stage when a CUDA call fails, and
// check a kernel launch right after it with GEMMLAB_CHECK_LAUNCH().
#define GEMMLAB_TRY(call)                                      \
    do {                                                       \
        const cudaError_t gemmlab_err_ = (call);               \
        if (gemmlab_err_ != cudaSuccess) {                     \
            ::gemmlab::last_stage_error = gemmlab_err_;        \
            return ::gemmlab::Status::cuda_error;              \
        }                                                      \
    } while (0)
#define GEMMLAB_CHECK_LAUNCH() GEMMLAB_TRY(cudaGetLastError())
