"""commands/student.py — the commands a student runs (make submit, status, results, withdraw,
requeue, hint, rubric's course-file) and the grading job of a hand-in (grade-attempt): what a
hand-in tells its student, and when it gets a grading job of its own.
"""
import datetime as dt
import os
import shutil
import sys
from pathlib import Path

import attempt_records
import attempts as door  # the one way into the drop box
import class_files
import config as config_mod
import course_state
import dropbox
import grading
import handin
import local_grading
import records
import scratch as scratch_space
import shared_dropbox
import slurm
import student_standing
import which_counts
from commands import common
from commands.common import Refused
from config import ConfigError
from dropbox import SubmissionError
from records import now


def cmd_submit(cfg, args):
    _refuse_without_a_shared_dropbox(cfg)
    user = _acting_user(args)
    on_the_roster(cfg, user, args.off_roster)
    student_dir = Path(args.student_dir).resolve()
    report = Path(args.report).resolve() if args.report else student_dir.parent / "report" / "report.pdf"
    files = dropbox.collect(cfg, student_dir, report)
    stage_names = [n for n in files if n.endswith(".cu")]
    print(f"submit: handing in {len(stage_names)} stage file(s) from {handin.as_typed(student_dir)}/"
          + (f" and {handin.as_typed(report)}" if attempt_records.REPORT_NAME in files else " (no report/report.pdf)"))
    does_not_compile = None if args.no_compile_check else _compile_check(cfg, files)
    # Is the report of these very stage files? Asked, never refused: the hand-in is stored either way
    # (its time counts for the deadline), the verdict goes into its manifest and the gradebook.
    report = attempt_records.report_check(files)
    state = getattr(cfg, "state", None)
    attempt = dropbox.store_attempt(cfg, user, files, git=dropbox.git_info(student_dir),
                                    extra={"report": report, "does_not_compile": does_not_compile,
                                           "course_state": state.id if state else None})
    if user == dropbox.current_user():
        student_standing.token(cfg, user, create=True)  # where the staff leave what this student may see
    stored = door.one(cfg, attempt)
    print(f"submit: stored attempt #{stored.number} of {user}, {stored.manifest['submitted_at']}: it is "
          f"handed in ({attempt}, sha256 {stored.digest[:12]})")
    warning = dropbox.report_warning(report, config_mod.srun_line(cfg.values))
    if warning:
        print(f"submit: WARNING: {warning} This hand-in is stored as it is; the course staff see the report "
              f"marked `report: {report['verdict']}` in the gradebook.", file=sys.stderr)
    for line in how_it_counts(cfg, user, attempt):
        print(f"submit: {line}")
    short, why_not = why_not_queue(cfg, user, attempt)
    if why_not:
        dropbox.write_record(cfg, attempt, "job.json", {"not_queued": short, "why": why_not, "at": records.iso(now())})
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
            _grading_not_queued(cfg, attempt, e, verb)
            return False
        dropbox.write_record(cfg, attempt, "job.json", {"job_id": job, "queued": records.iso(now())})
        print(f"{verb}: grading job {job} queued. Follow it with `make status`; when it has run, "
              "`make results` shows the score.")
    elif mode == "no-slurm":  # never graded here: stored (its time counts), its grading left for later
        short, message = local_grading.not_queued_message(cfg, common.attempt_number(attempt))
        dropbox.write_record(cfg, attempt, "job.json", {"not_queued": short, "why": message, "at": records.iso(now())})
        print(f"{verb}: WARNING: {message}", file=sys.stderr)
        return False
    else:
        print(f"{verb}: grading now on this machine ([cluster] scheduler = \"local\"): {local_grading.here()} ...",
              flush=True)
        outcome = common.grade_attempt(cfg, attempt)
        print(f"{verb}: {outcome['status']}: {records.escaped(outcome.get('message', ''))}")
        print(f"{verb}: `make results` shows the details; `make status` lists your attempts.")
    return True


