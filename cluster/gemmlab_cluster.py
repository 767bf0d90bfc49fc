#!/usr/bin/env python3
"""gemmlab_cluster.py — hand-ins and class-wide grading of GEMM Lab, on Slurm or on this machine.

Students (through the Makefile):
  make submit         submit --student-dir student     hand in student/ (+ report/report.pdf), queue grading
  make status         status                           your attempts and their grading jobs
  make results        results [--attempt N]            the results of your latest graded attempt
  make requeue        requeue --attempt N              queue the grading of your attempt N (where submit could not)
Course staff:
  setup                                                create the drop box, sweeps and cache directories
  make sweep          sweep [--name final] [--student S ... --force] [--local]
                                                       grade the attempt that counts of every student
  make sweep-status   sweep-status [--name N] [--follow] the sweeps; done / running / queued / failed of one
  make regrade        regrade --user S --attempt N     grade one attempt again for feedback, as a job of the staff's
  make gradebook-export  gradebook [--name final]      (re)build gradebook.csv, summary.md and export/
                                                       (canvas.csv: Canvas's import layout; grades.csv)
  make similarity     similarity [--name final]        similarity report of the hand-ins, per stage
  make leaderboard    leaderboard [--name final]       opt-in class leaderboard (Markdown, HTML, plot)
Internal (what the job scripts run): grade-attempt, sweep-task; sweep-local (a local sweep's grader).

Grading runs as Slurm batch jobs made from cluster/templates/ ([cluster] scheduler = "auto" or
"slurm"). Where sbatch is not on PATH nothing is graded on this machine: a sweep stops and says how
to load Slurm, a hand-in is stored (its time counts) without its grading. Grading here is chosen on
purpose (scheduler = "local", or sweep --local: local_grading.py), says where it runs first, and a
local sweep runs detached from the terminal.
Everything is configured in course.toml: [cluster], [deadline], [late], and for the staff tools
[extensions], [similarity], [export] and [leaderboard]; docs/instructor-guide.md explains them. Exit status: 0 done, 1 refused or failed (the message says why), 2 bad configuration.
"""
import argparse
import collections
import dataclasses
import datetime as dt
import json
import os
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The course staff's tools (gradebook, LMS exports, similarity, leaderboard and their pages): a
# folder of their own, which a handout leaves out whole (grader/scripts/handout.py).
STAFF_DIR = HERE / "staff"
sys.path.insert(0, str(HERE))
if STAFF_DIR.is_dir():
    sys.path.insert(0, str(STAFF_DIR))

import attempts as door  # noqa: E402  (the one way into the drop box)
import class_files  # noqa: E402
import config as config_mod  # noqa: E402
import course_state  # noqa: E402
import dropbox  # noqa: E402
import grading  # noqa: E402
import local_grading  # noqa: E402
import scratch as scratch_space  # noqa: E402
import handin  # noqa: E402
import records  # noqa: E402
from records import now  # noqa: E402
import shared_dropbox  # noqa: E402
import slurm  # noqa: E402
from config import ConfigError  # noqa: E402
from course_state import StateError  # noqa: E402
from dropbox import SubmissionError  # noqa: E402


class Refused(Exception):
    """A request that cannot be carried out; the message says why and what to do."""


def trusted_tool(cfg) -> Path:
    """Jobs run this tool from the trusted tree ([cluster] grader_root), never a student's copy."""
    return cfg.grader_dir / "cluster" / "gemmlab_cluster.py"


ARGV: list[str] = []  # the command line of this run of the tool (main sets it): sweep manifests record it


# ---- students -------------------------------------------------------------------------------
def cmd_submit(cfg, args):
    _refuse_without_a_shared_dropbox(cfg)
    user = _acting_user(args)
    _on_the_roster(cfg, user, args.off_roster)
    student_dir = Path(args.student_dir).resolve()
    report = Path(args.report).resolve() if args.report else student_dir.parent / "report" / "report.pdf"
    files = dropbox.collect(cfg, student_dir, report)
    stage_names = [n for n in files if n.endswith(".cu")]
    print(f"submit: handing in {len(stage_names)} stage file(s) from {handin.as_typed(student_dir)}/"
          + (f" and {handin.as_typed(report)}" if door.REPORT_NAME in files else " (no report/report.pdf)"))
    does_not_compile = None if args.no_compile_check else _compile_check(cfg, files)
    # Is the report of these very stage files? Asked, never refused: the hand-in is stored either way
    # (its time counts for the deadline), the verdict goes into its manifest and the gradebook.
    report = door.report_check(files)
    state = getattr(cfg, "state", None)
    attempt = dropbox.store_attempt(cfg, user, files, git=dropbox.git_info(student_dir),
                                    extra={"report": report, "does_not_compile": does_not_compile,
                                           "course_state": state.id if state else None})
    if user == dropbox.current_user():
        course_state.token(cfg, user, create=True)  # where the staff leave what this student may see
    stored = door.one(cfg, attempt)
    print(f"submit: stored attempt #{stored.number} of {user}, {stored.manifest['submitted_at']}: it is "
          f"handed in ({attempt}, sha256 {stored.digest[:12]})")
    warning = dropbox.report_warning(report, config_mod.srun_line(cfg.values))
    if warning:
        print(f"submit: WARNING: {warning} This hand-in is stored as it is; the course staff see the report "
              f"marked `report: {report['verdict']}` in the gradebook.", file=sys.stderr)
    for line in how_it_counts(cfg, user, attempt):
        print(f"submit: {line}")
    short, why_not = _why_not_queue(cfg, user, attempt)
    if why_not:
        records.write_json_atomic(attempt / "job.json", {"not_queued": short, "why": why_not, "at": records.iso(now())})
        print(f"submit: not queued for grading: {why_not}")
        return 0
    _queue_own_grading(cfg, user, attempt, "submit")  # not queued: said, and recorded; the hand-in is stored
    return 0


def _queue_own_grading(cfg, user, attempt: Path, verb: str) -> bool:
    """The student's own feedback grading of a stored attempt: queued on Slurm, or graded here where
    the course grades here, or recorded as not queued (job.json) with what to do. True when queued
    or graded."""
    mode = cfg.grading_mode()
    if mode == "slurm":
        try:
            job = _sbatch_own(cfg, user, attempt)
        except slurm.SlurmError as e:
            _grading_not_queued(attempt, e, verb)
            return False
        records.write_json_atomic(attempt / "job.json", {"job_id": job, "queued": records.iso(now())})
        print(f"{verb}: grading job {job} queued. Follow it with `make status`; when it has run, "
              "`make results` shows the score.")
    elif mode == "no-slurm":  # never graded here: stored (its time counts), its grading left for later
        short, message = local_grading.not_queued_message(cfg, attempt_number(attempt))
        records.write_json_atomic(attempt / "job.json", {"not_queued": short, "why": message, "at": records.iso(now())})
        print(f"{verb}: WARNING: {message}", file=sys.stderr)
        return False
    else:
        print(f"{verb}: grading now on this machine ([cluster] scheduler = \"local\"): {local_grading.here()} ...",
              flush=True)
        outcome = grade_attempt(cfg, attempt)
        print(f"{verb}: {outcome['status']}: {outcome.get('message', '')}")
        print(f"{verb}: `make results` shows the details; `make status` lists your attempts.")
    return True


def attempt_number(attempt: Path) -> int:
    return int(attempt.name.split("-")[1])


def _grade_script(cfg, user, attempt: Path, script: Path, log: Path, into: Path) -> Path:
    """The batch job that grades `attempt` into `into`, rendered from the trusted template
    (cluster/templates/grade-attempt.sbatch) into `script`, a file of the account that queues it: never
    a file of the attempt's, which its student can write (the job runs as whoever queues it)."""
    return slurm.render("grade-attempt.sbatch", script, cfg.sbatch_options(),
                        user=user, course=cfg.course, attempt=attempt, into=into, job_name=f"gemmlab-grade-{user}",
                        log=log, python=cfg.python_exe, config=cfg.path, tool=trusted_tool(cfg))


def _sbatch_own(cfg, user, attempt: Path) -> str:
    """The student's feedback job (it runs as them): its script rendered into a private temporary
    directory of theirs and queued (sbatch keeps its own copy); its log in the attempt."""
    with tempfile.TemporaryDirectory(prefix="gemmlab-grade-") as tmp:
        script = _grade_script(cfg, user, attempt, Path(tmp) / "grade-attempt.sbatch", attempt / "grade-%j.log",
                               attempt / "grading")
        return slurm.sbatch(script, cwd=attempt)


def cmd_requeue(cfg, args):
    """Queue the feedback grading of one of your stored attempts again: one whose job sbatch did not
    take at `make submit` (Slurm down, an option refused), or whose grading found no GPU or failed."""
    _refuse_without_a_shared_dropbox(cfg)
    user = _acting_user(args)
    attempts = dropbox.list_attempts(cfg.dropbox_dir / user)
    a = next((x for x in attempts if str(x.number) == str(args.attempt).lstrip("#")), None)
    if a is None:
        listing = ", ".join(f"#{x.number}" for x in attempts) or "none"
        raise Refused(f"you have no attempt {args.attempt!r} (your attempts: {listing}; `make status` lists them)")
    if _grading_stands(a):
        raise Refused(f"attempt #{a.number} needs no grading: {_attempt_state(a)} (`make status`, `make results`)")
    short, why_not = _why_not_queue(cfg, user, a.path)
    if why_not:
        raise Refused(f"attempt #{a.number} is not queued: {why_not}")
    return 0 if _queue_own_grading(cfg, user, a.path, "requeue") else 1


def cmd_regrade(cfg, args):
    """(staff) Grade one attempt of a student again for feedback, as this account: into a directory of
    the staff's, <sweeps>/.course/regrades/<student>-<attempt>-<time>/ (grading/, and on Slurm the job's
    script, rendered from the trusted template, and its log) — never a file of the attempt's, nor a
    write into the attempt's directory, which is its student's. The sweeps are not touched (`make sweep
    STUDENT=` regrades the attempt that counts)."""
    _staff_only(cfg, "regrade")
    _known_student(cfg, args.user)
    a = _attempt_named(cfg, args.user, args.attempt)
    mode = cfg.grading_mode()
    if mode == "no-slurm":
        raise Refused(f"Slurm was not found here (sbatch is not on PATH), and this course grades on Slurm ([cluster] "
                      f"scheduler = \"{cfg.values['scheduler']}\" in {cfg.source}): nothing was queued. Load Slurm "
                      "(e.g. `module load slurm`) and regrade again")
    here = course_state.new_regrade_dir(cfg, args.user, a.path.name)
    if mode == "local":
        print(f"regrade: grading {args.user}'s attempt {a.label} now on this machine: {local_grading.here()} ...",
              flush=True)
        outcome = grade_attempt(cfg, a.path, into=here / "grading")
        print(f"regrade: {outcome['status']}: {outcome.get('message', '')} ({here / 'grading'})")
        return 1 if outcome["status"] in grading.FAILED else 0
    script = _grade_script(cfg, args.user, a.path, here / "grade-attempt.sbatch", here / "grade-%j.log",
                           here / "grading")
    try:
        job = slurm.sbatch(script, cwd=here)
    except slurm.SlurmError as e:
        raise Refused(str(e)) from None
    print(f"regrade: job {job} grades {args.user}'s attempt {a.label} ({a.path}) into {here / 'grading'}; its "
          f"script and log: {script}, {here / f'grade-{job}.log'}")
    return 0


def _refuse_without_a_shared_dropbox(cfg):
    """A handout stores a hand-in only in a drop box the staff can read (shared_dropbox.py)."""
    why = shared_dropbox.refusal(cfg)
    if why:
        raise Refused(why)


def _note_without_a_shared_dropbox(cfg):
    note = shared_dropbox.note(cfg)
    if note:
        print(f"status: note: {note}", file=sys.stderr)


def _grading_not_queued(attempt: Path, error: slurm.SlurmError, verb="submit"):
    """sbatch did not take the grading job of a stored hand-in: recorded for `make status`, and the
    student told whose problem it is and how to queue it later (handin.not_queued)."""
    short, lines = handin.not_queued(error, attempt_number(attempt))
    records.write_json_atomic(attempt / "job.json", {"not_queued": short, "why": lines[0], "at": records.iso(now())})
    print(f"{verb}: your hand-in is stored and counts; {lines[0]}", file=sys.stderr)
    for line in lines[1:]:
        print(f"  {line}", file=sys.stderr)


def _is_staff(cfg) -> bool:
    """Root, a member of the staff group, or — where the course has none — the drop box's owner."""
    if os.getuid() == 0 or (cfg.staff_gid is not None and cfg.staff_gid in os.getgroups()):
        return True
    try:
        return cfg.staff_gid is None and cfg.dropbox_dir.stat().st_uid == os.getuid()
    except OSError:
        return False


def student_decisions(cfg, user) -> "course_state.StudentDecisions | None":
    """The staff's standing decisions about a student: from the decision log where this account can
    read it (the staff), else from what the staff left for the student (their view)."""
    folded = course_state.decisions(cfg)
    if user in folded or _is_staff(cfg):
        return folded.get(user)
    view = course_state.read_view(cfg, user)
    if view and view.get("decisions"):
        return course_state.fold([dict(e, student=user) for e in view["decisions"]]).get(user)
    return None


