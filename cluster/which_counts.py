"""which_counts.py — which of a student's attempts counts, and why: one answer for every command.

status, results, submit's advice, withdraw, the staff's decisions and the sweep's plan all ask
`standing(cfg, student)`: the student's attempts (their own in the drop box, and the hand-ins the staff
entered for them), their deadline (with an extension: the staff read the extensions file, a student
their own view), the staff's decisions about them (each bound to the attempt's number and digest:
student_standing.bind; one that no longer matches is a case for a person), the withdrawals (the
student's own marks, honoured only within their deadline; the staff's) and the late policy ([late]:
`choose`) that picks the attempt that counts.
"""
import datetime as dt
from dataclasses import dataclass, field

import attempts as door  # the one way into the drop box
import class_files
import course_state
import records
import student_standing
from config import ConfigError
from records import iso


@dataclass
class Standing:
    """What `standing` found for one student. pick: the attempt that counts (None: none does); info: why
    ({late, days_late, penalty_pct, note, effective_time}); cases: the staff's decisions that no longer
    match their attempt, each a case for a person (not applied)."""
    attempts: list
    accepted: "door.Attempt | None"
    deadline: object
    whose: str
    pick: "door.Attempt | None"
    info: dict
    cases: list = field(default_factory=list)


def standing(cfg, student, decided=None, deadline=None, whose="") -> Standing:
    """Which of the student's attempts counts, and why. decided: the student's decisions (default:
    student_decisions); deadline: theirs (default: student_deadline, which also says how it is described)."""
    if deadline is None:
        deadline, whose = student_deadline(cfg, student)
    cases: list[str] = []
    attempts, accepted = attempts_of(cfg, student, decided, deadline=deadline, cases=cases)
    pick, info = choose(attempts, deadline, accepted)
    return Standing(attempts, accepted, deadline, whose, pick, info, cases)


def student_decisions(cfg, user) -> "student_standing.StudentDecisions | None":
    """The staff's standing decisions about a student: from the decision log where this account can
    read it (the staff), else from what the staff left for the student (their view)."""
    folded = student_standing.decisions(cfg)
    if user in folded or course_state.is_staff(cfg):
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


def choose(attempts: list, deadline, accepted=None) -> tuple:
    """The attempt that counts under the late policy, and why: {late, days_late, penalty_pct, note}.
    Withdrawn attempts never count. accepted: the attempt the course staff decided counts (it does,
    with its own lateness)."""
    withdrawn = [a for a in attempts if a.withdrawn]
    if accepted is not None:
        info = {"late": False, "days_late": 0, "penalty_pct": 0.0, "note": f"attempt {accepted.label} counts: the "
                "course staff's decision"}
        t = accepted.effective_time()
        late = deadline.lateness(t)
        if late > dt.timedelta(0):
            info.update(late=True, days_late=-(-late // dt.timedelta(days=1)), penalty_pct=deadline.penalty_percent(t))
        info["effective_time"] = iso(t)
        return accepted, info
    timed = [(a, a.effective_time()) for a in attempts if not a.withdrawn]
    if deadline.cutoff is not None:
        dropped = [a for a, t in timed if t > deadline.cutoff]
        timed = [(a, t) for a, t in timed if t <= deadline.cutoff]
    else:
        dropped = []
    on_time = [(a, t) for a, t in timed if deadline.lateness(t) <= dt.timedelta(0)]
    if deadline.policy == "on-time-only":
        pick = on_time[-1] if on_time else None
    elif deadline.policy == "prefer-on-time":
        pick = on_time[-1] if on_time else (timed[-1] if timed else None)
    else:  # latest
        pick = timed[-1] if timed else None
    by_student = [a for a in withdrawn if a.staff_withdrawn is None]
    by_staff = [a for a in withdrawn if a.staff_withdrawn is not None]
    too_late = [a for a in attempts if a.marked_withdrawn and a.mark_late and not a.withdrawn and not a.entered]
    notes = ([f"{len(dropped)} attempt(s) after the cutoff ignored"] if dropped else []) + \
        ([f"withdrawn by the student: {', '.join(a.label for a in by_student)}"] if by_student else []) + \
        ([f"withdrawn by the course staff: {', '.join(a.label for a in by_staff)}"] if by_staff else []) + \
        ([f"withdrawn by the student after the due date, not honoured: {', '.join(a.label for a in too_late)}"]
         if too_late else [])
    info = {"late": False, "days_late": 0, "penalty_pct": 0.0, "note": "; ".join(notes)}
    if pick is None:
        if attempts:
            info["note"] = "no attempt counts under the late policy" + (f"; {info['note']}" if info["note"] else "")
        return None, info
    a, t = pick
    late = deadline.lateness(t)
    if late > dt.timedelta(0):
        info.update(late=True, days_late=-(-late // dt.timedelta(days=1)), penalty_pct=deadline.penalty_percent(t))
    info["effective_time"] = iso(t)
    return a, info
