// sandbox.cpp — a runner's sandbox (sandbox.h): prepared in the judge, applied in the forked child
// with plain system calls only. A layer the machine does not support is skipped and named in the
// run's records instead of failing: a grader that cannot sandbox still grades, and says so.
#include "judge/sandbox.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/audit.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

extern char** environ;

// Landlock rights newer than some distributions' headers (ABI 3 and 5).
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif

namespace gemmlab {
namespace {

constexpr const char* kScratchPrefix = "gemmlab-scratch-";
// Processes (tasks, threads included) a child may add to its user's count: CUDA and cuBLAS start a
// handful of threads; a fork bomb needs thousands. (Root ignores RLIMIT_NPROC; seccomp still holds.)
constexpr rlim_t kExtraTasks = 512;
// The report fd moves to a random number in [kReportFdLow, kReportFdHigh).
constexpr int kReportFdLow = 64;
constexpr int kReportFdHigh = 1024;
// Where the judge puts the two pipes before the plan is applied (isolation.cpp).
constexpr int kReportFd = 3, kKeyFd = 4;

std::string scratch_base() {
    const char* t = std::getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
    remove(path);
    return 0;
}

void remove_tree(const std::string& path) {
    // FTW_PHYS: never follow a symbolic link a stage left behind; FTW_DEPTH: contents first.
    nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

// Scratch directories of processes that no longer exist (a judge killed before its clean-up). Their
// names carry the judge's pid.
void sweep_stale_scratch(const std::string& base) {
    DIR* d = opendir(base.c_str());
    if (!d) return;
    const size_t plen = std::strlen(kScratchPrefix);
    std::vector<std::string> stale;
    while (dirent* e = readdir(d)) {
        if (std::strncmp(e->d_name, kScratchPrefix, plen) != 0) continue;
        const int pid = std::atoi(e->d_name + plen);
        if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH) stale.push_back(base + "/" + e->d_name);
    }
    closedir(d);
    for (const std::string& s : stale) remove_tree(s);
}

std::string make_scratch(std::string* why) {
    const std::string base = scratch_base();
    sweep_stale_scratch(base);
    std::string path = base + "/" + kScratchPrefix + std::to_string(getpid()) + "-XXXXXX";
    std::vector<char> buf(path.begin(), path.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) {
        *why = std::string("mkdtemp in ") + base + ": " + std::strerror(errno);
        return "";
    }
    return buf.data();
}

// Files named on the child's command line (a plan, a configuration file) stay readable after the
// chdir to scratch: relative names are made absolute. Only arguments that look like file names (they
// hold a '/' or a '.') and name an existing regular file count.
std::vector<std::string> argument_files(std::vector<std::string>& args) {
    std::vector<std::string> files;
    for (size_t i = 1; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a.find('/') == std::string::npos && a.find('.') == std::string::npos) continue;
        struct stat st{};
        if (stat(a.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
        char* abs = realpath(a.c_str(), nullptr);
        if (!abs) continue;
        args[i] = abs;
        files.emplace_back(abs);
        std::free(abs);
    }
    return files;
}

int random_high_fd() {
    rlimit nofile{};
    getrlimit(RLIMIT_NOFILE, &nofile);
    const int high = static_cast<int>(std::min<rlim_t>(nofile.rlim_cur, kReportFdHigh));
    if (high <= kReportFdLow + 1) return kReportFd;
    unsigned r = 0;
    if (getrandom(&r, sizeof r, 0) != sizeof r) r = static_cast<unsigned>(getpid()) * 2654435761u;
    // The key pipe's descriptor (4) and the report pipe's (3) are below kReportFdLow: no clash.
    return kReportFdLow + static_cast<int>(r % unsigned(high - kReportFdLow));
}

// ---- Landlock -------------------------------------------------------------------------------------

constexpr __u64 kRead = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
constexpr __u64 kReadFile = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE;
constexpr __u64 kFileRights = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                              LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |
                              LANDLOCK_ACCESS_FS_IOCTL_DEV;

__u64 landlock_rights(int abi) {
    __u64 all = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;  // ABI 1: bits 0..12
    if (abi >= 2) all |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3) all |= LANDLOCK_ACCESS_FS_TRUNCATE;
    if (abi >= 5) all |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
    return all;
}

void allow_path(int ruleset, const std::string& path, __u64 rights, __u64 handled) {
    if (path.empty() || path[0] != '/') return;
    const int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st{};
    if (fstat(fd, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) rights &= kFileRights;  // a rule on a file takes file rights only
        landlock_path_beneath_attr rule{};
        rule.allowed_access = rights & handled;
        rule.parent_fd = fd;
        if (rule.allowed_access) syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
    }
    close(fd);
}

void allow_path_list(int ruleset, const char* colon_list, __u64 rights, __u64 handled) {
    if (!colon_list) return;
    std::string list = colon_list;
    size_t start = 0;
    while (start <= list.size()) {
        const size_t end = list.find(':', start);
        allow_path(ruleset, list.substr(start, end == std::string::npos ? std::string::npos : end - start), rights,
                   handled);
        if (end == std::string::npos) break;
        start = end + 1;
    }
}

std::string base_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Libraries that compute a matrix product, or compile one: a runner of submission code may not
// read them (docs/gallery.md). Matched on the file name's start.
bool is_gemm_library(const std::string& file) {
    static const char* const kNames[] = {"libcublas", "libcublasLt", "libcurand", "libcupti", "libnvblas",
                                         "libcusolver", "libcusparse", "libcufft", "libnvrtc", "libnvJitLink",
                                         "libcudnn", "libcutlass", "libblas", "libopenblas", "liblapack",
                                         "libmkl", "libtorch", "libcutensor"};
    const std::string name = base_name(file);
    for (const char* n : kNames)
        if (starts_with(name, n)) return true;
    return false;
}

// The GPU driver's own libraries beside libcuda: the driver loads some of them on demand (the PTX
// compiler when a kernel is built for an older architecture than the GPU's).
bool is_driver_library(const std::string& name) {
    return starts_with(name, "libcuda.so") || starts_with(name, "libnvidia-") || starts_with(name, "libcuda_");
}

// Every file mapped in the judge now — the C/C++ runtime, the CUDA runtime, libcuda — is one a
// runner needs again after exec, wherever this machine installed it: each is allowed as a file (its
// directory is not: it may hold cuBLAS). GEMM libraries only for the grader's own runner.
void allow_mapped_libraries(int ruleset, const std::string& exe, const SandboxOptions& opt, __u64 handled) {
    FILE* maps = std::fopen("/proc/self/maps", "r");
    if (!maps) return;
    char line[4096];
    std::set<std::string> files, driver_dirs;
    while (std::fgets(line, sizeof line, maps)) {
        const char* slash = std::strchr(line, '/');
        if (!slash) continue;
        std::string file(slash);
        while (!file.empty() && (file.back() == '\n' || file.back() == ' ')) file.pop_back();
        if (file == exe || file.find(" (deleted)") != std::string::npos) continue;
        if (!opt.gemm_libraries && is_gemm_library(file)) continue;
        files.insert(file);
        if (is_driver_library(base_name(file))) driver_dirs.insert(file.substr(0, file.rfind('/')));
    }
    std::fclose(maps);
    for (const std::string& f : files) allow_path(ruleset, f, kReadFile, handled);
    for (const std::string& dir : driver_dirs) {
        DIR* d = opendir(dir.c_str());
        if (!d) continue;
        while (dirent* e = readdir(d))
            if (is_driver_library(e->d_name)) allow_path(ruleset, dir + "/" + e->d_name, kReadFile, handled);
        closedir(d);
    }
}

// The devices a runner opens, and nothing else of /dev: the GPU's (/dev/nvidia*: the control device,
// each GPU, unified memory, the capabilities folder) and the plain ones a library may use. /dev itself
// may be listed. A terminal, a disk, /dev/shm (GEMMLAB_SANDBOX_WRITE opens it where a driver needs it)
// stay closed.
void allow_devices(int ruleset, __u64 handled) {
    constexpr __u64 kDevice = kRead | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |
                              LANDLOCK_ACCESS_FS_IOCTL_DEV;
    allow_path(ruleset, "/dev", LANDLOCK_ACCESS_FS_READ_DIR, handled);
    for (const char* plain : {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"})
        allow_path(ruleset, plain, kDevice, handled);
    DIR* d = opendir("/dev");
    if (!d) return;
    while (dirent* e = readdir(d))
        if (starts_with(e->d_name, "nvidia")) allow_path(ruleset, std::string("/dev/") + e->d_name, kDevice, handled);
    closedir(d);
}

// Builds the ruleset; returns its fd, or -1 with *why set.
int prepare_landlock(const std::string& scratch, const std::string& exe, const std::vector<std::string>& files,
                     const SandboxOptions& opt, int* abi_out, std::string* why) {
    const long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 1) {
        *why = std::string("Landlock unavailable (") + std::strerror(errno) + ")";
        return -1;
    }
    *abi_out = static_cast<int>(abi);
    const __u64 handled = landlock_rights(static_cast<int>(abi));
    landlock_ruleset_attr attr{};
    attr.handled_access_fs = handled;
    const int ruleset = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0));
    if (ruleset < 0) {
        *why = std::string("landlock_create_ruleset: ") + std::strerror(errno);
        return -1;
    }
    fcntl(ruleset, F_SETFD, FD_CLOEXEC);

