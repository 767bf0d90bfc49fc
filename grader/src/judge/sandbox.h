// sandbox.h — what a runner process may do. The judge prepares everything in its own process
// (prepare_sandbox: scratch directory, Landlock rules, seccomp program, argv and environment) and the
// freshly forked child only applies it with plain system calls (apply_sandbox_and_exec), because the
// judge holds a CUDA context whose threads make anything else unsafe between fork and exec.
//
// A runner lives under these rules:
//   - no core dumps; a process-count limit; it dies with the judge (PR_SET_PDEATHSIG);
//   - a fresh scratch directory as its working directory, HOME and TMPDIR;
//   - its report pipe on a random high descriptor (fd 3 is closed), named in its argv;
//   - seccomp: fork/vfork/clone of a process, exec of anything but the runner, signals to other
//     processes, ptrace and cross-process memory access end it with SIGSYS ("Bad system call");
//     sockets fail with EPERM: every family and type but the AF_UNIX SOCK_SEQPACKET socket CUDA binds
//     and listens on in every process, a socket pair, connect and accept (no connection is ever
//     made), and io_uring;
//   - Landlock (Linux 5.13+): it creates and writes files only in its scratch directory (plus the
//     GPU's devices, /dev/null and its kind, and existing files under /proc), and reads only /etc,
//     /proc, /sys, those devices, the files of the libraries it runs on (those mapped in the judge,
//     one by one), the GPU driver's own libraries, its executable and files named on its command
//     line — not /run, the repository, the results, the reference solutions, other students'
//     submissions, and, unless the runner is the grader's own (SandboxOptions::gemm_libraries), no
//     GEMM library: cuBLAS is not within a stage's reach.
//
// What this does not stop is written down in docs/gallery.md ("What the defences do not cover").
// GEMMLAB_SANDBOX=off|no-seccomp|no-landlock relaxes it (for a machine where it gets in the way; the
// run's records say what was enforced). GEMMLAB_SANDBOX_READ=dir:dir adds readable directories,
// GEMMLAB_SANDBOX_WRITE=dir:dir writable ones (grader/tools/fs_trace.c finds what a driver needs).
#pragma once

#include <linux/filter.h>
#include <sys/resource.h>

#include <string>
#include <vector>

namespace gemmlab {

struct SandboxOptions {
    // The grader's own runner (gemmlab-baselines: cuBLAS and the reference) may read the GEMM
    // libraries; a runner of submission code may not.
    bool gemm_libraries = false;
    // Files the runner reads besides its executable (the submission's library).
    std::vector<std::string> readable_files;
};

// Everything the child applies, prepared in the judge. Move-only: it owns a Landlock ruleset fd.
struct SandboxPlan {
    std::string mode = "on";  // on | no-landlock | no-seccomp | off (GEMMLAB_SANDBOX)
    std::string scratch;      // created by prepare_sandbox; "" when it could not be
    std::string scratch_problem;
    int landlock_ruleset = -1;   // a prepared ruleset, or -1
    int landlock_abi = 0;
    std::string landlock_skipped;  // why no ruleset was prepared ("" when one was)
    std::vector<sock_filter> seccomp;   // the filter program; empty: none
    std::vector<size_t> seccomp_pid_slots, seccomp_neg_pid_slots;  // filled with the child's pid
    std::string seccomp_skipped;
    rlim_t nproc_limit = 0;
    int report_fd = -1;          // where the report pipe ends up in the child
    std::vector<std::string> argv_text, env_text;
    std::vector<char*> argv, envp;  // point into argv_text/env_text; argv[0] is the executable

    SandboxPlan() = default;
    SandboxPlan(SandboxPlan&& o) noexcept;
    SandboxPlan& operator=(SandboxPlan&&) = delete;
    SandboxPlan(const SandboxPlan&) = delete;
    ~SandboxPlan();
};

// In the judge: the plan for `exe args...`. The args hold "--report-fd" followed by a placeholder,
// which becomes the chosen high descriptor. Never fails: what cannot be prepared is named in the plan.
SandboxPlan prepare_sandbox(const std::string& exe, const std::vector<std::string>& args, const SandboxOptions& opt);

// What the child tells the judge through a close-on-exec pipe before execve (plain ints: written
// without allocating).
struct SandboxStatus {
    int landlock_rc = -2, landlock_errno = 0;  // -2: not attempted
    int seccomp_rc = -2, seccomp_errno = 0;
    int chdir_rc = -2;
    int exec_errno = 0;  // set only when execve failed
};

// In the freshly forked child, after its descriptors are in place (report pipe on fd 3, the key pipe
// on fd 4): moves the report pipe to plan.report_fd, applies limits, scratch, Landlock and seccomp,
// writes a SandboxStatus to status_fd and calls execve. Async-signal-safe; never returns.
[[noreturn]] void apply_sandbox_and_exec(SandboxPlan& plan, int status_fd);

// In the judge: the {"event":"sandbox", ...} record of what a child enforced, from its plan and status.
std::string describe_sandbox(const SandboxPlan& plan, const SandboxStatus& status);

// In the judge, after the child with this scratch directory has been reaped: removes the directory.
// (Each prepare_sandbox also sweeps away scratch directories of processes that no longer exist.)
void remove_scratch(const std::string& scratch);

}  // namespace gemmlab
