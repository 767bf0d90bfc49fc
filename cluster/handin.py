"""handin.py — what `make submit` tells a student: the compile check before a hand-in is stored, and
what happened to its grading job, each with whose problem it is and what to do.

  compile_check(cfg, files)   compiles the stage files about to be handed in, as the grader will, in
                              a scratch copy: one progress line per file, then each file that does not
                              compile with the compiler's messages and its first error, the paths as
                              the student knows them (student/tiled.cu:69), never the scratch copy's;
                              make's own chatter (its commands, jobserver and clock notes) goes to the
                              log only. Nothing here stops a hand-in (docs/student-guide.md, Rules).
  not_queued(e, attempt)      sbatch did not take the grading job: (a few words for `make status`,
                              the lines for the student). The scheduler down is the cluster's
                              problem, a refused option the course staff's; either way the hand-in
                              is stored and counts, and `make requeue ATTEMPT=N` queues its grading
                              later (rendered afresh from the trusted template: an attempt holds
                              no job script).
"""
import contextlib
import json
import re
import shutil
import sys
from pathlib import Path

import toolchain
import scratch as scratch_space
import slurm

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grader" / "scripts"))
import compile_stage  # noqa: E402  (how the student is shown a compiler's output)

SHOWN_LINES = 30  # of a broken file's compiler output; `make` shows all of it
_COMPILING = re.compile(r"^\s*NVCC\s+(\S+)\s*$")


def as_typed(path: Path) -> str:
    """A path as the student names it: relative to the working directory where it lies below it."""
    return compile_stage.shown_path(path)


def compile_check(cfg, files: dict, say=print, warn=print):
    """Compiles the stage files of `files` (name -> path) as the grader will; reports each as it
    starts and every file that does not compile or has warnings. Returns the names that do not
    compile (the hand-in is stored all the same)."""
    stage = {name: Path(src) for name, src in sorted(files.items()) if name.endswith(".cu")}
    with contextlib.ExitStack() as held:
        try:
            tmp = held.enter_context(scratch_space.temporary("gemmlab-submit-"))  # mode 0700: the student's code
        except scratch_space.UnsafeScratch as e:  # nowhere private to compile them here: not the files' fault
            warn(f"submit: note: your stage files could not be compiled here before handing in ({e}); the "
                 "grading job compiles them.")
            return []
        sub = Path(tmp) / "submission"
        sub.mkdir()
        for name, src in stage.items():
            shutil.copyfile(src, sub / name)
        log = Path(tmp) / "compile.log"
        try:
            tools = toolchain.Toolchain(cfg)
        except toolchain.BuildError as e:  # no nvcc on this node, say: the grading set-up's, not the student's
            warn(f"submit: note: your stage files could not be compiled here before handing in ({e}); the "
                 "grading job compiles them.")
            return []
        say(f"submit: compiling the {len(stage)} stage files as the grader will ({tools.arch}), one line each:")
        started = []

        def progress(line):
            m = _COMPILING.match(line)
            name = Path(m.group(1)).name if m else ""
            if name in stage and name not in started:
                started.append(name)
                say(f"submit:   [{len(started)}/{len(stage)}] {as_typed(stage[name])}")

        try:
            broken = tools.compile_only(sub, Path(tmp) / "build", log, on_line=progress)
        except toolchain.BuildError as e:  # the machine stopped it (a full disk, no sandbox here): not the files
            warn(f"submit: note: your stage files could not be compiled here before handing in ({e}); the "
                 "grading job compiles them.")
            return []
        reused = [n for n in stage if n not in started and n not in broken]
        if reused:
            say(f"submit:   {', '.join(as_typed(stage[n]) for n in reused)}: compiled before from the same bytes "
                "(object cache)")

        def student_paths(text, name):
            shown_dir = as_typed(stage[name].parent)
            prefix = "" if shown_dir == "." else shown_dir.rstrip("/") + "/"
            return compile_stage.for_the_student(text, sub / name).replace(f"{sub}/", prefix)

        found = {p.name[:-len(".o.failed")]: p for p in Path(tmp, "build").rglob("*.o.failed")}
        for name in broken:
            stem = name[:-len(".cu")]
            verdict = _read(found.get(stem))
            output = student_paths(verdict.get("output", ""), name).rstrip("\n").splitlines()
            first = student_paths(verdict.get("first_error", ""), name)
            shown = output[:SHOWN_LINES] + ([f"... ({len(output) - SHOWN_LINES} more lines: `make` shows them all)"]
                                            if len(output) > SHOWN_LINES else [])
            warn(f"submit: {as_typed(stage[name])} does not compile; the compiler says:\n    " + "\n    ".join(shown))
            warn(f"submit: WARNING: stage {stem} will be rejected and score 0"
                 + (f" (first error: {first})" if first else ""))
        for p in sorted(Path(tmp, "build").rglob(f"*.o{compile_stage.WARNINGS_SUFFIX}")):
            name = p.name.split(".")[0] + ".cu"
            w = _read(p)
            if name in stage and w:
                say(f"submit: {as_typed(stage[name])} compiles, with {w['count']} compiler warning"
                    f"{'s' if w['count'] != 1 else ''} (no points lost; the first: {student_paths(w['first'], name)})")
        if broken:
            warn("submit: WARNING: handing in anyway: every other stage is graded. Fix the file(s) (`make` shows the "
                 "compiler's messages) and run `make submit` again to hand in a version that compiles.")
        else:
            say("submit: every stage file compiles")
        return broken


def _read(path):
    try:
        return json.loads(Path(path).read_text()) if path else {}
    except (OSError, ValueError):
        return {}


def not_queued(error: slurm.SlurmError, attempt: int) -> tuple[str, list[str]]:
    """sbatch refused the grading job of a stored hand-in: (a few words for `make status`, the lines
    for the student), saying whose problem it is and how to queue this same hand-in's grading later."""
    said = (error.output or str(error)).strip().splitlines()
    quoted = said[-1] if said else "no message"
    later = (f"Queue the grading of this same hand-in later (it keeps its time; no need to hand in again):\n"
             f"      make requeue ATTEMPT={attempt}")
    if slurm.controller_down(error.output or str(error)):
        return ("Slurm did not answer", [
            f"its feedback grading was not queued: Slurm, the cluster's scheduler, did not answer "
            f"(\"{quoted}\"). That is the cluster's problem — the scheduler is down or cannot be reached from this "
            "node — not your files and not course.toml.",
            later + "\n  once `sinfo` answers again. If it stays down, tell the course staff; the final sweep grades "
                    "the hand-in that counts in any case."])
    keys = slurm.refused_keys(error.output or "")
    setting = f"[cluster] {', '.join(keys)} of the course's course.toml" if keys else "the course's Slurm settings"
    return ("Slurm refused the grading job", [
        f"its feedback grading was not queued: Slurm refused the grading job (\"{quoted}\"). That is for "
        f"the course staff to fix ({setting}; the copy in your checkout is not used): tell them, with this message.",
        later + "\n  once they have fixed it. The final sweep grades the hand-in that counts in any case."])
