"""commands/common.py — what several of the commands need: the refusal every command raises, one
grading of an attempt (a job's, or the staff's regrade), and how the staff's decision commands name a
student, an attempt and a sweep. Which attempt counts, and why, is which_counts.py's.
"""
import difflib
import os
import secrets
import shutil
from pathlib import Path

import attempts as door  # the one way into the drop box
import course_state
import grading
import records
import slurm
import student_standing
import sweeps
import which_counts
from class_files import class_source


class Refused(Exception):
    """A request that cannot be carried out; the message says why and what to do."""


def trusted_tool(cfg) -> Path:
    """Jobs run this tool from the trusted tree ([cluster] grader_root), never a student's copy."""
    return cfg.grader_dir / "cluster" / "gemmlab_cluster.py"


ARGV: list[str] = []  # the command line of this run of the tool (main sets it): sweep manifests record it


def attempt_number(attempt: Path) -> int:
    return int(attempt.name.split("-")[1])


def grade_script(cfg, user, attempt: Path, script: Path, log: Path, into: Path) -> Path:
    """The batch job that grades `attempt` into `into`, rendered from the trusted template
    (cluster/templates/grade-attempt.sbatch) into `script`, a file of the account that queues it: never
    a file of the attempt's, which its student can write (the job runs as whoever queues it)."""
    return slurm.render("grade-attempt.sbatch", script, cfg.sbatch_options(),
                        user=user, course=cfg.course, attempt=attempt, into=into, log=log, python=cfg.python_exe,
                        config=cfg.path, tool=trusted_tool(cfg), job_name=slurm.job_name(cfg.course, "grade"))


def grade_attempt(cfg, attempt_path: Path, into: Path | None = None) -> dict:
    """Grade one attempt into `into` (default <attempt>/grading/; the staff's regrade: a directory of
    theirs), atomically; what the grading job runs. The hand-in is read through the drop box's door."""
    attempt_path = Path(os.path.abspath(attempt_path))
    into = Path(os.path.abspath(into)) if into else attempt_path / "grading"
    try:
        a = door.one(cfg, attempt_path)
    except (door.Case, FileNotFoundError) as e:
        raise Refused(f"grade-attempt: {e}") from None
    job = os.environ.get("SLURM_JOB_ID")
    if job:
        # The staff's own directory is read as any staff file; the attempt's, through the door.
        done = records.read_json(into / "outcome.json") if into != attempt_path / "grading" \
            else a.record("grading/outcome.json")
        if done and done.get("job_id") == job and done.get("status") not in grading.SWEEP_RETRIES:
            return done  # an earlier start of this job published it, then its node failed: not twice
        for stale in into.parent.glob(f".grading-tmp-{job}-*"):  # what that earlier start left
            shutil.rmtree(stale, ignore_errors=True)
    tmp = into.parent / f".grading-tmp-{job or os.getpid()}-{secrets.token_hex(3)}"
    tmp.mkdir()
    try:
        meta = dict(state_record(cfg), student=a.student, attempt=attempt_path.name, attempt_sha256=a.digest)
        outcome = grading.grade_checked(cfg, a, tmp, meta)
        grading.publish(tmp, into)
        return outcome
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def state_record(cfg) -> dict:
    """What a grade records of the course state it was made under (course_state.grade_standing reads it)."""
    state = getattr(cfg, "state", None)
    if state is None:
        return {}
    return {"course_state": state.id, "grading": dict(state.info["grading"])}


def chosen_sweep(cfg, args) -> Path:
    """--sweep DIR, else the sweep named --name under [cluster] sweeps; it must have a plan."""
    sweep = Path(args.sweep) if args.sweep else sweeps.sweep_dir(cfg, args.name)
    if not (sweep / "plan.json").is_file():
        known = sorted(q.parent.name for q in cfg.sweeps_dir.glob("*/plan.json"))
        raise Refused(f"{sweep} has no plan.json: no sweep there yet (`make sweep SWEEP={sweep.name}` starts one). "
                      f"Sweeps in {cfg.sweeps_dir}: {', '.join(known) or 'none'}")
    return sweep


def staff_only(cfg, what: str):
    if not course_state.is_staff(cfg):
        raise Refused(f"{what} is for the course staff: root, or a member of the staff group "
                      f"({cfg.staff_group or 'none is set: the drop box owner'})")


def required_reason(args) -> str:
    why = (getattr(args, "why", "") or "").strip()
    if len(why) < 3:
        raise Refused("say why, in a few words: every decision is recorded with who, when, what and why (--why \"...\"; "
                      "with make: WHY=\"...\"), e.g. WHY=\"e-mail of 2026-12-05: the node was down\"")
    return why


def known_student(cfg, student: str):
    known = door.students(cfg)
    if student not in known:
        close = difflib.get_close_matches(student, known, n=1)
        raise Refused(f"{student!r} is not a student of this course" + (f" (did you mean {close[0]!r}?)" if close else "")
                      + f": {class_source(cfg)}. Nothing was recorded")


def attempt_named(cfg, student: str, ref) -> door.Attempt:
    """A student's attempt as staff name it: 3 or #3 (their own), E1 (the first the staff entered)."""
    attempts, _ = which_counts.attempts_of(cfg, student, student_standing.StudentDecisions(), deadline=cfg.deadline)
    text = str(ref).strip().lstrip("#")
    for a in attempts:
        if (text.upper().startswith("E") and a.entered and text[1:].isdigit() and int(text[1:]) == a.number) or \
                (text.isdigit() and not a.entered and int(text) == a.number) or text == a.path.name:
            return a
    listing = ", ".join(f"{a.label} ({a.manifest['submitted_at']})" for a in attempts) or "none"
    raise Refused(f"{student} has no attempt {ref!r}; their attempts: {listing} (`status --user {student}`)")


def record_decision(cfg, action: str, student: str, why: str, **fields) -> dict:
    entry = course_state.log(cfg).append(action, student=student, why=why, **fields)
    student_standing.write_views(cfg, [student])
    return entry