def attempts_of(cfg, student, decided=None) -> tuple[list[door.Attempt], door.Attempt | None]:
    """Every attempt of a student — their own, and the hand-ins the staff entered for them (where this
    account can read those) — oldest first, with the staff's withdrawals marked; and the attempt the
    staff decided counts, if any. decided: the student's decisions (default: student_decisions)."""
    own = door.of_student(cfg, student)
    decided = student_decisions(cfg, student) if decided is None else decided
    try:
        entered = door.entered_of(cfg, student)
    except PermissionError:  # a student: the staff's area is closed, what the staff left for them says it
        entered = _entered_as_told(cfg, student, decided)
    attempts = sorted(own + entered, key=lambda a: (a.submitted_at, a.entered, a.number))
    accepted = None
    if decided:
        for a in attempts:
            a.staff_withdrawn = decided.withdrawn.get(a.path.name)
            a.staff_restored = decided.restored.get(a.path.name)
            if decided.accepted and decided.accepted.get("attempt") == a.path.name:
                accepted = a
    return attempts, accepted


def _entered_as_told(cfg, student, decided) -> list[door.Attempt]:
    """The hand-ins the staff entered for a student, as the student may know them (their view: label
    and time of each, not its files): so `make status` lists them, and says which attempt counts."""
    out = []
    for e in (decided.history if decided else []):
        if e["action"] == "enter" and e.get("label", "")[1:].isdigit() and e.get("submitted_at"):
            out.append(door.Attempt(door.entered_dir(cfg, student) / e["attempt"], int(e["label"][1:]),
                                    {"user": student, "submitted_at": e["submitted_at"], "files": {},
                                     "attempt_sha256": ""}, entered=True, owner=student))
    return out


def _on_the_roster(cfg, user, override):
    """With a roster, only its students hand in; the course staff may hand in for anyone (override)."""
    if not cfg.roster_path:
        return
    if override:
        if not _is_staff(cfg):
            raise Refused("--off-roster is for the course staff (root or the staff group)")
        return
    try:
        member = class_files.on_roster(cfg, user)
    except (ConfigError, OSError) as e:  # the staff's mistake: it never stops a hand-in (make validate names it)
        print(f"submit: note: the course's roster could not be read, so it was not checked ({e})", file=sys.stderr)
        return
    if not member:
        raise Refused(f"{user} is not on this course's roster, so nothing was handed in. If you take the course, ask "
                      "the course staff to add you (they can also hand in for you: submit --off-roster)")


def _waiting_jobs(attempts) -> list[door.Attempt]:
    """The attempts whose grading job is still waiting or running."""
    out = []
    if not shutil.which("scontrol"):
        return out
    for a in attempts:
        job = a.record("job.json") or {}
        if job.get("job_id") and not a.record("grading/outcome.json"):
            if slurm.job_state(job["job_id"]) in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "REQUEUED"):
                out.append(a)
    return out


def _grading_stands(a: door.Attempt) -> bool:
    """Whether an attempt's feedback grading says (or will say) what the files are worth: graded, or
    still queued — not one that found no GPU or failed (grading.SWEEP_RETRIES), nor a job that
    ended without a result."""
    outcome = a.record("grading/outcome.json")
    if outcome:
        return outcome.get("status") not in grading.SWEEP_RETRIES
    job = a.record("job.json") or {}
    if not job.get("job_id"):
        return False
    if not shutil.which("scontrol"):
        return True  # no way to ask: a queued job is taken at its word
    return slurm.job_state(job["job_id"]) in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "REQUEUED")


def _why_not_queue(cfg, user, attempt_path: Path) -> tuple[str, str]:
    """Why a stored hand-in gets no grading job of its own, as (a few words for `make status`, the
    message for the student); ("", "") when it does: the same files as an earlier attempt, or the
    course's limits on a student's gradings — how many an hour (on Slurm and on this machine alike),
    and, with Slurm, how many jobs wait at once (without a queue, a grading runs while make submit
    waits: none of a student's waits)."""
    attempts = door.of_student(cfg, user)
    this = next(a for a in attempts if a.path == attempt_path)
    earlier = [a for a in attempts if a.number < this.number]
    same = [a for a in earlier if a.digest == this.digest and _grading_stands(a)]
    if same:
        short = f"the same files as your attempt #{same[-1].number} ({_attempt_state(same[-1])})"
        return short, (f"{short}: its grading stands for this one too (`make results`). Your hand-in is stored, and "
                       "its time counts for the deadline")
    slurm_course = cfg.grading_mode() == "slurm"
    if cfg.grading_mode() == "no-slurm":
        return "", ""  # graded nowhere from here: make submit says so (local_grading.not_queued_message)
    if slurm_course:
        waiting = _waiting_jobs(earlier)
        if len(waiting) >= cfg.queued_per_student:
            return f"{len(waiting)} job(s) waiting, the course allows {cfg.queued_per_student}", (f"{len(waiting)} grading job(s) of yours are still waiting or running (attempts "
                    f"{', '.join(f'#{a.number}' for a in waiting)}; the course allows {cfg.queued_per_student}). Your hand-in "
                    "is stored and counts for the deadline; the final sweep grades whichever attempt counts. Hand in again "
                    "for feedback once they have run (`make status`)")
    hour_ago = now() - dt.timedelta(hours=1)
    recent = [t for t in map(_graded_at, earlier) if t is not None and t > hour_ago]
    if len(recent) >= cfg.graded_per_hour:
        free_at = sorted(recent)[-cfg.graded_per_hour] + dt.timedelta(hours=1)
        how = "queued for grading" if slurm_course else "graded"
        return f"{len(recent)} {how.split()[0]} in the last hour, the course allows {cfg.graded_per_hour}", (f"{len(recent)} of your hand-ins were {how} in the last hour (the course allows "
                f"{cfg.graded_per_hour}). Your hand-in is stored and counts for the deadline; the next one can be "
                f"graded from {records.iso(free_at)}")
    return "", ""


def _graded_at(a: door.Attempt):
    """When an attempt's own grading was queued (Slurm: its job.json) or started on this machine
    (without Slurm: its outcome, which names no job); None when it had none."""
    job = a.record("job.json") or {}
    if job.get("job_id") and job.get("queued"):
        return records.parse_iso(job["queued"])
    outcome = a.record("grading/outcome.json") or {}
    if outcome.get("started") and not outcome.get("job_id"):
        return records.parse_iso(outcome["started"])
    return None


def _duration_text(d: dt.timedelta) -> str:
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
    them (course_state.write_views), and is told plainly when there is nothing published for them yet."""
    state = getattr(cfg, "state", None)
    try:
        if state is not None and not state.staff_half():
            raise PermissionError  # the students' half of the state has no extensions: their view has theirs
        ext = class_files.load_extensions(cfg, None).get(user)
    except (ConfigError, OSError):
        view = course_state.read_view(cfg, user)
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


def how_it_counts(cfg, user, attempt_path: Path) -> list[str]:
    """What a hand-in means for the grade: on time or late (by how much, the penalty), and which
    attempt counts under the course's late policy, with how to keep an earlier one where that helps."""
    deadline, whose = student_deadline(cfg, user)
    if deadline.due is None:
        return []
    attempts, accepted = attempts_of(cfg, user)
    this = next((a for a in attempts if a.path == attempt_path), None)
    if this is None:
        return []
    t = this.effective_time()
    late = deadline.lateness(t)
    due = deadline.shown(deadline.due + deadline.grace)
    if late <= dt.timedelta(0):
        return [f"on time: due {due}{whose}, {_duration_text(-late)} to spare"]
    lines = [f"LATE: handed in {_duration_text(late)} after your due date {due}{whose}"]
    policy = deadline.policy
    earlier = [a for a in attempts if a.number < this.number and not a.withdrawn
               and deadline.lateness(a.effective_time()) <= dt.timedelta(0)]
    on_time = earlier[-1] if earlier else None
    if deadline.cutoff is not None and t > deadline.cutoff:
        lines.append(f"it is after the late cutoff ({deadline.shown(deadline.cutoff)}): it will not count")
    elif policy == "on-time-only":
        lines.append("the course counts on-time hand-ins only: it will not count")
    else:
        lines.append(f"late penalty: {deadline.penalty_percent(t):g} % of its score ({deadline.penalty_per_day:g} % per "
                     f"started day late, at most {deadline.max_penalty:g} %)")
    pick, _ = dropbox.choose(attempts, deadline, accepted)
    if accepted is not None:
        lines.append(f"the course staff decided that your attempt {accepted.label} ({accepted.manifest['submitted_at']}) "
                     "counts: this hand-in does not change that (ask them if it should)")
        return lines
    if pick is None:
        lines.append("no attempt of yours counts now: hand in before the cutoff, or ask the course staff")
    elif pick.path == this.path:
        if on_time is not None and policy == "latest":
            lines.append(f"under the course's policy (latest) this attempt counts, with its penalty, in place of your "
                         f"on-time attempt #{on_time.number} ({on_time.manifest['submitted_at']}). To keep #{on_time.number} "
                         f"instead:  make withdraw ATTEMPT={this.number}")
        else:
            lines.append(f"this attempt counts (policy: {policy})")
    else:
        lines.append(f"your attempt #{pick.number} ({pick.manifest['submitted_at']}) counts, not this one (policy: {policy})")
    return lines


def cmd_withdraw(cfg, args):
    if args.user and args.user != dropbox.current_user():
        return _staff_withdraw(cfg, args)
    user = dropbox.current_user()
    attempts = door.of_student(cfg, user)
    a = next((x for x in attempts if str(x.number) == str(args.attempt).lstrip("#")), None)
    if a is None:
        raise Refused(f"{user} has no attempt #{args.attempt}; `make status` lists yours")
    dropbox.withdraw(a, undo=args.undo)
    deadline, whose = student_deadline(cfg, user)
    attempts, accepted = attempts_of(cfg, user)
    pick, info = dropbox.choose(attempts, deadline, accepted)
    print(f"withdraw: attempt #{a.number} is {'back' if args.undo else 'withdrawn: no sweep counts it'}")
    print("withdraw: the attempt that counts now: "
          + (f"#{pick.number} ({pick.manifest['submitted_at']}"
             + (f", late: penalty {info['penalty_pct']:g} %)" if info["late"] else ", on time)") if pick else "none")
          + (f"; undo with  make withdraw ATTEMPT={a.number} UNDO=1" if not args.undo else ""))
    return 0


def _staff_withdraw(cfg, args):
    """(staff) Withdraw one of a student's attempts for them (or count it again, --undo): recorded in
    the decision log, since the student's directory is theirs; the student sees it in `make status`."""
    _staff_only(cfg, "withdraw --user")
    why = _required_reason(args)
    _known_student(cfg, args.user)
    a = _attempt_named(cfg, args.user, args.attempt)
    e = _record(cfg, "unwithdraw" if args.undo else "withdraw", args.user, why, attempt=a.path.name, label=a.label)
    attempts, accepted = attempts_of(cfg, args.user)
    deadline, _ = student_deadline(cfg, args.user)
    pick, info = dropbox.choose(attempts, deadline, accepted)
    print(f"withdraw: {args.user}: attempt {a.label} {'counts again' if args.undo else 'is withdrawn: no sweep counts it'} "
          f"(decision #{e['seq']} by {e['by']}); the attempt that counts now: "
          + (f"{pick.label} ({pick.manifest['submitted_at']})" if pick else "none"))
    return 0


def _compile_check(cfg, files):
    """Compiles each stage file as the grader will. A file that does not compile is handed in all the
    same, with a warning naming it and the stages that will score 0: a grading job grades every stage
    that builds (a bad file costs only its own stages), and a question here could cost the hand-in
    itself near a deadline, or hang where no one can answer (docs/student-guide.md, "Handing in").
    What the student is shown: handin.compile_check. Returns the files that do not compile (the hand-in's
    manifest keeps them: make status shows them)."""
    return handin.compile_check(cfg, files, warn=lambda line: print(line, file=sys.stderr, flush=True),
                                say=lambda line: print(line, flush=True))


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
        meta = dict(_state_record(cfg), student=a.student, attempt=attempt_path.name, attempt_sha256=a.digest)
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


def _state_record(cfg) -> dict:
    """What a grade records of the course state it was made under (course_state.grade_standing reads it)."""
    state = getattr(cfg, "state", None)
    if state is None:
        return {}
    return {"course_state": state.id, "grading": dict(state.info["grading"])}


def cmd_grade_attempt(cfg, args):
    outcome = grade_attempt(cfg, Path(args.attempt), Path(args.into) if args.into else None)
    print(f"grade-attempt: {outcome['status']}: {outcome.get('message', '')}")
    return 1 if outcome["status"] in grading.FAILED else 0


def _acting_user(args):
    me = dropbox.current_user()
    if getattr(args, "user", None) and args.user != me:
        if os.getuid() != 0:
            raise Refused("--user is for course staff running as root (to act for a student)")
        return args.user
    return me


# A hand-in's report as make status shows it (dropbox.report_check's verdicts; make submit says more).
REPORT_SHOWN = {"ok": "report ok", "none": "no report", "mismatch": "report of other stage files",
                "unstamped": "report names no stage files", "example": "the EXAMPLE report"}


def _hand_in_problems(a: door.Attempt) -> str:
    """What make submit found in a hand-in: its report's verdict, and the stage files that did not compile."""
    report = (a.manifest.get("report") or {}).get("verdict")
    broken = a.manifest.get("does_not_compile") or []
    shown = [REPORT_SHOWN.get(report, f"report: {report}")] if report else []
    if broken:
        shown.append(f"does not compile: {', '.join(map(str, broken))}")
    return "  ".join(shown)


def _attempt_state(a: door.Attempt) -> str:
    outcome = a.record("grading/outcome.json")
    if a.record_problems.get("grading/outcome.json"):
        return f"its grading record cannot be read ({a.record_problems['grading/outcome.json']}): ask the course staff"
    if outcome:
        score = outcome.get("score")
        pts = f" {score['total']}/{score['max']}" if score and outcome["status"] == "graded" else ""
        return f"{outcome['status']}{pts}"
    job = a.record("job.json")
    if job and job.get("not_queued"):
        return f"not queued ({job['not_queued']})"
    if job:
        state = slurm.job_state(job["job_id"]) if shutil.which("scontrol") else ""
        if state in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING"):
            return f"job {job['job_id']} {state.lower()}"
        return f"job {job['job_id']} ended ({state.lower() or 'gone'}) without results: see {a.path}/grade-{job['job_id']}.log"
    return "not graded"


