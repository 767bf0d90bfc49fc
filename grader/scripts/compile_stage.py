#!/usr/bin/env python3
"""Compiles one stage file of a submission; a file that does not compile costs only its own stages.

The Makefile's rule for $(SUB_BUILD)/stages/<stem>.o runs every stage compile through this script:

  compile_stage.py --source SRC --object OBJ [--cache DIR --depends H...] [--verbose] -- nvcc ... -c SRC -o OBJ

It shows the student what the compiler says (errors, warnings) and one line naming the file, and
keeps the command line and the whole output in OBJ.log (make's `V=1` shows the command as well; the
symbol check gathers the logs into $(SUB_BUILD)/build.log). It never fails the build because of the
file: when the compiler refuses it, OBJ is removed and OBJ.failed (JSON: the source, the compiler's
first error as `file:line: message`, its output) is written instead, and the script exits 0. The
symbol check (scan_symbols.py) reads OBJ.failed and records the file as refused — "does not compile:
<first error>" — so its stages are `rejected` and every other stage still builds, checks and scores.
A compile that succeeds removes a stale OBJ.failed; one that succeeds with warnings writes
OBJ.warnings (JSON: how many, the first as `file:line: warning: message`, the output), which the
symbol check turns into the verdict "ok, with N compiler warnings". Objects come from the object
cache (object_cache.py) where they were compiled before from the same bytes with the same command;
their warnings come with them and are shown again.

What the student sees of the compiler's output is the compiler's, less nvcc's "Remark: ... can be
suppressed with -diag-suppress" lines (the log keeps them), with the submission's files named as the
student names them (student/tiled.cu, not the absolute path make passed to nvcc).

A compile the machine stopped is not the student's: the compiler killed by a signal from outside, the
out-of-memory killer at work, the disk full, a tool missing. Who failed is decided from what the
stage file cannot bring about, never from what the compiler printed (a stage file decides much of
that: #error, #pragma message, static_assert, a string with a newline in it): machine_cause() says
how. Then OBJ.error (JSON: the cause) is written instead of OBJ.failed and the script exits 1: the
build stops with the cause named, and a grading on the cluster records `error`, which the next sweep
grades again (cluster/toolchain.py).

--confine DIR:DIR... (the Makefile's CONFINE=, which the cluster passes when it grades) runs the
compiler confined with Landlock (confine.py): it may read only these directories and the system
compiler's own files, and write only OBJ's directory and a private TMPDIR there, so a stage file
that includes (or .incbin's, or #embed's) anything else does not compile, with its own file and
line named. A confined compile never uses the object cache (an object compiled unconfined could
hold what the confinement refuses), and where Landlock is unavailable it is an OBJ.error, never a
compile without it. It also runs within --limits CPU:WALL:MEMORY_MB:FILE_MB[:UNTIL] (confine.Limits: CPU
seconds, address space and largest file of each of its processes, wall time of the whole compile,
which ends its process group; UNTIL: when all the compiles of the hand-in end together, so a compile
started later has what is left, and one started after it does not run): a file whose compile runs
into them does not compile, with the limit named — the file's failure, never the machine's, and
never a grading that hangs.
"""
import argparse
import contextlib
import dataclasses
import errno
import json
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import confine as confinement  # noqa: E402
import object_cache  # noqa: E402

SCHEMA = "gemmlab.compile-failure/1"
ERROR_SCHEMA = "gemmlab.compile-error/1"
ERROR_SUFFIX = ".error"  # beside the object: the machine stopped its compile (not the student's)
WARNINGS_SCHEMA = "gemmlab.compile-warnings/1"
WARNINGS_SUFFIX = ".warnings"  # beside the object: kept with it in the object cache

