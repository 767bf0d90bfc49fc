// tests/gallery/tensor_cores_outside_tensor/split_tf32.h — gallery entry "tensor_cores_outside_tensor"
// An honest tensor/3xtf32 kernel (WMMA, TF32 split in two parts) and gemm_tensor around it; the other
// variants and double are not written. Its entries' tensor.cu include it (tensor_by_pointer links
// here). Not a model to follow: part of submissions the grader must survive and see through.
#pragma once

#include <mma.h>

#include <type_traits>

#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {

// One warp per block computes a 16×16 tile of C: slabs of 8 along K staged in shared memory (zeros
// outside A and B), A and B split into TF32 big and small parts, three products per pair into a
// slab accumulator that an FP32 `+=` adds to the result every kSlabSteps steps (the tensor cores
// truncate when they add).
constexpr int kSlabSteps = 4;

__global__ void __launch_bounds__(32)
split_tf32_kernel(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                  const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    using namespace nvcuda;
    __shared__ __align__(32) float As[16 * 8];   // A tile 16×8, row major
    __shared__ __align__(32) float Bs[8 * 16];   // B tile 8×16, row major
    __shared__ __align__(32) float Cs[16 * 16];  // the result, for alpha, beta and the edges
    const int lane = threadIdx.x, row0 = blockIdx.y * 16, col0 = blockIdx.x * 16;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc, slab;
    wmma::fill_fragment(acc, 0.0f);
    wmma::fill_fragment(slab, 0.0f);
    int steps = 0;
    for (int k0 = 0; k0 < K; k0 += 8) {
        for (int i = lane; i < 128; i += 32) {
            const int ar = i / 8, ak = i % 8, bk = i / 16, bc = i % 16;
            As[i] = (row0 + ar < M && k0 + ak < K) ? A[static_cast<size_t>(row0 + ar) * lda + k0 + ak] : 0.0f;
            Bs[i] = (k0 + bk < K && col0 + bc < N) ? B[static_cast<size_t>(k0 + bk) * ldb + col0 + bc] : 0.0f;
        }
        __syncwarp();
        wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a_big, a_small;
        wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> b_big, b_small;
        wmma::load_matrix_sync(a_big, As, 8);
        wmma::load_matrix_sync(a_small, As, 8);
        wmma::load_matrix_sync(b_big, Bs, 16);
        wmma::load_matrix_sync(b_small, Bs, 16);
        for (int i = 0; i < a_big.num_elements; ++i) {
            const float x = a_big.x[i];
            a_big.x[i] = wmma::__float_to_tf32(x);
            a_small.x[i] = wmma::__float_to_tf32(x - a_big.x[i]);
        }
        for (int i = 0; i < b_big.num_elements; ++i) {
            const float x = b_big.x[i];
            b_big.x[i] = wmma::__float_to_tf32(x);
            b_small.x[i] = wmma::__float_to_tf32(x - b_big.x[i]);
        }
        wmma::mma_sync(slab, a_small, b_big, slab);  // the small terms first
        wmma::mma_sync(slab, a_big, b_small, slab);
        wmma::mma_sync(slab, a_big, b_big, slab);
        if (++steps == kSlabSteps || k0 + 8 >= K) {
            for (int i = 0; i < acc.num_elements; ++i) acc.x[i] += slab.x[i];
            wmma::fill_fragment(slab, 0.0f);
            steps = 0;
        }
        __syncwarp();  // every lane has loaded its fragments before the tiles are overwritten
    }
    wmma::store_matrix_sync(Cs, acc, 16, wmma::mem_row_major);
    __syncwarp();
    for (int i = lane; i < 256; i += 32) {
        const int r = row0 + i / 16, c = col0 + i % 16;
        if (r < M && c < N) {
            float* out = &C[static_cast<size_t>(r) * ldc + c];
            *out = (beta == 0.0f) ? alpha * Cs[i] : fmaf(beta, *out, alpha * Cs[i]);
        }
    }
#endif
}

template <typename T, InputPrecision IN>
Status gemm_tensor(const GemmProblem<T>& p) {
    if constexpr (std::is_same_v<T, float> && IN == InputPrecision::full) {
        if (p.M <= 0 || p.N <= 0) return Status::ok;
        const dim3 grid((p.N + 15) / 16, (p.M + 15) / 16);
        if (grid.y > 65535) return Status::unsupported;
        split_tf32_kernel<<<grid, 32, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta,
                                                     p.C, p.ldc);
        GEMMLAB_CHECK_LAUNCH();
        return Status::ok;
    } else {
        return Status::not_implemented;
    }
}

}  // namespace gemmlab::GEMMLAB_NS
