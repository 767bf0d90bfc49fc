// sandbox.h — what a grader child process may do, set up between fork and exec.
//
// run_isolated (isolation.cpp) calls enter_child_sandbox(argv) in the child right before execv. From
// then on, the child (and the stage code it runs) lives under these rules:
//
//   - no core dumps; a process-count limit; it dies with its parent (PR_SET_PDEATHSIG);
//   - a fresh scratch directory as its working directory, HOME and TMPDIR;
//   - its report pipe moved from the fd named on its command line to a random high fd (fd 3 is closed),
//     and argv rewritten to name the new one — a careless "write a pass to fd 3" reaches nothing;
//   - seccomp: fork/vfork/clone of a process, exec of anything but the grader, signals to other
//     processes, ptrace and cross-process memory access end the child with SIGSYS ("Bad system call");
//   - Landlock (Linux 5.13+): it creates and writes files only in its scratch directory (plus the
//     existing device files under /dev and /proc), and reads only system and library directories,
//     its scratch directory, the grader executable and files named on its command line (relative
//     names are made absolute there) — not the repository, the results, the reference solutions or
//     other students' submissions. So a child gets its inputs on its command line or its report
//     and its results go back over the report pipe: the parent writes
//     every results file.
//
// What this does not stop is written down in docs/gallery.md ("What the sandbox does not cover").
// GEMMLAB_SANDBOX=off|no-seccomp|no-landlock relaxes it (for debugging a machine where it gets in the
// way; the child's first report says what was enforced). GEMMLAB_SANDBOX_READ=dir:dir adds readable
// directories, GEMMLAB_SANDBOX_WRITE=dir:dir writable ones (grader/tools/fs_trace.c finds what a
// machine's CUDA driver needs).
#pragma once

#include <string>

namespace gemmlab {

// In a freshly forked child, before execv(argv[0], argv): applies everything above and writes one
// {"event":"sandbox", ...} line to the report descriptor saying what it enforced. Never fails: a part
// the kernel does not support is skipped and named in that line. `argv` is the child's command line;
// its "--report-fd N" entry is rewritten in place.
// `key` is the child's report key (isolation.h): the sandbox line starts with it like every report.
void enter_child_sandbox(char** argv, const std::string& key);

// In the parent, after the child with this pid has been reaped: removes its scratch directory.
// (Children also sweep away scratch directories of children that no longer exist.)
void remove_child_scratch(int pid);

// In the parent, once before the first child: finds the strongest mode (on, no-landlock,
// no-seccomp, off) under which a probe child (`gemmlab child-probe`) can start CUDA, cuBLAS and
// cuRAND, and sets GEMMLAB_SANDBOX so every later child runs under it. Drivers differ in what they
// need from the OS; a layer that stops CUDA from starting is dropped, and the returned text (also
// recorded in results files) says which and why. A GEMMLAB_SANDBOX set by the user is kept.
constexpr double kProbeSeconds = 60;
std::string choose_sandbox(const std::string& self_path);
const std::string& sandbox_choice();  // "" until choose_sandbox ran

}  // namespace gemmlab