# The compilers' ways of naming a diagnostic: the host compiler's "file:42:10: error: ...", the CUDA
# front end's "file(42): error: ..." or, numbered, "file(42): error #177-D: ..." (what nvcc's
# -Werror all-warnings makes of a warning; its warnings read "warning #177-D:"), and
# ptxas/nvlink/fatbinary, which name no line.
_KIND = r"(?P<kind>(?:fatal |catastrophic )?error|warning)(?:\s*(?P<num>#[\w-]+))?"
_GCC = re.compile(r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):(?:\d+:)?\s*" + _KIND + r":\s*(?P<msg>.*)$")
_EDG = re.compile(r"^(?P<file>\S[^(]*)\((?P<line>\d+)\):\s*" + _KIND + r":\s*(?P<msg>.*)$")
_TOOL = re.compile(r"^(?P<tool>ptxas|nvlink|fatbinary|nvcc|cicc)(?: fatal)?\s*(?:error|fatal)\s*:\s*(?P<msg>.*)$", re.I)
# The assembler's message on the compiler's temporary file ("/tmp/ccX.s:5: Error: file not found: F"):
# what an asm statement of the stage file made it do (an .incbin of a file it may not read, say).
# Without a line where it names no line of it ("/tmp/ccX.s: Fatal error: can't write ... of tiled.o").
_GAS = re.compile(r"^(?P<file>\S+\.s):(?:(?P<line>\d+):)? (?:Fatal )?[Ee]rror: (?P<msg>.*)$")
# What a tool says when a write of it fails: past the largest file a compile may write (EFBIG; the
# assembler says ENOSPC for it), once machine_cause found the disk not full.
_WRITE_REFUSED = re.compile(r"File too large|No space left on device")
# nvcc's advice after a numbered warning; the build log keeps it, the student is not shown it.
_REMARK = re.compile(r"^Remark: The warnings can be suppressed with ")


def shown_path(path, cwd=None):
    """A path as a student typed it: relative to the working directory where it lies below it."""
    p = Path(path)
    try:
        return str(p.resolve().relative_to(Path(cwd or os.getcwd()).resolve()))
    except (ValueError, OSError):
        return str(path)


def diagnostic(line, cwd=None):
    """('error' or 'warning', `file:line: <kind>[ #number]: message`) for a compiler's diagnostic
    line naming a file and line, the file as the student names it; None for any other line."""
    line = line.rstrip()
    for pattern in (_GCC, _EDG):
        m = pattern.match(line)
        if m:
            kind = "warning" if m["kind"] == "warning" else "error"
            label = kind + (f" {m['num']}" if m["num"] else "")
            return kind, f"{shown_path(m['file'], cwd)}:{m['line']}: {label}: {m['msg'].strip()}"
    return None


def first_error(output, source, cwd=None):
    """The compiler's first error as `file:line: error: message` (`error #177-D:` for a numbered one;
    `file: ptxas error: message` for a tool that names no line); a plain first line of the output
    when no error line is recognised."""
    for line in output.splitlines():
        found = diagnostic(line, cwd)
        if found and found[0] == "error":
            return found[1]
        m = _TOOL.match(line.rstrip())
        if m:
            return f"{shown_path(source, cwd)}: {m['tool'].lower()} error: {m['msg'].strip()}"
        m = _GAS.match(line.rstrip())
        if m:
            return f"{shown_path(source, cwd)}{asm_line(m['msg'], source)}: error: assembler: {m['msg'].strip()}"
    lines = [x.strip() for x in output.splitlines() if x.strip()]
    return f"{shown_path(source, cwd)}: {lines[0] if lines else 'the compiler failed without saying why'}"


def asm_line(message, source):
    """":N" for the line of the source that names what the assembler's message names last (the
    file of an .incbin), "" where no line does."""
    what = message.rsplit(": ", 1)[-1].strip().strip("'\"")
    try:
        lines = Path(source).read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return next((f":{n}" for n, text in enumerate(lines, 1) if what and what in text), "")


def warnings_in(output, cwd=None):
    """Every warning of the compiler's output that names a file and line, as `file:line: warning: ...`."""
    return [d[1] for d in (diagnostic(line, cwd) for line in output.splitlines()) if d and d[0] == "warning"]


def for_the_student(output, source, cwd=None):
    """The compiler's output as the student is shown it: nvcc's -diag-suppress remarks left out, and
    the source's directory named as the student names it (nvcc repeats the absolute path make gave it)."""
    shown_dir = shown_path(Path(source).parent, cwd)
    prefix = "" if shown_dir == "." else shown_dir.rstrip("/") + "/"
    absolute = str(Path(source).parent).rstrip("/") + "/"
    lines = [line for line in output.splitlines(keepends=True) if not _REMARK.match(line)]
    text = "".join(lines)
    # the blank line nvcc puts around a remark would be left doubled
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.replace(absolute, prefix) if Path(source).is_absolute() else text


