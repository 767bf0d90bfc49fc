// tests/gallery/judge_attacks.h — what the gallery's attacks from inside the process share: the
// attacks on the judge (reuse.cu of these entries is the control; unrolled.cu is the attack) and
// hidden_cublas. Only the `syscall` instruction and plain memory
// access: no name here is one the build's symbol check refuses, so what stops these attacks is the
// judge's design (docs/gallery.md), not the check. Not a model to follow.
#pragma once

#include <elf.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>

#include "gemmlab/stages.h"

namespace gallery {

inline long raw_syscall(long n, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0) {
    long ret;
    register long r10 asm("r10") = d;
    register long r8 asm("r8") = e;
    asm volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8) : "rcx", "r11", "memory");
    return ret;
}

// A whole (small) file read with the system calls themselves; "" when it cannot be read.
inline const char* read_file(const char* path, char* buf, size_t size) {
    const long fd = raw_syscall(SYS_openat, AT_FDCWD, reinterpret_cast<long>(path), O_RDONLY);
    if (fd < 0) return "";
    long have = 0, n;
    while (have < long(size) - 1 && (n = raw_syscall(SYS_read, fd, reinterpret_cast<long>(buf + have), long(size) - 1 - have)) > 0)
        have += n;
    raw_syscall(SYS_close, fd);
    buf[have] = '\0';
    return buf;
}

// Calls f(lo, hi) for every readable and writable private mapping (heap, stack, data, anonymous):
// where a process keeps its variables.
template <typename F>
void for_each_writable_mapping(F f) {
    static char maps[1 << 20];
    read_file("/proc/self/maps", maps, sizeof maps);
    for (char* line = maps; *line;) {
        char* next = std::strchr(line, '\n');
        if (next) *next = '\0';
        unsigned long lo = 0, hi = 0;
        char perms[8] = "";
        char name[256] = "";
        const int got = std::sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &lo, &hi, perms, name);
        const bool special = name[0] == '[' && std::strcmp(name, "[heap]") != 0 && std::strcmp(name, "[stack]") != 0;
        if (got >= 3 && perms[0] == 'r' && perms[1] == 'w' && !special && std::strncmp(name, "/dev/", 5) != 0 &&
            hi - lo <= (size_t(1) << 30))
            f(reinterpret_cast<const char*>(lo), reinterpret_cast<const char*>(hi));
        if (!next) break;
        line = next + 1;
    }
}

// Device allocations whose addresses the process keeps in its host memory (its own variables, the
// runner's, the CUDA runtime's), other than the ones in `skip`. At most `max` of them.
inline int find_device_pointers(void** out, int max, const void* const* skip, int nskip) {
    int found = 0, asked = 0;
    for_each_writable_mapping([&](const char* lo, const char* hi) {
        for (const char* p = lo; p + 8 <= hi && found < max && asked < 200000; p += 8) {
            const uintptr_t v = *reinterpret_cast<const uintptr_t*>(p);
            if (v < (uintptr_t(1) << 32) || v % 256 != 0 || v >= (uintptr_t(1) << 48)) continue;
            bool seen = false;
            for (int i = 0; i < found && !seen; ++i) seen = out[i] == reinterpret_cast<void*>(v);
            for (int i = 0; i < nskip && !seen; ++i) seen = skip[i] == reinterpret_cast<void*>(v);
            if (seen) continue;
            cudaPointerAttributes a{};
            ++asked;
            if (cudaPointerGetAttributes(&a, reinterpret_cast<void*>(v)) != cudaSuccess) {
                cudaGetLastError();
                continue;
            }
            if (a.type == cudaMemoryTypeDevice && a.devicePointer == reinterpret_cast<void*>(v))
                out[found++] = reinterpret_cast<void*>(v);
        }
    });
    return found;
}

// Runs of exactly 32 lowercase hexadecimal digits in writable memory: what a 128-bit key written as
// text looks like. Copies up to `max` of them into keys[i] (33 bytes each).
inline int find_hex_keys(char (*keys)[33], int max) {
    int found = 0;
    auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
    for_each_writable_mapping([&](const char* lo, const char* hi) {
        for (const char* p = lo; p + 33 < hi && found < max; ++p) {
            if (!hex(*p) || (p > lo && hex(p[-1]))) continue;
            int n = 0;
            while (p + n < hi && hex(p[n]) && n <= 32) ++n;
            if (n != 32) continue;
            bool dup = false;
            for (int i = 0; i < found && !dup; ++i) dup = std::memcmp(keys[i], p, 32) == 0;
            if (dup) continue;
            std::memcpy(keys[found], p, 32);
            keys[found++][32] = '\0';
        }
    });
    return found;
}

// The pipes among the open descriptors (fd 3 up): where a runner's report channel is.
inline int find_pipes(int* out, int max) {
    int found = 0;
    for (int fd = 3; fd < 1024 && found < max; ++fd) {
        struct stat st{};
        if (raw_syscall(SYS_fstat, fd, reinterpret_cast<long>(&st)) == 0 && S_ISFIFO(st.st_mode)) out[found++] = fd;
    }
    return found;
}

