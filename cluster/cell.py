"""cell.py — one per-student step in a cell: a child process with fixed limits whose only output is a
small JSON value.

A student's bytes are hostile, and whatever reads them — the drop box's door parsing a manifest, a
date, a record, a report's PDF — may be made to take unbounded time or memory, or to raise where no
one expected it. So the staff's process does not read them itself: `run(fn, *args)` forks a child
that

  * closes every descriptor it inherited but its result pipe (and stdin/stdout/stderr);
  * may use at most `Limits` (one home for the numbers; a course sets them in course.toml's [cells]):
    CPU seconds (RLIMIT_CPU), growth of its address space beyond the staff process's own (RLIMIT_AS),
    the size of any file it writes (RLIMIT_FSIZE), open files (RLIMIT_NOFILE), no core dump, and wall
    time (the parent's clock);
  * cannot open a socket of any family nor start a process or a program, root or not (a seccomp
    filter: socket, socketpair, clone, fork, exec... fail with EPERM), nor gain privileges
    (no_new_privs);
  * calls fn(*args), and writes its JSON-serialisable return value to the pipe — at most
    `Limits.output_mb`, which the parent reads no further than.

The parent gets fn's value back, or one of:
  * Exceeded — the child ran into a limit (time, memory, output): what the student's bytes did, a
    case for that student, never the machine's;
  * Raised — fn raised (its type and message, as the child saw them): the student's case too;
  * Broken — the child died in any other way (a signal from outside, no answer): named as such, for a
    person, neither a score nor a retry loop.

fn must not rely on threads of the parent (a fork copies only the calling thread). Nothing here
imports a module of the cluster: every layer may use it.
"""
import ctypes
import errno
import json
import os
import platform
import resource
import select
import signal
import struct
import time
from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Limits:
    """What one cell may use. The defaults are course.toml's [cells] defaults (config.py holds them and
    their help; `from_settings` reads a course's)."""
    cpu_seconds: int = 30
    wall_seconds: int = 60
    memory_mb: int = 1024      # beyond the address space of the process that starts the cell
    file_size_mb: int = 16
    open_files: int = 64
    output_mb: int = 16

    @classmethod
    def from_settings(cls, settings: dict | None) -> "Limits":
        """The limits of a course (ClusterConfig.settings: "cells.<key>" -> value); defaults elsewhere."""
        settings = settings or {}
        return cls(**{f.name: int(settings.get(f"cells.{f.name}", f.default)) for f in fields(cls)})


def limits_of(cfg) -> Limits:
    return Limits.from_settings(getattr(cfg, "settings", None))


class CellError(Exception):
    """A cell gave no value. `what` names the step (e.g. "reading alice's drop box directory")."""

    def __init__(self, what: str, why: str):
        super().__init__(f"{what}: {why}")
        self.what, self.why = what, why


class Exceeded(CellError):
    """The cell ran into one of its limits: the student's bytes made it."""


class Raised(CellError):
    """fn raised in the cell: `kind` is the exception's type name."""

    def __init__(self, what: str, kind: str, message: str):
        super().__init__(what, f"{kind}: {message}")
        self.kind, self.message = kind, message


class Broken(CellError):
    """The cell died in a way that is not one of its limits (a signal from outside, no answer)."""


# ---- sockets: a seccomp filter ------------------------------------------------------------------
# Per machine: its audit architecture and the numbers of the calls refused, by what they do
# (sockets: socket, socketpair; processes: clone, clone3, fork, vfork, execve, execveat). The x32 ABI
# of x86_64 is refused whole.
_CALLS = {"x86_64": (0xC000003E, {"sockets": (41, 53), "processes": (56, 435, 57, 58, 59, 322)}),
          "aarch64": (0xC00000B7, {"sockets": (198, 199), "processes": (220, 435, 221, 281)})}
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06


def _filter(arch: int, refused: tuple) -> bytes:
    """A classic BPF program: calls of another architecture and every other call pass; the calls in
    `refused` (and, on x86_64, every call of its x32 ABI) fail with EPERM. Jumps count from the next
    instruction."""
    x32 = arch == _CALLS["x86_64"][0]
    allow = 3 + len(refused) + x32             # the checks fall through to it
    deny = allow + 1
    ins = [(_LD_W_ABS, 0, 0, 4),                   # the call's architecture
           (_JEQ_K, 0, allow - 2, arch),           # another one: allow
           (_LD_W_ABS, 0, 0, 0)]                   # the call's number
    ins += [(_JEQ_K, deny - (k + 1), 0, nr) for k, nr in enumerate(refused, start=3)]
    if x32:
        ins.append((_JGE_K, deny - allow, 0, 0x40000000))
    ins += [(_RET_K, 0, 0, _RET_ALLOW), (_RET_K, 0, 0, _RET_ERRNO | errno.EPERM)]
    return b"".join(struct.pack("HBBI", *i) for i in ins)


