// tests/broken/process/pitched.cu — BROKEN ON PURPOSE (see README.md): the helpers are right
// (cudaMallocPitch, cudaMemcpy2DAsync both ways), but the kernel asserts that rows are tight
// (ldc == N), which pitched rows never are for small N: a device-side assert, which ends the
// kernel with a trap and leaves the CUDA context unusable.
#include <cassert>

#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;

template <typename T>
__device__ const T* row_of(const T* base, size_t pitch_bytes, int r) {
    return reinterpret_cast<const T*>(reinterpret_cast<const char*>(base) + r * pitch_bytes);
}

template <typename T>
__global__ void __launch_bounds__(kBlockX * kBlockY)
pitched_kernel(int M, int N, int K, T alpha, const T* A, size_t pa, const T* B, size_t pb, T beta, T* C, size_t pc) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    assert(pc == size_t(N) * sizeof(T));  // BROKEN: a wrong assumption, checked on the device
    if (row >= M || col >= N) return;
    T acc = T(0);
    for (int k = 0; k < K; ++k) acc += row_of(A, pa, row)[k] * row_of(B, pb, k)[col];
    T* c = const_cast<T*>(row_of<T>(C, pc, row)) + col;
    *c = beta == T(0) ? alpha * acc : alpha * acc + beta * *c;
}

}  // namespace

template <typename T>
Status pitched_alloc(PitchedMatrix<T>* out, int rows, int cols) {
    out->rows = rows, out->cols = cols;
    GEMMLAB_TRY(cudaMallocPitch(reinterpret_cast<void**>(&out->data), &out->pitch_bytes, size_t(cols) * sizeof(T), rows));
    return Status::ok;
}

template <typename T>
Status pitched_upload(const PitchedMatrix<T>& dst, const T* src, int ld_src, cudaStream_t stream) {
    GEMMLAB_TRY(cudaMemcpy2DAsync(dst.data, dst.pitch_bytes, src, size_t(ld_src) * sizeof(T), size_t(dst.cols) * sizeof(T),
                                  dst.rows, cudaMemcpyDeviceToDevice, stream));
    return Status::ok;
}

template <typename T>
Status pitched_download(T* dst, int ld_dst, const PitchedMatrix<T>& src, cudaStream_t stream) {
    GEMMLAB_TRY(cudaMemcpy2DAsync(dst, size_t(ld_dst) * sizeof(T), src.data, src.pitch_bytes, size_t(src.cols) * sizeof(T),
                                  src.rows, cudaMemcpyDeviceToDevice, stream));
    return Status::ok;
}

template <typename T>
Status gemm_pitched(const GemmProblem<T>& p) {
    const dim3 block(kBlockX, kBlockY), grid((p.N + kBlockX - 1) / kBlockX, (p.M + kBlockY - 1) / kBlockY);
    pitched_kernel<T><<<grid, block, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, size_t(p.lda) * sizeof(T), p.B,
                                                    size_t(p.ldb) * sizeof(T), p.beta, p.C, size_t(p.ldc) * sizeof(T));
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

template Status pitched_alloc<float>(PitchedMatrix<float>*, int, int);
template Status pitched_alloc<double>(PitchedMatrix<double>*, int, int);
template Status pitched_upload<float>(const PitchedMatrix<float>&, const float*, int, cudaStream_t);
template Status pitched_upload<double>(const PitchedMatrix<double>&, const double*, int, cudaStream_t);
template Status pitched_download<float>(float*, int, const PitchedMatrix<float>&, cudaStream_t);
template Status pitched_download<double>(double*, int, const PitchedMatrix<double>&, cudaStream_t);
template Status gemm_pitched<float>(const GemmProblem<float>&);
template Status gemm_pitched<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