    for (const char* dir : {"/etc", "/sys", "/tmp/nvidia-mps"}) allow_path(ruleset, dir, kRead, handled);
    // Writes to existing files under /proc and the devices CUDA opens. Opening for writing with
    // O_TRUNC (what fopen(..., "w") does) also needs TRUNCATE: the CUDA driver names its threads by
    // writing /proc/self/task/<tid>/comm that way, and fails to start when that is refused.
    allow_path(ruleset, "/proc", kRead | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE, handled);
    allow_devices(ruleset, handled);
    allow_path(ruleset, scratch, handled, handled);
    // Machines whose driver needs more (the MPS client creates files in /dev/shm, for example):
    // GEMMLAB_SANDBOX_WRITE=dir:dir gives these directories every right. Nothing by default: the
    // CUDA driver on an H100 starts with none of them (grader/tools/fs_trace.c shows what it opens).
    allow_path_list(ruleset, std::getenv("GEMMLAB_SANDBOX_WRITE"), handled, handled);
    allow_path(ruleset, exe, kReadFile, handled);
    for (const std::string& f : opt.readable_files) allow_path(ruleset, f, kReadFile, handled);
    for (const std::string& f : files) allow_path(ruleset, f, LANDLOCK_ACCESS_FS_READ_FILE, handled);
    if (opt.gemm_libraries) {
        // The grader's own runner loads cuBLAS, which may open more of the toolkit at run time.
        allow_path_list(ruleset, std::getenv("CUDA_HOME"), kRead, handled);
        allow_path_list(ruleset, std::getenv("LD_LIBRARY_PATH"), kRead, handled);
        for (const char* dir : {"/usr", "/lib", "/lib64", "/opt"}) allow_path(ruleset, dir, kRead, handled);
    }
    allow_path_list(ruleset, std::getenv("CUDA_MPS_PIPE_DIRECTORY"), kRead, handled);
    allow_path_list(ruleset, std::getenv("GEMMLAB_SANDBOX_READ"), kRead, handled);
    allow_mapped_libraries(ruleset, exe, opt, handled);
    return ruleset;
}

// ---- seccomp ----------------------------------------------------------------------------------------

#if defined(__x86_64__)
constexpr __u32 kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr __u32 kAuditArch = AUDIT_ARCH_AARCH64;
#else
constexpr __u32 kAuditArch = 0;  // unknown architecture: no seccomp filter
#endif

constexpr __u32 kKill = SECCOMP_RET_KILL_PROCESS;
constexpr __u32 kAllow = SECCOMP_RET_ALLOW;

// A seccomp program built block by block. Each block starts by comparing the syscall number (which
// stays in the accumulator between blocks) and, on a match, ends in a return.
class FilterBuilder {
public:
    FilterBuilder() {
        emit(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
        emit(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0));
        emit(BPF_STMT(BPF_RET | BPF_K, kKill));  // another ABI (int 0x80) would renumber the calls
        emit(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
#if defined(__x86_64__)
        emit(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u /* __X32_SYSCALL_BIT */, 0, 1));
        emit(BPF_STMT(BPF_RET | BPF_K, kKill));
#endif
    }

