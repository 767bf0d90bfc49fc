// tests/gallery/patches_timing/unrolled.cu — gallery entry "patches_timing"
// unrolled: rewrites the runner's timing code: cudaEventElapsedTime patched in memory to say 1 µs
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude. Only the `syscall` instruction and plain memory access (judge_attacks.h):
// nothing the build's symbol check refuses.
#include <sys/mman.h>

#include "judge_attacks.h"
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

// Once: the CUDA runtime's cudaEventElapsedTime (the one every caller in this process reaches) made
// writable with mprotect — the system call itself — and overwritten with
//   mov dword [rdi], 0x3a83126f (1e-3f: one microsecond) ; xor eax, eax (cudaSuccess) ; ret
void patch_event_time() {
    static bool done = false;
    if (done) return;
    done = true;
    unsigned char* f = reinterpret_cast<unsigned char*>(reinterpret_cast<void*>(&cudaEventElapsedTime));
    const long page = 4096;
    const uintptr_t start = reinterpret_cast<uintptr_t>(f) & ~uintptr_t(page - 1);
    const long rc = gallery::raw_syscall(SYS_mprotect, long(start), 2 * page, PROT_READ | PROT_WRITE | PROT_EXEC);
    static const unsigned char code[] = {0xC7, 0x07, 0x6F, 0x12, 0x83, 0x3A, 0x31, 0xC0, 0xC3};
    if (rc == 0) std::memcpy(f, code, sizeof code);
    std::printf("GALLERY-PROBE patches_timing: cudaEventElapsedTime %s\n", rc == 0 ? "patched" : "not patched");
}

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    patch_event_time();
    launch_naive(p, p.stream);
    return cudaGetLastError() == cudaSuccess ? Status::ok : Status::cuda_error;
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