def cmd_status(cfg, args):
    _note_without_a_shared_dropbox(cfg)
    user = args.user or dropbox.current_user()
    if user == dropbox.current_user():
        _ensure_student_token(cfg, user)
    case = door.student_case(cfg, user)
    if case:
        print(f"status: {user}: needs_review: {case}. Nothing in it is graded")
    attempts, accepted = attempts_of(cfg, user)
    decided = student_decisions(cfg, user)
    if not attempts:
        print(f"status: no attempts of {user} in {cfg.dropbox_dir} yet (`make submit` hands in)")
        return 0
    deadline, whose = student_deadline(cfg, user)
    pick, _ = dropbox.choose(attempts, deadline, accepted)
    print(f"attempts of {user} in {cfg.dropbox_dir / user}"
          + (f" (due {deadline.shown(deadline.due + deadline.grace)}{whose}; policy {deadline.policy})" if deadline.due else "")
          + ":")
    for a in attempts:
        late = deadline.lateness(a.effective_time()) if deadline.due else dt.timedelta(0)
        marks = ((["withdrawn by the course staff"] if a.staff_withdrawn else ["withdrawn"] if a.withdrawn else [])
                 + (["entered by the course staff"] if a.entered else [])
                 + (["accepted by the course staff"] if accepted is not None and a.path == accepted.path else [])
                 + ([f"late {_duration_text(late)}"] if late > dt.timedelta(0) else []))
        files = ("needs_review" if a.problem else f"{len(a.manifest['files'])} file(s)  {a.digest[:12]}"
                 if a.manifest["files"] else "files kept by the course staff")  # entered, as told: label and time only
        problems = "" if a.problem else _hand_in_problems(a)
        print(f"  {a.label:<4s} {a.manifest['submitted_at']}  {files}  " + (f"{problems}  " if problems else "")
              + f"{_attempt_state(a) if not a.entered else 'graded by the sweep'}"
              + (f"  [{', '.join(marks)}]" if marks else "")
              + ("  <- counts" if pick is not None and a.path == pick.path else ""))
        if a.problem:
            print(f"       {a.problem}")
    if pick is None:
        print("  none of these counts under the course's late policy")
    for e in (decided.visible() if decided else []):
        if e["action"] in ("enter",) and not any(a.path.name == e.get("attempt") for a in attempts):
            print(f"  the course staff entered a hand-in for you on {e['at']} (decision #{e['seq']})")
    return 0


def _ensure_student_token(cfg, user):
    """The student's token, under which the staff leave what the student may see (their dates, the
    decisions about their hand-ins, their official grade). It lies in the student's own directory of
    the drop box, which a hand-in makes; a student on the roster who has none (their hand-in reached the
    staff by e-mail) gets it from `make status`. Nobody else does: a directory makes its owner one of
    the class."""
    if not door.has_directory(cfg, user):
        if door.student_case(cfg, user):
            return  # a link, or another account's directory: no token goes there
        if getattr(cfg, "state", None) is None or not cfg.dropbox_dir.is_dir():
            return  # no course the staff set up: status makes no drop box
        try:
            if not cfg.roster_path or not class_files.on_roster(cfg, user):
                return
            dropbox.user_dir(cfg, user, create=True)
        except (ConfigError, OSError, SubmissionError):
            return
    course_state.token(cfg, user, create=True)


def _official_lines(cfg, user) -> list[str]:
    """The student's official grade, as the staff published it (publish-grades), or []."""
    view = course_state.read_view(cfg, user)
    o = (view or {}).get("official")
    if not o:
        return []
    head = f"official grade (sweep {o['sweep']}, published {o['published']}): "
    if not o.get("scored"):
        return [head + f"{o['status']}: no score yet (the course staff will publish it when there is one)"]
    late = f", after a {o['penalty_pct']} % late penalty" if o.get("late") == "yes" and o.get("penalty_pct") else ""
    ext = f"; with your extension ({o['extension']})" if o.get("extension") else ""
    counted = f" for attempt {o['attempt']}" if o.get("attempt") else ""
    status = " (set by the course staff)" if o["status"] == "override" else ""
    return [head + f"{o['final']} / {o['max'] or '?'}{late}{counted}{status}{ext}",
            "  this is the grade that counts; the feedback grades of your attempts below are for feedback only"]


def cmd_hint(cfg, args):
    """The line that runs a command on a GPU node of the course's cluster (config.srun_line, from the
    published course): what every "run it on a GPU node" hint prints (the Makefile hands it to them)."""
    print(" ".join([config_mod.srun_line(cfg.values), *args.words]))
    return 0


def cmd_course_file(cfg, args):
    """The course.toml the course's commands read: the published state's, or the file given where the
    staff have published none (make rubric shows the rubric of that one). The students' half of a
    published state, whoever asks: the rubric is the same in both, and it is what students are shown."""
    state = getattr(cfg, "state", None)
    print(state.public_dir / "course.toml" if state is not None else cfg.path)
    return 0


def cmd_results(cfg, args):
    user = args.user or dropbox.current_user()
    official = _official_lines(cfg, user)
    for line in official:
        print(line)
    attempts = [a for a in door.of_student(cfg, user) if a.record("grading/outcome.json") or a.record_problems]
    if args.attempt:
        attempts = [a for a in attempts if a.number == args.attempt]
    if not attempts:
        if official and not args.attempt:
            return 0
        raise Refused(f"no graded attempt of {user}" + (f" numbered {args.attempt}" if args.attempt else "")
                      + " yet; `make status` shows where grading stands")
    a = attempts[-1]
    out = a.path / "grading"
    outcome = a.record("grading/outcome.json")
    if outcome is None:
        raise Refused(f"the grading record of attempt #{a.number} of {user} cannot be read: "
                      f"{'; '.join(a.record_problems.values())}. Ask the course staff")
    print(f"attempt #{a.number} of {user} ({a.manifest['submitted_at']}): {outcome['status']}")
    print(f"  {outcome.get('message', '')}")
    results = a.record("grading/results.json")
    if results and results.get("score"):
        print(f"  {'stage':<10} {'precision':<9} {'variant':<7} {'disposition':<16} {'points':>8}")
        for row in results["score"].get("stages", []):
            got = (row.get("correctness") or 0) + (row.get("performance") or 0)
            top = (row.get("correctness_max") or 0) + (row.get("performance_max") or 0)
            print(f"  {row['stage']:<10} {row['precision']:<9} {row.get('variant_used', ''):<7} "
                  f"{row.get('disposition', ''):<16} {got:>4g}/{top:g}")
        print(f"  total {results['score'].get('total')} / {results['score'].get('max')}")
    if outcome.get("log_tail"):
        print("  last lines of the log:\n    " + outcome["log_tail"].replace("\n", "\n    "))
    print(f"  files: {out}")
    return 0


# ---- staff: set-up and sweeps -----------------------------------------------------------------
@dataclasses.dataclass
class Validated:
    checked: list[str]   # what was checked, for the staff to read
    rubric: dict         # `gemmlab-config --json`: the rubric as the grader reads it, measurement and rubric keys
    checker: Path        # the trusted build's gemmlab-config (rescores run it)