    // nr always ends the process (or returns `action`).
    void always(long nr, __u32 action = kKill) { block(nr, {BPF_STMT(BPF_RET | BPF_K, action)}); }

    // nr is allowed when the low 32 bits of argument `arg` equal one of `values`; returns the index
    // of each value's comparison in the program (values patched in later: the child's pid).
    std::vector<size_t> allow_arg_in(long nr, int arg, const std::vector<__u32>& values) {
        std::vector<sock_filter> body{load_arg(arg, 0)};
        const int k = static_cast<int>(values.size());
        for (int j = 0; j < k; ++j)
            body.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, values[j], static_cast<__u8>(k - j), 0));
        body.push_back(BPF_STMT(BPF_RET | BPF_K, kKill));
        body.push_back(BPF_STMT(BPF_RET | BPF_K, kAllow));
        const size_t first = prog_.size() + 2;  // the block's jump, the load, then the comparisons
        block(nr, body);
        std::vector<size_t> slots;
        for (int j = 0; j < k; ++j) slots.push_back(first + static_cast<size_t>(j));
        return slots;
    }

    // nr is allowed when argument `arg` has any of `bits` set (low 32 bits).
    void allow_arg_bits(long nr, int arg, __u32 bits) {
        block(nr, {load_arg(arg, 0), BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, bits, 1, 0),
                   BPF_STMT(BPF_RET | BPF_K, kKill), BPF_STMT(BPF_RET | BPF_K, kAllow)});
    }

    // nr (socket) is allowed for `family` and `type` only (the type's flags, SOCK_CLOEXEC and
    // SOCK_NONBLOCK, masked off); any other returns `refused`.
    void allow_socket_of(long nr, __u32 family, __u32 type, __u32 refused) {
        block(nr, {load_arg(0, 0), BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, family, 0, 3), load_arg(1, 0),
                   BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf /* SOCK_TYPE_MASK */),
                   BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, type, 1, 0), BPF_STMT(BPF_RET | BPF_K, refused),
                   BPF_STMT(BPF_RET | BPF_K, kAllow)});
    }

    // nr is allowed when argument `arg` is exactly the 64-bit value `v` (a pointer).
    void allow_arg_equal64(long nr, int arg, __u64 v) {
        block(nr, {load_arg(arg, 0), BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<__u32>(v), 0, 2),
                   load_arg(arg, 4), BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<__u32>(v >> 32), 1, 0),
                   BPF_STMT(BPF_RET | BPF_K, kKill), BPF_STMT(BPF_RET | BPF_K, kAllow)});
    }

    std::vector<sock_filter> finish() {
        emit(BPF_STMT(BPF_RET | BPF_K, kAllow));
        return prog_;
    }

