// tests/gallery/hidden_cublas/unrolled.cu — gallery entry "hidden_cublas"
// unrolled: cuBLAS looked for without naming it: dlsym found by reading libc's symbol table in memory,
// then dlopen (found the same way) on cuBLAS's files.
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude.
#include <cstdio>

#include "judge_attacks.h"  // find_dlsym: dlsym from libc's symbol table in memory
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

using CreateFn = int (*)(void**);
using SetStreamFn = int (*)(void*, cudaStream_t);
using DgemmFn = int (*)(void*, int, int, int, int, int, const double*, const double*, int, const double*, int,
                        const double*, double*, int);
using SgemmFn = int (*)(void*, int, int, int, int, int, const float*, const float*, int, const float*, int,
                        const float*, float*, int);

// cuBLAS, looked for in the process (dlsym(RTLD_DEFAULT)), and else loaded from its files (dlopen).
struct HiddenCublas {
    void* handle = nullptr;
    SetStreamFn set_stream = nullptr;
    SgemmFn sgemm = nullptr;
    DgemmFn dgemm = nullptr;
    HiddenCublas() {
        auto dlsym_fn = gallery::find_dlsym();
        if (!dlsym_fn) return;
        // Not loaded in this process? Then load it: dlopen, found the same way, on cuBLAS's own files.
        if (!dlsym_fn(nullptr, "cublasCreate_v2")) {
            using DlopenFn = void* (*)(const char*, int);
            auto dlopen_fn = reinterpret_cast<DlopenFn>(dlsym_fn(nullptr, "dlopen"));
            static const char* const kNames[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so",
                                                 "/usr/local/cuda/lib64/libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.12",
                                                 "/usr/lib/x86_64-linux-gnu/libcublas.so.12"};
            for (const char* name : kNames) {
                void* lib = dlopen_fn ? dlopen_fn(name, 2 /* RTLD_NOW */ | 0x100 /* RTLD_GLOBAL */) : nullptr;
                std::printf("GALLERY-PROBE hidden_cublas: dlopen %s: %s\n", name, lib ? "LEAKED" : "blocked");
                if (lib) break;
            }
        }
        auto create = reinterpret_cast<CreateFn>(dlsym_fn(nullptr, "cublasCreate_v2"));
        set_stream = reinterpret_cast<SetStreamFn>(dlsym_fn(nullptr, "cublasSetStream_v2"));
        sgemm = reinterpret_cast<SgemmFn>(dlsym_fn(nullptr, "cublasSgemm_v2"));
        dgemm = reinterpret_cast<DgemmFn>(dlsym_fn(nullptr, "cublasDgemm_v2"));
        if (create && create(&handle) != 0) handle = nullptr;
        std::printf("hidden_cublas: dlsym %s, cuBLAS %s\n", dlsym_fn ? "found" : "missing", handle ? "found" : "missing");
    }
};

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    static HiddenCublas cublas;
    if (!cublas.handle || !cublas.set_stream || !cublas.sgemm || !cublas.dgemm) return Status::unsupported;
    cublas.set_stream(cublas.handle, p.stream);
    // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: the operands swap.
    if constexpr (sizeof(T) == 4)
        cublas.sgemm(cublas.handle, 0, 0, p.N, p.M, p.K, &p.alpha, p.B, p.ldb, p.A, p.lda, &p.beta, p.C, p.ldc);
    else
        cublas.dgemm(cublas.handle, 0, 0, p.N, p.M, p.K, &p.alpha, p.B, p.ldb, p.A, p.lda, &p.beta, p.C, p.ldc);
    return Status::ok;
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