class MachineError(Exception):
    """The machine stopped a compile, not the stage file; the message names the cause."""


# The kernel's count of the processes its out-of-memory killer ended (this machine's, every cgroup's).
VMSTAT = "/proc/vmstat"
# A build directory's file system with less room than this is full: a stage file's compile writes
# its temporary files and object there (TMPDIR too, where the compile is not confined).
DISK_MARGIN_MB = 100
# The compiler's output kept (the log, the verdict, what the student is shown); the rest is counted.
OUTPUT_KEPT_BYTES = 4 << 20
# What a confined compile that failed is set against: the same compiler, confined and limited as it
# was, on a one-line kernel (canary_cause).
CANARY = "__global__ void gemmlab_canary_kernel() {}\n"


@dataclass
class Run:
    """A finished compile as the machine saw it."""
    returncode: int
    output: str
    cpu_seconds: float = 0.0  # all of its processes together, as the kernel accounted them
    timed_out: bool = False   # ended at its wall-time limit (its process group killed)
    oom_kills: int = 0        # processes the out-of-memory killer ended on this machine meanwhile
    wall_seconds: float = 0.0  # the wall time it was given (confine.Limits.seconds_left)


def oom_kills() -> int:
    """How many processes the kernel's out-of-memory killer has ended on this machine (0 where it does not say)."""
    try:
        with open(VMSTAT) as f:
            for line in f:
                name, _, value = line.partition(" ")
                if name == "oom_kill":
                    return int(value)
    except (OSError, ValueError):
        pass
    return 0


def children_cpu_seconds() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def disk_cause(directories) -> str | None:
    """The machine's cause where a directory a compile writes lies on a full file system: less than
    DISK_MARGIN_MB free, or not even a small file can be written (a quota)."""
    for d in directories:
        try:
            st = os.statvfs(d)
        except OSError:
            continue
        free = st.f_bavail * st.f_frsize
        if free < DISK_MARGIN_MB << 20:
            return f"the disk is full: the file system of {d} has {free >> 20} MiB free"
        try:
            with tempfile.TemporaryFile(dir=d) as probe:
                probe.write(b"\0" * (1 << 20))
                probe.flush()
                os.fsync(probe.fileno())
        except OSError as e:
            if e.errno in (errno.ENOSPC, errno.EDQUOT):
                return f"the disk is full: 1 MiB cannot be written in {d} ({e.strerror})"
    return None


def machine_cause(run: Run, directories, canary=None) -> str | None:
    """Why the machine, not the stage file, stopped this failed compile; None when the failure is the
    file's. Only what a stage file cannot bring about counts, never what the compiler printed: the
    compiler ended by a signal from outside (its own limits are the file's: limit_reached), exit 127
    (not found), the out-of-memory killer at work on this machine while it ran, a full disk where it
    writes (`directories`), or — for a confined compile (`canary`: a function giving its cause or None)
    — the same compiler, confined and limited alike, failing a one-line kernel too (a tool missing or
    broken, the sandbox refusing the compiler its own files)."""
    if run.returncode < 0 and -run.returncode not in (signal.SIGXCPU, signal.SIGXFSZ):  # those two: its limits
        try:
            name = signal.Signals(-run.returncode).name
        except ValueError:
            name = "an unknown signal"
        return f"the compiler was stopped by signal {-run.returncode} ({name})"
    if run.returncode == 127:
        return "the compiler was not found (exit 127)"
    if run.oom_kills:
        return (f"the out-of-memory killer ended {run.oom_kills} process(es) on {os.uname().nodename} while it "
                f"compiled ({VMSTAT}: oom_kill)")
    return disk_cause(directories) or (canary() if canary is not None else None)


