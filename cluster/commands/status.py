"""commands/status.py — what a student (or the staff, with --user) reads of their standing: their
attempts and how each stands (status), the results of the latest graded one (results), the course's
srun line (hint) and the course's published files (course-file).
"""
import datetime as dt
import os
import sys

import attempt_state
import attempts as door  # the one way into the drop box
import config as config_mod
import course_state
import dropbox
import records
import shared_dropbox
import student_standing
import which_counts
from commands.common import Refused
from config import ConfigError
from dropbox import SubmissionError


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
                 + ([f"late {records.duration_text(late)}"] if late > dt.timedelta(0) else []))
        files = ("needs_review" if a.problem else f"{len(a.manifest['files'])} file(s)  {records.escaped(a.digest[:12])}"
                 if a.manifest["files"] else "files kept by the course staff")  # entered, as told: label and time only
        problems = "" if a.problem else attempt_state.hand_in_problems(a)
        print(f"  {a.label:<4s} {records.escaped(a.manifest['submitted_at'])}  {files}  "
              + (f"{says}{problems}  " if problems else "")
              + f"{attempt_state.described(a, says) if not a.entered else 'graded by the sweep'}"
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


def _note_without_a_shared_dropbox(cfg):
    note = shared_dropbox.note(cfg)
    if note:
        print(f"status: note: {note}", file=sys.stderr)