private:
    static sock_filter load_arg(int arg, int half) {  // little-endian: low half first
        return BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                        static_cast<__u32>(offsetof(seccomp_data, args) + 8 * arg + half));
    }
    void emit(sock_filter f) { prog_.push_back(f); }
    void block(long nr, const std::vector<sock_filter>& body) {
        emit(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<__u32>(nr), 0, static_cast<__u8>(body.size())));
        for (const sock_filter& f : body) emit(f);
    }
    std::vector<sock_filter> prog_;
};

// The filter of plan.argv[0]'s process. Its pid is not known before fork: the comparisons that
// name it are recorded and patched in the child.
void prepare_seccomp(SandboxPlan& plan) {
    if (kAuditArch == 0) {
        plan.seccomp_skipped = "seccomp: unsupported architecture";
        return;
    }
    FilterBuilder f;
    // New processes: threads only (CUDA, cuBLAS and OpenMP start threads; nothing needs a process).
    f.allow_arg_bits(SYS_clone, 0, CLONE_THREAD);
#ifdef SYS_clone3
    f.always(SYS_clone3, SECCOMP_RET_ERRNO | ENOSYS);  // its flags sit in memory: glibc falls back to clone
#endif
#ifdef SYS_fork
    f.always(SYS_fork);
#endif
#ifdef SYS_vfork
    f.always(SYS_vfork);
#endif
    // Exec: only the runner itself, once — the pointer the child calls execve with.
    f.allow_arg_equal64(SYS_execve, 0, reinterpret_cast<__u64>(plan.argv[0]));
    f.always(SYS_execveat);
    // Signals: only to itself (its pid, its group, which it leads).
    auto record = [&](const std::vector<size_t>& slots, bool with_zero) {
        plan.seccomp_pid_slots.push_back(slots[0]);
        if (with_zero) plan.seccomp_neg_pid_slots.push_back(slots[2]);
    };
    record(f.allow_arg_in(SYS_kill, 0, {0u, 0u, 0u}), true);  // pid, 0 (its group), -pid
    record(f.allow_arg_in(SYS_tgkill, 0, {0u}), false);
    record(f.allow_arg_in(SYS_rt_sigqueueinfo, 0, {0u}), false);
    record(f.allow_arg_in(SYS_rt_tgsigqueueinfo, 0, {0u}), false);
    f.always(SYS_tkill);
#ifdef SYS_pidfd_send_signal
    f.always(SYS_pidfd_send_signal);
#endif
#ifdef SYS_pidfd_getfd
    f.always(SYS_pidfd_getfd);
#endif
    // Sockets: a runner reaches nothing but its files and the pipes the judge gave it. CUDA itself makes
    // two UNIX sockets in every process (libcuda 580, seen on an H200): one it connects to
    // /tmp/nvidia-mps/control to look for an MPS server (an EPERM there reads as "none"), and one it
    // binds to the abstract name cuda-uvmfd-<net ns>-<pid> and listens on; it does not start when
    // either socket() fails. So socket() is allowed for that one kind, AF_UNIX SOCK_SEQPACKET, and
    // bind and listen are; every other family and type, a socket pair, connect and accept are refused,
    // so no connection is ever made from or to a runner, and no byte passes. io_uring, which could make
    // and connect sockets without these calls, is refused too. Refused with EPERM, not ended: a careless
    // call fails as it would on a machine without a network (gallery entry opens_sockets).
    f.allow_socket_of(SYS_socket, AF_UNIX, SOCK_SEQPACKET, SECCOMP_RET_ERRNO | EPERM);
    for (const long nr : {SYS_socketpair, SYS_connect, SYS_accept, SYS_accept4})
        f.always(nr, SECCOMP_RET_ERRNO | EPERM);
#ifdef SYS_io_uring_setup
    f.always(SYS_io_uring_setup, SECCOMP_RET_ERRNO | EPERM);
#endif
    // Other processes' memory, and leaving the process group the judge kills on a timeout.
    f.always(SYS_ptrace);
    f.always(SYS_process_vm_readv);
    f.always(SYS_process_vm_writev);
    f.always(SYS_setsid);
    f.always(SYS_setpgid);
    plan.seccomp = f.finish();
}

