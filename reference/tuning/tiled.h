// reference/tuning/tiled.h — tuning candidates of the tiled stage (instructor tool).
//
// Included at the end of reference/tiled.cu in -DGEMMLAB_TUNE builds only (reference/tuning/run.sh
// --tune): it adds a kernel of its own, the student version, as a baseline for
// reference/tuning/ladder.cu to check and time beside the stage. Measurements: the tuning rounds of
// docs/performance-log.md (docs/reference-kernels.md lists them).
#pragma once

#include "candidates.h"

namespace gemmlab::GEMMLAB_NS {

namespace {
// Tuning baseline (not the stage): the student version of the kernel — one buffer per operand,
// two barriers per step, no prefetch — to measure what the double buffering above is worth.
template <typename T, int TILE>
__global__ void __launch_bounds__(TILE * TILE)
tiled_two_barrier_kernel(int M, int N, int K, T alpha, const T* __restrict__ A, int lda,
                         const T* __restrict__ B, int ldb, T beta, T* __restrict__ C, int ldc) {
    __shared__ T As[TILE][TILE];
    __shared__ T Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    T acc = T(0);
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[static_cast<size_t>(row) * lda + k0 + tx] : T(0);
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[static_cast<size_t>(k0 + ty) * ldb + col] : T(0);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc = fma(As[ty][k], Bs[k][tx], acc);
        __syncthreads();
    }
    if (row < M && col < N) {
        T* c = &C[static_cast<size_t>(row) * ldc + col];
        *c = (beta == T(0)) ? alpha * acc : fma(beta, *c, alpha * acc);
    }
}

template <typename T, int TILE>
Status run_tiled_two_barrier(const GemmProblem<T>& p) {
    if (p.M <= 0 || p.N <= 0) return Status::ok;
    const dim3 block(TILE, TILE), grid((p.N + TILE - 1) / TILE, (p.M + TILE - 1) / TILE);
    if (grid.y > 65535) return Status::unsupported;
    tiled_two_barrier_kernel<T, TILE><<<grid, block, 0, p.stream>>>(
        p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C, p.ldc);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}
}  // namespace

void tiled_candidates(std::vector<tuning::Candidate<float>>& f32, std::vector<tuning::Candidate<double>>& f64) {
    f32.push_back({"tiled", "32 two barriers", &run_tiled_two_barrier<float, 32>});
    f64.push_back({"tiled", "32 two barriers", &run_tiled_two_barrier<double, 32>});
    f64.push_back({"tiled", "16 two barriers", &run_tiled_two_barrier<double, 16>});
}

}  // namespace gemmlab::GEMMLAB_NS
