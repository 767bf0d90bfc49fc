// gemmlab/arch.h — which GPU architecture a stage's kernel was compiled for, and what it may use
// there. Part of the stage API (a stage file may include it): the reference's stage files pick their
// paths with it, and a student's tensor stage can do the same.
//
// One build may hold several images of a kernel (the handout compiles the reference for several
// architectures), and a GPU newer than every image runs the newest PTX, compiled by the driver. So
// the question "may this call use the FP64 tensor cores?" is not "is the GPU an sm_80 or newer?"
// but "was the image of this kernel that the driver loaded compiled for compute_80 or newer?":
// an sm_75 build JIT-compiled on an H100 holds no DMMA code, and must take the sm_75 path.
//
//   device side  kernels that need an instruction the target lacks are compiled out with
//                `#if __CUDA_ARCH__ >= 800` (etc.); their `#else` body traps and is never launched;
//   host side    compiled_arch(kernel) >= 80 picks the fast path, else the fallback (or
//                Status::unsupported when the stage has none).
//
// What needs what (PTX ISA): cp.async, TF32 and FP64 mma from sm_80; ldmatrix and the FP16 mma
// m16n8k8 from sm_75; FP16 mma m16n8k16 from sm_80; wgmma and setmaxnreg on sm_90a only.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

#include "gemmlab/stage_api.h"  // GEMMLAB_NS

namespace gemmlab::GEMMLAB_NS {

// The virtual architecture (75, 80, 90, ...) of the image of `kernel` this process runs, from the
// PTX version it was compiled from (cudaFuncAttributes::ptxVersion: 75 for a compute_75 build, even
// when the driver JIT-compiles that PTX for an H100). 0 when it cannot be read (no image for this
// GPU): every caller then takes its most portable path, or refuses.
template <class Kernel>
int compiled_arch(Kernel* kernel) {
    cudaFuncAttributes attr{};
    if (cudaFuncGetAttributes(&attr, kernel) != cudaSuccess) {
        (void)cudaGetLastError();  // a refusal here only means "not this path"
        return 0;
    }
    return attr.ptxVersion;
}

// The most dynamic shared memory one block may opt into on the current GPU: 227 KB on an H100,
// 163 KB on an A100, 99 KB on sm_86/sm_89/sm_120, 64 KB on sm_75. A configuration whose pipeline
// needs more cannot launch there, and the stage picks a smaller one.
inline size_t max_dynamic_shared_memory() {
    static const size_t bytes = [] {
        int device = 0, optin = 0;
        if (cudaGetDevice(&device) != cudaSuccess ||
            cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess) {
            (void)cudaGetLastError();
            return size_t(48 * 1024);  // what every GPU allows without opting in
        }
        return static_cast<size_t>(optin);
    }();
    return bytes;
}

// Before sm_80 there is no cp.async: the same copy done synchronously — the first `src_bytes` of
// the BYTES-byte destination from `src`, zeros after them — so that a cp.async pipeline stays
// correct on older GPUs (a stage is only refilled once nobody reads it, whenever the bytes land;
// the commit and wait become no-ops and the pipeline's barriers make the stores visible).
// dst is a shared-memory address, src_bytes a multiple of 4.
template <int BYTES>
__device__ __forceinline__ void copy_to_shared_sync(uint32_t dst, const void* src, int src_bytes) {
    const uint32_t* const words = static_cast<const uint32_t*>(src);
#pragma unroll
    for (int w = 0; w < BYTES / 4; ++w) {
        const uint32_t x = (4 * w < src_bytes) ? words[w] : 0u;
        asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(dst + 4 * w), "r"(x) : "memory");
    }
}

}  // namespace gemmlab::GEMMLAB_NS
