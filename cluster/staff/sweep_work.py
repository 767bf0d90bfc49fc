"""sweep_work.py — what a sweep's run has to do: which planned attempts need grading (not graded yet,
graded on another course state, or a machine's failure to grade again) and which only a new score
under the published rubric (rescore: the stored results scored again by the trusted build's own
gemmlab-config, never graded twice).
"""
import collections
import dataclasses
import secrets
import shutil
import subprocess
from pathlib import Path

import course_state
import gradebook
import grading
import records
from records import now


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
    work = SweepWork()
    for e in entries:
        if students and e["student"] not in students:
            continue
        intact = e.get("intact") if e.get("intact") and e["intact"]["digest"] != e.get("digest") else None
        for g in ([e] if e.get("digest") else []) + ([intact] if intact else []):
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


def rescore(cfg, state, sweep: Path, items: list[dict], checker: Path, say=print) -> list[dict]:
    """Score each grade again under the published rubric from its stored speeds (gemmlab-config
    --rescore: the grader's own arithmetic, no GPU), published like a grade: the earlier result is kept
    beside it. Returns the items that cannot be rescored (the rubric needs other shapes): they are graded."""
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
