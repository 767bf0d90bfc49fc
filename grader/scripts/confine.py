"""Confines a compile to the files it may read and write, with Linux Landlock (5.13+).

compile_stage.py --confine uses it when the cluster grades (cluster/toolchain.py passes CONFINE=): the
compiler of a stage file, and every program it starts, may then read only the directories it is
given (the hand-in's scratch copy, the stage API headers, the CUDA toolkit, a host compiler installed
elsewhere: host_compiler_home) and the system compiler's own files (SYSTEM_COMPILER_PATHS), and write only its build directory and a private TMPDIR. An
`#include`, `.incbin` or `#embed` of anything else fails with "Permission denied", so a stage file
can never compile another student's hand-in, the reference solutions or a staff file into its own.

The rules are built in the parent (ruleset(): an error here is the machine's, named, before anything
runs) and applied in the compile's child just before exec (restrict(), a subprocess preexec_fn):
no_new_privs, then landlock_restrict_self. They hold for every process the compile starts and cannot
be lifted. Next to them the child takes its Limits (limit(): CPU seconds, address space and the
largest file of each process the compile starts; compile_stage.py keeps its wall time, and a
hand-in's compiles share one deadline): a stage file whose compile never ends (a template that
instantiates without end, an #include of /dev/urandom), writes without end (an asm statement's
.fill) or is one of many such files runs into them, and that is the file's failure, not the machine's. The numbers come from the course ([cells] compile_*
in course.toml, cluster/config.py), which the cluster passes down (CONFINE_LIMITS=). Rights follow the kernel's ABI as grader/src/judge/sandbox.cpp does for the runners: REFER
from ABI 2, TRUNCATE from 3, IOCTL_DEV from 5; a right the kernel does not know is neither handled
nor granted.
"""
import ctypes
import os
import resource
import shutil
import signal
import stat
from dataclasses import dataclass

# The system compiler's own files (binaries, headers, libraries, the dynamic loader's cache). Nothing
# staff-only may lie below them (cluster/config.py refuses it).
SYSTEM_COMPILER_PATHS = ("/usr/bin", "/usr/include", "/usr/lib", "/usr/lib64", "/usr/libexec",
                         "/bin", "/lib", "/lib64", "/etc/ld.so.cache")


def host_compiler_home() -> list[str]:
    """[the installation of the g++ on PATH] where it is not the system's (a site's `module load gcc`
    under /opt, say): nvcc runs it, so a confined compile must read it; [] for the system's g++."""
    found = shutil.which("g++")
    if not found:
        return []
    gxx = os.path.realpath(found)
    if any(gxx.startswith(p.rstrip("/") + "/") for p in SYSTEM_COMPILER_PATHS):
        return []
    return [os.path.dirname(os.path.dirname(gxx))]


_SYS = {"create_ruleset": 444, "add_rule": 445, "restrict_self": 446}  # the same on every architecture
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
TRUNCATE, IOCTL_DEV = 1 << 14, 1 << 15
READ = EXECUTE | READ_FILE | READ_DIR
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # all a rule on a file may grant

# The devices a compiler opens, and nothing else of /dev: /dev/null (nvcc and g++ write and read it),
# /dev/urandom read (g++ seeds its random names with it). A stage file that #includes one of them
# reads nothing (/dev/null) or reads without end until the compile's limits stop it (the student's:
# compile_stage.py); any other device is refused like any other file.
DEVICES = {"/dev/null": READ_FILE | WRITE_FILE | TRUNCATE, "/dev/urandom": READ_FILE}

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class Unavailable(Exception):
    """Landlock cannot confine a compile on this machine; the message names the cause."""


def _call(name, *args):
    rc = _libc.syscall(ctypes.c_long(_SYS[name]), *args)
    if rc < 0:
        raise OSError(ctypes.get_errno(), f"landlock_{name}: {os.strerror(ctypes.get_errno())}")
    return rc