def _sbatch_own(cfg, user, attempt: Path) -> str:
    """The student's feedback job (it runs as them): its script rendered into a private temporary
    directory of theirs (scratch.temporary: mode 0700) and queued (sbatch keeps its own copy); its log in
    the attempt."""
    with scratch_space.temporary("gemmlab-grade-") as tmp:
        script = common.grade_script(cfg, user, attempt, tmp / "grade-attempt.sbatch", attempt / "grade-%j.log",
                               attempt / "grading")
        return slurm.sbatch(script, cwd=attempt)


def cmd_requeue(cfg, args):
    """Queue the feedback grading of one of your stored attempts again: one whose job sbatch did not
    take at `make submit` (Slurm down, an option refused), or whose grading found no GPU or failed."""
    _refuse_without_a_shared_dropbox(cfg)
    user = _acting_user(args)
    attempts = door.of_student(cfg, user)
    a = next((x for x in attempts if str(x.number) == str(args.attempt).lstrip("#")), None)
    if a is None:
        listing = ", ".join(f"#{x.number}" for x in attempts) or "none"
        raise Refused(f"you have no attempt {args.attempt!r} (your attempts: {listing}; `make status` lists them)")
    if _grading_stands(a):
        raise Refused(f"attempt #{a.number} needs no grading: {_attempt_state(a)} (`make status`, `make results`)")
    short, why_not = why_not_queue(cfg, user, a.path)
    if why_not:
        raise Refused(f"attempt #{a.number} is not queued: {why_not}")
    return 0 if _queue_own_grading(cfg, user, a.path, "requeue") else 1


def _refuse_without_a_shared_dropbox(cfg):
    """A handout stores a hand-in only in a drop box the staff can read (shared_dropbox.py)."""
    why = shared_dropbox.refusal(cfg)
    if why:
        raise Refused(why)


def _note_without_a_shared_dropbox(cfg):
    note = shared_dropbox.note(cfg)
    if note:
        print(f"status: note: {note}", file=sys.stderr)


def _grading_not_queued(cfg, attempt: Path, error: slurm.SlurmError, verb="submit"):
    """sbatch did not take the grading job of a stored hand-in: recorded for `make status`, and the
    student told whose problem it is and how to queue it later (handin.not_queued)."""
    short, lines = handin.not_queued(error, common.attempt_number(attempt))
    dropbox.write_record(cfg, attempt, "job.json", {"not_queued": short, "why": lines[0], "at": records.iso(now())})
    print(f"{verb}: your hand-in is stored and counts; {lines[0]}", file=sys.stderr)
    for line in lines[1:]:
        print(f"  {line}", file=sys.stderr)


def on_the_roster(cfg, user, override):
    """With a roster, only its students hand in; the course staff may hand in for anyone (override)."""
    if not cfg.roster_path:
        return
    if override:
        if not course_state.is_staff(cfg):
            raise Refused("--off-roster is for the course staff (root or the staff group)")
        return
    if not course_state.is_staff(cfg):
        return  # the roster is the staff's: a student learns nothing of it; the staff's sweep names hand-ins off it
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


def why_not_queue(cfg, user, attempt_path: Path) -> tuple[str, str]:
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


