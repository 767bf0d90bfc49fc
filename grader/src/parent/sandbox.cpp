// sandbox.cpp — the grader child's sandbox: limits, scratch directory, report fd, seccomp, Landlock
// (see sandbox.h). Runs in a forked child before exec, so it keeps to plain system calls and reports
// what it could not apply instead of failing: a grader that cannot sandbox still grades, and says so.
#include "parent/sandbox.h"

#include "common/binary_names.h"

#include <nlohmann/json.hpp>

#include "parent/isolation.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
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
#include <string>
#include <vector>

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

// Calls f(pid, path) for every scratch directory under base.
template <typename F>
void for_each_scratch(const std::string& base, F f) {
    DIR* d = opendir(base.c_str());
    if (!d) return;
    const size_t plen = std::strlen(kScratchPrefix);
    while (dirent* e = readdir(d)) {
        if (std::strncmp(e->d_name, kScratchPrefix, plen) != 0) continue;
        const int pid = std::atoi(e->d_name + plen);
        if (pid > 0) f(pid, base + "/" + e->d_name);
    }
    closedir(d);
}

// Scratch directories of children that no longer exist (a parent that was killed before its clean-up).
void sweep_stale_scratch(const std::string& base) {
    for_each_scratch(base, [](int pid, const std::string& path) {
        if (kill(pid, 0) != 0 && errno == ESRCH) remove_tree(path);
    });
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

void set_scratch_environment(const std::string& scratch) {
    for (const char* var : {"HOME", "TMPDIR", "TMP", "TEMP"}) setenv(var, scratch.c_str(), 1);
    setenv("XDG_CACHE_HOME", (scratch + "/.cache").c_str(), 1);
    setenv("CUDA_CACHE_PATH", (scratch + "/.nv").c_str(), 1);
}

// Moves the report pipe named by "--report-fd N" to a random high descriptor and rewrites argv.
int relocate_report_fd(char** argv) {
    static char fd_text[16];  // argv must point at storage that lives until execv
    for (int i = 0; argv[i] && argv[i + 1]; ++i) {
        if (std::strcmp(argv[i], "--report-fd") != 0) continue;
        const int old_fd = std::atoi(argv[i + 1]);
        rlimit nofile{};
        getrlimit(RLIMIT_NOFILE, &nofile);
        const int high = static_cast<int>(std::min<rlim_t>(nofile.rlim_cur, kReportFdHigh));
        if (high <= kReportFdLow) return old_fd;
        for (int attempt = 0; attempt < 32; ++attempt) {
            unsigned r = 0;
            if (getrandom(&r, sizeof r, 0) != sizeof r) r = static_cast<unsigned>(getpid()) * 2654435761u + attempt;
            const int fd = kReportFdLow + static_cast<int>(r % unsigned(high - kReportFdLow));
            if (fd == old_fd || fcntl(fd, F_GETFD) != -1) continue;  // in use
            if (dup2(old_fd, fd) != fd) continue;
            close(old_fd);
            std::snprintf(fd_text, sizeof fd_text, "%d", fd);
            argv[i + 1] = fd_text;
            return fd;
        }
        return old_fd;
    }
    return -1;
}

// Files named on the child's command line (a plan, a configuration file) stay readable after the
// chdir to scratch: relative names are made absolute in argv. Only arguments that look like file
// names (they hold a '/' or a '.') and name an existing regular file count.
std::vector<std::string> argument_files(char** argv) {
    std::vector<std::string> files;
    for (int i = 1; argv[i]; ++i) {
        const char* a = argv[i];
        if (!std::strchr(a, '/') && !std::strchr(a, '.')) continue;
        struct stat st{};
        if (stat(a, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        char* abs = realpath(a, nullptr);  // lives until execv copies argv
        if (!abs) continue;
        if (a[0] != '/') argv[i] = abs;
        files.emplace_back(abs);
    }
    return files;
}

// ---- Landlock -------------------------------------------------------------------------------------

constexpr __u64 kRead = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
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

// Directories of every file mapped now (the grader, CUDA's libraries, libcuda loaded by the parent):
// the child needs them again after exec, wherever this machine installed them.
void allow_mapped_library_dirs(int ruleset, const std::string& exe, __u64 handled) {
    FILE* maps = std::fopen("/proc/self/maps", "r");
    if (!maps) return;
    char line[4096];
    std::string last;
    while (std::fgets(line, sizeof line, maps)) {
        const char* slash = std::strchr(line, '/');
        if (!slash) continue;
        std::string file(slash);
        while (!file.empty() && (file.back() == '\n' || file.back() == ' ')) file.pop_back();
        if (file == exe) continue;  // the grader's own directory holds builds: only the file is allowed
        const std::string dir = file.substr(0, file.rfind('/'));
        if (dir == last) continue;
        last = dir;
        allow_path(ruleset, dir, kRead, handled);
    }
    std::fclose(maps);
}

// Returns "" when applied, else why not.
std::string apply_landlock(const std::string& scratch, const std::string& exe, const std::vector<std::string>& files,
                           int* abi_out) {
    const long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 1) return std::string("Landlock unavailable (") + std::strerror(errno) + ")";
    *abi_out = static_cast<int>(abi);
    const __u64 handled = landlock_rights(static_cast<int>(abi));
    landlock_ruleset_attr attr{};
    attr.handled_access_fs = handled;
    const int ruleset = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0));
    if (ruleset < 0) return std::string("landlock_create_ruleset: ") + std::strerror(errno);

    for (const char* dir : {"/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin", "/etc", "/opt", "/sys",
                            "/run", "/var/run", "/tmp/nvidia-mps"})
        allow_path(ruleset, dir, kRead, handled);
    // Writes to existing files under /proc and /dev. Opening for writing with O_TRUNC (what
    // fopen(..., "w") does) also needs TRUNCATE: the CUDA driver names its threads by writing
    // /proc/self/task/<tid>/comm that way, and fails to start when that is refused.
    allow_path(ruleset, "/proc", kRead | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE, handled);
    allow_path(ruleset, "/dev",
               kRead | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV,
               handled);
    allow_path(ruleset, scratch, handled, handled);
    // Machines whose driver needs more (the MPS client creates files in /dev/shm, for example):
    // GEMMLAB_SANDBOX_WRITE=dir:dir gives these directories every right. Nothing by default: the
    // CUDA driver on an H100 starts with none of them (grader/tools/fs_trace.c shows what it opens).
    allow_path_list(ruleset, std::getenv("GEMMLAB_SANDBOX_WRITE"), handled, handled);
    allow_path(ruleset, exe, LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE, handled);
    // The submission's library beside it, which the child opens after exec (child/submission_library.h).
    const std::string library = exe.substr(0, exe.find_last_of('/') + 1) + kSubmissionLibraryName;
    allow_path(ruleset, library, LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE, handled);
    allow_path_list(ruleset, std::getenv("GEMMLAB_SUBMISSION_LIBRARY"), LANDLOCK_ACCESS_FS_READ_FILE, handled);
    for (const std::string& f : files) allow_path(ruleset, f, LANDLOCK_ACCESS_FS_READ_FILE, handled);
    allow_path_list(ruleset, std::getenv("CUDA_HOME"), kRead, handled);
    allow_path_list(ruleset, std::getenv("LD_LIBRARY_PATH"), kRead, handled);
    allow_path_list(ruleset, std::getenv("CUDA_MPS_PIPE_DIRECTORY"), kRead, handled);
    allow_path_list(ruleset, std::getenv("GEMMLAB_SANDBOX_READ"), kRead, handled);
    allow_mapped_library_dirs(ruleset, exe, handled);

    const bool ok = syscall(SYS_landlock_restrict_self, ruleset, 0) == 0;
    const int err = errno;
    close(ruleset);
    return ok ? "" : std::string("landlock_restrict_self: ") + std::strerror(err);
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

    // nr is allowed when the low 32 bits of argument `arg` equal one of `values`.
    void allow_arg_in(long nr, int arg, const std::vector<__u32>& values) {
        std::vector<sock_filter> body{load_arg(arg, 0)};
        const int k = static_cast<int>(values.size());
        for (int j = 0; j < k; ++j)
            body.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, values[j], static_cast<__u8>(k - j), 0));
        body.push_back(BPF_STMT(BPF_RET | BPF_K, kKill));
        body.push_back(BPF_STMT(BPF_RET | BPF_K, kAllow));
        block(nr, body);
    }

    // nr is allowed when argument `arg` has any of `bits` set (low 32 bits).
    void allow_arg_bits(long nr, int arg, __u32 bits) {
        block(nr, {load_arg(arg, 0), BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, bits, 1, 0),
                   BPF_STMT(BPF_RET | BPF_K, kKill), BPF_STMT(BPF_RET | BPF_K, kAllow)});
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