def abi() -> int:
    """The kernel's Landlock ABI version; Unavailable when it has none (too old, or turned off)."""
    try:
        return _call("create_ruleset", None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except OSError as e:
        raise Unavailable(f"Linux Landlock is unavailable on {os.uname().nodename} (kernel {os.uname().release}: "
                          f"{e.strerror}; it needs Linux 5.13 or later with landlock in the lsm= list)") from None


def handled_rights(version: int) -> int:
    rights = (1 << 13) - 1  # ABI 1: EXECUTE .. MAKE_SYM
    for since, right in ((2, 1 << 13), (3, TRUNCATE), (5, IOCTL_DEV)):
        if version >= since:
            rights |= right
    return rights


def ruleset(read, write) -> int:
    """A ruleset's file descriptor: `read` readable, DEVICES as they say, `write` fully writable, nothing else."""
    handled = handled_rights(abi())
    fd = _call("create_ruleset", ctypes.byref(ctypes.c_uint64(handled)), ctypes.c_size_t(8), ctypes.c_uint32(0))
    grants = [(p, READ) for p in read] + list(DEVICES.items())
    grants += [(p, handled) for p in write]
    try:
        for path, rights in grants:
            try:
                target = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # a path this machine does not have (/usr/lib64 on Debian): nothing to allow
            try:
                if not stat.S_ISDIR(os.fstat(target).st_mode):
                    rights &= FILE_RIGHTS
                rule = PathBeneath(rights & handled, target)
                _call("add_rule", fd, _RULE_PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0))
            finally:
                os.close(target)
    except BaseException:
        os.close(fd)
        raise
    return fd


def restrict(fd: int):
    """In the child, before exec: the ruleset holds from now on, for it and all it starts."""
    if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    _call("restrict_self", fd, ctypes.c_uint32(0))
    os.close(fd)


@dataclass(frozen=True)
class Limits:
    """What confined compiles may use: CPU seconds, address space (MiB) and the largest file (MiB) of each
    of their processes, and wall time (seconds): of one compile, or — with `until` (the time.time() by
    which they must end) — of all the compiles of one hand-in together, so a hand-in of many files that
    each take their whole limit costs one limit, not one per file."""
    cpu_seconds: int
    wall_seconds: int
    memory_mb: int
    file_mb: int
    until: int = 0  # 0: each compile has wall_seconds of its own

    @classmethod
    def parse(cls, text: str) -> "Limits":
        """From "CPU:WALL:MEMORY_MB:FILE_MB[:UNTIL]" (the Makefile's CONFINE_LIMITS); ValueError names what is wrong."""
        parts = text.split(":")
        if len(parts) not in (4, 5) or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise ValueError(f"compile limits {text!r}: expected CPU_SECONDS:WALL_SECONDS:MEMORY_MB:FILE_MB, each a "
                             "whole number above 0, and optionally :UNTIL, the time (seconds since 1970) by which "
                             "a hand-in's compiles end together (the cluster passes [cells] compile_cpu_seconds, "
                             "compile_wall_seconds, compile_memory_mb and compile_file_mb)")
        return cls(*map(int, parts))

    def seconds_left(self, now: float) -> float:
        """The wall time a compile started at `now` may take."""
        return min(self.wall_seconds, self.until - now) if self.until else self.wall_seconds

    def __str__(self):
        return ":".join(map(str, (self.cpu_seconds, self.wall_seconds, self.memory_mb, self.file_mb)
                            + ((self.until,) if self.until else ())))


# Seconds past the CPU limit before the kernel's SIGKILL: at the limit itself a process gets SIGXCPU,
# which ends a compiler (none catches it) with a signal its driver names.
CPU_GRACE_SECONDS = 5


def limit(limits: Limits):
    """In the child, before exec: its CPU seconds, address space and largest file, inherited by every
    process the compile starts (each counts its own). A limit already lower stays as it is. A write past
    the largest file fails (EFBIG: the tool says "File too large" and exits) instead of the kernel's
    SIGXFSZ ending the tool, which would read as a signal from outside (the machine's)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # inherited through exec, by every process of the compile
    for what, soft, hard in ((resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + CPU_GRACE_SECONDS),
                             (resource.RLIMIT_AS, limits.memory_mb << 20, limits.memory_mb << 20),
                             (resource.RLIMIT_FSIZE, limits.file_mb << 20, limits.file_mb << 20)):
        _, old_hard = resource.getrlimit(what)
        if old_hard != resource.RLIM_INFINITY:
            soft, hard = min(soft, old_hard), min(hard, old_hard)
        resource.setrlimit(what, (soft, hard))