def validate_course(cfg, build_log: Path, say=print, roster_may_be_missing=False) -> Validated:
    """Every file of the course checked as the tools that read it will, on this machine, before
    anything is queued: course.toml's sections and keys (the cluster's, [report], [handout], and
    [bench]/[scoring] by the grader's own gemmlab-config from the trusted build), the roster and the
    extensions and aliases files. The first mistake raises ConfigError (exit 2).
    roster_may_be_missing: a roster file that does not exist yet is noted, not an error (setup, early in term)."""
    checked = [f"course.toml: the cluster's sections ({cfg.path})"]
    if roster_may_be_missing and cfg.roster_path and not cfg.roster_path.exists():
        checked.append(f"roster: {cfg.roster_path} does not exist yet (write it before the first sweep)")
        cfg = dataclasses.replace(cfg, values={**cfg.values, "roster": ""})
    elif cfg.roster_path:
        roster = class_files.read_roster(cfg)
        accounts = ", each an account here" if cfg.values["roster_accounts"] and roster else ""
        checked.append(f"roster: {len(roster)} student(s){accounts}")
    else:
        checked.append("roster: none set (the class is whoever hands in)")
    known = set(door.students(cfg))
    ext = class_files.load_extensions(cfg, known, class_source(cfg))
    checked.append(f"extensions: {len(ext)}")
    archive = cfg.similarity_archive()
    if archive:
        checked.append("similarity archive: " + ", ".join(f"{p} ({layout})" for p, layout in archive))
    if cfg.file_setting("leaderboard", "aliases") is not None:
        checked.append(f"leaderboard aliases: {len(class_files.load_aliases(cfg, known, class_source(cfg)))}")
    tree = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(tree / "report"))
    import report_data  # noqa: E402  (the report's own reader of [report])
    try:
        report_data.load_report_set(cfg.path)
    except report_data.ReportError as e:
        raise ConfigError(str(e)) from None
    checked.append("[report]")
    if (tree / "grader" / "scripts" / "handout.py").is_file():  # instructor trees only
        sys.path.insert(0, str(tree / "grader" / "scripts"))
        import handout  # noqa: E402  (make handout's own reader of [handout])
        try:
            handout.load_config(cfg.path)
        except handout.HandoutError as e:
            raise ConfigError(str(e)) from None
        checked.append("[handout]")
    tool = grading.Toolchain(cfg, say=say)
    # what a confined compile may read, the CUDA toolkit included (config.load could not know it)
    overlap = cfg.values["confine_builds"] and config_mod.confinement_overlap(
        cfg, [tool.cuda_home, *grading.confine.host_compiler_home()])
    if overlap:
        raise ConfigError(f"{cfg.source}: [cluster] confine_builds: {overlap}")
    checked.append(f"the compiles of hand-ins (on this machine): {grading.confinement_note(cfg)}")
    checker = tool.config_checker(tool.trusted(build_log))
    try:
        r = subprocess.run([str(checker), "--config", str(cfg.path)], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise grading.BuildError(f"the grader's configuration check ({checker}) did not run: {e}") from None
    if r.returncode == 2:
        raise ConfigError(f"the grader refuses this course.toml: {r.stderr.strip()}")
    if r.returncode != 0:
        raise grading.BuildError(f"the grader's configuration check ({checker}) failed (exit {r.returncode}): "
                                 f"{(r.stderr or r.stdout).strip()[-2000:]}")
    checked.append("[bench] and [scoring] by the grader: " + r.stdout.splitlines()[0].split(": ", 2)[-1])
    r = subprocess.run([str(checker), "--config", str(cfg.path), "--json"], capture_output=True, text=True, timeout=60)
    try:
        rubric = json.loads(r.stdout)
    except ValueError:
        raise grading.BuildError(f"the grader's configuration check ({checker}) printed no rubric (exit {r.returncode}): "
                                 f"{(r.stderr or r.stdout).strip()[-2000:]}") from None
    return Validated(checked, rubric, checker)


def cmd_validate(cfg, args):
    checked = validate_course(cfg, cfg.trusted_cache_dir / "trusted-build.log").checked
    notes = _close_to_students(cfg, fix=False)
    checked.append("what students may read: " + ("; ".join(notes) if notes else "closed to them"))
    print("course files valid:\n  " + "\n  ".join(checked))
    state = course_state.current(cfg)
    changed = course_state.unpublished(cfg, state)
    if changed:
        print(f"not published yet: {', '.join(changed)}. Students and sweeps use the published course state"
              + (f" {state.describe()}" if state else " (none yet)") + "; `make publish-course` publishes these files")
    else:
        print(f"published: these files are the course state {state.describe()}")
    return 0


def cmd_publish(cfg, args):
    """Validate the course's files as every tool reads them, then publish them as the course's state:
    what every student command, grading job and sweep uses from now on."""
    try:  # a roster not written yet is noted (early in the term); a sweep needs it
        v = validate_course(cfg, cfg.trusted_cache_dir / "trusted-build.log", roster_may_be_missing=True)
    except ConfigError as e:
        raise ConfigError(f"{e}\nNothing was published: students and sweeps keep the course state they had. Fix the "
                          "file, then `make publish-course` again") from None
    before = course_state.current(cfg)
    state, new = course_state.publish(cfg, v.rubric, note=args.why or "")
    pointer = course_state.write_pointer(cfg)
    if pointer:
        print(f"publish: {pointer}")
    if not new:
        course_state.write_views(cfg)
        print(f"publish: nothing to publish: the course's files are the published state {state.describe()}")
        return 0
    changes = course_state.describe_changes(before, state)
    print(f"publish: course state {state.id} published; what changed since "
          + (f"{before.id}:" if before else "nothing before it:"))
    for c in changes:
        print(f"  {c}")
    n = course_state.write_views(cfg)
    print(f"publish: students' commands (make submit, status, results) and grading jobs use it from now on; "
          f"{n} student view(s) refreshed. A sweep grades under it: grades made under an earlier state are "
          "rescored or regraded there as needed (make sweep says which and why)")
    return 0


# The files the staff keep up during the term, all of them the staff's: the roster (a student learns
# only their own membership, from the published state), extensions (with their reasons), aliases.
CLASS_FILES = (("extensions", "file", 0o660), ("leaderboard", "aliases", 0o660))


def _share_class_files(cfg) -> list[str]:
    """Give the staff group the files they edit during the term (with staff_group set): group and
    mode as CLASS_FILES says; a directory they cannot write (an editor replaces the file) is named."""
    files = [(cfg.file_setting(s, k), mode) for s, k, mode in CLASS_FILES]
    files.append((cfg.roster_path, 0o660))
    lines, named = [], set()
    for path, mode in files:
        if path is None or not path.exists():
            continue
        if cfg.staff_gid is not None:
            os.chown(path, -1, cfg.staff_gid)
            os.chmod(path, mode)
            lines.append(f"{path}: group {cfg.staff_group}, mode {oct(mode)}")
            d = path.parent.stat()
            if (d.st_gid != cfg.staff_gid or not d.st_mode & 0o020) and path.parent not in named:
                named.add(path.parent)
                lines.append(f"note: {path.parent} is not writable by {cfg.staff_group}: a TA's editor that replaces "
                             f"the file cannot save it there (chgrp {cfg.staff_group} {path.parent}; chmod g+ws "
                             f"{path.parent}), or keep the staff's files in a directory of their own")
        else:
            os.chmod(path, mode & 0o704 if mode & 0o004 else mode & 0o700)
    return lines


# What student_exposure finds, and how it is closed: (mode bits taken from others, whether the staff
# group must keep reading it, the command that does it).
EXPOSURES = {"writable": (0o002, False, "chmod o-w {path}"),
             "solution": (0o004, True, "chgrp {group} {path}; chmod g+r,o-r {path}"),
             "staff's": (0o007, False, "chmod o-rwx {path}")}


def student_exposure(cfg) -> list[tuple[Path, str, str]]:
    """What a student could read or write that they must not, as (path, what is wrong, its kind in
    EXPOSURES): in the trusted tree, anything others may write (grading builds from it) and the
    reference solutions' sources (reference/, its links to the stubs aside: students' gradings use the
    trusted build, which the published state names); the staff's live files (course.toml with the
    staff's sections, the roster, extensions, aliases: students read the published state), the
    staff's state (the sweeps, the decision log) and the roster of a state published before the
    state had a students' half. docs/instructor-guide.md, "Who reads what", is the table of it."""
    out = []
    tree = cfg.grader_dir
    for d, dirs, files in os.walk(tree):
        dirs[:] = [x for x in dirs if not (Path(d) == tree and x == "build")]  # build outputs: the Makefile's
        for path in [Path(d), *(Path(d) / f for f in files)]:
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                continue
            if st.st_mode & 0o002:
                out.append((path, "others may write it, and grading builds from this tree", "writable"))
            elif path.is_relative_to(tree / "reference") and stat.S_ISREG(st.st_mode) and st.st_mode & 0o004:
                out.append((path, "a reference solution students may read", "solution"))
    staffs = [cfg.path, cfg.roster_path, cfg.file_setting("extensions", "file"),
              cfg.file_setting("leaderboard", "aliases"), course_state.private_root(cfg), cfg.sweeps_dir]
    state = course_state.current(cfg)
    if state is not None:
        staffs.append(state.public_dir / "roster.txt")
    for path in staffs:
        try:
            st = os.stat(path) if path is not None else None
        except OSError:
            continue
        if st is not None and st.st_mode & 0o006:
            out.append((path, "the staff's, and others may read or write it (students read the published state)",
                        "staff's"))
    return out


def _close_to_students(cfg, fix: bool) -> list[str]:
    """setup (fix=True: each closed, and said) and validate (fix=False: refused, exit 2, with the
    commands) of student_exposure. Only a course with a staff group has students to close it to."""
    found = student_exposure(cfg)
    lines = [f"{path}: {why}" for path, why, _ in found]
    if cfg.staff_gid is None:
        return [f"note: {line} ([cluster] staff_group is not set: nothing is closed to students)" for line in lines]
    commands = [EXPOSURES[kind][2].format(path=path, group=cfg.staff_group) for path, _, kind in found]
    if found and not fix:
        raise ConfigError("students could read or write what they must not:\n  " + "\n  ".join(lines)
                          + "\nRun, as the files' owner:\n  " + "\n  ".join(commands) + "\n(or `setup`, which does it)")
    done = []
    for (path, why, kind), command in zip(found, commands):
        taken, staff_reads, _ = EXPOSURES[kind]
        mode = os.lstat(path).st_mode & 0o7777 & ~taken
        try:
            if staff_reads:  # the staff keep reading it (a TA's publish hashes the tree)
                os.chown(path, -1, cfg.staff_gid)
                mode |= 0o040
            os.chmod(path, mode)
        except PermissionError:
            done.append(f"WARNING: {path}: {why}, and it is not yours to change: its owner runs `{command}`")
            continue
        done.append(f"{path}: {why}: now {oct(mode)} ({command})")
    return done


def cmd_setup(cfg, args):
    box, sweeps = dropbox.setup_dirs(cfg)
    cache = cfg.trusted_cache_dir
    cache.mkdir(parents=True, exist_ok=True)
    if cfg.staff_gid is not None:
        os.chown(cache, -1, cfg.staff_gid)
        os.chmod(cache, 0o2775)  # staff write, everyone reads the trusted build
    else:
        os.chmod(cache, 0o755)
    print(f"setup: drop box {box} ({oct(box.stat().st_mode & 0o7777)}), sweeps {sweeps} "
          f"({oct(sweeps.stat().st_mode & 0o7777)}), grader cache {cache}")
    for line in _share_class_files(cfg) + course_state.share_with_staff(cfg) + _close_to_students(cfg, fix=True):
        print(f"setup: {line}")
    # The course is set up once its files validate and are published: what students' commands and
    # grading jobs read (course_state.py). Building the trusted grader (gemmlab-config checks the rubric)
    # takes a few minutes the first time, then comes from the cache.
    v = validate_course(cfg, cache / "trusted-build.log", roster_may_be_missing=True)
    print("setup: course files valid: " + "; ".join(v.checked))
    state, new = course_state.publish(cfg, v.rubric, note=args.why or "setup")
    course_state.write_views(cfg)
    pointer = course_state.write_pointer(cfg)
    if pointer:
        print(f"setup: {pointer}")
    print(f"setup: course state {state.id} {'published' if new else 'is published already'}: students' commands "
          "and grading jobs read it, never the file itself (`make publish-course` publishes an edit)")
    return 0


def sweep_dir(cfg, name) -> Path:
    return cfg.sweeps_dir / name


def _runs(sweep: Path) -> list[Path]:
    return sorted((sweep / "runs").glob("run-*")) if (sweep / "runs").is_dir() else []


def _active_jobs(run: Path) -> dict:
    jobs = records.read_json(run / "jobs.json") or {}
    ids = [jobs.get("array"), jobs.get("gradebook")]
    return slurm.queue_states(ids) if any(ids) and shutil.which("squeue") else {}


def class_source(cfg) -> str:
    """Where the class list comes from, for messages about a name that is not in it."""
    if cfg.roster_path:
        return f"the roster {cfg.roster_path} does not list them (with a roster, only its students are students)"
    return (f"no roster is set ([cluster] roster), so the class is whoever has handed in, and {cfg.dropbox_dir} "
            "has no directory of theirs")


def plan_sweep(cfg, when=None, students=None) -> list[dict]:
    """Every student's attempt that counts now (`when`) — their own and those the staff entered, with
    the staff's decisions applied — and whether the student can still hand in: `open_until`, set while
    the student's own deadline (extension and late cutoff included) has not passed — such a student is
    pending, and no file a TA uploads gets a score for them. students: plan these only."""
    when = when or now()
    entries = []
    everyone = door.students(cfg)
    extensions = class_files.load_extensions(cfg, set(everyone), class_source(cfg))
    folded = course_state.decisions(cfg)
    for student in (students if students is not None else everyone):
        decided = folded.get(student)
        attempts, accepted = attempts_of(cfg, student, decided or course_state.StudentDecisions())
        ext = extensions.get(student)
        deadline = ext.deadline(cfg.deadline) if ext else cfg.deadline
        pick, info = dropbox.choose(attempts, deadline, accepted)
        entry = {"student": student, "attempts": len(attempts), **info}
        open_until = deadline.open_until()
        if open_until is not None and when < open_until:
            entry["open_until"] = records.iso(open_until)
        if ext:
            entry["extension"] = ext.describe()
        if decided and decided.history:
            entry["decisions"] = [e["seq"] for e in decided.history]
        if pick is None:
            entry["status"] = "missing" if not attempts else "not_counted"
        else:
            # Filed under the digest of the files as the door read them (never the manifest's word).
            entry.update(status="selected", attempt=str(pick.path), attempt_name=pick.path.name, label=pick.label,
                         digest=pick.digest)
            entry["report"] = pick.report_verdict()  # checked again on the stored files
        # An attempt changed after it was stored, whose files no longer match its manifest, or that
        # holds what a hand-in does not (a link, a FIFO, another's file: attempts.py), is an integrity
        # case for a person, whichever attempt it is (a late edit would otherwise only make it "after
        # the cutoff, ignored"); the intact attempt that would count is kept in view. So is a student
        # directory that is not the student's own (nothing in it is read). The staff settle it by
        # accepting an attempt (its files as they are now) or setting the score.
        case = door.student_case(cfg, student)
        problems = [(a, a.integrity_problem()) for a in attempts if not a.withdrawn]
        problems = [(a, why) for a, why in problems if why]
        if accepted is not None and pick is not None:
            waived = decided.accepted.get("files")
            problem = pick.integrity_problem()
            if problem and waived and waived == pick.digest:
                entry.update(waived=problem, digest=waived)  # graded as it is now: the decision says why
            elif problem:
                entry["review"] = (f"attempt {pick.label} {problem}, and it changed again after the staff accepted it "
                                   f"(decision #{decided.accepted['seq']})")
            problems = []
        if case and not (decided and decided.override):
            entry["review"] = case
        elif problems and not (decided and decided.override):
            entry["review"] = "; ".join(why if why.startswith(a.where) else f"attempt {a.label} {why}"
                                        for a, why in problems)
            intact, intact_info = dropbox.choose([a for a in attempts if not a.integrity_problem()], deadline)
            if intact is not None:
                entry["intact"] = {"attempt": str(intact.path), "attempt_name": intact.path.name, "label": intact.label,
                                   "number": intact.number, "digest": intact.digest,
                                   "penalty_pct": intact_info["penalty_pct"]}
        entries.append(entry)
    return entries


def plan_record(cfg, name: str, entries: list[dict], state_id=None) -> dict:
    """A sweep's plan.json: its students' entries (plan_sweep), and the drop box's directories for names
    the roster does not list (never students: the gradebook's summary names them for the staff)."""
    return {"schema": "gemmlab.sweep-plan/1", "sweep": name, "course": cfg.course, "created": records.iso(now()),
            "due": records.iso(cfg.deadline.due) if cfg.deadline.due else None, "policy": cfg.deadline.policy,
            "state": state_id, "decisions": course_state.last_seq(cfg), "students": entries,
            "off_roster": door.off_roster(cfg)}


@dataclasses.dataclass
class SweepWork:
    """What a sweep does with each planned attempt: grade it on a GPU (todo), rescore its grade from the
    stored speeds (rescore), or keep it (current); with the reasons, for the TA to read."""
    todo: list = dataclasses.field(default_factory=list)
    rescore: list = dataclasses.field(default_factory=list)
    current: int = 0
    why: collections.Counter = dataclasses.field(default_factory=collections.Counter)


def sweep_todo(sweep: Path, entries: list[dict], students=None, force=False, state=None) -> SweepWork:
    """The work of a sweep run: each planned attempt (of `students`, if given) — and for an integrity
    case the intact one a person may choose — is graded when it has no result in place, or one of
    grading.SWEEP_RETRIES (error, no_gpu), or with force; otherwise its grade is weighed against the
    published course state (course_state.grade_standing): still current, rescored (points, targets
    or weights changed: no GPU needed) or graded again (the grader or what it measures changed)."""
    import gradebook  # cluster/staff/: not in the handout
    work = SweepWork()
    for e in entries:
        if students and e["student"] not in students:
            continue
        for g in ([e] if e.get("digest") else []) + ([e["intact"]] if e.get("intact") else []):
            task = dict({k: g[k] for k in ("attempt", "attempt_name", "digest")}, student=e["student"])
            if g is e and e.get("waived"):
                task["waived"] = e["waived"]
            outcome = records.read_json(gradebook.grade_dir(sweep, e["student"], g["digest"]) / "outcome.json")
            if force:
                work.todo.append(dict(task, force=bool(outcome)))
                work.why["forced (--force)"] += 1
            elif not outcome:
                work.todo.append(dict(task, force=False))
                work.why["not graded in this sweep yet"] += 1
            elif outcome.get("status") in grading.SWEEP_RETRIES:
                work.todo.append(dict(task, force=False))
                work.why[f"graded again, their earlier result: {outcome.get('status')}"] += 1
            elif state is None:
                work.current += 1
            else:
                standing, why = course_state.grade_standing(outcome, state)
                if standing == "current" or (standing == "rescore" and not (
                        gradebook.grade_dir(sweep, e["student"], g["digest"]) / "results.json").is_file()):
                    work.current += 1  # nothing to rescore: a result with no score (build_failed, tampered)
                elif standing == "rescore":
                    work.rescore.append(dict(task, why=why))
                else:
                    work.todo.append(dict(task, force=True))
                    work.why[why] += 1
    return work


def _rescore(cfg, state, sweep: Path, items: list[dict], checker: Path, say=print) -> list[dict]:
    """Score each grade again under the published rubric from its stored speeds (gemmlab-config
    --rescore: the grader's own arithmetic, no GPU), published like a grade: the earlier result is kept
    beside it. Returns the items that cannot be rescored (the rubric needs other shapes): they are graded."""
    import gradebook  # cluster/staff/: not in the handout
    again = []
    for item in items:
        final = gradebook.grade_dir(sweep, item["student"], item["digest"])
        tmp = final.parent / f".tmp-rescore-{secrets.token_hex(3)}"
        shutil.copytree(final, tmp)
        try:
            r = subprocess.run([str(checker), "--config", str(cfg.path), "--rescore", str(final / "results.json"),
                                "--out", str(tmp)], capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                shutil.rmtree(tmp, ignore_errors=True)
                say(f"  {item['student']}: cannot be rescored ({(r.stderr or r.stdout).strip()}): graded again")
                again.append(dict({k: item[k] for k in ("attempt", "attempt_name", "digest", "student")}, force=True))
                continue
            outcome = records.read_json(tmp / "outcome.json") or {}
            results = records.read_json(tmp / "results.json") or {}
            score = results.get("score") or {}
            before = outcome.get("score") or {}
            outcome.setdefault("rescored", []).append({"at": records.iso(now()), "by": course_state.who(),
                                                       "from_state": outcome.get("course_state"), "why": item["why"],
                                                       "total_before": before.get("total"), "max_before": before.get("max")})
            outcome.update(course_state=state.id, grading=dict(outcome.get("grading") or {}, **state.info["grading"]),
                           score={"total": score.get("total", 0), "max": score.get("max", 0)},
                           message=f"graded: {score.get('total', 0)} / {score.get('max', 0)} (rescored under course "
                                   f"state {state.id}: {item['why']})")
            records.write_json_atomic(tmp / "outcome.json", outcome)
            grading.publish(tmp, final, replace=True)
            say(f"  {item['student']}: {before.get('total')} / {before.get('max')} -> {score.get('total')} / "
                f"{score.get('max')} (rescored)")
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return again


def _published_state(cfg, name: str) -> tuple["course_state.CourseState", Validated]:
    """The course state a sweep grades under: every file validated first; the published state, or —
    when none was published yet — this one, published now. Files that differ from the published state
    stop the sweep: a grade must say which rubric made it."""
    live = cfg.live or cfg
    try:  # every mistake of the course's files stops the sweep here, before anything is planned or queued
        v = validate_course(live, live.trusted_cache_dir / "trusted-build.log")
    except ConfigError as e:
        raise ConfigError(f"{e}\nThe sweep queued nothing: fix the file, check it with `make validate`, then sweep again") from None
    state = course_state.current(live)
    if state is None:
        state, _ = course_state.publish(live, v.rubric, note=f"published by the first sweep ({name})")
        print(f"sweep {name}: no course state was published: published {state.id} now (students' commands and "
              "grading jobs read it from now on)")
        return state, v
    changed = course_state.unpublished(live, state)
    if changed:
        raise Refused(f"the course's files differ from the published course state {state.describe()}: "
                      f"{', '.join(changed)}. A sweep grades under a published state only, so that every grade says "
                      "which rubric made it: publish the files (`make publish-course`, which validates them first) "
                      "or undo the edit, then sweep again. Nothing was queued")
    return state, v


def cmd_sweep(cfg, args):
    mode = cfg.grading_mode(local=args.local)
    if mode == "no-slurm":  # the class's code never runs on this machine unless that was chosen
        raise Refused(local_grading.slurm_not_found(cfg))
    if mode == "local":
        print(f"sweep {args.name}: grading on this machine ({local_grading.why(cfg, args.local)}): "
              f"{local_grading.here()}", flush=True)
    sweep = sweep_dir(cfg, args.name)
    runs = _runs(sweep)
    if runs and _active_jobs(runs[-1]):
        raise Refused(f"sweep {args.name!r} is still running ({runs[-1].name}): wait for it "
                      "(`make sweep-status`) or cancel its jobs (scancel) before sweeping again")
    busy = local_grading.busy(runs[-1]) if runs else ""
    if busy:
        raise Refused(f"sweep {args.name!r} is still running ({runs[-1].name}): {busy}. Wait for it "
                      "(`make sweep-status`) before sweeping again")
    state, v = _published_state(cfg, args.name)
    cfg = state.config()
    known = set(door.students(cfg))
    missing = [s for s in (args.student or []) if s not in known]
    if missing:
        raise Refused(f"no such student: {', '.join(missing)} ({class_source(cfg)}); nothing was queued")
    course_open = cfg.deadline.open_until()
    if course_open is not None and now() < course_open and not args.before_deadline:
        raise Refused(f"the course's deadline has not passed (hand-ins can still count until {records.iso(course_open)}): "
                      "a sweep now grades attempts that may still change. Sweep after it, or sweep anyway with "
                      "FORCE=1 (make sweep FORCE=1; --before-deadline): every student who can still hand in is "
                      "then pending, and left blank in every export")
    previous = records.read_json(sweep / "plan.json")
    if args.student:  # one student regraded: the others keep their planned attempts
        planned = plan_sweep(cfg, students=args.student)
        others = [e for e in (previous or {}).get("students", []) if e["student"] not in args.student]
        order = {s: i for i, s in enumerate(sorted(known))}
        entries = sorted(others + planned, key=lambda e: order.get(e["student"], len(order)))
    else:
        entries = plan_sweep(cfg)
    selected = [e for e in entries if not args.student or e["student"] in args.student]
    plan = plan_record(cfg, args.name, entries, state.id)
    off_roster = plan["off_roster"]
    # Only now, with everything checked, does the sweep leave anything on disk.
    sweep.mkdir(parents=True, exist_ok=True)
    for stale in (sweep / "grades").glob("*/.tmp-*"):  # left by tasks that were killed
        shutil.rmtree(stale, ignore_errors=True)
    records.write_json_atomic(sweep / "plan.json", plan)
    work = sweep_todo(sweep, entries, args.student, args.force, state)
    counts = {s: sum(1 for e in selected if e["status"] == s) for s in ("selected", "missing", "not_counted")}
    who = f"{len(selected)} of {len(entries)} student(s)" if args.student else f"{len(entries)} student(s)"
    print(f"sweep {args.name}: {who}: {counts['selected']} with an attempt that counts, "
          f"{counts['missing']} without any, {counts['not_counted']} with none that counts; under course state {state.id}")
    print(f"sweep {args.name}: to grade: {len(work.todo)}"
          + (f" ({'; '.join(f'{why}: {n}' for why, n in sorted(work.why.items()))})" if work.why else "")
          + f"; to rescore without a GPU: {len(work.rescore)}"
          + (f" ({work.rescore[0]['why']})" if work.rescore else "")
          + f"; current (graded under this rubric and grader): {work.current}")
    if work.rescore:
        work.todo += _rescore(cfg, state, sweep, work.rescore, v.checker)
    if off_roster:
        print(f"sweep {args.name}: directories in the drop box for names not on the roster (never graded, never in "
              f"an export; look at them in {cfg.dropbox_dir}): {', '.join(off_roster)}")
    still_open = [e for e in selected if e.get("open_until")]
    if still_open:
        last = max(e["open_until"] for e in still_open)
        print(f"sweep {args.name}: warning: {len(still_open)} student(s) can still hand in (their own deadline, "
              f"extensions and late cutoff included, has not passed): they are pending and left blank in the "
              f"gradebook and every export. Sweep again after {last}: "
              + ", ".join(f"{e['student']} (until {e['open_until']})" for e in still_open[:8])
              + (" ..." if len(still_open) > 8 else ""))
    review = [e for e in selected if e.get("review")]
    if review:
        print(f"sweep {args.name}: {len(review)} integrity case(s) need a person (needs_review, blank in every export): "
              + "; ".join(f"{e['student']}: {e['review']}" for e in review[:5])
              + ". Settle each with `make settle STUDENT=... ATTEMPT=...|ZERO=1 WHY=...` (docs/instructor-guide.md)")
    todo = work.todo
    run = sweep / "runs" / f"run-{len(runs) + 1:03d}"
    (run / "logs").mkdir(parents=True)
    records.write_json_atomic(run / "tasks.json", todo)
    course_state.write_run_manifest(run, cfg, state, ARGV, {"grade": len(todo), "rescored": len(work.rescore),
                                                            "current": work.current, "why": dict(work.why), **counts},
                                    students=args.student)
    if mode == "slurm":
        jobs = {}
        common = dict(course=cfg.course, sweep=args.name, sweep_dir=sweep, run=run.name, python=cfg.python_exe,
                      config=cfg.path, logs=run / "logs", tool=trusted_tool(cfg))
        if todo:
            concurrency = min(cfg.sweep_concurrency, len(todo))
            script = slurm.render("sweep-array.sbatch", run / "sweep-array.sbatch", cfg.sbatch_options(),
                                  job_name=f"gemmlab-sweep-{args.name}", count=len(todo), last=len(todo) - 1,
                                  concurrency=concurrency, tasks=run / "tasks.json", **common)
            jobs["array"] = slurm.sbatch(script, cwd=run)
        light = [o for o in cfg.sbatch_options() if o.split("=")[0] in ("--partition", "--account", "--qos")]
        script = slurm.render("gradebook.sbatch", run / "gradebook.sbatch", light,
                              job_name=f"gemmlab-gradebook-{args.name}", **common)
        dep = [f"--dependency=afterany:{jobs['array']}"] if "array" in jobs else []
        jobs["gradebook"] = slurm.sbatch(script, *dep, cwd=run)
        jobs["queued"] = records.iso(now())
        records.write_json_atomic(run / "jobs.json", jobs)
        print(f"sweep {args.name}: " + (f"array job {jobs['array']} ({len(todo)} task(s), at most "
              f"{min(cfg.sweep_concurrency, len(todo))} at once), " if "array" in jobs else "")
              + f"gradebook job {jobs['gradebook']}. `make sweep-status` follows it; the gradebook will be "
              f"{sweep / 'gradebook.csv'}")
        return 0
    return _sweep_here(cfg, sweep, run, len(todo))


def _sweep_here(cfg, sweep: Path, run: Path, count: int) -> int:
    """A sweep on this machine: its grader (`sweep-local`) runs detached from the terminal, and this
    follows its log; stopping the following (Ctrl-C, a closed terminal) leaves it grading."""
    cmd = [sys.executable, str(trusted_tool(cfg)), "--config", str(cfg.path), "sweep-local", "--sweep", str(sweep),
           "--run", run.name]
    proc = local_grading.start(cmd, run, count, local_grading.here())
    print(f"sweep {sweep.name}: {count} attempt(s) graded here in the background (pid {proc.pid}, log "
          f"{run / local_grading.LOG}). Following it: Ctrl-C or closing the terminal stops only the following; "
          "`make sweep-status` shows where it is", flush=True)
    try:
        with scratch_space.stop_cleanly():
            return local_grading.follow(proc, run)
    except scratch_space.Stopped as e:
        try:
            print(f"sweep {sweep.name}: {e}: no longer following; the sweep goes on (pid {proc.pid}; "
                  "`make sweep-status`)", file=sys.stderr)
        except OSError:  # the terminal is gone
            pass
        return 0


def cmd_sweep_local(cfg, args):
    """(internal) The grader of a local sweep's run, started detached by _sweep_here: every task, then
    the gradebook; its end (exit status, how) is recorded for `make sweep-status`."""
    sweep = Path(args.sweep)
    run = sweep / "runs" / args.run
    tasks = json.loads((run / "tasks.json").read_text())
    code, how = 1, "ended by an error (see the log)"
    try:
        failed = 0
        for i in range(len(tasks)):
            outcome = run_task(cfg, sweep, args.run, i)
            print(f"  [{i + 1}/{len(tasks)}] {tasks[i]['student']}: {outcome['status']}", flush=True)
            failed += outcome["status"] in grading.FAILED
        code = cmd_gradebook(cfg, argparse.Namespace(sweep=str(sweep))) or (1 if failed else 0)
        how = "finished"
        return code
    except scratch_space.Stopped as e:
        code, how = 128 + e.signum, str(e)
        raise
    finally:
        local_grading.finish(run, code, how)


def run_task(cfg, sweep: Path, run: str, index: int) -> dict:
    """Grade task `index` of a sweep run, exactly once. A task can start more than once: Slurm
    requeues it when its node fails, staff queue a run's script again, a later run meets an attempt
    an earlier run graded. Each start is recorded (runs/<run>/starts/), then: a result already in
    place for the same attempt is kept (for a --force regrade: one this very task published);
    otherwise the task grades into a hidden temporary directory and renames it into place, and if
    another start published first, that result wins and this one is dropped."""
    import gradebook  # cluster/staff/: not in the handout
    tasks = json.loads((sweep / "runs" / run / "tasks.json").read_text())
    if not 0 <= index < len(tasks):
        raise Refused(f"task {index} is not in {run}/tasks.json ({len(tasks)} tasks)")
    t = tasks[index]
    final = gradebook.grade_dir(sweep, t["student"], t["digest"])
    start = _record_start(sweep / "runs" / run, index, t)
    done = records.read_json(final / "outcome.json")
    if done and done.get("status") not in grading.SWEEP_RETRIES and (
            not t.get("force") or (done.get("run") == run and done.get("task") == index)):
        _record_end(start, "kept the result already in place", done)
        return done  # graded already (by an earlier run, or an earlier start of this task): never twice
    final.parent.mkdir(parents=True, exist_ok=True)
    tag = f"{os.environ.get('SLURM_ARRAY_JOB_ID', 'local')}_{os.environ.get('SLURM_ARRAY_TASK_ID', index)}"
    for stale in final.parent.glob(f".tmp-{tag}-*"):  # left by an earlier start of this very task
        shutil.rmtree(stale, ignore_errors=True)
    tmp = final.parent / f".tmp-{tag}-{secrets.token_hex(3)}"
    tmp.mkdir()
    try:
        meta = dict(_state_record(cfg), student=t["student"], attempt=t["attempt_name"], attempt_sha256=t["digest"],
                    run=run, task=index)
        try:  # read again through the door: the bytes graded are the bytes whose digest is compared
            a = door.one(cfg, Path(t["attempt"]))
            problem = a.problem
        except (door.Case, FileNotFoundError) as e:
            a, problem = None, f"the attempt cannot be read: {e}"
        if problem:
            pass
        elif a.student != t["student"]:
            problem = f"the attempt lies in {a.student}'s directory, not {t['student']}'s"
        elif t.get("waived"):  # the staff accepted this attempt's files as they are: graded while they stay so
            problem = "" if a.digest == t["digest"] else "the attempt changed since the staff accepted it"
            meta["waived"] = t["waived"]
        else:
            problem = a.verify() or ("" if a.digest == t["digest"] else "the attempt changed since the sweep planned it")
        if problem:
            outcome = grading.finish_outcome(tmp, dict(meta, schema=grading.OUTCOME_SCHEMA, status="tampered", message=problem))
        else:
            outcome = grading.grade_into(cfg, a.stage_bytes(), tmp, meta, say=lambda *_: None)
        with scratch_space.uninterrupted():  # a stop waits until the result and its record are in place
            now_there = records.read_json(final / "outcome.json")
            if now_there and now_there.get("run") == run and now_there.get("task") == index \
                    and now_there.get("status") not in grading.SWEEP_RETRIES:
                published = False  # another start of this task (a requeue) got there first
            else:
                replace = bool(t.get("force")) or bool(now_there and now_there.get("status") in grading.SWEEP_RETRIES)
                published = grading.publish(tmp, final, replace=replace)
            if not published:
                shutil.rmtree(tmp, ignore_errors=True)
                outcome = records.read_json(final / "outcome.json") or outcome
                _record_end(start, "kept the result another start published first", outcome)
            else:
                _record_end(start, "published", outcome)
        return outcome
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _record_start(run_dir: Path, index: int, task: dict) -> Path:
    """runs/<run>/starts/<task>-<job>-r<restart>.json: one file per start of a task (written once,
    then completed by _record_end), so `sweep-status` can show tasks that started again."""
    ctx = grading.job_context()
    job = os.environ.get("SLURM_ARRAY_JOB_ID") or os.environ.get("SLURM_JOB_ID") or "local"
    d = run_dir / "starts"
    d.mkdir(exist_ok=True)
    path = d / f"{index:04d}-{job}-r{ctx['restarts']}.json"
    if path.exists():  # the same start number again (a run queued twice by hand): keep both
        path = d / f"{index:04d}-{job}-r{ctx['restarts']}-{secrets.token_hex(3)}.json"
    records.write_json_atomic(path, {"task": index, "student": task["student"], "digest": task["digest"],
                                     "job_id": os.environ.get("SLURM_JOB_ID", ""), "array_job_id": job,
                                     "node": ctx["node"], "restarts": ctx["restarts"], "started": records.iso(now())})
    return path


def _record_end(path: Path, what: str, outcome: dict):
    record = records.read_json(path) or {}
    record.update(ended=records.iso(now()), result=what, status=outcome.get("status"))
    records.write_json_atomic(path, record)


def cmd_sweep_task(cfg, args):
    outcome = run_task(cfg, Path(args.sweep), args.run, args.task)
    print(f"sweep-task {args.task}: {outcome['student']}: {outcome['status']}: {outcome.get('message', '')}")
    return 1 if outcome["status"] in grading.FAILED else 0


def cmd_gradebook(cfg, args):
    """gradebook.csv and summary.md, then the LMS files (export/canvas.csv, export/grades.csv), kept as a
    new version of the sweep's gradebook (versions/NNN/; never overwritten) with the staff's decisions
    applied; the sweep's gradebook.csv, summary.md and export/* point at the newest."""
    import gradebook  # cluster/staff/: not in the handout
    import lms_export  # cluster/staff/: not in the handout
    sweep = Path(args.sweep) if args.sweep else _chosen_sweep(cfg, args)
    try:
        stage_order = [Path(n).stem for n in dropbox.stage_files(cfg.grader_dir)]
    except SubmissionError:
        stage_order = []
    decided = course_state.decisions(cfg)
    book, rows, stages = gradebook.texts(sweep, stage_order, f"{cfg.course} / {sweep.name}", decided,
                                         feedback=lambda entry: _feedback_outcomes(cfg, entry))
    plan = records.read_json(sweep / "plan.json") or {}
    stale = sorted({e["student"] for d in decided.values() for e in d.history
                    if e["seq"] > plan.get("decisions", 0) and e["action"] in ("accept", "withdraw", "unwithdraw", "enter")
                    or e["seq"] > plan.get("decisions", 0) and e["action"] == "settle" and e.get("attempt")})
    skipped = [line for d in decided.values() for line in d.skipped]
    if skipped:
        book["summary.md"] += "\n## Decisions not applied\n\n" + "".join(f"- {line}\n" for line in skipped)
        for line in skipped:
            print(f"gradebook: warning: {line}")
    if stale:
        note = (f"Decisions made since this sweep was planned change which attempt counts for: {', '.join(stale)}. "
                f"`make sweep SWEEP={sweep.name}` plans and grades them.")
        book["summary.md"] += f"\n## Not in this gradebook yet\n\n{note}\n"
        print(f"gradebook: warning: {note}")
    exports, columns, warnings = lms_export.texts(cfg, rows, stages)
    runs = _runs(sweep)
    gpus = collections.Counter(r["gpu"] for r in rows if r["gpu"])
    meta = {"schema": course_state.VERSION_SCHEMA, "sweep": sweep.name, "state": plan.get("state"),
            "plan_created": plan.get("created"), "run": runs[-1].name if runs else None,
            "decisions": course_state.last_seq(cfg), "students": len(rows),
            "statuses": dict(collections.Counter(r["status"] for r in rows)), "gpu_models": dict(gpus),
            "made_by": "the sweep's gradebook job" if os.environ.get("SLURM_JOB_ID") else " ".join(["gemmlab_cluster.py", *ARGV])}
    version, new = course_state.write_version(sweep, {**book, **exports}, meta)
    if runs:
        course_state.complete_run_manifest(runs[-1], version.name, dict(gpus), cfg)
    print(f"gradebook: {len(rows)} student(s) -> {sweep / 'gradebook.csv'} (version {version.name}"
          + (")" if new else ", the same as the version before)"))
    print(book["summary.md"])
    print("export: " + ", ".join(str(sweep / n) for n in exports) + f" (version {version.name})")
    print(f"export: {columns}")
    for w in warnings:
        print(f"export: warning: {w}")
    return 0


def _feedback_outcomes(cfg, entry: dict) -> list[dict]:
    """The feedback gradings of a planned attempt (gradebook.gpu_change), read through the door."""
    try:
        return door.one(cfg, Path(entry["attempt"])).feedback_outcomes()
    except (door.Case, OSError):
        return []


# ---- staff: around the grades (similarity, exports, leaderboard) ------------------------------------
def _chosen_sweep(cfg, args) -> Path:
    """--sweep DIR, else the sweep named --name under [cluster] sweeps; it must have a plan."""
    sweep = Path(args.sweep) if args.sweep else sweep_dir(cfg, args.name)
    if not (sweep / "plan.json").is_file():
        known = sorted(q.parent.name for q in cfg.sweeps_dir.glob("*/plan.json"))
        raise Refused(f"{sweep} has no plan.json: no sweep there yet (`make sweep SWEEP={sweep.name}` starts one). "
                      f"Sweeps in {cfg.sweeps_dir}: {', '.join(known) or 'none'}")
    return sweep


def _stage_files(cfg) -> list[str]:
    """The registry's stage files (the trusted tree's student/*.cu): the one list of stages."""
    return dropbox.stage_files(cfg.grader_dir)


def cmd_similarity(cfg, args):
    import similarity  # copydetect and matplotlib: only staff commands need them
    sweep = _chosen_sweep(cfg, args)
    try:
        out = similarity.run(cfg, sweep, _stage_files(cfg))
    except similarity.SimilarityError as e:
        raise Refused(str(e)) from None
    print(f"similarity: report {out / 'index.html'}; groups {out / 'groups.csv'}; pairs {out / 'pairs.csv'}")
    return 0


def cmd_leaderboard(cfg, args):
    import gradebook  # cluster/staff/: not in the handout
    import leaderboard  # matplotlib: only staff commands need it
    sweep = _chosen_sweep(cfg, args)
    if cfg.file_setting("leaderboard", "aliases") is None:
        raise Refused(f"no leaderboard: {cfg.path} sets no [leaderboard] aliases file (the students who opted "
                      "in, student = \"alias\"; docs/instructor-guide.md shows how)")
    try:
        stage_order = [Path(n).stem for n in _stage_files(cfg)]
    except SubmissionError:
        stage_order = []
    rows, _ = gradebook.build(sweep, stage_order)
    if not any(r["status"] == "graded" for r in rows):
        statuses = collections.Counter(r["status"] for r in rows)
        raise Refused(f"no student of sweep {sweep.name} was graded on a GPU ("
                      + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())) + "): there is nothing to rank, "
                      "and a page saying nobody has a correct kernel would be false. No leaderboard was written; "
                      "make one after a sweep on the GPU nodes")
    students = {r["student"] for r in rows}
    aliases = class_files.load_aliases(cfg, students, f"the sweep's plan ({sweep / 'plan.json'}) does not list them")
    out, boards, notes = leaderboard.write(sweep, rows, aliases, cfg.setting("leaderboard", "stages"),
                                           cfg.setting("leaderboard", "size"), f"Leaderboard: {cfg.course}")
    print(f"leaderboard: {len(aliases)} student(s) opted in; {len(boards)} board(s): "
          + (", ".join(f"{b.title} ({len(b.places)})" for b in boards) or "none yet"))
    for n in notes:
        print(f"leaderboard: note: {n}")
    print(f"leaderboard: {out / 'leaderboard.md'}, {out / 'leaderboard.html'} (publish the directory as it is)")
    return 0


