"""commands/student.py — the commands a student runs (make submit, status, results, withdraw,
requeue, hint, rubric's course-file) and the grading job of a hand-in (grade-attempt): what a
hand-in tells its student, and when it gets a grading job of its own.
"""
import os
import sys
from pathlib import Path

import attempt_records
import attempt_state
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
    for line in attempt_state.how_it_counts(cfg, user, attempt):
        print(f"submit: {line}")
    short, why_not = attempt_state.why_not_queue(cfg, user, attempt)
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
    if attempt_state.grading_stands(a):
        raise Refused(f"attempt #{a.number} needs no grading: {attempt_state.described(a)} (`make status`, `make results`)")
    short, why_not = attempt_state.why_not_queue(cfg, user, a.path)
    if why_not:
        raise Refused(f"attempt #{a.number} is not queued: {why_not}")
    return 0 if _queue_own_grading(cfg, user, a.path, "requeue") else 1


def _refuse_without_a_shared_dropbox(cfg):
    """A handout stores a hand-in only in a drop box the staff can read (shared_dropbox.py)."""
    why = shared_dropbox.refusal(cfg)
    if why:
        raise Refused(why)


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