def limit_reached(run: Run, limits, source) -> str | None:
    """The verdict of a compile that ran into its limits (the file's failure), or None."""
    if limits is None:
        return None
    if run.timed_out and run.wall_seconds < limits.wall_seconds:
        return (f"{shown_path(source)}: its compile was stopped when the hand-in's compiles together reached their "
                f"limit of {limits.wall_seconds} s (a template, constexpr evaluation or #include that never ends, "
                "here or in another file of the hand-in?)")
    if run.timed_out:
        return (f"{shown_path(source)}: its compile ran past its limit of {limits.wall_seconds} s and was stopped "
                "(a template, constexpr evaluation or #include that never ends?)")
    if run.returncode == -signal.SIGXFSZ:
        return f"{shown_path(source)}: its compile wrote a file past its limit of {limits.file_mb} MiB"
    if run.returncode == -signal.SIGXCPU or run.cpu_seconds >= limits.cpu_seconds:
        return (f"{shown_path(source)}: its compile ran into its limit of {limits.cpu_seconds} CPU seconds "
                "(a template, constexpr evaluation or #include that never ends?)")
    return None


def canary_cause(command, source, obj, confine, limits) -> str | None:
    """The machine's cause where the same compile command, confined and limited as it was, cannot
    compile a one-line kernel in place of the stage file either; None where it can."""
    work = Path(tempfile.mkdtemp(prefix=f".{obj.name}.canary-", dir=obj.parent))
    try:
        src, out = work / f"canary{Path(source).suffix}", work / "canary.o"
        src.write_text(CANARY)
        swapped = {str(source): str(src), str(obj): str(out)}
        # Its own wall time: the hand-in's compiles may have spent theirs (confine.Limits.until).
        own = dataclasses.replace(limits, until=0) if limits is not None else None
        run = run_compiler([swapped.get(w, w) for w in command], out, confine, own)
        if run.returncode == 0 and out.is_file():
            return None
        said = next((line.strip() for line in run.output.splitlines() if line.strip()), "no output")
        return (f"the same compiler cannot compile a one-line kernel here either (exit {run.returncode}"
                f"{', stopped at its time limit' if run.timed_out else ''}: {said})")
    except MachineError as e:
        return str(e)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def compile_stage(command, source, obj, cache=None, depends=(), verbose=False, confine=None, limits=None):
    """Compiles (or takes from the cache); returns the verdict's dict when the file does not compile.
    confine: the directories a confined compile may read (None: not confined; never from the cache);
    limits: a confined compile's confine.Limits (None: none). MachineError when the machine stopped the
    compile (OBJ.error written)."""
    obj = Path(obj)
    failed = Path(f"{obj}.failed")
    warned = Path(f"{obj}{WARNINGS_SUFFIX}")
    log = Path(f"{obj}.log")
    cmdline = shlex.join(command)
    # One write, so that the lines of parallel compiles never run into each other.
    sys.stdout.flush()
    os.write(sys.stdout.fileno(), ((cmdline if verbose else f"  NVCC    {shown_path(source)}") + "\n").encode())
    verdict = None

    def compile_(cmd):
        nonlocal verdict
        try:
            verdict = compile_now(cmd, source, obj, failed, warned, log, cmdline, confine, limits)
        except MachineError as e:
            obj.unlink(missing_ok=True)
            failed.unlink(missing_ok=True)
            write_json(Path(f"{obj}{ERROR_SUFFIX}"), {"schema": ERROR_SCHEMA, "source": str(source),
                                                      "shown": shown_path(source), "cause": str(e),
                                                      "command": cmdline})
            with open(log, "a") as f:
                f.write(f"not the file's fault: {e}\n")
            raise
        Path(f"{obj}{ERROR_SUFFIX}").unlink(missing_ok=True)
        return 0 if verdict is None else 1

    def copied(_):
        # The object of an earlier compile: what that compile warned about comes back with it, told of
        # this source (the cache's key leaves the source's path out: the same bytes elsewhere hit too).
        failed.unlink(missing_ok=True)
        kept = read_warnings(obj)
        if kept:
            kept = warnings_record(kept["output"].replace(kept["source"], str(source)), source)
            write_json(warned, kept)
        log.write_text(f"$ {cmdline}\n(object cache: the same source and command as before)\n"
                       + (kept["output"] if kept else ""))
        if kept:
            show(kept["output"], source)

    if cache and confine is None:
        # The same file compiled by another build at the same time (the tests build many submissions
        # side by side): the second waits for the first and copies its object (object_cache.py).
        object_cache.run_cached(cache, command, source, obj, depends, say=copied, compile_=compile_,
                                sidecars=(WARNINGS_SUFFIX,))
    else:
        compile_(command)
    return verdict


