"""commands/decisions.py — the staff's decisions about one student, each recorded in the decision log
(course_state.DecisionLog) with who, when and why: accept, override, settle, enter, withdraw --user;
the log itself (decisions); and a regrade of one attempt for feedback.
"""
import datetime as dt
from pathlib import Path

import attempt_records
import attempts as door  # the one way into the drop box
import config as config_mod
import course_state
import dropbox
import fault_boundary
import grading
import local_grading
import records
import slurm
import student_standing
import which_counts
from commands import common
from commands.common import Refused
from records import now


def cmd_regrade(cfg, args):
    """(staff) Grade one attempt of a student again for feedback, as this account: into a directory of
    the staff's, <sweeps>/.course/regrades/<student>-<attempt>-<time>/ (grading/, and on Slurm the job's
    script, rendered from the trusted template, and its log) — never a file of the attempt's, nor a
    write into the attempt's directory, which is its student's. The sweeps are not touched (`make sweep
    STUDENT=` regrades the attempt that counts)."""
    common.staff_only(cfg, "regrade")
    common.known_student(cfg, args.user)
    a = common.attempt_named(cfg, args.user, args.attempt)
    mode = cfg.grading_mode()
    if mode == "no-slurm":
        raise Refused(f"Slurm was not found here (sbatch is not on PATH), and this course grades on Slurm ([cluster] "
                      f"scheduler = \"{cfg.values['scheduler']}\" in {cfg.source}): nothing was queued. Load Slurm "
                      "(e.g. `module load slurm`) and regrade again")
    here = course_state.new_regrade_dir(cfg, args.user, a.path.name)
    if mode == "local":
        print(f"regrade: grading {args.user}'s attempt {a.label} now on this machine: {local_grading.here()} ...",
              flush=True)
        outcome = common.grade_attempt(cfg, a.path, into=here / "grading")
        print(f"regrade: {outcome['status']}: {records.escaped(outcome.get('message', ''))} ({here / 'grading'})")
        return 1 if outcome["status"] in grading.FAILED else 0
    script = common.grade_script(cfg, args.user, a.path, here / "grade-attempt.sbatch", here / "grade-%j.log",
                           here / "grading")
    try:
        job = slurm.sbatch(script, cwd=here)
    except slurm.SlurmError as e:
        raise Refused(str(e)) from None
    print(f"regrade: job {job} grades {args.user}'s attempt {a.label} ({a.path}) into {here / 'grading'}; its "
          f"script and log: {script}, {here / f'grade-{job}.log'}")
    return 0


def staff_withdraw(cfg, args):
    """(staff) Withdraw one of a student's attempts for them (or count it again, --undo): recorded in
    the decision log, since the student's directory is theirs; the student sees it in `make status`."""
    common.staff_only(cfg, "withdraw --user")
    why = common.required_reason(args)
    common.known_student(cfg, args.user)
    a = common.attempt_named(cfg, args.user, args.attempt)
    e = common.record_decision(cfg, "unwithdraw" if args.undo else "withdraw", args.user, why,
                               **student_standing.attempt_fields(a))
    pick = which_counts.standing(cfg, args.user).pick
    print(f"withdraw: {args.user}: attempt {a.label} {'counts again' if args.undo else 'is withdrawn: no sweep counts it'} "
          f"(decision #{e['seq']} by {e['by']}); the attempt that counts now: "
          + (f"{pick.label} ({pick.manifest['submitted_at']})" if pick else "none"))
    return 0


def cmd_accept(cfg, args):
    """(staff) The attempt that counts for a student, whatever the late policy says: a late hand-in the
    staff excuse, or — to settle an integrity case — the intact attempt, or an edited one as it is now."""
    common.staff_only(cfg, "accept")
    why = common.required_reason(args)
    common.known_student(cfg, args.user)
    a = common.attempt_named(cfg, args.user, args.attempt)
    problem = a.integrity_problem()
    e = common.record_decision(cfg, "settle" if args.settles else "accept", args.user, why,
                               **student_standing.attempt_fields(a), integrity=problem or None)
    print(f"{e['action']}: {args.user}: attempt {a.label} ({a.manifest['submitted_at']}) counts from now on "
          f"(decision #{e['seq']} by {e['by']})" + (f"; its files are graded as they are now: it {problem} (accepted "
                                                   "for these files only: a later change needs a person again)" if problem else ""))
    print("next: `make sweep` grades it where the sweep has no grade of it, and rebuilds the gradebook")
    return 0


