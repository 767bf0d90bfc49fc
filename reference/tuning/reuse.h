// reference/tuning/reuse.h — tuning candidates of the reuse stage (instructor tool).
//
// Included at the end of reference/reuse.cu in -DGEMMLAB_TUNE builds only (reference/tuning/run.sh
// --tune): it sees the stage file's own kernel templates and instantiates them with other
// parameters, for reference/tuning/ladder.cu to check and time beside the stage. It also holds a
// schedule the stage does not ship, stream-K. Their measurements are in the tuning rounds of
// docs/performance-log.md (docs/reference-kernels.md lists them).
#pragma once

#include "candidates.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

// ---- stream-K: the last, partial wave shared out by K slabs -------------------------------------
//
// 512 tiles of 128×256 on the 132 block slots of an H100 are 3.88 waves: the fourth wave leaves 16
// SMs idle for a whole tile's time. Instead, the first dp_tiles tiles (whole waves) are computed
// one per block, and the tiles of the last wave are cut into their K slabs and shared out evenly:
// block dp_tiles + j takes slabs [j·per_block, (j+1)·per_block) of those tiles, in order, so it
// works on one to three tiles, on part of their K each. A block that computed part of a tile
// writes its partial sums to `partials` and counts itself in `arrivals`; the last of a tile's
// blocks to arrive adds every part in the order of K (the sum does not depend on who came last),
// writes C and resets the count for the next call. Nobody waits for anybody, so no block can wait
// for one that has not started. Not shipped: it gained 0.1–0.2% (docs/performance-log/2026-11-23.md), and
// it allocates its workspace in its first call, which a stage may not do in a timed call
// (docs/student-guide.md); shipped, the workspace would have to be a fixed device array.
struct StreamK {
    int dp_tiles = 0;            // blocks [0, dp_tiles): one whole tile each
    int per_block = 0;           // slabs per block of the last wave's tiles (0: no stream-K)
    int max_parts = 0;           // most blocks sharing one tile: slots per tile in partials
    float* partials = nullptr;   // [tile of the last wave][part][BM·BN]
    int* arrivals = nullptr;     // [tile of the last wave]

    // The schedule interface of reuse_ffma_kernel (WholeTiles in reuse.cu).
    template <class Cfg, class Acc, class SetTile, class Compute, class Epilogue>
    __device__ __forceinline__ void run(int tiles, int num_slabs, int tid, Acc& acc, SetTile& set_tile,
                                        Compute& compute, Epilogue& epilogue) const {
        constexpr int BM = Cfg::BM, BN = Cfg::BN, TM = Cfg::TM, TN = Cfg::TN, V = Cfg::V;
        if (per_block == 0 || static_cast<int>(blockIdx.x) < dp_tiles) {  // one whole tile
            set_tile(static_cast<int>(blockIdx.x));
            compute(0, num_slabs);
            epilogue();
            return;
        }
        // ---- stream-K: slabs [lo, hi) of the last wave's tiles, counted tile after tile ------
        __shared__ int last_to_arrive;
        const long long total = static_cast<long long>(tiles) - dp_tiles;  // tiles of the last wave
        const long long lo = static_cast<long long>(static_cast<int>(blockIdx.x) - dp_tiles) * per_block;
        const long long hi = min(lo + per_block, total * num_slabs);
        constexpr int kVecs = TM * TN / V;         // float4s of partial sums per thread
        constexpr int kTileVecs = BM * BN / V;     // float4s of one part
        for (long long at = lo; at < hi;) {
            const int t = static_cast<int>(at / num_slabs);  // tile of the last wave
            const int first = static_cast<int>(at % num_slabs);
            const int slabs = static_cast<int>(min(hi - at, static_cast<long long>(num_slabs - first)));
            if (at != lo) __syncthreads();  // shared memory is reused: everyone is past the last tile
            at += slabs;
            set_tile(dp_tiles + t);
            compute(first, slabs);
            if (slabs == num_slabs) {  // the whole tile
                epilogue();
                continue;
            }
            // The tile's parts: the blocks whose ranges meet [t·num_slabs, (t+1)·num_slabs).
            const long long tile_lo = static_cast<long long>(t) * num_slabs;
            const int first_block = static_cast<int>(tile_lo / per_block);
            const int parts = static_cast<int>((tile_lo + num_slabs - 1) / per_block) - first_block + 1;
            const int part = static_cast<int>((at - slabs) / per_block) - first_block;
            float4* const slots = reinterpret_cast<float4*>(partials) + static_cast<size_t>(t) * max_parts * kTileVecs;
            float4* const mine = slots + static_cast<size_t>(part) * kTileVecs;
#pragma unroll
            for (int e = 0; e < kVecs; ++e) {
                const float* a = &acc[0][0] + e * V;
                __stcg(mine + e * Cfg::THREADS + tid, make_float4(a[0], a[1], a[2], a[3]));
            }
            __threadfence();
            __syncthreads();
            if (tid == 0) last_to_arrive = (atomicAdd(&arrivals[t], 1) == parts - 1);
            __syncthreads();
            if (!last_to_arrive) continue;
            __threadfence();
            // Every part is written: add them in the order of K.
#pragma unroll
            for (int e = 0; e < kVecs; ++e) {
                float4 sum = __ldcg(slots + e * Cfg::THREADS + tid);
                for (int r = 1; r < parts; ++r) {
                    const float4 v = __ldcg(slots + static_cast<size_t>(r) * kTileVecs + e * Cfg::THREADS + tid);
                    sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
                }
                float* a = &acc[0][0] + e * V;
                a[0] = sum.x, a[1] = sum.y, a[2] = sum.z, a[3] = sum.w;
            }
            if (tid == 0) arrivals[t] = 0;  // ready for the next call
            epilogue();
        }
    }
};