def how_it_counts(cfg, user, attempt_path: Path) -> list[str]:
    """What a hand-in means for the grade: on time or late (by how much, the penalty), and which
    attempt counts under the course's late policy, with how to keep an earlier one where that helps."""
    st = which_counts.standing(cfg, user)
    deadline, whose, attempts, accepted = st.deadline, st.whose, st.attempts, st.accepted
    if deadline.due is None:
        return []
    this = next((a for a in attempts if a.path == attempt_path), None)
    if this is None:
        return []
    t = this.effective_time()
    late = deadline.lateness(t)
    due = deadline.shown(deadline.due + deadline.grace)
    if late <= dt.timedelta(0):
        return [f"on time: due {due}{whose}, {common.duration_text(-late)} to spare"]
    lines = [f"LATE: handed in {common.duration_text(late)} after your due date {due}{whose}"]
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
    pick = st.pick
    if accepted is not None:
        lines.append(f"the course staff decided that your attempt {accepted.label} ({accepted.manifest['submitted_at']}) "
                     "counts: this hand-in does not change that (ask them if it should)")
        return lines
    if pick is None:
        lines.append("no attempt of yours counts now: hand in before the cutoff, or ask the course staff")
    elif pick.path == this.path:
        if on_time is not None and policy == "latest":
            lines.append(f"under the course's policy (latest) this attempt counts, with its penalty, in place of your "
                         f"on-time attempt #{on_time.number} ({on_time.manifest['submitted_at']}). After the due date "
                         f"only the course staff can change that: if #{on_time.number} should count instead, ask them")
        else:
            lines.append(f"this attempt counts (policy: {policy})")
    else:
        lines.append(f"your attempt #{pick.number} ({pick.manifest['submitted_at']}) counts, not this one (policy: {policy})")
    return lines


def cmd_withdraw(cfg, args):
    """Withdraw one of your own attempts (or count it again: --undo), within your due date. The staff's
    withdrawal for a student (--user) is commands/decisions.py's staff_withdraw."""
    user = dropbox.current_user()
    attempts = door.of_student(cfg, user)
    a = next((x for x in attempts if str(x.number) == str(args.attempt).lstrip("#")), None)
    if a is None:
        raise Refused(f"{user} has no attempt #{args.attempt}; `make status` lists yours")
    deadline, whose = which_counts.student_deadline(cfg, user)
    closes = which_counts.withdraw_closes(deadline)
    # A mark counts as made no earlier than its attempt (attempts.py): on one handed in after the due
    # date, it would not be honoured either.
    late = "it is after your due date" if closes is not None and now() > closes else \
        "it was handed in after your due date" if closes is not None and a.effective_time() > closes else ""
    if late:
        raise Refused(f"attempt #{a.number} was not {'counted again' if args.undo else 'withdrawn'}: {late} "
                      f"({deadline.shown(closes)}{whose}), and after your due date which of your attempts counts is "
                      "no longer yours to change (it would be chosen after seeing the feedback). Nothing was changed. "
                      f"If attempt #{a.number} should {'count' if args.undo else 'not count'}, ask the course staff: "
                      "they can withdraw an attempt for you, or count it again")
    dropbox.withdraw(a, undo=args.undo)
    st = which_counts.standing(cfg, user, deadline=deadline, whose=whose)
    pick, info = st.pick, st.info
    print(f"withdraw: attempt #{a.number} is {'back' if args.undo else 'withdrawn: no sweep counts it'}")
    print("withdraw: the attempt that counts now: "
          + (f"#{pick.number} ({pick.manifest['submitted_at']}"
             + (f", late: penalty {info['penalty_pct']:g} %)" if info["late"] else ", on time)") if pick else "none")
          + (f"; undo with  make withdraw ATTEMPT={a.number} UNDO=1" if not args.undo else ""))
    return 0


def _compile_check(cfg, files):
    """Compiles each stage file as the grader will. A file that does not compile is handed in all the
    same, with a warning naming it and the stages that will score 0: a grading job grades every stage
    that builds (a bad file costs only its own stages), and a question here could cost the hand-in
    itself near a deadline, or hang where no one can answer (docs/student-guide.md, "Rules").
    What the student is shown: handin.compile_check. Returns the files that do not compile (the hand-in's
    manifest keeps them: make status shows them)."""
    return handin.compile_check(cfg, files, warn=lambda line: print(line, file=sys.stderr, flush=True),
                                say=lambda line: print(line, flush=True))


def cmd_grade_attempt(cfg, args):
    outcome = common.grade_attempt(cfg, Path(args.attempt), Path(args.into) if args.into else None)
    print(f"grade-attempt: {outcome['status']}: {records.escaped(outcome.get('message', ''))}")
    return 1 if outcome["status"] in grading.FAILED else 0