def cmd_override(cfg, args):
    """(staff) Set a student's final score by hand (or clear it): every gradebook and export after it
    shows it, with the decision's number; the computed score stays in the message."""
    common.staff_only(cfg, "override")
    why = common.required_reason(args)
    common.known_student(cfg, args.user)
    if args.clear:
        e = common.record_decision(cfg, "clear-override", args.user, why)
        print(f"override: {args.user}: the final score is computed again (decision #{e['seq']})")
    else:
        if args.final is None:
            raise Refused("give the final score: --final POINTS (FINAL= with make), or --clear")
        maximum = student_standing.rubric_maximum(cfg)
        problem = student_standing.final_problem(args.final, maximum)
        if problem:
            raise Refused(f"--final {args.final:g}: {problem}. A final score is from 0 to {maximum:g} points (the "
                          f"rubric's maximum, extra credit included). Nothing was recorded")
        e = common.record_decision(cfg, "settle" if args.settles else "override", args.user, why, final=args.final)
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
    common.staff_only(cfg, "enter")
    why = common.required_reason(args)
    common.known_student(cfg, args.user)
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
                                        "report": attempt_records.report_check(files)})
    a = door.one(cfg, path)
    label = a.label
    e = common.record_decision(cfg, "enter", args.user, why, **student_standing.attempt_fields(a),
                               submitted_at=records.iso(when))
    deadline, whose = which_counts.student_deadline(cfg, args.user)
    late = deadline.lateness(when) if deadline.due else dt.timedelta(0)
    print(f"enter: {args.user}: {label} stored ({path}), handed in {records.iso(when)}"
          + (f", {records.duration_text(late)} late{whose}" if late > dt.timedelta(0) else ", on time")
          + f" (decision #{e['seq']} by {e['by']}); the late policy counts it like the student's own hand-ins")
    print("next: `make sweep` grades it if it is the attempt that counts")
    return 0


def cmd_decisions(cfg, args):
    """(staff) The decision log, oldest first: who decided what, when and why."""
    common.staff_only(cfg, "decisions")
    entries = course_state.log(cfg).entries()
    if args.user:
        entries = [e for e in entries if e.get("student") == args.user]
    if not entries:
        print("decisions: none recorded" + (f" for {args.user}" if args.user else ""))
        return 0
    # The fault boundary: an entry that cannot be shown is named (its student, its number), the others shown.
    for e, line, fault in fault_boundary.each(entries, _decision_line, what="showing a decision about them",
                                              student=lambda e: e.get("student") or "(the course)"):
        if fault is not None:
            seq = e.get("seq", "?") if isinstance(e, dict) else "?"
            line = f"#{seq}: {fault}: read it as it is in {course_state.log(cfg).path}"
        # A reason may quote what a student wrote (an e-mail, a case naming their files): escaped.
        print(records.escaped(line))
    return 0


def _decision_line(e: dict) -> str:
    """One line of the decision log as `decisions` shows it."""
    what = {k: e[k] for k in ("label", "final", "submitted_at", "state", "sweep", "version") if k in e}
    if e.get("digest"):
        what["files"] = e["digest"][:12]
    changes = f" [{'; '.join(e['changes'])}]" if e.get("changes") else ""
    return (f"#{e['seq']:<4d} {e['at']}  {e['by']:<10s} {e['action']:<14s} {e.get('student', ''):<12s} "
            f"{' '.join(f'{k}={v}' for k, v in what.items())}{changes}  -- {e.get('why', '')}")