def show(output, source):
    """The compiler's messages are the student's to read (for_the_student says how they are shown)."""
    text = for_the_student(output, source)
    if text.strip():
        sys.stderr.write(text if text.endswith("\n") else text + "\n")
        sys.stderr.flush()


def read_warnings(obj):
    """What the compile of `obj` warned about (<object>.warnings), or None."""
    try:
        return json.loads(Path(f"{obj}{WARNINGS_SUFFIX}").read_text())
    except (OSError, ValueError):
        return None


def warnings_record(output, source):
    """<object>.warnings: how many warnings, the first as `file:line: warning: message`, the output."""
    warnings = warnings_in(output)
    return {"schema": WARNINGS_SCHEMA, "source": str(source), "shown": shown_path(source), "count": len(warnings),
            "first": warnings[0] if warnings else "", "output": output[-20000:]}


def write_json(path, data):
    tmp = Path(f"{path}.tmp{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)


def run_compiler(command, obj, confine, limits=None) -> Run:
    """The compiler's run (stdout and stderr together, the first OUTPUT_KEPT_BYTES of them); under
    `confine`, in a Landlock sandbox (confine.py) with a private TMPDIR beside the object, removed
    afterwards; under `limits` (confine.Limits), in a process group of its own, each process limited
    in CPU seconds and address space, the group killed at the wall-time limit."""
    env, preexec, rules, tmp = None, None, None, None
    if confine is not None:
        tmp = tempfile.mkdtemp(prefix=f".{obj.name}.tmp-", dir=obj.parent)
        try:
            rules = confinement.ruleset([*confine, *confinement.SYSTEM_COMPILER_PATHS], [str(obj.parent)])
        except (confinement.Unavailable, OSError) as e:
            shutil.rmtree(tmp, ignore_errors=True)
            raise MachineError(f"the compile was to be confined (--confine) and cannot be: {e}; it is not run "
                               "unconfined") from None
        env = dict(os.environ, TMPDIR=tmp)
    if rules is not None or limits is not None:
        def preexec():  # in the child, just before exec: the limits, then the sandbox
            if limits is not None:
                confinement.limit(limits)
            if rules is not None:
                confinement.restrict(rules)
    oom_before, cpu_before = oom_kills(), children_cpu_seconds()
    try:
        try:
            proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                                    pass_fds=() if rules is None else (rules,), preexec_fn=preexec,
                                    process_group=0 if limits is not None else None)
        except subprocess.SubprocessError as e:  # what preexec_fn raised: the sandbox could not be applied
            raise MachineError(f"the compile could not be confined: {e}; it is not run unconfined") from None
        except OSError as e:
            raise MachineError(f"the compiler could not be started ({command[0]}: {e.strerror})") from None
        kept = bytearray()
        reader = threading.Thread(target=_keep_output, args=(proc.stdout, kept), daemon=True)
        reader.start()
        wall = limits.seconds_left(time.time()) if limits is not None else 0.0
        if limits is None:
            proc.wait()
            timed_out = False
        else:
            timed_out = _wait_then_end_group(proc, wall)
        reader.join()
        output = kept.decode(errors="replace")
        return Run(proc.returncode, output, children_cpu_seconds() - cpu_before, timed_out, oom_kills() - oom_before,
                   wall)
    finally:
        if rules is not None:
            os.close(rules)
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def _wait_then_end_group(proc, seconds) -> bool:
    """Waits for the compiler for at most `seconds`, then kills its process group — all of the compile at
    the limit, or what it left running — before reaping it (a zombie keeps the group's id its own, never
    another's). Also when this process is stopped meanwhile. Returns whether the limit ended it."""
    deadline, pause, timed_out = time.monotonic() + seconds, 0.001, False
    try:
        while os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
            if time.monotonic() >= deadline:
                timed_out = True
                break
            time.sleep(pause)
            pause = min(2 * pause, 0.05)
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return timed_out


