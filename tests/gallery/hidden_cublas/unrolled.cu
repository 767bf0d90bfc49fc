// tests/gallery/hidden_cublas/unrolled.cu — gallery entry "hidden_cublas"
// unrolled: cuBLAS looked for without naming it: dlsym found by reading libc's symbol table in memory,
// then dlopen (found the same way) on cuBLAS's files.
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude.
#include <elf.h>
#include <fcntl.h>
#include <sys/syscall.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

long raw_syscall(long n, long a, long b, long c) {
    long ret;
    asm volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return ret;
}

// Where the library holding `address` starts: the mapping of the same file at offset 0 in
// /proc/self/maps (read with the system calls themselves: no file function is referenced).
uintptr_t library_base(uintptr_t address) {
    static char maps[1 << 18];
    const long fd = raw_syscall(SYS_openat, AT_FDCWD, reinterpret_cast<long>("/proc/self/maps"), O_RDONLY);
    if (fd < 0) return 0;
    long have = 0, n;
    while (have < long(sizeof maps) - 1 && (n = raw_syscall(SYS_read, fd, reinterpret_cast<long>(maps + have),
                                                           long(sizeof maps) - 1 - have)) > 0)
        have += n;
    raw_syscall(SYS_close, fd, 0, 0);
    maps[have] = '\0';
    char path[512] = "";
    for (char* line = maps; *line; line = std::strchr(line, '\n') ? std::strchr(line, '\n') + 1 : line + std::strlen(line)) {
        unsigned long lo = 0, hi = 0;
        char name[512] = "";
        if (std::sscanf(line, "%lx-%lx %*s %*s %*s %*s %511s", &lo, &hi, name) >= 2 && lo <= address && address < hi)
            std::strcpy(path, name);
    }
    for (char* line = maps; *line; line = std::strchr(line, '\n') ? std::strchr(line, '\n') + 1 : line + std::strlen(line)) {
        unsigned long lo = 0, offset = 1;
        char name[512] = "";
        if (std::sscanf(line, "%lx-%*x %*s %lx %*s %*s %511s", &lo, &offset, name) == 3 && offset == 0 &&
            path[0] && std::strcmp(name, path) == 0)
            return lo;
    }
    return 0;
}

// A function of libc's by name, found from printf (which a stage may call) without dlsym: the ELF
// header of the library printf lives in, then its dynamic symbol table.
void* libc_function(const char* name) {
    const uintptr_t page = library_base(reinterpret_cast<uintptr_t>(&std::printf));
    if (!page) return nullptr;
    const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(page);
    if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) return nullptr;
    const auto* ph = reinterpret_cast<const Elf64_Phdr*>(page + eh->e_phoff);
    uintptr_t base = 0;
    const Elf64_Dyn* dyn = nullptr;
    for (int i = 0; i < eh->e_phnum; ++i) {
        if (ph[i].p_type == PT_LOAD && ph[i].p_offset == 0) base = page - ph[i].p_vaddr;
        if (ph[i].p_type == PT_DYNAMIC) dyn = reinterpret_cast<const Elf64_Dyn*>(ph[i].p_vaddr);
    }
    if (!dyn) return nullptr;
    dyn = reinterpret_cast<const Elf64_Dyn*>(base + reinterpret_cast<uintptr_t>(dyn));
    const Elf64_Sym* symtab = nullptr;
    const char* strtab = nullptr;
    for (; dyn->d_tag != DT_NULL; ++dyn) {
        uintptr_t v = dyn->d_un.d_ptr;
        if (v < base) v += base;  // the loader relocates these in place on x86-64; be safe either way
        if (dyn->d_tag == DT_SYMTAB) symtab = reinterpret_cast<const Elf64_Sym*>(v);
        if (dyn->d_tag == DT_STRTAB) strtab = reinterpret_cast<const char*>(v);
    }
    if (!symtab || !strtab) return nullptr;
    for (const Elf64_Sym* s = symtab; reinterpret_cast<const char*>(s) < strtab; ++s)
        if (s->st_name && s->st_value && std::strcmp(strtab + s->st_name, name) == 0)
            return reinterpret_cast<void*>(base + s->st_value);
    return nullptr;
}

using DlsymFn = void* (*)(void*, const char*);
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
        auto dlsym_fn = reinterpret_cast<DlsymFn>(libc_function("dlsym"));
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
