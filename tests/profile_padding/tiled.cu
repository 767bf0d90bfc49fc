// tests/profile_padding/tiled.cu — stage "tiled" written from the stub, with the tile of A stored
// transposed in shared memory, and PAD_A words of padding per row of it: the bank-conflict experiment
// of tests/gpu_session/gpu_profile_padding.sh (`make profile` before and after), the lesson of the reuse stub's
// PAD_A in the smallest kernel that shows it.
//
// A warp of a 32×32 block is one row ty of threads, tx = 0..31. Each thread stores its element of A at
// As[tx][ty]: the warp writes one column of As, 32 words TILE + PAD_A apart. Shared memory has 32
// banks of 4 bytes: with PAD_A = 0 the 32 words are 32 apart, all in bank ty, and the store takes 32
// wavefronts (a 32-way bank conflict); with PAD_A = 1 they are 33 apart, one in each bank: one
// wavefront. (At TILE = 16 a warp is two rows: an 8-way conflict without padding.) The reads
// As[k][ty] are broadcasts either way. The script makes the PAD_A = 0 copy with sed.
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

constexpr int PAD_A = 1;  // extra words per row of the transposed A tile

constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

template <typename T, int TILE>
__global__ void __launch_bounds__(TILE * TILE)
tiled_kernel(int M, int N, int K, T alpha, const T* __restrict__ A, int lda,
             const T* __restrict__ B, int ldb, T beta, T* __restrict__ C, int ldc) {
    __shared__ T As[TILE][TILE + PAD_A];  // As[k][r]: the A tile transposed (row r of the block, step k)
    __shared__ T Bs[TILE][TILE];          // Bs[k][c]

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    // Each thread copies A[row][k0 + tx] (coalesced along tx) to As[tx][ty]: transposed.
    T acc = T(0);
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[tx][ty] = (row < M && k0 + tx < K) ? A[static_cast<size_t>(row) * lda + k0 + tx] : T(0);
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[static_cast<size_t>(k0 + ty) * ldb + col] : T(0);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc = fma(As[k][ty], Bs[k][tx], acc);
        __syncthreads();
    }
    if (row < M && col < N) {
        T* c = &C[static_cast<size_t>(row) * ldc + col];
        *c = (beta == T(0)) ? alpha * acc : fma(beta, *c, alpha * acc);
    }
}

}  // namespace

template <typename T, int TILE>
Status gemm_tiled(const GemmProblem<T>& p) {
    static_assert(TILE * TILE <= 1024, "one thread per element of the tile: at most 1024 threads a block");
    static_assert(TILE % 8 == 0, "TILE should be a multiple of 8 so that warps cover whole tile rows");
    static_assert((2 * TILE * TILE + TILE * PAD_A) * sizeof(T) <= 48 * 1024, "both tiles fit in static shared memory");
    if (p.M <= 0 || p.N <= 0) return Status::ok;
    const dim3 block(TILE, TILE);
    const dim3 grid(ceil_div(p.N, TILE), ceil_div(p.M, TILE));
    if (grid.y > 65535) return Status::unsupported;
    tiled_kernel<T, TILE><<<grid, block, 0, p.stream>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb,
                                                         p.beta, p.C, p.ldc);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}

template Status gemm_tiled<float, 8>(const GemmProblem<float>&);
template Status gemm_tiled<float, 16>(const GemmProblem<float>&);
template Status gemm_tiled<float, 32>(const GemmProblem<float>&);
template Status gemm_tiled<double, 8>(const GemmProblem<double>&);
template Status gemm_tiled<double, 16>(const GemmProblem<double>&);
template Status gemm_tiled<double, 32>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
