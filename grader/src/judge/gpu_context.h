// gpu_context.h — the judge's own CUDA context, opened in `gemmlab` itself (which never loads
// submission code): its streams, cuBLAS (FP64, for the answers), cuRAND (the inputs), the stream
// memory operations it synchronizes with runners through, and what the GPU is.
#pragma once

#include <cstdint>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <curand.h>

#include "common/peak.h"
#include "common/stream_memops.h"

namespace gemmlab {

struct GpuContext {
    cudaStream_t stream = nullptr;
    // A second stream, to release `stream` when a runner died while the judge's stream waited on it.
    cudaStream_t rescue = nullptr;
    cublasHandle_t cublas = nullptr;
    curandGenerator_t rng = nullptr;
    StreamMemOps memops;
    GpuShape shape;
    size_t l2_bytes = 0;
    std::string pci_bus_id, name;
    int device_arch = 0;  // the GPU's compute capability, e.g. 90
    int code_arch = 0;    // what this build's device code targets, e.g. 75 for ARCH=sm_75 (device_ops.h)
    // What a variant may use here: the lower of the two (gemmlab/stages.h min_arch).
    int usable_arch() const { return device_arch < code_arch ? device_arch : code_arch; }

    // Opens the context on the current device. Throws CudaError, or std::runtime_error when the
    // driver lacks what the judge needs (stream memory operations), saying so.
    explicit GpuContext(uint64_t seed);
    ~GpuContext();
    GpuContext(const GpuContext&) = delete;
    GpuContext& operator=(const GpuContext&) = delete;
};

// Row-major C = alpha·A·B + beta·C in double with cuBLAS (FP64; the reference and the gauge).
void reference_dgemm(GpuContext& ctx, int M, int N, int K, double alpha, const double* A, int lda,
                     const double* B, int ldb, double beta, double* C, int ldc);

// The GPU's free memory now, as the judge's context sees it (cudaMemGetInfo).
size_t gpu_free_bytes();

// Waits, at most `seconds`, until the GPU's free memory is at least `level` less kGpuMemorySlack (the
// set-up of runners started meanwhile). The driver gives back a dead process's memory a moment after
// it ends: after a runner was killed or crashed, the next runner's stage, and the judge's next
// allocations, must not find it still taken.
constexpr size_t kGpuMemorySlack = size_t(1) << 30;
void await_gpu_memory(size_t level, double seconds = 5);

// A device allocation the judge exports to its runners by CUDA IPC: a multiple of 2 MiB
// (protocol.h), so no other allocation of the judge's shares its block.
class ExportedBuffer {
public:
    ExportedBuffer() = default;
    explicit ExportedBuffer(size_t bytes);
    ~ExportedBuffer();
    ExportedBuffer(ExportedBuffer&& o) noexcept;
    ExportedBuffer& operator=(ExportedBuffer&& o) noexcept;
    ExportedBuffer(const ExportedBuffer&) = delete;
    ExportedBuffer& operator=(const ExportedBuffer&) = delete;

    char* get() const { return ptr_; }
    size_t bytes() const { return bytes_; }
    // The request a runner maps it with: {"name", "handle", "bytes"}.
    std::string handle_hex() const;

private:
    char* ptr_ = nullptr;
    size_t bytes_ = 0;
};

}  // namespace gemmlab