def _restart_lines(runs: list[Path], running: set) -> list[str]:
    """Tasks that started more than once (requeued after a node failure, or queued again), from
    the start records of every run: where each start ran and how it ended."""
    starts = collections.defaultdict(list)
    for run in runs:
        for f in sorted((run / "starts").glob("*.json")) if (run / "starts").is_dir() else []:
            rec = records.read_json(f)
            if rec:
                starts[(run.name, rec.get("task"))].append(rec)
    again = {k: sorted(v, key=lambda r: (r.get("restarts", 0), r.get("started", ""))) for k, v in starts.items()
             if len(v) > 1}
    if not again:
        return []
    lines = [f"  restarted: {len(again)} task(s) started more than once (a requeue after a node failure, "
             "or queued again); each graded once:"]
    for (run, task), recs in sorted(again.items()):
        steps = []
        for i, r in enumerate(recs):
            if r.get("ended"):
                how = r.get("status") if r.get("result") == "published" else f"{r.get('result')}"
            elif i == len(recs) - 1 and (run, task) in running:
                how = "running"
            else:
                how = "did not finish"
            steps.append(f"{r.get('node', '?')} #{r.get('restarts', 0)}: {how}")
        lines.append(f"    {run} task {task} ({recs[0].get('student')}): " + "; ".join(steps))
    return lines