def _acting_user(args):
    me = dropbox.current_user()
    if getattr(args, "user", None) and args.user != me:
        if os.getuid() != 0:
            raise Refused("--user is for course staff running as root (to act for a student)")
        return args.user
    return me


# A hand-in's report as make status shows it (attempt_records.report_check's verdicts; make submit says more).
REPORT_SHOWN = {"ok": "report ok", "none": "no report", "mismatch": "report of other stage files",
                "unstamped": "report names no stage files", "example": "the EXAMPLE report"}


def _hand_in_problems(a: door.Attempt) -> str:
    """What make submit found in a hand-in: its report's verdict, and the stage files that did not compile
    (as the manifest, which the student's own command wrote, says them: escaped)."""
    report = (a.manifest.get("report") or {}).get("verdict")
    broken = a.manifest.get("does_not_compile") or []
    shown = [REPORT_SHOWN.get(report, f"report: {records.escaped(report)}")] if report else []
    if broken:
        shown.append(f"does not compile: {', '.join(map(records.escaped, broken))}")
    return "  ".join(shown)


def _attempt_state(a: door.Attempt, says="") -> str:
    """Where the feedback grading of an attempt stands. Its records (the grading's outcome, the job's
    record) are the student's own commands' and jobs': said escaped, after `says` (for the staff,
    "<student>'s records: "; for the student, nothing)."""
    outcome = a.record("grading/outcome.json")
    if a.record_problems.get("grading/outcome.json"):
        return (f"its grading record cannot be read ({records.escaped(a.record_problems['grading/outcome.json'])}): "
                "ask the course staff")
    if outcome:
        score = outcome.get("score")
        pts = f" {score['total']}/{score['max']}" if score and outcome["status"] == "graded" else ""
        return f"{says}{records.escaped(outcome['status'])}{pts}"
    job = a.record("job.json")
    if job and job.get("not_queued"):
        return f"{says}not queued ({records.escaped(job['not_queued'])})"
    if job:
        job_id = records.escaped(job["job_id"])
        state = slurm.job_state(job["job_id"]) if shutil.which("scontrol") else ""
        if state in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING"):
            return f"{says}job {job_id} {state.lower()}"
        return f"{says}job {job_id} ended ({state.lower() or 'gone'}) without results: see {a.path}/grade-{job_id}.log"
    return "not graded"


def _whose(cfg, args, command: str) -> str:
    """The student a `status` or `results` is about: the caller, or for the course staff the one --user
    names. A student who names another is refused in the same words whoever that is (on the roster or
    not, handed in or not), before anything is looked at: trying names teaches nothing of the class."""
    me = dropbox.current_user()
    if args.user and args.user != me and not course_state.is_staff(cfg):
        raise Refused(f"{command} --user is for the course staff; `make {command}` shows your own")
    return args.user or me