std::string json_escape(const std::string& s) { return nlohmann::json(s).dump(); }

}  // namespace

SandboxPlan::SandboxPlan(SandboxPlan&& o) noexcept
    : mode(std::move(o.mode)),
      scratch(std::move(o.scratch)),
      scratch_problem(std::move(o.scratch_problem)),
      landlock_ruleset(std::exchange(o.landlock_ruleset, -1)),
      landlock_abi(o.landlock_abi),
      landlock_skipped(std::move(o.landlock_skipped)),
      seccomp(std::move(o.seccomp)),
      seccomp_pid_slots(std::move(o.seccomp_pid_slots)),
      seccomp_neg_pid_slots(std::move(o.seccomp_neg_pid_slots)),
      seccomp_skipped(std::move(o.seccomp_skipped)),
      nproc_limit(o.nproc_limit),
      report_fd(o.report_fd),
      argv_text(std::move(o.argv_text)),
      env_text(std::move(o.env_text)),
      argv(std::move(o.argv)),
      envp(std::move(o.envp)) {}

SandboxPlan::~SandboxPlan() {
    if (landlock_ruleset >= 0) close(landlock_ruleset);
}

SandboxPlan prepare_sandbox(const std::string& exe, const std::vector<std::string>& args, const SandboxOptions& opt) {
    SandboxPlan plan;
    const char* mode_env = std::getenv("GEMMLAB_SANDBOX");
    plan.mode = mode_env && *mode_env ? mode_env : "on";
    const bool off = plan.mode == "off" || plan.mode == "0";

    rlimit nproc{};
    struct sysinfo si{};
    if (sysinfo(&si) == 0 && getrlimit(RLIMIT_NPROC, &nproc) == 0)
        plan.nproc_limit = std::min<rlim_t>(nproc.rlim_cur, static_cast<rlim_t>(si.procs) + kExtraTasks);
    plan.report_fd = random_high_fd();

    plan.argv_text = args;
    plan.argv_text.insert(plan.argv_text.begin(), exe);
    for (size_t i = 0; i + 1 < plan.argv_text.size(); ++i)
        if (plan.argv_text[i] == "--report-fd") plan.argv_text[i + 1] = std::to_string(plan.report_fd);
    const std::vector<std::string> files = argument_files(plan.argv_text);
    plan.scratch = make_scratch(&plan.scratch_problem);

    // The environment: the judge's, with every place a program keeps files moved into scratch.
    const std::string& s = plan.scratch;
    const std::vector<std::pair<std::string, std::string>> moved = {
        {"HOME", s}, {"TMPDIR", s}, {"TMP", s}, {"TEMP", s}, {"XDG_CACHE_HOME", s + "/.cache"},
        {"CUDA_CACHE_PATH", s + "/.nv"}};
    for (char** e = environ; e && *e; ++e) {
        const std::string entry = *e;
        const std::string name = entry.substr(0, entry.find('='));
        const bool replaced = !s.empty() && std::any_of(moved.begin(), moved.end(), [&](const auto& m) { return m.first == name; });
        if (!replaced) plan.env_text.push_back(entry);
    }
    if (!s.empty())
        for (const auto& [name, value] : moved) plan.env_text.push_back(name + "=" + value);
    for (std::string& a : plan.argv_text) plan.argv.push_back(a.data());
    plan.argv.push_back(nullptr);
    for (std::string& e : plan.env_text) plan.envp.push_back(e.data());
    plan.envp.push_back(nullptr);

    if (off) {
        plan.landlock_skipped = "off";
        plan.seccomp_skipped = "off";
        return plan;
    }
    if (plan.mode == "no-landlock") plan.landlock_skipped = "off";
    else if (plan.scratch.empty()) plan.landlock_skipped = "off: no scratch directory (" + plan.scratch_problem + ")";
    else {
        std::string why;
        plan.landlock_ruleset = prepare_landlock(plan.scratch, exe, files, opt, &plan.landlock_abi, &why);
        if (plan.landlock_ruleset < 0) plan.landlock_skipped = "off: " + why;
    }
    if (plan.mode == "no-seccomp") plan.seccomp_skipped = "off";
    else prepare_seccomp(plan);
    return plan;
}