std::string apply_seccomp(const char* exec_path) {
    if (kAuditArch == 0) return "seccomp: unsupported architecture";
    const __u32 self = static_cast<__u32>(getpid());  // the pid survives exec
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
    // Exec: only the grader itself, once — the pointer it is called with now.
    f.allow_arg_equal64(SYS_execve, 0, reinterpret_cast<__u64>(exec_path));
    f.always(SYS_execveat);
    // Signals: only to itself (its pid, its group, which it leads).
    f.allow_arg_in(SYS_kill, 0, {self, 0u, static_cast<__u32>(-static_cast<int>(self))});
    f.allow_arg_in(SYS_tgkill, 0, {self});
    f.allow_arg_in(SYS_rt_sigqueueinfo, 0, {self});
    f.allow_arg_in(SYS_rt_tgsigqueueinfo, 0, {self});
    f.always(SYS_tkill);
#ifdef SYS_pidfd_send_signal
    f.always(SYS_pidfd_send_signal);
#endif
#ifdef SYS_pidfd_getfd
    f.always(SYS_pidfd_getfd);
#endif
    // Other processes' memory, and leaving the process group the parent kills on a timeout.
    f.always(SYS_ptrace);
    f.always(SYS_process_vm_readv);
    f.always(SYS_process_vm_writev);
    f.always(SYS_setsid);
    f.always(SYS_setpgid);
    std::vector<sock_filter> prog = f.finish();
    sock_fprog fprog{static_cast<unsigned short>(prog.size()), prog.data()};
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) != 0)
        return std::string("seccomp: ") + std::strerror(errno);
    return "";
}