inline void write_all(int fd, const char* text) { raw_syscall(SYS_write, fd, reinterpret_cast<long>(text), long(std::strlen(text))); }

// A function of a loaded library by name, without dlsym: the library holding `inside` (an address in
// it), its ELF header in memory, its dynamic symbol table.
inline void* library_function(const void* inside, const char* name) {
    static char maps[1 << 20];
    read_file("/proc/self/maps", maps, sizeof maps);
    const uintptr_t address = reinterpret_cast<uintptr_t>(inside);
    char path[512] = "";
    for (char* line = maps; *line; line = std::strchr(line, '\n') ? std::strchr(line, '\n') + 1 : line + std::strlen(line)) {
        unsigned long lo = 0, hi = 0;
        char file[512] = "";
        if (std::sscanf(line, "%lx-%lx %*s %*s %*s %*s %511s", &lo, &hi, file) >= 2 && lo <= address && address < hi)
            std::strcpy(path, file);
    }
    uintptr_t page = 0;
    for (char* line = maps; *line && !page; line = std::strchr(line, '\n') ? std::strchr(line, '\n') + 1 : line + std::strlen(line)) {
        unsigned long lo = 0, offset = 1;
        char file[512] = "";
        if (std::sscanf(line, "%lx-%*x %*s %lx %*s %*s %511s", &lo, &offset, file) == 3 && offset == 0 && path[0] &&
            std::strcmp(file, path) == 0)
            page = lo;
    }
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
        if (v < base) v += base;
        if (dyn->d_tag == DT_SYMTAB) symtab = reinterpret_cast<const Elf64_Sym*>(v);
        if (dyn->d_tag == DT_STRTAB) strtab = reinterpret_cast<const char*>(v);
    }
    if (!symtab || !strtab) return nullptr;
    for (const Elf64_Sym* s = symtab; reinterpret_cast<const char*>(s) < strtab; ++s)
        if (s->st_name && s->st_value && std::strcmp(strtab + s->st_name, name) == 0)
            return reinterpret_cast<void*>(base + s->st_value);
    return nullptr;
}

// dlsym, found in libc's symbol table from printf (which a stage may call).
using DlsymFn = void* (*)(void*, const char*);
inline DlsymFn find_dlsym() { return reinterpret_cast<DlsymFn>(library_function(reinterpret_cast<const void*>(&std::printf), "dlsym")); }

// fn(arg) on a thread of its own, made with the clone system call itself (no pthread_create). The
// thread must keep to system calls: it shares the caller's thread-local storage.
inline bool raw_thread(void (*fn)(void*), void* arg) {
    constexpr size_t kStack = 1 << 20;
    char* stack = static_cast<char*>(std::malloc(kStack));
    if (!stack) return false;
    const uintptr_t top = (reinterpret_cast<uintptr_t>(stack) + kStack) & ~uintptr_t(15);
    const long flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM;
    long ret;
    register long r10 asm("r10") = 0;
    register long r8 asm("r8") = 0;
    register void (*f)(void*) asm("r12") = fn;
    register void* a asm("r13") = arg;
    asm volatile(
        "syscall\n\t"
        "test %%rax, %%rax\n\t"
        "jnz 1f\n\t"
        "mov %%r13, %%rdi\n\t"
        "call *%%r12\n\t"
        "mov $60, %%eax\n\t"  // exit: this thread only
        "xor %%edi, %%edi\n\t"
        "syscall\n\t"
        "1:\n\t"
        : "=a"(ret)
        : "a"(SYS_clone), "D"(flags), "S"(top), "d"(0), "r"(r10), "r"(r8), "r"(f), "r"(a)
        : "rcx", "r11", "memory");
    return ret > 0;
}

}  // namespace gallery

// ---- the product the attacks compute honestly --------------------------------------------------
// Each attack launches a correct plain GEMM (naive.cu's kernel) as its own product: what it tries
// is around that call, not in it.

namespace gemmlab::GEMMLAB_NS {
namespace {

constexpr int kBlockX = 32;  // one warp along a row of C (as in naive.cu)
constexpr int kBlockY = 8;

template <typename T>
__global__ void __launch_bounds__(kBlockX * kBlockY)
gallery_kernel(int M, int N, int K, T alpha, const T* __restrict__ A, int lda, const T* __restrict__ B, int ldb,
               T beta, T* __restrict__ C, int ldc) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    T acc = T(0);
    for (int k = 0; k < K; ++k) acc += A[row * lda + k] * B[k * ldb + col];
    T* c = &C[row * ldc + col];
    *c = (beta == T(0)) ? alpha * acc : alpha * acc + beta * *c;
}

template <typename T>
void launch_naive(const GemmProblem<T>& p, cudaStream_t s) {
    const dim3 block(kBlockX, kBlockY), grid((p.N + kBlockX - 1) / kBlockX, (p.M + kBlockY - 1) / kBlockY);
    gallery_kernel<T><<<grid, block, 0, s>>>(p.M, p.N, p.K, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C, p.ldc);
}

}  // namespace
}  // namespace gemmlab::GEMMLAB_NS