// The stream-K configurations' workspace (StreamK): partial sums and arrival counts, grown when a
// problem needs more and kept for later calls (every call leaves the counts at zero). One call at
// a time: two calls in flight at once on two streams would share it.
template <typename Acc>
struct StreamKWorkspace {
    Acc* partials = nullptr;
    size_t partial_floats = 0;
    int* arrivals = nullptr;
    size_t arrival_count = 0;

    bool reserve(size_t floats, size_t counts) {
        if (floats > partial_floats) {
            if (partials) cudaFree(partials);
            partials = nullptr, partial_floats = 0;
            if (cudaMalloc(&partials, floats * sizeof(Acc)) != cudaSuccess) return false;
            partial_floats = floats;
        }
        if (counts > arrival_count) {
            if (arrivals) cudaFree(arrivals);
            arrivals = nullptr, arrival_count = 0;
            if (cudaMalloc(&arrivals, counts * sizeof(int)) != cudaSuccess ||
                cudaMemset(arrivals, 0, counts * sizeof(int)) != cudaSuccess)
                return false;
            arrival_count = counts;
        }
        return true;
    }
};

// The stream-K schedule of a problem (StreamK); returns how many blocks to launch. Only where the
// last wave is partial enough to pay (at most 90% full) and its blocks each get enough slabs to
// amortize the prologue; otherwise one block per tile.
template <class Cfg, class Kernel>
long long stream_k_schedule(const GemmProblem<float>& p, long long tiles, Kernel kernel, StreamK& sk) {
    static const int blocks_per_sm = [&] {
        int b = 0;
        return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kernel, Cfg::THREADS, Cfg::SMEM_BYTES) == cudaSuccess
                   ? b : 0;
    }();
    static StreamKWorkspace<float> workspace;
    const long long slots = static_cast<long long>(sm_count()) * blocks_per_sm;
    if (slots <= 0 || tiles < slots) return tiles;
    const long long last = tiles % slots;  // tiles of the last, partial wave
    if (last == 0 || 10 * last > 9 * slots) return tiles;
    const long long num_slabs = (p.K + Cfg::BK - 1) / Cfg::BK;
    const long long work = last * num_slabs;
    const long long per_block = (work + slots - 1) / slots;
    if (per_block < 4 * Cfg::STAGES) return tiles;
    const long long max_parts = num_slabs / per_block + 2;
    if (!workspace.reserve(static_cast<size_t>(last * max_parts) * Cfg::BM * Cfg::BN, static_cast<size_t>(last)))
        return tiles;  // no memory for it: one block per tile
    sk.dp_tiles = static_cast<int>(tiles - last);
    sk.per_block = static_cast<int>(per_block);
    sk.max_parts = static_cast<int>(max_parts);
    sk.partials = workspace.partials;
    sk.arrivals = workspace.arrivals;
    return sk.dp_tiles + (work + per_block - 1) / per_block;
}

