// tests/gallery/reads_answer/unrolled.cu — gallery entry "reads_answer"
// unrolled: reads the answer through pointers in its process's memory: device allocations the judge's own process would hold
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude. Only the `syscall` instruction and plain memory access (judge_attacks.h):
// nothing the build's symbol check refuses.
#include "judge_attacks.h"
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

// The FP64 answer of a judge that lived in this process would sit in a device allocation whose
// address some host variable holds: every such allocation is read as an M×N matrix of doubles and
// copied into C (converted to T) by this kernel.
template <typename T>
__global__ void copy_answer(const double* answer, int M, int N, T* C, int ldc) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) C[row * ldc + col] = static_cast<T>(answer[size_t(row) * N + col]);
}

// The size of the device allocation holding p, from the driver's cuMemGetAddressRange (found through
// dlsym, itself found in libc's symbol table in memory); 0 when unknown.
size_t allocation_size(const void* p) {
    using RangeFn = int (*)(unsigned long long*, size_t*, unsigned long long);
    static RangeFn range = nullptr;
    if (!range)
        if (const gallery::DlsymFn dl = gallery::find_dlsym()) range = reinterpret_cast<RangeFn>(dl(nullptr, "cuMemGetAddressRange_v2"));
    unsigned long long base = 0;
    size_t size = 0;
    if (!range || range(&base, &size, reinterpret_cast<unsigned long long>(p)) != 0) return 0;
    return size - (reinterpret_cast<unsigned long long>(p) - base);
}

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    const void* skip[] = {p.A, p.B, p.C};
    void* found[64];
    const int n = gallery::find_device_pointers(found, 64, skip, 3);
    int large = 0;
    // Every allocation large enough to hold an M×N answer in double is copied into C; the last one wins,
    // as the answer would be the most recent allocation.
    for (int i = 0; i < n; ++i) {
        if (allocation_size(found[i]) < size_t(p.M) * p.N * sizeof(double)) continue;
        ++large;
        copy_answer<T><<<dim3((p.N + 31) / 32, (p.M + 7) / 8), dim3(32, 8), 0, p.stream>>>(
            static_cast<const double*>(found[i]), p.M, p.N, p.C, p.ldc);
    }
    std::printf("GALLERY-PROBE reads_answer: %d device allocation(s) found through host memory, %d large enough\n", n,
                large);
    cudaGetLastError();
    return Status::ok;
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