def _sweeps(cfg) -> list[Path]:
    """Every sweep with a plan, the most recently planned or run last."""
    def last_change(d: Path) -> float:
        return max([(d / "plan.json").stat().st_mtime] + [r.stat().st_mtime for r in _runs(d)])
    found = [p.parent for p in cfg.sweeps_dir.glob("*/plan.json")] if cfg.sweeps_dir.is_dir() else []
    return sorted(found, key=last_change)


def cmd_sweep_status(cfg, args):
    sweeps = _sweeps(cfg)
    if not sweeps:
        raise Refused(f"no sweep in {cfg.sweeps_dir} yet (`make sweep` starts one)")
    if args.name is None:
        sweep = sweeps[-1]  # the latest
    else:
        sweep = sweep_dir(cfg, args.name)
        if sweep not in sweeps:
            raise Refused(f"no sweep {args.name!r} in {cfg.sweeps_dir}; the sweeps there: "
                          + ", ".join(d.name for d in sweeps) + " (`make sweep-status SWEEP=<name>`)")
    if len(sweeps) > 1:
        print("sweeps: " + ", ".join(f"{d.name} ({_runs(d)[-1].name if _runs(d) else 'planned'})" for d in sweeps)
              + f"; showing {sweep.name}" + (" (the latest)" if args.name is None else ""))
    while True:
        active = _print_sweep_status(cfg, sweep)
        if not args.follow or not active:
            return 0
        time.sleep(args.follow)
        print(f"-- {records.iso(now())}")


