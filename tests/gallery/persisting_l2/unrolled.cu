// tests/gallery/persisting_l2/unrolled.cu — gallery entry "persisting_l2"
// unrolled: reserves a persisting-L2 carve-out for its inputs, so that they could stay warm between calls
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude. Only the `syscall` instruction and plain memory access (judge_attacks.h):
// nothing the build's symbol check refuses.
#include <algorithm>

#include "judge_attacks.h"
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

using SetLimitFn = cudaError_t (*)(cudaLimit, size_t);
using SetAttributeFn = cudaError_t (*)(cudaStream_t, cudaStreamAttrID, const cudaStreamAttrValue*);

}  // namespace

// The naive product, with A and B in a window the L2 keeps ("persisting") across kernels and calls:
// the largest carve-out the GPU allows, set with cudaDeviceSetLimit and cudaStreamSetAttribute — found
// through dlsym, itself found in libc's symbol table in memory.
template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    static SetLimitFn set_limit = nullptr;
    static SetAttributeFn set_attribute = nullptr;
    if (!set_limit) {
        const gallery::DlsymFn dl = gallery::find_dlsym();
        if (dl) {
            set_limit = reinterpret_cast<SetLimitFn>(dl(nullptr, "cudaDeviceSetLimit"));
            set_attribute = reinterpret_cast<SetAttributeFn>(dl(nullptr, "cudaStreamSetAttribute"));
        }
        int most = 0;
        cudaDeviceGetAttribute(&most, cudaDevAttrMaxPersistingL2CacheSize, 0);
        const cudaError_t e = set_limit ? set_limit(cudaLimitPersistingL2CacheSize, size_t(most)) : cudaErrorUnknown;
        std::printf("GALLERY-PROBE persisting_l2: carve-out of %d bytes %s\n", most, e == cudaSuccess ? "set" : "refused");
        cudaGetLastError();
    }
    if (set_attribute) {
        int window = 0;
        cudaDeviceGetAttribute(&window, cudaDevAttrMaxAccessPolicyWindowSize, 0);
        cudaStreamAttrValue v{};
        v.accessPolicyWindow.base_ptr = const_cast<T*>(p.A);
        v.accessPolicyWindow.num_bytes = std::min<size_t>(size_t(window), size_t(p.M) * p.lda * sizeof(T));
        v.accessPolicyWindow.hitRatio = 1.0f;
        v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
        v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
        set_attribute(p.stream, cudaStreamAttributeAccessPolicyWindow, &v);
        cudaGetLastError();
    }
    launch_naive(p, p.stream);
    return cudaGetLastError() == cudaSuccess ? Status::ok : Status::cuda_error;
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
