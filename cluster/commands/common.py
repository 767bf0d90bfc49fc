"""commands/common.py — what several of the commands need: the refusal every command raises, who is
staff, a student's attempts with the staff's decisions applied and their own deadline, one grading
of an attempt (a job's, or the staff's regrade), and how the staff's decision commands name a
student, an attempt and a sweep.
"""
import datetime as dt
import difflib
import os
import secrets
import shutil
from pathlib import Path

import attempts as door  # the one way into the drop box
import class_files
import course_state
import grading
import records
import slurm
import student_standing
import sweeps
from config import ConfigError


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


def is_staff(cfg) -> bool:
    """Root, a member of the staff group, or — where the course has none — the drop box's owner."""
    if os.getuid() == 0 or (cfg.staff_gid is not None and cfg.staff_gid in os.getgroups()):
        return True
    try:
        return cfg.staff_gid is None and cfg.dropbox_dir.stat().st_uid == os.getuid()
    except OSError:
        return False


def student_decisions(cfg, user) -> "student_standing.StudentDecisions | None":
    """The staff's standing decisions about a student: from the decision log where this account can
    read it (the staff), else from what the staff left for the student (their view)."""
    folded = student_standing.decisions(cfg)
    if user in folded or is_staff(cfg):
        return folded.get(user)
    view = student_standing.read_view(cfg, user)
    if view and view.get("decisions"):
        return student_standing.fold([dict(e, student=user) for e in view["decisions"]]).get(user)
    return None


def attempts_of(cfg, student, decided=None, deadline=None, cases=None) -> tuple[list[door.Attempt], door.Attempt | None]:
    """Every attempt of a student — their own, and the hand-ins the staff entered for them (where this
    account can read those) — oldest first, with the staff's withdrawals marked, and the student's own
    withdrawal marks made after their deadline (withdraw_closes) marked as not honoured; and the
    attempt the staff decided counts, if any. decided: the student's decisions (default:
    student_decisions); deadline: theirs (default: student_deadline). cases: a list to which the
    decisions that no longer match their attempt are added, each a case for a person
    (student_standing.bind); such a decision is not applied."""
    own = door.of_student(cfg, student)
    decided = student_decisions(cfg, student) if decided is None else decided
    try:
        entered = door.entered_of(cfg, student)
    except PermissionError:  # a student: the staff's area is closed, what the staff left for them says it
        entered = entered_as_told(cfg, student, decided)
    attempts = sorted(own + entered, key=lambda a: (a.submitted_at, a.entered, a.number))
    closes = withdraw_closes(deadline if deadline is not None else student_deadline(cfg, student)[0])
    for a in attempts:  # a mark made after the deadline is a late act: the attempt counts as if not withdrawn
        a.mark_late = bool(closes is not None and a.mark_time is not None and a.mark_time > closes)
    accepted = None
    if decided:
        bound, unbound = student_standing.bind(decided, attempts)
        for e, a in bound:
            if e["action"] in ("accept", "settle"):
                accepted = a
            elif e["action"] == "withdraw":
                a.staff_withdrawn = e
            else:
                a.staff_restored = e
        if cases is not None:
            cases.extend(unbound)
    return attempts, accepted


def withdraw_closes(deadline) -> dt.datetime | None:
    """The last moment a student's own withdrawal (`make withdraw`, and its UNDO=1) is theirs to make:
    their due date with its grace (with their extension). After it, which attempt counts is the staff's
    to change: a withdrawal then would be chosen after seeing the feedback. None without a due date."""
    return deadline.due + deadline.grace if deadline.due is not None else None


def entered_as_told(cfg, student, decided) -> list[door.Attempt]:
    """The hand-ins the staff entered for a student, as the student may know them (their view: label
    and time of each, not its files): so `make status` lists them, and says which attempt counts."""
    out = []
    for e in (decided.history if decided else []):
        if e["action"] == "enter" and e.get("label", "")[1:].isdigit() and e.get("submitted_at"):
            out.append(door.Attempt(door.entered_dir(cfg, student) / e["attempt"], int(e["label"][1:]),
                                    {"user": student, "submitted_at": e["submitted_at"], "files": {},
                                     "attempt_sha256": ""}, entered=True, owner=student))
    return out


def duration_text(d: dt.timedelta) -> str:
    """A duration as a person says it: '1 day 3 h 5 min', '40 min', '12 s'."""
    secs = int(d.total_seconds())
    days, rest = divmod(secs, 86400)
    hours, rest = divmod(rest, 3600)
    mins, secs = divmod(rest, 60)
    parts = [f"{days} day{'s' if days != 1 else ''}"] if days else []
    parts += [f"{hours} h"] if hours else []
    parts += [f"{mins} min"] if mins and not days else []
    return " ".join(parts) or f"{secs} s"


def student_deadline(cfg, user):
    """The student's own deadline (with an extension) and how it is described. The extensions file is
    the staff's (it holds reasons); a student reads their own dates from what the staff published for
    them (student_standing.write_views), and is told plainly when there is nothing published for them yet."""
    state = getattr(cfg, "state", None)
    try:
        if state is not None and not state.staff_half():
            raise PermissionError  # the students' half of the state has no extensions: their view has theirs
        ext = class_files.load_extensions(cfg, None).get(user)
    except (ConfigError, OSError):
        view = student_standing.read_view(cfg, user)
        if view is None:
            return cfg.deadline, (" (the course's; if the course staff gave you an extension, it is not shown here "
                                  "yet and still applies: `make status` shows it once they have published it to you)")
        ext_view = view.get("extension")
        if not ext_view:
            return cfg.deadline, ""
        due = records.parse_iso(ext_view["due"])
        days = ext_view.get("late_days") or 0
        what = f"{days} late day{'s' if days != 1 else ''} (due {ext_view['due']})" if days else f"due {ext_view['due']}"
        return cfg.deadline.shifted(due), f" (with your extension: {what})"
    if ext:
        return ext.deadline(cfg.deadline), f" (with your extension: {ext.describe()})"
    return cfg.deadline, ""


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
        problem = a.verify()
        if problem:
            outcome = grading.finish_outcome(tmp, dict(meta, schema=grading.OUTCOME_SCHEMA, status="tampered",
                                                message=problem))
        else:
            outcome = grading.grade_into(cfg, a.stage_bytes(), tmp, meta)
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


def class_source(cfg) -> str:
    """Where the class list comes from, for messages about a name that is not in it."""
    if cfg.roster_path:
        return f"the roster {cfg.roster_path} does not list them (with a roster, only its students are students)"
    return (f"no roster is set ([cluster] roster), so the class is whoever has handed in, and {cfg.dropbox_dir} "
            "has no directory of theirs")


def chosen_sweep(cfg, args) -> Path:
    """--sweep DIR, else the sweep named --name under [cluster] sweeps; it must have a plan."""
    sweep = Path(args.sweep) if args.sweep else sweeps.sweep_dir(cfg, args.name)
    if not (sweep / "plan.json").is_file():
        known = sorted(q.parent.name for q in cfg.sweeps_dir.glob("*/plan.json"))
        raise Refused(f"{sweep} has no plan.json: no sweep there yet (`make sweep SWEEP={sweep.name}` starts one). "
                      f"Sweeps in {cfg.sweeps_dir}: {', '.join(known) or 'none'}")
    return sweep


def staff_only(cfg, what: str):
    if not is_staff(cfg):
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
    attempts, _ = attempts_of(cfg, student, student_standing.StudentDecisions(), deadline=cfg.deadline)
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