void apply_sandbox_and_exec(SandboxPlan& plan, int status_fd) {
    SandboxStatus st;
    const pid_t parent = getppid();
    // Die with the judge: a runner whose judge was killed must not run on alone.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(125);  // it died before the line above
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    if (plan.nproc_limit) {
        rlimit cur{};
        getrlimit(RLIMIT_NPROC, &cur);
        const rlimit lim{plan.nproc_limit, std::min<rlim_t>(cur.rlim_max, plan.nproc_limit)};
        setrlimit(RLIMIT_NPROC, &lim);
    }
    // The report pipe moves from 3 to a random high descriptor: a careless "write a pass to fd 3"
    // reaches nothing.
    if (plan.report_fd != kReportFd && dup2(kReportFd, plan.report_fd) == plan.report_fd) close(kReportFd);
    if (!plan.scratch.empty()) st.chdir_rc = chdir(plan.scratch.c_str());

    const bool off = plan.mode == "off" || plan.mode == "0";
    if (!off) prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if (plan.landlock_ruleset >= 0) {
        st.landlock_rc = static_cast<int>(syscall(SYS_landlock_restrict_self, plan.landlock_ruleset, 0));
        st.landlock_errno = st.landlock_rc == 0 ? 0 : errno;
        close(plan.landlock_ruleset);
    }
    if (!plan.seccomp.empty()) {
        const __u32 self = static_cast<__u32>(getpid());  // the pid survives exec
        for (size_t i : plan.seccomp_pid_slots) plan.seccomp[i].k = self;
        for (size_t i : plan.seccomp_neg_pid_slots) plan.seccomp[i].k = static_cast<__u32>(-static_cast<int>(self));
        sock_fprog fprog{static_cast<unsigned short>(plan.seccomp.size()), plan.seccomp.data()};
        st.seccomp_rc = static_cast<int>(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog));
        st.seccomp_errno = st.seccomp_rc == 0 ? 0 : errno;
    }
    ssize_t ignored = write(status_fd, &st, sizeof st);
    execve(plan.argv[0], plan.argv.data(), plan.envp.data());
    st.exec_errno = errno;
    ignored = write(status_fd, &st, sizeof st);
    (void)ignored;
    _exit(127);
}

std::string describe_sandbox(const SandboxPlan& plan, const SandboxStatus& st) {
    std::string landlock = plan.landlock_skipped, seccomp = plan.seccomp_skipped;
    if (landlock.empty())
        landlock = st.landlock_rc == 0 ? "on (ABI " + std::to_string(plan.landlock_abi) + ")"
                                       : std::string("off: landlock_restrict_self: ") + std::strerror(st.landlock_errno);
    if (seccomp.empty())
        seccomp = st.seccomp_rc == 0 ? "on" : std::string("off: seccomp: ") + std::strerror(st.seccomp_errno);
    return std::string("{\"event\":\"sandbox\",\"scratch\":") + json_escape(plan.scratch) +
           ",\"report_fd\":" + std::to_string(plan.report_fd) + ",\"landlock\":" + json_escape(landlock) +
           ",\"seccomp\":" + json_escape(seccomp) + ",\"core_dumps\":false,\"nproc\":" +
           std::to_string(plan.nproc_limit) + "}";
}

void remove_scratch(const std::string& scratch) {
    if (!scratch.empty() && scratch.find(kScratchPrefix) != std::string::npos) remove_tree(scratch);
}

}  // namespace gemmlab
