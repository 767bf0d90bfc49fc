// grader/tools/fs_trace.c — which files does CUDA touch? A diagnostic for the child sandbox.
//
// When CUDA does not start under the grader's Landlock rules on some machine (the results file
// then says `sandbox: no-landlock (CUDA did not start with sandbox=on: ...)`), this library tells
// which file access the driver needed. Preloaded into the grader, it appends one line per file
// operation that the sandbox can refuse — open, fopen, opendir, mkdir, mknod, unlink, rmdir,
// rename, link, symlink, truncate, and ioctl calls that fail — with the path, the flags, the
// result and errno, to /dev/shm/gemmlab-fs-trace.<pid> (the run below lets sandboxed children
// write there).
//
//   make fs-trace                                     # builds build/tools/fs_trace.so
//   export GEMMLAB_SANDBOX=on GEMMLAB_SANDBOX_READ=$PWD/build/tools GEMMLAB_SANDBOX_WRITE=/dev/shm
//   LD_PRELOAD=$PWD/build/tools/fs_trace.so build/<arch>/sub-student/gemmlab check --stage naive
//   grep -h ' = -1' /dev/shm/gemmlab-fs-trace.*       # what was refused, in which process
//
// Then allow that path in apply_landlock (grader/src/sandbox.cpp) or, on one machine only, with
// GEMMLAB_SANDBOX_READ. Nothing here changes what a call does: every wrapper calls the real one.
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static int trace_fd = -1;

static void trace(const char* what, const char* path, long arg, long result, int err) {
    if (trace_fd < 0) {
        char name[64];
        snprintf(name, sizeof name, "/dev/shm/gemmlab-fs-trace.%d", (int)getpid());
        int (*real_open)(const char*, int, ...) = (int (*)(const char*, int, ...))dlsym(RTLD_NEXT, "open");
        trace_fd = real_open(name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (trace_fd < 0) return;
    }
    char line[4300];
    int n = snprintf(line, sizeof line, "%s(%s, 0x%lx) = %ld%s%s\n", what, path ? path : "(null)", arg, result,
                     result < 0 ? " errno=" : "", result < 0 ? strerror(err) : "");
    if (n > 0) {
        if (n > (int)sizeof line) n = (int)sizeof line;
        ssize_t ignored = write(trace_fd, line, (size_t)n);
        (void)ignored;
    }
}

#define REAL(name)                       \
    static __typeof__(name)* real_##name; \
    if (!real_##name) real_##name = (__typeof__(name)*)dlsym(RTLD_NEXT, #name)

static mode_t mode_argument(int flags, va_list ap) {
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char* path, int flags, ...) {
    va_list ap; va_start(ap, flags); mode_t mode = mode_argument(flags, ap); va_end(ap);
    REAL(open);
    int r = real_open(path, flags, mode); int e = errno;
    trace("open", path, flags, r, e); errno = e; return r;
}
int open64(const char* path, int flags, ...) {
    va_list ap; va_start(ap, flags); mode_t mode = mode_argument(flags, ap); va_end(ap);
    REAL(open64);
    int r = real_open64(path, flags, mode); int e = errno;
    trace("open64", path, flags, r, e); errno = e; return r;
}
int openat(int dir, const char* path, int flags, ...) {
    va_list ap; va_start(ap, flags); mode_t mode = mode_argument(flags, ap); va_end(ap);
    REAL(openat);
    int r = real_openat(dir, path, flags, mode); int e = errno;
    trace("openat", path, flags, r, e); errno = e; return r;
}
int openat64(int dir, const char* path, int flags, ...) {
    va_list ap; va_start(ap, flags); mode_t mode = mode_argument(flags, ap); va_end(ap);
    REAL(openat64);
    int r = real_openat64(dir, path, flags, mode); int e = errno;
    trace("openat64", path, flags, r, e); errno = e; return r;
}
FILE* fopen(const char* path, const char* how) {
    REAL(fopen);
    FILE* f = real_fopen(path, how); int e = errno;
    trace(how && how[0] == 'r' && !strchr(how, '+') ? "fopen-r" : "fopen-w", path, 0, f ? 0 : -1, e);
    errno = e; return f;
}
FILE* fopen64(const char* path, const char* how) {
    REAL(fopen64);
    FILE* f = real_fopen64(path, how); int e = errno;
    trace(how && how[0] == 'r' && !strchr(how, '+') ? "fopen64-r" : "fopen64-w", path, 0, f ? 0 : -1, e);
    errno = e; return f;
}
DIR* opendir(const char* path) {
    REAL(opendir);
    DIR* d = real_opendir(path); int e = errno;
    trace("opendir", path, 0, d ? 0 : -1, e); errno = e; return d;
}
int mkdir(const char* path, mode_t mode) {
    REAL(mkdir);
    int r = real_mkdir(path, mode); int e = errno;
    trace("mkdir", path, mode, r, e); errno = e; return r;
}
int mknod(const char* path, mode_t mode, dev_t dev) {
    REAL(mknod);
    int r = real_mknod(path, mode, dev); int e = errno;
    trace("mknod", path, mode, r, e); errno = e; return r;
}
int unlink(const char* path) {
    REAL(unlink);
    int r = real_unlink(path); int e = errno;
    trace("unlink", path, 0, r, e); errno = e; return r;
}
int rmdir(const char* path) {
    REAL(rmdir);
    int r = real_rmdir(path); int e = errno;
    trace("rmdir", path, 0, r, e); errno = e; return r;
}
int rename(const char* from, const char* to) {
    REAL(rename);
    int r = real_rename(from, to); int e = errno;
    trace("rename", from, 0, r, e); trace("rename-to", to, 0, r, e); errno = e; return r;
}
int link(const char* from, const char* to) {
    REAL(link);
    int r = real_link(from, to); int e = errno;
    trace("link", to, 0, r, e); errno = e; return r;
}
int symlink(const char* from, const char* to) {
    REAL(symlink);
    int r = real_symlink(from, to); int e = errno;
    trace("symlink", to, 0, r, e); errno = e; return r;
}
int truncate(const char* path, off_t length) {
    REAL(truncate);
    int r = real_truncate(path, length); int e = errno;
    trace("truncate", path, (long)length, r, e); errno = e; return r;
}
int ioctl(int fd, unsigned long request, ...) {
    va_list ap; va_start(ap, request); void* arg = va_arg(ap, void*); va_end(ap);
    REAL(ioctl);
    int r = real_ioctl(fd, request, arg); int e = errno;
    if (r < 0) {
        char link_name[64], target[1024] = "?";
        snprintf(link_name, sizeof link_name, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link_name, target, sizeof target - 1);
        if (n > 0) target[n] = '\0';
        trace("ioctl", target, (long)request, r, e);
    }
    errno = e; return r;
}
