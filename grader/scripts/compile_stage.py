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
A compile that succeeds removes a stale OBJ.failed. Objects come from the object cache
(object_cache.py) where they were compiled before from the same bytes with the same command.
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import object_cache  # noqa: E402

SCHEMA = "gemmlab.compile-failure/1"

# The compilers' ways of naming an error: the host compiler's "file:42:10: error: ...", the CUDA
# front end's "file(42): error: ...", and ptxas/nvlink/fatbinary, which name no line.
_GCC = re.compile(r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):(?:\d+:)?\s*(?:fatal )?error:\s*(?P<msg>.*)$")
_EDG = re.compile(r"^(?P<file>\S[^(]*)\((?P<line>\d+)\):\s*(?:catastrophic )?error:\s*(?P<msg>.*)$")
_TOOL = re.compile(r"^(?P<tool>ptxas|nvlink|fatbinary|nvcc|cicc)(?: fatal)?\s*(?:error|fatal)\s*:\s*(?P<msg>.*)$", re.I)


def shown_path(path, cwd=None):
    """A path as a student typed it: relative to the working directory where it lies below it."""
    p = Path(path)
    try:
        return str(p.resolve().relative_to(Path(cwd or os.getcwd()).resolve()))
    except (ValueError, OSError):
        return str(path)


def first_error(output, source, cwd=None):
    """The compiler's first error as `file:line: error: message` (or `file: ptxas error: message` for
    a tool that names no line); a plain first line of the output when no error line is recognised."""
    for line in output.splitlines():
        line = line.rstrip()
        for pattern in (_GCC, _EDG):
            m = pattern.match(line)
            if m:
                return f"{shown_path(m['file'], cwd)}:{m['line']}: error: {m['msg'].strip()}"
        m = _TOOL.match(line)
        if m:
            return f"{shown_path(source, cwd)}: {m['tool'].lower()} error: {m['msg'].strip()}"
    lines = [x.strip() for x in output.splitlines() if x.strip()]
    return f"{shown_path(source, cwd)}: {lines[0] if lines else 'the compiler failed without saying why'}"


def compile_stage(command, source, obj, cache=None, depends=(), verbose=False):
    """Compiles (or takes from the cache); returns the verdict's dict when the file does not compile."""
    obj = Path(obj)
    failed = Path(f"{obj}.failed")
    log = Path(f"{obj}.log")
    cmdline = shlex.join(command)
    # One write, so that the lines of parallel compiles never run into each other.
    sys.stdout.flush()
    os.write(sys.stdout.fileno(), ((cmdline if verbose else f"  NVCC    {shown_path(source)}") + "\n").encode())
    verdict = None

    def compile_(cmd):
        nonlocal verdict
        verdict = compile_now(cmd, source, obj, failed, log, cmdline)
        return 0 if verdict is None else 1

    def copied(_):
        failed.unlink(missing_ok=True)
        log.write_text(f"$ {cmdline}\n(object cache: the same source and command as before)\n")

    if cache:
        # The same file compiled by another build at the same time (the tests build many submissions
        # side by side): the second waits for the first and copies its object (object_cache.py).
        object_cache.run_cached(cache, command, source, obj, depends, say=copied, compile_=compile_)
    else:
        compile_(command)
    return verdict


def compile_now(command, source, obj, failed, log, cmdline):
    """The compile, its log, and its verdict written beside the object when the compiler refused the
    file (None when it compiled)."""
    obj.unlink(missing_ok=True)
    proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    log.write_text(f"$ {cmdline}\n{proc.stdout}" + ("" if proc.returncode == 0 else f"(exit {proc.returncode})\n"))
    if proc.stdout:
        sys.stderr.write(proc.stdout)  # the compiler's messages are the student's to read
        sys.stderr.flush()
    if proc.returncode == 0 and obj.is_file():
        failed.unlink(missing_ok=True)
        return None
    obj.unlink(missing_ok=True)
    verdict = {"schema": SCHEMA, "source": str(source), "shown": shown_path(source), "exit": proc.returncode,
               "first_error": first_error(proc.stdout, source), "command": cmdline, "output": proc.stdout[-20000:]}
    tmp = Path(f"{failed}.tmp{os.getpid()}")
    tmp.write_text(json.dumps(verdict, indent=2) + "\n")
    os.replace(tmp, failed)
    return verdict


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", required=True)
    ap.add_argument("--object", required=True)
    ap.add_argument("--cache", default="", help="the stage object cache (object_cache.py); empty: none")
    ap.add_argument("--depends", nargs="*", default=[])
    ap.add_argument("--verbose", action="store_true", help="print the command line (make V=1)")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("no compile command after --")
    verdict = compile_stage(command, args.source, args.object, args.cache or None, args.depends, args.verbose)
    if verdict:
        print(f"  {verdict['shown']} does not compile (first error: {verdict['first_error']}); "
              f"its stages will be rejected, the others still build", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