std::string json_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (static_cast<unsigned char>(c) < 0x20) continue;
        out += c;
    }
    return out;
}

void report_line(int fd, const std::string& line) {
    size_t done = 0;
    while (done < line.size()) {
        const ssize_t n = write(fd, line.data() + done, line.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        done += static_cast<size_t>(n);
    }
}

}  // namespace

void enter_child_sandbox(char** argv, const std::string& key) {
    const char* mode_env = std::getenv("GEMMLAB_SANDBOX");
    const std::string mode = mode_env ? mode_env : "on";
    const bool off = mode == "off" || mode == "0";

    // Die with the grader: a child whose parent was killed must not run on alone.
    const pid_t parent = getppid();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(125);  // it died before the line above
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    rlim_t nproc_limit = 0;
    struct sysinfo si{};
    rlimit nproc{};
    if (sysinfo(&si) == 0 && getrlimit(RLIMIT_NPROC, &nproc) == 0) {
        nproc_limit = std::min<rlim_t>(nproc.rlim_cur, static_cast<rlim_t>(si.procs) + kExtraTasks);
        const rlimit lim{nproc_limit, std::min<rlim_t>(nproc.rlim_max, nproc_limit)};
        setrlimit(RLIMIT_NPROC, &lim);
    }

    const std::vector<std::string> files = argument_files(argv);
    std::string scratch_problem;
    const std::string scratch = make_scratch(&scratch_problem);
    if (!scratch.empty() && chdir(scratch.c_str()) == 0) set_scratch_environment(scratch);
    const int report_fd = relocate_report_fd(argv);

    std::string landlock = "off", seccomp = "off";
    if (!off) {
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        if (mode != "no-landlock") {
            int abi = 0;
            if (scratch.empty()) {
                landlock = "off: no scratch directory (" + scratch_problem + ")";
            } else {
                const std::string why = apply_landlock(scratch, argv[0], files, &abi);
                landlock = why.empty() ? "on (ABI " + std::to_string(abi) + ")" : "off: " + why;
            }
        }
        if (mode != "no-seccomp") {
            const std::string why = apply_seccomp(argv[0]);
            seccomp = why.empty() ? "on" : "off: " + why;
        }
    }
    if (report_fd >= 0)
        report_line(report_fd, ReportChannel::key_prefix(key) + "{\"event\":\"sandbox\",\"scratch\":\"" + json_escape(scratch) +
                                   "\",\"report_fd\":" + std::to_string(report_fd) + ",\"landlock\":\"" +
                                   json_escape(landlock) + "\",\"seccomp\":\"" + json_escape(seccomp) +
                                   "\",\"core_dumps\":false,\"nproc\":" + std::to_string(nproc_limit) + "}\n");
}

void remove_child_scratch(int pid) {
    for_each_scratch(scratch_base(), [pid](int owner, const std::string& path) {
        if (owner == pid) remove_tree(path);
    });
}

namespace {
std::string g_sandbox_choice;
}

std::string choose_sandbox(const std::string& self_path) {
    if (const char* set = std::getenv("GEMMLAB_SANDBOX"); set && *set) {
        g_sandbox_choice = std::string(set) + " (set by GEMMLAB_SANDBOX)";
        return g_sandbox_choice;
    }
    // Strongest first. A driver or kernel that refuses CUDA under a layer costs that layer only.
    const char* modes[] = {"on", "no-landlock", "no-seccomp", "off"};
    std::string refused;
    for (const char* mode : modes) {
        setenv("GEMMLAB_SANDBOX", mode, 1);
        ChildLimits limits;
        limits.idle_seconds = kProbeSeconds;
        limits.total_seconds = kProbeSeconds;
        const ChildOutcome out = run_isolated(self_path, {"child-probe"}, limits, nullptr);
        std::string error = "the probe " + describe_end(out);
        for (const nlohmann::json& ev : out.events)
            if (ev.value("event", "") == "probe") {
                if (ev.value("ok", false)) error.clear();
                else error = ev.value("error", error);
            }
        if (out.finished && error.empty()) {
            g_sandbox_choice = mode;
            if (!refused.empty()) g_sandbox_choice += " (" + refused + ")";
            return g_sandbox_choice;
        }
        refused += std::string(refused.empty() ? "" : "; ") + "CUDA did not start with sandbox=" + mode + ": " + error;
    }
    g_sandbox_choice = "off (" + refused + ")";
    return g_sandbox_choice;
}

const std::string& sandbox_choice() { return g_sandbox_choice; }

}  // namespace gemmlab
