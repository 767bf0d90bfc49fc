"""sweep_plan.py — a sweep's plan: for every student, the attempt that counts (which_counts.standing)
and its digest, or why none does or why a person must look (an integrity case, a decision that no longer
matches its attempt, a folder that is not the student's own); the plan's record (plan.json), with the
drop box's folders of names the roster does not list. Every student is planned inside a fault boundary:
one student's trouble is their own needs_review entry.
"""

import attempts as door  # the one way into the drop box
import class_files
import fault_boundary
import records
import student_standing
import which_counts
from records import now


def plan_sweep(cfg, when=None, students=None) -> list[dict]:
    """Every student's attempt that counts now (`when`) — their own and those the staff entered, with
    the staff's decisions applied — and whether the student can still hand in: `open_until`, set while
    the student's own deadline (extension and late cutoff included) has not passed — such a student is
    pending, and no file a TA uploads gets a score for them. students: plan these only."""
    when = when or now()
    entries = []
    everyone = door.students(cfg)
    extensions = class_files.load_extensions(cfg, set(everyone), class_files.class_source(cfg))
    folded = student_standing.decisions(cfg)
    # The fault boundary: one student's oddity is their case, the others are planned.
    for student, entry, fault in fault_boundary.each(
            students if students is not None else everyone, what="reading their hand-ins",
            step=lambda s: _plan_student(cfg, s, when, folded.get(s), extensions.get(s))):
        entries.append(entry if fault is None else unreadable_entry(fault))
    return entries


def unreadable_entry(fault: "fault_boundary.Fault") -> dict:
    """The plan's entry for a student whose hand-ins the staff's tools could not read: a case for a
    person (needs_review: no score, blank in every export), naming the student and what stopped."""
    return {"student": fault.student, "attempts": 0, "status": "not_counted",
            "review": f"{fault.student}'s hand-ins could not be read ({fault.why})"}


def _plan_student(cfg, student, when, decided, ext) -> dict:
    """plan_sweep's entry for one student."""
    deadline = ext.deadline(cfg.deadline) if ext else cfg.deadline
    st = which_counts.standing(cfg, student, decided or student_standing.StudentDecisions(), deadline=deadline)
    attempts, accepted, pick, info = st.attempts, st.accepted, st.pick, st.info
    unbound = st.cases  # the staff's decisions whose attempt is gone, renamed or changed: each a case for a person
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
        waived = decided.accepted.get("digest") or decided.accepted.get("files")  # (`files`: older lines)
        problem = pick.integrity_problem()
        if problem and waived and waived == pick.digest:
            entry.update(waived=problem, digest=waived)  # graded as it is now: the decision says why
        elif problem:
            entry["review"] = (f"attempt {pick.label} {problem}, and it changed again after the staff accepted it "
                               f"(decision #{decided.accepted['seq']})")
        problems = []
    if case and not (decided and decided.override):
        entry["review"] = case
    elif (problems or unbound) and not (decided and decided.override):
        entry["review"] = "; ".join(unbound + [why if why.startswith(a.where) else f"attempt {a.label} {why}"
                                               for a, why in problems])
        intact, intact_info = which_counts.choose([a for a in attempts if not a.integrity_problem()], deadline, accepted)
        if intact is not None:
            entry["intact"] = {"attempt": str(intact.path), "attempt_name": intact.path.name, "label": intact.label,
                               "number": intact.number, "digest": intact.digest,
                               "penalty_pct": intact_info["penalty_pct"]}
    return entry


def plan_record(cfg, name: str, entries: list[dict], state_id=None) -> dict:
    """A sweep's plan.json: its students' entries (plan_sweep), and the drop box's directories for names
    the roster does not list (never students: the gradebook's summary names them for the staff)."""
    return {"schema": "gemmlab.sweep-plan/1", "sweep": name, "course": cfg.course, "created": records.iso(now()),
            "due": records.iso(cfg.deadline.due) if cfg.deadline.due else None, "policy": cfg.deadline.policy,
            "state": state_id, "decisions": student_standing.last_seq(cfg), "students": entries,
            "off_roster": door.off_roster(cfg)}