def refuse_calls(*kinds: str) -> bool:
    """In the calling process (a cell's child; a compile's preexec with "sockets" only): no_new_privs,
    then the calls of `kinds` ("sockets", "processes") fail with EPERM, for it and everything it
    starts. False where this machine's architecture has no table here (nothing refused)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    known = _CALLS.get(platform.machine())
    if known is None:
        return False
    arch, table = known
    prog = _filter(arch, tuple(nr for kind in kinds for nr in table[kind]))
    buf = ctypes.create_string_buffer(prog, len(prog))

    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
    fp = Fprog(len(prog) // 8, ctypes.cast(buf, ctypes.c_void_p))
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fp), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")
    return True


# ---- the child ------------------------------------------------------------------------------------
def _address_space() -> int:
    """This process's address space now (bytes): the base the cell's memory limit is added to."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _limit_self(limits: Limits, base: int):
    mib = 1 << 20
    for what, value in ((resource.RLIMIT_CPU, limits.cpu_seconds), (resource.RLIMIT_AS, base + limits.memory_mb * mib),
                        (resource.RLIMIT_FSIZE, limits.file_size_mb * mib), (resource.RLIMIT_CORE, 0),
                        (resource.RLIMIT_NOFILE, limits.open_files)):
        soft, hard = resource.getrlimit(what)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        # CPU: the soft limit sends SIGXCPU, the hard one a second later SIGKILL
        resource.setrlimit(what, (value, value + 1 if what == resource.RLIMIT_CPU and hard == resource.RLIM_INFINITY
                                  else value))


_EXIT_LIMIT = 71   # the child's own word that it ran into a limit (MemoryError, output too large)


def _child(w: int, limits: Limits, base: int, fn, args) -> int:
    try:
        os.dup2(w, 3, inheritable=False)
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        os.closerange(4, hard if hard != resource.RLIM_INFINITY else 1 << 20)  # every descriptor it inherited
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.close(devnull)
        signal.signal(signal.SIGXCPU, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        _limit_self(limits, base)
        refuse_calls("sockets", "processes")
    except BaseException:  # the cell could not be made: the machine's
        return 70
    try:
        try:
            value = {"value": fn(*args)}
        except MemoryError:
            return _EXIT_LIMIT
        except RecursionError as e:
            value = {"raised": ["RecursionError", str(e)[:500]]}
        except Exception as e:  # fn's failure, reported as its type and message
            value = {"raised": [type(e).__name__, str(e)[:2000]]}
        data = json.dumps(value).encode()
        if len(data) > limits.output_mb << 20:
            return _EXIT_LIMIT
        view = memoryview(data)
        while view:
            view = view[os.write(3, view[:1 << 20]):]
        return 0
    except MemoryError:
        return _EXIT_LIMIT
    except BaseException:
        return 72


def run(fn, *args, limits: Limits = Limits(), what: str = "a step"):
    """fn(*args) in a cell (this module's docstring); its return value, or Exceeded / Raised / Broken."""
    base = _address_space()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's code
        code = 72
        try:
            os.close(r)
            code = _child(w, limits, base, fn, args)
        finally:
            os._exit(code)
    os.close(w)
    deadline = time.monotonic() + limits.wall_seconds
    cap = limits.output_mb << 20
    chunks, size, too_long, too_big = [], 0, False, False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                too_long = True
                break
            ready, _, _ = select.select([r], [], [], left)
            if not ready:
                continue
            block = os.read(r, 1 << 20)
            if not block:
                break
            size += len(block)
            if size > cap:
                too_big = True
                break
            chunks.append(block)
    finally:
        os.close(r)
        if too_long or too_big:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _, status, usage = os.wait4(pid, 0)
    if too_long:
        raise Exceeded(what, f"did not finish within its wall-time limit of {limits.wall_seconds} s")
    if too_big:
        raise Exceeded(what, f"its answer passed the output limit of {limits.output_mb} MiB")
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU or sig == signal.SIGKILL and usage.ru_utime + usage.ru_stime >= limits.cpu_seconds:
            raise Exceeded(what, f"ran into its CPU limit of {limits.cpu_seconds} s (signal {signal.Signals(sig).name})")
        raise Broken(what, f"was ended by signal {signal.Signals(sig).name}")
    code = os.WEXITSTATUS(status)
    if code == _EXIT_LIMIT:
        raise Exceeded(what, f"ran into its memory limit of {limits.memory_mb} MiB or its output limit of "
                             f"{limits.output_mb} MiB")
    if code != 0:
        raise Broken(what, f"the cell could not be set up or failed to answer (exit {code})")
    try:
        answer = json.loads(b"".join(chunks))
    except ValueError:
        raise Broken(what, "the cell's answer is not JSON") from None
    if "raised" in answer:
        kind, message = answer["raised"]
        if kind == "RecursionError":
            raise Exceeded(what, f"nests too deeply to be read ({message})")
        raise Raised(what, kind, message)
    return answer["value"]