def _print_sweep_status(cfg, sweep: Path) -> bool:
    """One status report of a sweep; True while its latest run still has jobs in the queue."""
    import gradebook  # cluster/staff/: not in the handout
    plan = records.read_json(sweep / "plan.json")
    runs = _runs(sweep)
    jobs = records.read_json(runs[-1] / "jobs.json") if runs else None
    tasks = json.loads((runs[-1] / "tasks.json").read_text()) if runs else []
    states = _active_jobs(runs[-1]) if runs else {}
    array = (jobs or {}).get("array")
    in_queue = {}
    for key, state in states.items():
        if array and key.startswith(f"{array}_"):
            idx = key.split("_", 1)[1]
            if idx.isdigit():
                in_queue[int(idx)] = state
            elif idx.startswith("["):  # pending remainder of the array, e.g. 7_[5-9%2]
                spec = idx.strip("[]").split("%")[0]
                for part in spec.split(","):
                    lo, _, hi = part.partition("-")
                    for i in range(int(lo), int(hi or lo) + 1):
                        in_queue[i] = state
    local = local_grading.state(runs[-1]) if runs else None
    if local and local["state"] in ("running", "elsewhere"):  # a local run: its tasks not done yet are its queue
        in_queue.update(_local_queue(runs[-1], len(tasks)))
    counts = {"done": 0, "running": 0, "queued": 0, "failed": 0}
    failed, no_gpu = [], []
    task_of = {(t["student"], t["digest"]): i for i, t in enumerate(tasks)}
    for e in plan["students"]:
        if not e.get("digest"):
            continue
        outcome = records.read_json(gradebook.grade_dir(sweep, e["student"], e["digest"]) / "outcome.json")
        i = task_of.get((e["student"], e["digest"]))
        state = in_queue.get(i) if i is not None else None
        if state == "RUNNING":
            counts["running"] += 1
        elif state:
            counts["queued"] += 1
        elif outcome and outcome.get("status") not in grading.FAILED:
            counts["done"] += 1
            if outcome.get("status") in grading.SWEEP_RETRIES:
                no_gpu.append(e["student"])
        else:
            counts["failed"] += 1
            failed.append(e["student"])
    total = sum(counts.values())
    print(f"sweep {sweep.name} ({runs[-1].name if runs else 'no run'}): " +
          ", ".join(f"{k} {v}" for k, v in counts.items()) + f" (of {total} graded attempts)")
    if failed:
        print(f"  failed or not graded: {', '.join(failed)}; `make sweep` grades them again")
    if no_gpu:
        print(f"  no GPU on the node: {len(no_gpu)} ({', '.join(no_gpu[:8])}{' ...' if len(no_gpu) > 8 else ''}); "
              "once the node is fixed, `make sweep` grades them again")
    for line in _restart_lines(runs, {(r.name, int(i)) for r in runs[-1:] for i, st in in_queue.items()
                                      if st == "RUNNING"}):
        print(line)
    where = collections.Counter()
    for e in plan["students"]:
        o = records.read_json(gradebook.grade_dir(sweep, e["student"], e["digest"]) / "outcome.json") \
            if e.get("digest") else None
        if o and o.get("status") not in grading.FAILED:
            where[(o.get("node") or o.get("host") or "?", gradebook.gpu_label(o) or "GPU unknown")] += 1
    if where:
        print("  graded on: " + ", ".join(f"{node} ({gpu}) {n}" for (node, gpu), n in sorted(where.items())))
    gb = (jobs or {}).get("gradebook")
    if gb and gb in states:
        print(f"  gradebook job {gb}: {states[gb].lower()}")
    if local:
        print(f"  local grading: {local_grading.describe(local)}")
    if (sweep / "gradebook.csv").is_file():
        print(f"  gradebook: {sweep / 'gradebook.csv'}")
    return bool(states) or bool(local and local["state"] == "running")


def _local_queue(run: Path, count: int) -> dict[int, str]:
    """The tasks of a local run still to do, as Slurm's states: RUNNING (started, not ended), PENDING."""
    started = {}
    for f in sorted((run / "starts").glob("*.json")) if (run / "starts").is_dir() else []:
        rec = records.read_json(f) or {}
        if isinstance(rec.get("task"), int):
            started[rec["task"]] = started.get(rec["task"]) or bool(rec.get("ended"))
    return {i: "RUNNING" if i in started else "PENDING" for i in range(count) if not started.get(i)}


# ---- staff: decisions (course_state.DecisionLog) ------------------------------------------------
def _staff_only(cfg, what: str):
    if not _is_staff(cfg):
        raise Refused(f"{what} is for the course staff: root, or a member of the staff group "
                      f"({cfg.staff_group or 'none is set: the drop box owner'})")


def _required_reason(args) -> str:
    why = (getattr(args, "why", "") or "").strip()
    if len(why) < 3:
        raise Refused("say why, in a few words: every decision is recorded with who, when, what and why (--why \"...\"; "
                      "with make: WHY=\"...\"), e.g. WHY=\"e-mail of 2026-12-05: the node was down\"")
    return why


def _known_student(cfg, student: str):
    known = door.students(cfg)
    if student not in known:
        import difflib
        close = difflib.get_close_matches(student, known, n=1)
        raise Refused(f"{student!r} is not a student of this course" + (f" (did you mean {close[0]!r}?)" if close else "")
                      + f": {class_source(cfg)}. Nothing was recorded")


def _attempt_named(cfg, student: str, ref) -> door.Attempt:
    """A student's attempt as staff name it: 3 or #3 (their own), E1 (the first the staff entered)."""
    attempts, _ = attempts_of(cfg, student, course_state.StudentDecisions())
    text = str(ref).strip().lstrip("#")
    for a in attempts:
        if (text.upper().startswith("E") and a.entered and text[1:].isdigit() and int(text[1:]) == a.number) or \
                (text.isdigit() and not a.entered and int(text) == a.number) or text == a.path.name:
            return a
    listing = ", ".join(f"{a.label} ({a.manifest['submitted_at']})" for a in attempts) or "none"
    raise Refused(f"{student} has no attempt {ref!r}; their attempts: {listing} (`status --user {student}`)")


def _record(cfg, action: str, student: str, why: str, **fields) -> dict:
    entry = course_state.log(cfg).append(action, student=student, why=why, **fields)
    course_state.write_views(cfg, [student])
    return entry


def cmd_accept(cfg, args):
    """(staff) The attempt that counts for a student, whatever the late policy says: a late hand-in the
    staff excuse, or — to settle an integrity case — the intact attempt, or an edited one as it is now."""
    _staff_only(cfg, "accept")
    why = _required_reason(args)
    _known_student(cfg, args.user)
    a = _attempt_named(cfg, args.user, args.attempt)
    problem = a.integrity_problem()
    e = _record(cfg, "settle" if args.settles else "accept", args.user, why, attempt=a.path.name, label=a.label,
                files=a.digest, integrity=problem or None)
    print(f"{e['action']}: {args.user}: attempt {a.label} ({a.manifest['submitted_at']}) counts from now on "
          f"(decision #{e['seq']} by {e['by']})" + (f"; its files are graded as they are now: it {problem} (accepted "
                                                   "for these files only: a later change needs a person again)" if problem else ""))
    print("next: `make sweep` grades it where the sweep has no grade of it, and rebuilds the gradebook")
    return 0


def cmd_override(cfg, args):
    """(staff) Set a student's final score by hand (or clear it): every gradebook and export after it
    shows it, with the decision's number; the computed score stays in the message."""
    _staff_only(cfg, "override")
    why = _required_reason(args)
    _known_student(cfg, args.user)
    if args.clear:
        e = _record(cfg, "clear-override", args.user, why)
        print(f"override: {args.user}: the final score is computed again (decision #{e['seq']})")
    else:
        if args.final is None:
            raise Refused("give the final score: --final POINTS (FINAL= with make), or --clear")
        maximum = course_state.rubric_maximum(cfg)
        problem = course_state.final_problem(args.final, maximum)
        if problem:
            raise Refused(f"--final {args.final:g}: {problem}. A final score is from 0 to {maximum:g} points (the "
                          f"rubric's maximum, extra credit included). Nothing was recorded")
        e = _record(cfg, "settle" if args.settles else "override", args.user, why, final=args.final)
        print(f"{e['action']}: {args.user}: final score {args.final:g} (decision #{e['seq']} by {e['by']})")
    print("next: `make gradebook-export SWEEP=<sweep>` writes a new version of the gradebook and its exports")
    return 0


def cmd_settle(cfg, args):
    """(staff) Settle a needs_review case: the attempt that counts (--attempt), or a final score (--zero,
    --final)."""
    args.settles = True
    if args.attempt is not None:
        return cmd_accept(cfg, args)
    if args.zero:
        args.final = 0.0
    args.clear = False
    if args.final is None:
        raise Refused("settle how: --attempt N (that attempt counts: the intact one, or the edited one as it is "
                      "now), or --zero / --final POINTS (the final score)")
    return cmd_override(cfg, args)


def cmd_enter(cfg, args):
    """(staff) Enter a hand-in that reached the staff another way (e-mailed files), with the time it was
    handed in, for a student: stored in the staff's area, dated as given, counted like the student's own."""
    _staff_only(cfg, "enter")
    why = _required_reason(args)
    _known_student(cfg, args.user)
    try:
        when = config_mod.parse_when(args.submitted_at)
    except ValueError as e:
        raise Refused(f"--submitted-at: {e}") from None
    if when > now() + dt.timedelta(minutes=1):
        raise Refused(f"--submitted-at {records.iso(when)} is in the future: give the time the files were handed in "
                      "(the e-mail's time, with its time zone)")
    files = dropbox.collect(cfg, Path(args.student_dir).resolve(), Path(args.report).resolve() if args.report else None)
    state = getattr(cfg, "state", None)
    path = dropbox.store_attempt(cfg, args.user, files, submitted_at=when, entered_in=door.entered_dir(cfg, args.user),
                                 extra={"entered_by": course_state.who(), "why": why,
                                        "course_state": state.id if state else None,
                                        "report": door.report_check(files)})
    label = f"E{int(path.name.split('-')[1])}"
    e = _record(cfg, "enter", args.user, why, attempt=path.name, label=label, submitted_at=records.iso(when))
    deadline, whose = student_deadline(cfg, args.user)
    late = deadline.lateness(when) if deadline.due else dt.timedelta(0)
    print(f"enter: {args.user}: {label} stored ({path}), handed in {records.iso(when)}"
          + (f", {_duration_text(late)} late{whose}" if late > dt.timedelta(0) else ", on time")
          + f" (decision #{e['seq']} by {e['by']}); the late policy counts it like the student's own hand-ins")
    print("next: `make sweep` grades it if it is the attempt that counts")
    return 0


def cmd_decisions(cfg, args):
    """(staff) The decision log, oldest first: who decided what, when and why."""
    _staff_only(cfg, "decisions")
    entries = course_state.log(cfg).entries()
    if args.user:
        entries = [e for e in entries if e.get("student") == args.user]
    if not entries:
        print("decisions: none recorded" + (f" for {args.user}" if args.user else ""))
        return 0
    for e in entries:
        what = {k: e[k] for k in ("label", "final", "submitted_at", "state", "sweep", "version") if k in e}
        changes = f" [{'; '.join(e['changes'])}]" if e.get("changes") else ""
        print(f"#{e['seq']:<4d} {e['at']}  {e['by']:<10s} {e['action']:<14s} {e.get('student', ''):<12s} "
              f"{' '.join(f'{k}={v}' for k, v in what.items())}{changes}  -- {e.get('why', '')}")
    return 0


def cmd_publish_grades(cfg, args):
    """(staff) Show each student their official grade of a sweep (its newest gradebook version) with
    `make results`; recorded in the decision log."""
    import gradebook  # cluster/staff/: not in the handout
    _staff_only(cfg, "publish-grades")
    sweep = _chosen_sweep(cfg, args)
    version_dir = (sweep / "gradebook.csv").resolve().parent
    if not (sweep / "gradebook.csv").is_symlink() or not (version_dir / "version.json").is_file():
        raise Refused(f"{sweep} has no gradebook version yet: `make gradebook-export SWEEP={sweep.name}` first")
    version = version_dir.name
    built_after = (records.read_json(version_dir / "version.json") or {}).get("decisions", 0)
    later = [e for e in course_state.log(cfg).entries()
             if e["seq"] > built_after and e["action"] not in ("publish", "publish-grades")]
    if later:
        raise Refused(f"the newest gradebook of sweep {sweep.name} (version {version}) was built before decision(s) "
                      + ", ".join(f"#{e['seq']} {e['action']} {e.get('student', '')}".rstrip() for e in later[:5])
                      + ": it is not the grade they decide. Rebuild it (`make gradebook-export SWEEP="
                      f"{sweep.name}`; a decision that changes which attempt counts needs `make sweep` first), then "
                      "publish. Nothing was published")
    official = {}
    with open(sweep / "gradebook.csv") as f:
        for row in __import__("csv").DictReader(f):
            official[row["student"]] = {
                "sweep": sweep.name, "version": version, "published": records.iso(now()), "status": row["status"],
                "attempt": row["attempt"], "total": row["total"], "max": row["max"], "penalty_pct": row["penalty_pct"],
                "final": row["final"], "late": row["late"], "extension": row["extension"].split(";")[0],
                "scored": row["status"] not in gradebook.NO_SCORE}
    e = course_state.log(cfg).append("publish-grades", why=args.why or "", sweep=sweep.name, version=version,
                                     students=len(official))
    n = course_state.write_views(cfg, official=official)
    missing = [s for s in official if course_state.token(cfg, s, create=False) is None]
    print(f"publish-grades: sweep {sweep.name}, gradebook version {version}: {n} student(s) see their official grade "
          f"with `make results` (decision #{e['seq']})")
    if missing:
        print(f"publish-grades: {len(missing)} student(s) have not run a course command since the drop box was set up, "
              f"so there is nowhere to leave theirs yet: {', '.join(missing[:10])}{' ...' if len(missing) > 10 else ''}. "
              "Their next `make status` or `make submit` makes a place; publish again then")
    return 0


# ---- command line -------------------------------------------------------------------------------
def _sweep_options(p):
    p.add_argument("--name", default="final", help="the sweep's name (a directory under [cluster] sweeps)")
    p.add_argument("--sweep", help="the sweep directory itself (instead of --name)")