// Launches a reuse_ffma_kernel configuration with the stream-K schedule.
template <class Cfg, bool kVecB>
Status launch_stream_k(const GemmProblem<float>& p) {
    auto kernel = reuse_ffma_kernel<Cfg, kVecB, StreamK>;
    static const cudaError_t attribute = cudaFuncSetAttribute(
        kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(Cfg::SMEM_BYTES));
    GEMMLAB_TRY(attribute);
    const long long tiles = static_cast<long long>((p.M + Cfg::BM - 1) / Cfg::BM) * ((p.N + Cfg::BN - 1) / Cfg::BN);
    if (tiles > 0x7fffffffLL) return Status::unsupported;
    const bool vec_c = (p.ldc % Cfg::V == 0) && aligned16(p.C);
    StreamK sk;
    const long long blocks = stream_k_schedule<Cfg>(p, tiles, kernel, sk);
    kernel<<<static_cast<unsigned>(blocks), Cfg::THREADS, Cfg::SMEM_BYTES, p.stream>>>(
        p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C, p.ldc, vec_c, sk);
    GEMMLAB_CHECK_LAUNCH();
    return Status::ok;
}
template <class Cfg>
Status run_stream_k(const GemmProblem<float>& p) {
    if (p.M <= 0 || p.N <= 0) return Status::ok;
    const bool vec_b = (p.ldb % Cfg::V == 0) && aligned16(p.B);
    return vec_b ? launch_stream_k<Cfg, true>(p) : launch_stream_k<Cfg, false>(p);
}

template <class Cfg>
tuning::Candidate<typename Cfg::Elem> candidate(const char* label) {
    return {"reuse", label, &run_config<Cfg>};
}
template <class Cfg>
tuning::Candidate<float> stream_k_candidate(const char* label) {
    return {"reuse", label, &run_stream_k<Cfg>};
}

}  // namespace