def _keep_output(pipe, kept: bytearray):
    """Reads the compiler's output to its end, keeping the first OUTPUT_KEPT_BYTES (a stage file can make
    a compiler print without end)."""
    cut = False
    with pipe:
        while chunk := pipe.read(1 << 16):
            room = OUTPUT_KEPT_BYTES - len(kept)
            if len(chunk) <= room:
                kept += chunk
            elif not cut:
                kept += chunk[:room] + b"\n[the rest of the compiler's output was left out]\n"
                cut = True


def compile_now(command, source, obj, failed, warned, log, cmdline, confine=None, limits=None):
    """The compile, its log, and its verdict written beside the object when the compiler refused the
    file or the compile ran into its limits (None when it compiled); what it warned about beside the
    object when it compiled. MachineError when the machine stopped it (machine_cause)."""
    obj.unlink(missing_ok=True)
    warned.unlink(missing_ok=True)
    if limits is not None and limits.seconds_left(time.time()) <= 0:  # the hand-in's compiles spent their time
        run = Run(returncode=1, output="", timed_out=True, wall_seconds=0.0)
    else:
        run = run_compiler(command, obj, confine, limits)
    limit = limit_reached(run, limits, source)
    log.write_text(f"$ {cmdline}\n{run.output}" + ("" if run.returncode == 0 else f"(exit {run.returncode})\n")
                   + (f"{limit}\n" if limit else ""))
    show(run.output, source)
    if run.returncode == 0 and not limit and obj.is_file():
        failed.unlink(missing_ok=True)
        if warnings_in(run.output):
            write_json(warned, warnings_record(run.output, source))
        return None
    if not limit:
        written = [obj.parent] if confine is not None else [obj.parent, tempfile.gettempdir()]
        canary = (lambda: canary_cause(command, source, obj, confine, limits)) if confine is not None else None
        cause = machine_cause(run, written, canary)
        if cause:
            raise MachineError(cause)
    obj.unlink(missing_ok=True)
    first = limit or first_error(run.output, source)
    if limits is not None and not limit and _WRITE_REFUSED.search(run.output):  # the disk is not full: the limit
        first += f" (a compile may write no file larger than {limits.file_mb} MiB)"
    verdict = {"schema": SCHEMA, "source": str(source), "shown": shown_path(source), "exit": run.returncode,
               "first_error": first, "command": cmdline,
               "output": run.output[-20000:]}
    write_json(failed, verdict)
    return verdict


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", required=True)
    ap.add_argument("--object", required=True)
    ap.add_argument("--cache", default="", help="the stage object cache (object_cache.py); empty: none")
    ap.add_argument("--depends", nargs="*", default=[])
    ap.add_argument("--verbose", action="store_true", help="print the command line (make V=1)")
    ap.add_argument("--confine", default="", help="DIR:DIR...: compile confined, these directories readable")
    ap.add_argument("--limits", default="", help="CPU:WALL:MEMORY_MB:FILE_MB[:UNTIL]: a confined compile's limits "
                    "(confine.Limits)")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("no compile command after --")
    confine = [d for d in args.confine.split(":") if d] if args.confine else None
    if confine is not None and not args.limits:
        ap.error("--confine needs --limits CPU_SECONDS:WALL_SECONDS:MEMORY_MB:FILE_MB (the Makefile's CONFINE_LIMITS, "
                 "which the cluster passes from [cells] compile_* in course.toml): a confined compile is never "
                 "run without them")
    try:
        limits = confinement.Limits.parse(args.limits) if args.limits else None
    except ValueError as e:
        ap.error(str(e))
    # A stop (make interrupted, the grading stopped) ends the compile's process group too (run_compiler).
    for stop in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(stop, lambda signum, _: sys.exit(128 + signum))
    try:
        verdict = compile_stage(command, args.source, args.object, args.cache or None, args.depends, args.verbose,
                                confine, limits)
    except MachineError as e:
        print(f"  {shown_path(args.source)} could not be compiled, and not because of the file: {e}. "
              "Build again once that is fixed.", file=sys.stderr)
        return 1
    if verdict:
        print(f"  {verdict['shown']} does not compile (first error: {verdict['first_error']}); "
              f"its stages will be rejected, the others still build", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
