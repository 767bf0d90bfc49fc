// reference_gemm.cpp — the FP64 reference and gauge (see reference_gemm.h).
#include "judge/reference_gemm.h"

#include <cmath>

#include "common/cuda_check.h"
#include "judge/device_ops.h"

namespace gemmlab {

template <typename T>
Reference compute_reference(GpuContext& ctx, const Shape& s, const T* A, int lda, const T* B, int ldb,
                            const T* Cin /* dense M×N, or null when beta == 0 */, double underflow_weight) {
    const int M = s.M, N = s.N, K = s.K;
    const double alpha = static_cast<double>(static_cast<T>(s.alpha));
    const double beta = static_cast<double>(static_cast<T>(s.beta));
    DeviceBuffer<double> Ad(size_t(M) * K), Bd(size_t(K) * N);
    Reference r{DeviceBuffer<double>(size_t(M) * N), DeviceBuffer<double>(size_t(M) * N)};
    auto fill_c = [&](double* dst, bool take_abs) {
        if (Cin) to_double(Cin, N, M, N, dst, take_abs, ctx.stream);
        else CUDA_CHECK(cudaMemsetAsync(dst, 0, size_t(M) * N * sizeof(double), ctx.stream));
    };
    to_double(A, lda, M, K, Ad.get(), false, ctx.stream);
    to_double(B, ldb, K, N, Bd.get(), false, ctx.stream);
    fill_c(r.value.get(), false);
    reference_dgemm(ctx, M, N, K, alpha, Ad.get(), K, Bd.get(), N, Cin ? beta : 0.0, r.value.get(), N);
    to_double(A, lda, M, K, Ad.get(), true, ctx.stream);
    to_double(B, ldb, K, N, Bd.get(), true, ctx.stream);
    fill_c(r.gauge.get(), true);
    reference_dgemm(ctx, M, N, K, std::fabs(alpha), Ad.get(), K, Bd.get(), N, Cin ? std::fabs(beta) : 0.0,
                    r.gauge.get(), N);
    if (underflow_weight > 0 && alpha != 0.0 && K > 0) {
        // Ad and Bd hold |A| and |B|: their row and column sums over k (bound.h, the underflow term).
        DeviceBuffer<double> ones(static_cast<size_t>(K)), row_sums(static_cast<size_t>(M)), col_sums(static_cast<size_t>(N));
        fill_bits(ones.get(), ones.size(), kOneBits64, ctx.stream);
        const double one = 1.0, zero = 0.0;
        // Row-major |A| (M×K) is column-major X (K×M): row sums are Xᵀ·1. Row-major |B| (K×N) is
        // column-major Y (N×K): column sums are Y·1.
        CUBLAS_CHECK(cublasDgemv(ctx.cublas, CUBLAS_OP_T, K, M, &one, Ad.get(), K, ones.get(), 1, &zero, row_sums.get(), 1));
        CUBLAS_CHECK(cublasDgemv(ctx.cublas, CUBLAS_OP_N, N, K, &one, Bd.get(), N, ones.get(), 1, &zero, col_sums.get(), 1));
        add_row_col_sums(r.gauge.get(), M, N, row_sums.get(), col_sums.get(), underflow_weight * std::fabs(alpha),
                         ctx.stream);
    }
    return r;
}

template Reference compute_reference<float>(GpuContext&, const Shape&, const float*, int, const float*, int,
                                            const float*, double);
template Reference compute_reference<double>(GpuContext&, const Shape&, const double*, int, const double*, int,
                                             const double*, double);

}  // namespace gemmlab
