"""attempt_state.py — how one attempt stands, in the words a student reads (`make submit`, `make status`,
`make requeue`): its grading (waiting in Slurm, graded, not queued and why), what of its hand-in needs a
person, and what it means for the grade under the course's late policy (which_counts).
"""
import datetime as dt
import shutil
from pathlib import Path

import attempts as door  # the one way into the drop box
import grading
import records
import slurm
import which_counts
from records import now


def waiting_jobs(attempts) -> list[door.Attempt]:
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


def grading_stands(a: door.Attempt) -> bool:
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
    same = [a for a in earlier if a.digest == this.digest and grading_stands(a)]
    if same:
        short = f"the same files as your attempt #{same[-1].number} ({described(same[-1])})"
        return short, (f"{short}: its grading stands for this one too (`make results`). Your hand-in is stored, and "
                       "its time counts for the deadline")
    slurm_course = cfg.grading_mode() == "slurm"
    if cfg.grading_mode() == "no-slurm":
        return "", ""  # graded nowhere from here: make submit says so (local_grading.not_queued_message)
    if slurm_course:
        waiting = waiting_jobs(earlier)
        if len(waiting) >= cfg.queued_per_student:
            return f"{len(waiting)} job(s) waiting, the course allows {cfg.queued_per_student}", (f"{len(waiting)} grading job(s) of yours are still waiting or running (attempts "
                    f"{', '.join(f'#{a.number}' for a in waiting)}; the course allows {cfg.queued_per_student}). Your hand-in "
                    "is stored and counts for the deadline; the final sweep grades whichever attempt counts. Hand in again "
                    "for feedback once they have run (`make status`)")
    hour_ago = now() - dt.timedelta(hours=1)
    recent = [t for t in map(graded_at, earlier) if t is not None and t > hour_ago]
    if len(recent) >= cfg.graded_per_hour:
        free_at = sorted(recent)[-cfg.graded_per_hour] + dt.timedelta(hours=1)
        how = "queued for grading" if slurm_course else "graded"
        return f"{len(recent)} {how.split()[0]} in the last hour, the course allows {cfg.graded_per_hour}", (f"{len(recent)} of your hand-ins were {how} in the last hour (the course allows "
                f"{cfg.graded_per_hour}). Your hand-in is stored and counts for the deadline; the next one can be "
                f"graded from {records.iso(free_at)}")
    return "", ""


def graded_at(a: door.Attempt):
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
        return [f"on time: due {due}{whose}, {records.duration_text(-late)} to spare"]
    lines = [f"LATE: handed in {records.duration_text(late)} after your due date {due}{whose}"]
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


# A hand-in's report as make status shows it (attempt_records.report_check's verdicts; make submit says more).
REPORT_SHOWN = {"ok": "report ok", "none": "no report", "mismatch": "report of other stage files",
                "unstamped": "report names no stage files", "example": "the EXAMPLE report"}


def hand_in_problems(a: door.Attempt) -> str:
    """What make submit found in a hand-in: its report's verdict, and the stage files that did not compile
    (as the manifest, which the student's own command wrote, says them: escaped)."""
    report = (a.manifest.get("report") or {}).get("verdict")
    broken = a.manifest.get("does_not_compile") or []
    shown = [REPORT_SHOWN.get(report, f"report: {records.escaped(report)}")] if report else []
    if broken:
        shown.append(f"does not compile: {', '.join(map(records.escaped, broken))}")
    return "  ".join(shown)


def described(a: door.Attempt, says="") -> str:
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