void reuse_candidates(std::vector<tuning::Candidate<float>>& f32,
                      std::vector<tuning::Candidate<double>>& f64) {
    //                                           BM   BN  BK  WM  WN  TM  TN  ST  MINB
    f32.push_back(candidate<ReuseConfig<float, 128, 256, 8, 64, 64, 16, 8, 3, 1>>("128x256x8 w64x64 t16x8 s3"));
    f32.push_back(candidate<ReuseConfig<float, 128, 128, 8, 32, 64, 8, 8, 4, 2>>("128x128x8 w32x64 t8x8 s4"));
    f32.push_back(candidate<ReuseConfig<float, 64, 64, 8, 32, 32, 8, 4, 3, 4>>("64x64x8 w32x32 t8x4 s3"));
    // reuse_ffma_kernel (float only):                BM   BN  BK  WM  WN  TM  TN  ST MINB COPY ORDER EPI
    // (serp: serpentine FMA order; stream-K: the last partial wave shared out by slabs, StreamK below)
    f32.push_back(candidate<SgemmConfig<128, 256, 16, 64, 64, 16, 8, 3, 1, 8>>("ffma 128x256x16 w64x64 t16x8 s3 c8"));
    f32.push_back(candidate<SgemmConfig<128, 256, 16, 64, 64, 16, 8, 4, 1, 8>>("ffma 128x256x16 w64x64 t16x8 s4 c8"));
    f32.push_back(candidate<SgemmConfig<128, 256, 16, 64, 64, 16, 8, 4, 1, -1>>("ffma 128x256x16 w64x64 t16x8 s4 c-1"));
    f32.push_back(candidate<SgemmConfig<128, 256, 16, 64, 64, 16, 8, 3, 1, 8, kSerpentine>>("ffma 128x256x16 w64x64 t16x8 s3 c8 serp"));
    f32.push_back(candidate<SgemmConfig<128, 256, 16, 64, 64, 16, 8, 4, 1, 8, kSerpentine>>("ffma 128x256x16 w64x64 t16x8 s4 c8 serp"));
    f32.push_back(stream_k_candidate<SgemmConfig<128, 256, 16, 64, 64, 16, 8, 3, 1, 8, kSerpentine>>("ffma 128x256x16 w64x64 t16x8 s3 c8 serp stream-K"));
    f32.push_back(stream_k_candidate<SgemmConfig<128, 256, 16, 64, 64, 16, 8, 3, 1, 8, kRowByRow>>("ffma 128x256x16 w64x64 t16x8 s3 c8 stream-K"));
    // ... with C read in batches of 2 row fragments (epi2), and FMAs in strips of 2×2 blocks (FmaOrder)
    f32.push_back(candidate<SgemmConfig<128, 256, 16, 64, 64, 16, 8, 3, 1, 8, kSerpentine, 2>>("ffma 128x256x16 w64x64 t16x8 s3 c8 serp epi2"));
    f32.push_back(candidate<SgemmConfig<128, 256, 16, 64, 64, 16, 8, 3, 1, 8, strip_order(4, 0, true, false), 2>>("ffma 128x256x16 w64x64 t16x8 s3 c8 strips4 snake-columns epi2"));
    f32.push_back(candidate<SgemmConfig<128, 256, 16, 64, 64, 16, 8, 3, 1, 8, strip_order(4, 0, false, true), 2>>("ffma 128x256x16 w64x64 t16x8 s3 c8 strips4 snake-rows epi2"));
    f32.push_back(candidate<SgemmConfig<128, 256, 16, 64, 64, 16, 8, 3, 1, 8, strip_order(8, 0, true, true), 2>>("ffma 128x256x16 w64x64 t16x8 s3 c8 strips8 snake epi2"));
    f32.push_back(candidate<SgemmConfig<128, 256, 16, 64, 64, 16, 8, 3, 1, 8, strip_order(16, 0, false, false), 2>>("ffma 128x256x16 w64x64 t16x8 s3 c8 strips16 epi2"));
    f32.push_back(stream_k_candidate<SgemmConfig<128, 256, 16, 64, 64, 16, 8, 3, 1, 8, strip_order(4, 0, true, false), 2>>("ffma 128x256x16 w64x64 t16x8 s3 c8 strips4 snake-columns epi2 stream-K"));
    f32.push_back(candidate<SgemmConfig<64, 64, 16, 32, 32, 8, 4, 3, 4, -1>>("ffma 64x64x16 w32x32 t8x4 s3 c-1"));
    f64.push_back(candidate<ReuseConfig<double, 64, 128, 8, 32, 64, 8, 8, 3, 2>>("64x128x8 w32x64 t8x8 s3"));
    f64.push_back(candidate<ReuseConfig<double, 64, 128, 8, 16, 128, 8, 8, 3, 2>>("64x128x8 w16x128 t8x8 s3"));
    f64.push_back(candidate<ReuseConfig<double, 128, 64, 8, 128, 16, 8, 8, 3, 2>>("128x64x8 w128x16 t8x8 s3"));
    f64.push_back(candidate<ReuseConfig<double, 128, 64, 8, 64, 32, 8, 8, 3, 2>>("128x64x8 w64x32 t8x8 s3"));
    f64.push_back(candidate<ReuseConfig<double, 128, 128, 8, 64, 32, 8, 8, 3, 1>>("128x128x8 w64x32 t8x8 s3"));
    f64.push_back(candidate<ReuseConfig<double, 64, 128, 8, 32, 64, 8, 8, 4, 2>>("64x128x8 w32x64 t8x8 s4"));
    f64.push_back(candidate<ReuseConfig<double, 64, 64, 8, 32, 32, 8, 4, 3, 3>>("64x64x8 w32x32 t8x4 s3"));
    // (The Ampere-era m8n8k4 variant of reuse_kernel, Math::dmma, is retired: it measured 61–64% of
    // cuBLAS DGEMM where Part 2 measures 103–105%; docs/performance-log/2026-11-23.md.)
    // Part 2: the m16n8kK kernel (labels: block, warp tile, mma k, stages, blocks per SM).
    auto dmma = [&](auto cfg, const char* label) {
        using Cfg = decltype(cfg);
        f64.push_back({"reuse", label, &run_dmma<Cfg>});
    };
    //                BM   BN  BK  WM  WN  MMA_K ST MINB
    dmma(DmmaConfig<128, 64, 16, 64, 32, 8, 3, 2>{}, "m16n8 128x64x16 w64x32 k8 s3 2/SM");
    dmma(DmmaConfig<128, 128, 16, 64, 32, 8, 4, 1>{}, "m16n8 128x128x16 w64x32 k8 s4");
    dmma(DmmaConfig<128, 128, 16, 64, 32, 4, 4, 1>{}, "m16n8 128x128x16 w64x32 k4 s4");
    dmma(DmmaConfig<64, 64, 16, 32, 32, 16, 4, 2>{}, "m16n8 64x64x16 w32x32 k16 s4 2/SM");
    // m16n8k16 without the early fragment loads (with them, its 96 fragment registers spill).
    dmma(DmmaConfig<128, 128, 16, 64, 32, 16, 4, 1, false>{}, "m16n8 128x128x16 w64x32 k16 s4 late");
    dmma(DmmaConfig<128, 64, 16, 64, 32, 16, 3, 2, false>{}, "m16n8 128x64x16 w64x32 k16 s3 2/SM late");
}

}  // namespace gemmlab::GEMMLAB_NS
