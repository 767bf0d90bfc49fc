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

A compile the machine stopped is not the student's: the compiler killed by a signal (the out-of-memory
killer, a time limit), the disk full, memory exhausted, a tool missing (machine_cause() says how each
is told from what a stage file can make a compiler print). Then OBJ.error (JSON: the cause) is written
instead of OBJ.failed and the script exits 1: the build stops with the cause named, and a grading on
the cluster records `error`, which the next sweep grades again (cluster/grading.py).

--confine DIR:DIR... (the Makefile's CONFINE=, which the cluster passes when it grades) runs the
compiler confined with Landlock (confine.py): it may read only these directories and the system
compiler's own files, and write only OBJ's directory and a private TMPDIR there, so a stage file
that includes (or .incbin's, or #embed's) anything else does not compile, with its own file and
line named. A confined compile never uses the object cache (an object compiled unconfined could
hold what the confinement refuses), and where Landlock is unavailable it is an OBJ.error, never a
compile without it.
"""
import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
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
_GAS = re.compile(r"^(?P<file>\S+\.s):(?P<line>\d+): (?:Fatal )?[Ee]rror: (?P<msg>.*)$")
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


# What the machine, not a stage file, makes a compiler print: (pattern, the cause in words).
_MACHINE = (
    (re.compile(r"No space left on device|Disk quota exceeded", re.I), "the disk is full"),
    (re.compile(r"Cannot allocate memory|out of memory|virtual memory exhausted|std::bad_alloc|"
                r"Memory allocation failure", re.I), "out of memory"),
    (re.compile(r"died due to signal|Killed signal terminated program|internal compiler error: Killed", re.I),
     "a compiler process was killed"),
    (re.compile(r"(?:^|: )(?:command )?not found\s*$|cannot execute|execvp:|error while loading shared libraries",
                re.I), "a tool the compiler runs is missing"),
    # Under --confine: the sandbox refused the compiler one of its own files (a stage file's own read
    # of a refused file is a diagnostic on its own line, below).
    (re.compile(r"Permission denied", re.I), "the compiler was refused one of its own files"),
)
_ECHO = re.compile(r"^\s*\d*\s*\|")  # gcc's quote of a source line, and its caret line


class MachineError(Exception):
    """The machine stopped a compile, not the stage file; the message names the cause."""


def machine_cause(returncode, output, source):
    """Why the machine stopped this compile, or None when the compiler's verdict is on the file. A
    stage file decides what the compiler says about its own lines, so only what it cannot make the
    compiler print counts: a signal that ended the compiler, exit 127 (not found), or a line above
    (_MACHINE) that names none of the hand-in's files, is no quote of a source line, and whose words
    no file of the hand-in holds."""
    if returncode is not None and returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "an unknown signal"
        return f"the compiler was stopped by signal {-returncode} ({name})"
    if returncode == 127:
        return "the compiler was not found (exit 127)"
    folder = Path(source).parent
    theirs = [str(folder) + "/", str(folder.resolve()) + "/"]
    def words(text):  # as a stringized macro argument would give them: one space between words
        return " ".join(text.lower().split())

    theirs_words = words(" ".join(p.read_text(errors="replace") for p in (folder.iterdir() if folder.is_dir() else ())
                                  if p.is_file()))
    for line in output.splitlines():
        if _ECHO.match(line) or any(t in line for t in theirs):
            continue
        for pattern, cause in _MACHINE:
            m = pattern.search(line)
            if m and words(m.group(0).strip(": ")) not in theirs_words:
                return f"{cause} (\"{line.strip()}\")"
    return None


def compile_stage(command, source, obj, cache=None, depends=(), verbose=False, confine=None):
    """Compiles (or takes from the cache); returns the verdict's dict when the file does not compile.
    confine: the directories a confined compile may read (None: not confined; never from the cache).
    MachineError when the machine stopped the compile (OBJ.error written)."""
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
            verdict = compile_now(cmd, source, obj, failed, warned, log, cmdline, confine)
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


def run_compiler(command, obj, confine):
    """The compiler's run (stdout and stderr together); under `confine`, in a Landlock sandbox
    (confine.py) with a private TMPDIR beside the object, removed afterwards."""
    if confine is None:
        try:
            return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  errors="replace")
        except OSError as e:
            raise MachineError(f"the compiler could not be started ({command[0]}: {e.strerror})") from None
    tmp = tempfile.mkdtemp(prefix=f".{obj.name}.tmp-", dir=obj.parent)
    try:
        rules = confinement.ruleset([*confine, *confinement.SYSTEM_COMPILER_PATHS], [str(obj.parent)])
    except (confinement.Unavailable, OSError) as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise MachineError(f"the compile was to be confined (--confine) and cannot be: {e}; it is not run "
                           "unconfined") from None
    try:
        return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                              env=dict(os.environ, TMPDIR=tmp), pass_fds=(rules,),
                              preexec_fn=lambda: confinement.restrict(rules))
    except subprocess.SubprocessError as e:  # what preexec_fn raised: the sandbox could not be applied
        raise MachineError(f"the compile could not be confined: {e}; it is not run unconfined") from None
    except OSError as e:
        raise MachineError(f"the compiler could not be started ({command[0]}: {e.strerror})") from None
    finally:
        os.close(rules)
        shutil.rmtree(tmp, ignore_errors=True)


def compile_now(command, source, obj, failed, warned, log, cmdline, confine=None):
    """The compile, its log, and its verdict written beside the object when the compiler refused the
    file (None when it compiled); what it warned about beside the object when it compiled.
    MachineError when the machine stopped it (machine_cause)."""
    obj.unlink(missing_ok=True)
    warned.unlink(missing_ok=True)
    proc = run_compiler(command, obj, confine)
    log.write_text(f"$ {cmdline}\n{proc.stdout}" + ("" if proc.returncode == 0 else f"(exit {proc.returncode})\n"))
    show(proc.stdout, source)
    cause = machine_cause(proc.returncode, proc.stdout, source) if proc.returncode != 0 else None
    if cause:
        raise MachineError(cause)
    if proc.returncode == 0 and obj.is_file():
        failed.unlink(missing_ok=True)
        if warnings_in(proc.stdout):
            write_json(warned, warnings_record(proc.stdout, source))
        return None
    obj.unlink(missing_ok=True)
    verdict = {"schema": SCHEMA, "source": str(source), "shown": shown_path(source), "exit": proc.returncode,
               "first_error": first_error(proc.stdout, source), "command": cmdline, "output": proc.stdout[-20000:]}
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
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("no compile command after --")
    confine = [d for d in args.confine.split(":") if d] if args.confine else None
    try:
        verdict = compile_stage(command, args.source, args.object, args.cache or None, args.depends, args.verbose,
                                confine)
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
