// gpu_context.cpp — the judge's CUDA context, the FP64 reference GEMM, exported buffers.
#include "judge/gpu_context.h"

#include "judge/device_ops.h"

#include <chrono>
#include <stdexcept>
#include <thread>
#include <utility>

#include "common/cuda_check.h"
#include "common/protocol.h"

namespace gemmlab {

GpuContext::GpuContext(uint64_t seed) {
    int dev = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&rescue, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&cublas));
    CUBLAS_CHECK(cublasSetStream(cublas, stream));
    CUBLAS_CHECK(cublasSetMathMode(cublas, CUBLAS_PEDANTIC_MATH));
    CURAND_CHECK(curandCreateGenerator(&rng, CURAND_RNG_PSEUDO_PHILOX4_32_10));
    CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(rng, seed));
    CURAND_CHECK(curandSetStream(rng, stream));
    if (const std::string why = memops.load(); !why.empty())
        throw std::runtime_error(why + ": the judge synchronizes with the stage's process through it");
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    int clock_khz = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
    shape.sms = prop.multiProcessorCount;
    shape.cc_major = prop.major;
    shape.cc_minor = prop.minor;
    shape.max_sm_clock_mhz = clock_khz / 1000.0;
    l2_bytes = static_cast<size_t>(prop.l2CacheSize);
    name = prop.name;
    device_arch = prop.major * 10 + prop.minor;
    code_arch = compiled_arch();
    char bus[64] = {0};
    CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus - 1, dev));
    pci_bus_id = bus;
}

GpuContext::~GpuContext() {
    if (rng) curandDestroyGenerator(rng);
    if (cublas) cublasDestroy(cublas);
    if (rescue) cudaStreamDestroy(rescue);
    if (stream) cudaStreamDestroy(stream);
}

void reference_dgemm(GpuContext& ctx, int M, int N, int K, double alpha, const double* A, int lda,
                     const double* B, int ldb, double beta, double* C, int ldc) {
    // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: swap the operands, keep the storage.
    CUBLAS_CHECK(cublasDgemm(ctx.cublas, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, ldb, A, lda,
                             &beta, C, ldc));
}

ExportedBuffer::ExportedBuffer(size_t bytes) : bytes_(protocol::export_size(bytes ? bytes : 1)) {
    CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr_), bytes_));
}

ExportedBuffer::~ExportedBuffer() {
    if (ptr_) cudaFree(ptr_);
}

ExportedBuffer::ExportedBuffer(ExportedBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}

ExportedBuffer& ExportedBuffer::operator=(ExportedBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
}

std::string ExportedBuffer::handle_hex() const {
    cudaIpcMemHandle_t h{};
    CUDA_CHECK(cudaIpcGetMemHandle(&h, ptr_));
    return protocol::to_hex(&h, sizeof h);
}

size_t gpu_free_bytes() {
    size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    return free_bytes;
}

void await_gpu_memory(size_t level, double seconds) {
    const size_t want = level > kGpuMemorySlack ? level - kGpuMemorySlack : 0;
    const auto t0 = std::chrono::steady_clock::now();
    while (gpu_free_bytes() < want &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

}  // namespace gemmlab