def parser():
    ap = argparse.ArgumentParser(prog="gemmlab_cluster.py", description=__doc__.splitlines()[0],
                                 epilog="docs/instructor-guide.md explains every command.")
    ap.add_argument("--config", default="course.toml", help="the course configuration (default: course.toml)")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("submit", help="hand in a directory laid out like student/ and queue its grading")
    p.add_argument("--student-dir", default="student", help="the stage files to hand in (default: student)")
    p.add_argument("--report", help="the report PDF (default: <student-dir>/../report/report.pdf, if present)")
    p.add_argument("--no-compile-check", action="store_true", help="hand in even without nvcc here")
    p.add_argument("--user", help="(staff, as root) hand in for this student")
    p.add_argument("--off-roster", action="store_true", help="(staff) hand in for a student the roster does not list")
    p.set_defaults(fn=cmd_submit)

    p = sub.add_parser("status", help="your attempts and their grading")
    p.add_argument("--user", help="another student's (staff)")
    p.set_defaults(fn=cmd_status)

    p = sub.add_parser("hint", help="the srun line that runs a command on one of the course's GPU nodes")
    p.add_argument("words", nargs="*", help="the command to run there (default: none, the line alone)")
    p.set_defaults(fn=cmd_hint)

    p = sub.add_parser("course-file", help="the course.toml the course's commands read (the published one)")
    p.set_defaults(fn=cmd_course_file)

    p = sub.add_parser("results", help="the results of your latest graded attempt")
    p.add_argument("--attempt", type=int, help="this attempt number instead")
    p.add_argument("--user", help="another student's (staff)")
    p.set_defaults(fn=cmd_results)

    p = sub.add_parser("requeue", help="queue the grading of one of your attempts (where make submit could not)")
    p.add_argument("--attempt", required=True, help="the attempt's number (`make status` lists them)")
    p.add_argument("--user", help="(staff, as root) for this student")
    p.set_defaults(fn=cmd_requeue)

    p = sub.add_parser("regrade", help="(staff) grade one attempt of a student again for feedback, as a job of "
                       "this account's")
    p.add_argument("--user", required=True, help="the student")
    p.add_argument("--attempt", required=True, help="the attempt: 3 (their #3) or E1 (one the staff entered)")
    p.set_defaults(fn=cmd_regrade)

    p = sub.add_parser("grade-attempt", help="(job) grade one attempt into <attempt>/grading")
    p.add_argument("--attempt", required=True)
    p.add_argument("--into", help="the results directory instead of <attempt>/grading (the staff's regrade)")
    p.set_defaults(fn=cmd_grade_attempt)

    p = sub.add_parser("setup", help="(staff) create the drop box, sweeps and cache directories")
    p.add_argument("--build", action="store_true", help=argparse.SUPPRESS)  # what setup always does now
    p.add_argument("--why", default="", help=argparse.SUPPRESS)
    p.set_defaults(fn=cmd_setup)

    p = sub.add_parser("publish", help="(staff) validate course.toml and the class files, then publish them as the "
                       "course state every student command, grading job and sweep uses")
    p.add_argument("--why", default="", help="a note for the decision log")
    p.set_defaults(fn=cmd_publish)

    def decision(name, help_text, fn, attempt=False, final=False):
        q = sub.add_parser(name, help=help_text)
        q.add_argument("--user", required=True, help="the student")
        q.add_argument("--why", default="", help="why (recorded in the decision log with who and when)")
        if attempt:
            q.add_argument("--attempt", help="the attempt: 3 (their #3) or E1 (the first the staff entered)")
        if final:
            q.add_argument("--final", type=float, help="the final score (after any late penalty)")
        q.set_defaults(fn=fn, settles=False, clear=False, zero=False)
        return q

    q = decision("accept", "(staff) the attempt that counts for a student, whatever the late policy says",
                 cmd_accept, attempt=True)
    q = decision("override", "(staff) set a student's final score by hand (--clear: computed again)", cmd_override,
                 final=True)
    q.add_argument("--clear", action="store_true", help="take the override back")
    q = decision("settle", "(staff) settle a needs_review case: --attempt N counts, or --zero / --final", cmd_settle,
                 attempt=True, final=True)
    q.add_argument("--zero", action="store_true", help="the final score is 0")
    q = decision("enter", "(staff) enter a hand-in that reached the staff another way, with the time it was "
                 "handed in", cmd_enter)
    q.add_argument("--student-dir", required=True, help="the stage files, laid out like student/")
    q.add_argument("--report", help="the report PDF, if any")
    q.add_argument("--submitted-at", required=True, help="when it was handed in, with a time zone "
                   "(e.g. 2026-12-04T23:41:00-08:00: the e-mail's time)")

    p = sub.add_parser("decisions", help="(staff) the decision log: who decided what, when and why")
    p.add_argument("--user", help="one student's")
    p.set_defaults(fn=cmd_decisions)

    p = sub.add_parser("publish-grades", help="(staff) show each student their official grade of a sweep "
                       "(make results)")
    _sweep_options(p)
    p.add_argument("--why", default="", help="a note for the decision log")
    p.set_defaults(fn=cmd_publish_grades)

    p = sub.add_parser("sweep", help="(staff) grade every student's attempt that counts; build the gradebook")
    p.add_argument("--before-deadline", action="store_true",
                   help="sweep although the course's deadline has not passed (students who can still hand in are pending)")
    p.add_argument("--name", default="final", help="the sweep's name (a directory under [cluster] sweeps)")
    p.add_argument("--student", action="append", help="only this student (repeatable): regrade one")
    p.add_argument("--force", action="store_true", help="grade again even when graded for the same attempt")
    p.add_argument("--local", action="store_true",
                   help="grade on this machine (detached from the terminal), not on Slurm: every student's code runs here")
    p.set_defaults(fn=cmd_sweep)

    p = sub.add_parser("withdraw", help="take back one of your attempts: no sweep counts it (an earlier one counts)")
    p.add_argument("--attempt", required=True, help="the attempt's number (`make status` lists them)")
    p.add_argument("--undo", action="store_true", help="count it again")
    p.add_argument("--user", help="(staff) withdraw a student's attempt for them; needs --why")
    p.add_argument("--why", default="", help="(staff) why, for the decision log")
    p.set_defaults(fn=cmd_withdraw)

    p = sub.add_parser("validate", help="(staff) check course.toml, the roster and the class files as every tool "
                       "reads them (builds the trusted grader once)")
    p.set_defaults(fn=cmd_validate)

    p = sub.add_parser("sweep-task", help="(job) one task of a sweep's array")
    p.add_argument("--sweep", required=True)
    p.add_argument("--run", required=True)
    p.add_argument("--task", type=int, required=True)
    p.set_defaults(fn=cmd_sweep_task)

    p = sub.add_parser("sweep-local", help="(internal) the grader of a local sweep's run (started by sweep)")
    p.add_argument("--sweep", required=True)
    p.add_argument("--run", required=True)
    p.set_defaults(fn=cmd_sweep_local)

    p = sub.add_parser("gradebook", help="(staff) build gradebook.csv, summary.md and the LMS files of a sweep")
    _sweep_options(p)
    p.set_defaults(fn=cmd_gradebook)

    p = sub.add_parser("similarity", help="(staff) similarity report of a sweep's hand-ins, stage by stage")
    _sweep_options(p)
    p.set_defaults(fn=cmd_similarity)

    p = sub.add_parser("leaderboard", help="(staff) the opt-in class leaderboard of a sweep")
    _sweep_options(p)
    p.set_defaults(fn=cmd_leaderboard)

    p = sub.add_parser("sweep-status", help="(staff) the sweeps, and the progress of one (default: the latest)")
    p.add_argument("--name", help="the sweep (default: the one planned or run last)")
    p.add_argument("--follow", type=float, nargs="?", const=30.0, default=0.0, metavar="SECONDS",
                   help="report again every SECONDS (default 30) until its jobs have left the queue")
    p.set_defaults(fn=cmd_sweep_status)
    return ap


# Commands a student runs (and the grading job of a hand-in): they read the course's published state
# (course_state.py), never the copy of course.toml in the student's checkout.
STUDENT_COMMANDS = ("submit", "status", "results", "withdraw", "requeue", "grade-attempt", "hint", "course-file")
# Commands that read the staff's course.toml as given: they check it, or make the published state of it.
LIVE_COMMANDS = ("setup", "publish", "validate")
# Commands that grade (or may: submit on the local scheduler, sweep's trusted build): SIGTERM, SIGINT
# and SIGHUP remove their scratch and unfinished results on the way out (scratch.py).
GRADING_COMMANDS = ("submit", "requeue", "regrade", "grade-attempt", "sweep", "sweep-task", "sweep-local")
# Commands that need the staff's tools (cluster/staff/), which a handout does not have.
STAFF_TOOL_COMMANDS = ("sweep", "sweep-task", "sweep-local", "sweep-status", "gradebook", "similarity", "leaderboard",
                       "publish-grades")


def course_config(cfg, command: str):
    """The configuration a command works with: the course's published state (its course.toml, roster
    and class files as published), except for the commands that check or publish the files
    themselves; a course with no published state yet works from the file as given. Staff are told
    when their files hold edits that are not published (a student never is)."""
    if command in LIVE_COMMANDS or cfg.state is not None:
        return cfg  # a grading job names its state's own course.toml: that state, pinned
    state = course_state.current(cfg)
    if state is None:
        return cfg
    used = state.config()
    used.live = cfg
    if command in STUDENT_COMMANDS:
        try:
            same = cfg.path.read_bytes() == state.course_toml.read_bytes()
        except OSError:
            same = False
        if not same and cfg.path != used.path and not _staffs_own_file(cfg.path, state):
            print(f"(the course's published configuration is used; {cfg.path} is not)", file=sys.stderr)
        return used
    changed = course_state.unpublished(cfg, state)
    if changed:
        problem = ""
        try:
            config_mod.load(cfg.path)
        except ConfigError as e:
            problem = f", and they are not valid: {e}"
        print(f"note: not published: {', '.join(changed)}{problem}. Students, grading jobs and sweeps use the "
              f"published course state {state.describe()}; `make publish-course` validates and publishes the files",
              file=sys.stderr)
    return used


def _staffs_own_file(path, state) -> bool:
    """Whether `path` is the course.toml the published state was made from: the staff's own file, which
    students name in CONFIG= (docs/instructor-guide.md, step 5). Its unpublished edits and mistakes are
    told to the staff, never to a student, who could do nothing about them; a student's own copy is
    another file, and they are told it is not used."""
    try:
        return Path(path).resolve() == Path(state.info.get("source") or "/nonexistent").resolve()
    except OSError:
        return False


def main(argv=None):
    args = parser().parse_args(argv)
    ARGV[:] = list(sys.argv[1:] if argv is None else argv)
    cfg = None
    try:
        try:
            # A student's command finds the published state by the pointer beside the course's file, never
            # reading the live file: an edit that does not parse, or a file closed to students, stops no
            # hand-in (the staff hear of it from their own next command).
            pointed = course_state.state_from_pointer(args.config) \
                if args.command in STUDENT_COMMANDS and not getattr(args, "user", None) else None
            cfg = pointed.config() if pointed is not None else \
                course_config(course_state.load_file(args.config), args.command)
        except ConfigError as e:
            # A mistake in the file as given stops the commands that check, publish or sweep it; every
            # other command works on the course's published state, and the staff are told.
            state = course_state.state_for_copy(args.config) if args.command not in (*LIVE_COMMANDS, "sweep") else None
            if state is None and args.command == "publish":
                raise ConfigError(f"{e}\nNothing was published: students and sweeps keep the course state they had. "
                                  "Fix the file, then `make publish-course` again") from None
            if state is None:
                raise
            if args.command in STUDENT_COMMANDS and not getattr(args, "user", None):
                if not _staffs_own_file(args.config, state):  # the staff's edit is theirs to hear about
                    print(f"(the course's published configuration is used; {args.config} is not: {e})", file=sys.stderr)
            else:
                print(f"note: {args.config} has a mistake, so it is not published: {e}. Students, grading jobs and sweeps "
                      f"use the published course state {state.describe()}; fix the file, then `make publish-course`",
                      file=sys.stderr)
            cfg = state.config()
        # Everything this tool writes: owner and staff group only; the staff's commands write what the
        # whole staff group may carry on with (a second TA publishes, decides, sweeps, exports).
        if args.command in STAFF_TOOL_COMMANDS and not STAFF_DIR.is_dir():
            print(f"error: `{args.command}` is a command of the course staff; this copy (a handout) does not have "
                  f"its tools (cluster/staff/)", file=sys.stderr)
            return 2
        old_umask = dropbox.set_umask(cfg, staff=args.command not in STUDENT_COMMANDS)
        try:
            if args.command in GRADING_COMMANDS:
                with scratch_space.stop_cleanly():
                    return args.fn(cfg, args)
            return args.fn(cfg, args)
        finally:
            os.umask(old_umask)  # main() may run inside another program (the tests): leave its umask as it was
    except scratch_space.Stopped as e:
        print(f"{args.command}: {e}: its scratch and unfinished results were removed", file=sys.stderr)
        return 128 + e.signum
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as e:  # a staff tool's library (matplotlib, copydetect, ...) is not installed
        e.name = (e.name or "?").split(".")[0]  # the package to install: matplotlib, not matplotlib.pyplot
        print(f"error: `{args.command}` needs the Python module '{e.name}', which {sys.executable} does not have. "
              f"Install it (`make setup` installs every one the course uses; or `{sys.executable} -m pip install "
              f"{e.name}`), or run with a Python that has it (make ... PYTHON=/path/to/python3)", file=sys.stderr)
        return 2
    except (Refused, SubmissionError, StateError, grading.BuildError, slurm.SlurmError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except PermissionError as e:
        where = str(e.filename or e)
        hint = (" Hand-ins are readable only by their owner and the course staff." if
                cfg and where.startswith(str(cfg.dropbox_dir)) else " Ask course staff to check its permissions.")
        print(f"error: permission denied: {where}.{hint}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    # copydetect picks fingerprints by Python's string hash, which is salted afresh in every process
    # unless PYTHONHASHSEED is set: fix it, so that a similarity report is the same each time.
    if "similarity" in sys.argv[1:] and os.environ.get("PYTHONHASHSEED") != "0":
        os.execve(sys.executable, [sys.executable, *sys.argv], dict(os.environ, PYTHONHASHSEED="0"))
    sys.exit(main())