def cmd_status(cfg, args):
    _note_without_a_shared_dropbox(cfg)
    user = _whose(cfg, args, "status")
    if user == dropbox.current_user():
        _ensure_student_token(cfg, user)
    # What the student's own commands wrote (the manifest, the feedback grading's records) is labelled
    # as theirs where someone else reads it: the staff see a claim, not the course's word.
    says = "" if user == dropbox.current_user() else f"{user}'s records: "
    case = door.student_case(cfg, user)
    if case:
        print(f"status: {user}: needs_review: {records.escaped(case)}. Nothing in it is graded")
    st = which_counts.standing(cfg, user)
    attempts, accepted, deadline, whose, pick = st.attempts, st.accepted, st.deadline, st.whose, st.pick
    decided = which_counts.student_decisions(cfg, user)
    for why in st.cases:  # the staff's decisions whose attempt is gone, renamed or changed (student_standing.bind)
        print(f"status: {user}: needs_review: {records.escaped(why)}. A person decides: decide again about the attempt as it is now, "
              f"or settle the score (`make decisions STUDENT={user}` lists the decisions)")
    if not attempts:
        print(f"status: no attempts of {user} in {cfg.dropbox_dir} yet (`make submit` hands in)")
        return 0
    print(f"attempts of {user} in the drop box {cfg.dropbox_dir}"
          + (f" (due {deadline.shown(deadline.due + deadline.grace)}{whose}; policy {deadline.policy})" if deadline.due else "")
          + ":")
    for a in attempts:
        late = deadline.lateness(a.effective_time()) if deadline.due else dt.timedelta(0)
        marks = ((["withdrawn by the course staff"] if a.staff_withdrawn else ["withdrawn"] if a.withdrawn else
                  [f"withdrawal mark made on {records.iso(a.mark_time)}, after the due date: not honoured"]
                  if a.marked_withdrawn and a.mark_late and not a.entered else [])
                 + (["entered by the course staff"] if a.entered else [])
                 + (["accepted by the course staff"] if accepted is not None and a.path == accepted.path else [])
                 + ([f"late {common.duration_text(late)}"] if late > dt.timedelta(0) else []))
        files = ("needs_review" if a.problem else f"{len(a.manifest['files'])} file(s)  {records.escaped(a.digest[:12])}"
                 if a.manifest["files"] else "files kept by the course staff")  # entered, as told: label and time only
        problems = "" if a.problem else _hand_in_problems(a)
        print(f"  {a.label:<4s} {records.escaped(a.manifest['submitted_at'])}  {files}  "
              + (f"{says}{problems}  " if problems else "")
              + f"{_attempt_state(a, says) if not a.entered else 'graded by the sweep'}"
              + (f"  [{', '.join(marks)}]" if marks else "")
              + ("  <- counts" if pick is not None and a.path == pick.path else ""))
        if a.problem:
            print(f"       {records.escaped(a.problem)}")
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
            return  # another account's directory, or several: no token goes there
        if getattr(cfg, "state", None) is None or not cfg.dropbox_dir.is_dir():
            return  # no course the staff set up: status makes no drop box
        if door.account_uid(user) not in (None, os.getuid()):
            return  # only the student's own status makes their folder (its name is kept in their home)
        try:
            dropbox.user_dir(cfg, user, create=True)
        except (ConfigError, OSError, SubmissionError):
            return
    student_standing.token(cfg, user, create=True)


def _official_lines(cfg, user) -> list[str]:
    """The student's official grade, as the staff published it (publish-grades), or []."""
    view = student_standing.read_view(cfg, user)
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
    user = _whose(cfg, args, "results")
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
                      f"{'; '.join(map(records.escaped, a.record_problems.values()))}. Ask the course staff")
    # The feedback grading's records are written by the student's own job: escaped, and for the staff
    # labelled as the student's.
    says = "" if user == dropbox.current_user() else f"{user}'s records: "
    shown = records.escaped
    print(f"attempt #{a.number} of {user} ({shown(a.manifest['submitted_at'])}): {says}{shown(outcome['status'])}")
    print(f"  {shown(outcome.get('message', ''))}")
    results = a.record("grading/results.json")
    if results and results.get("score"):
        print(f"  {'stage':<10} {'precision':<9} {'variant':<7} {'disposition':<16} {'points':>8}")
        for row in results["score"].get("stages", []):
            got = (row.get("correctness") or 0) + (row.get("performance") or 0)
            top = (row.get("correctness_max") or 0) + (row.get("performance_max") or 0)
            print(f"  {shown(row['stage']):<10} {shown(row['precision']):<9} {shown(row.get('variant_used', '')):<7} "
                  f"{shown(row.get('disposition', '')):<16} {got:>4g}/{top:g}")
        print(f"  total {shown(results['score'].get('total'))} / {shown(results['score'].get('max'))}")
    if outcome.get("log_tail"):
        print("  last lines of the log:\n    " + "\n    ".join(map(shown, outcome["log_tail"].split("\n"))))
    print(f"  files: {out}")
    return 0
