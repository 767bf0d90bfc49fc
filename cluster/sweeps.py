"""sweeps.py — a sweep's directory as the staff's commands read it: where a sweep lies, its runs and
their queued jobs, and the start records of each run's tasks (runs/<run>/starts/), written by a task
and read by `sweep-status`.

    <sweeps>/<name>/plan.json            the students' attempts that count (commands/sweep.py)
    <sweeps>/<name>/runs/run-NNN/        tasks.json, jobs.json, logs/, starts/
    <sweeps>/<name>/grades/<student>/    the grades (gradebook.grade_dir)
"""
import collections
import os
import secrets
import shutil
from pathlib import Path

import grading
import records
import slurm
from records import now


def sweep_dir(cfg, name) -> Path:
    return cfg.sweeps_dir / name


def runs_of(sweep: Path) -> list[Path]:
    return sorted((sweep / "runs").glob("run-*")) if (sweep / "runs").is_dir() else []


def active_jobs(run: Path) -> dict:
    jobs = records.read_json(run / "jobs.json") or {}
    ids = [jobs.get("array"), jobs.get("gradebook")]
    return slurm.queue_states(ids) if any(ids) and shutil.which("squeue") else {}


def planned_sweeps(cfg) -> list[Path]:
    """Every sweep with a plan, the most recently planned or run last."""
    def last_change(d: Path) -> float:
        return max([(d / "plan.json").stat().st_mtime] + [r.stat().st_mtime for r in runs_of(d)])
    found = [p.parent for p in cfg.sweeps_dir.glob("*/plan.json")] if cfg.sweeps_dir.is_dir() else []
    return sorted(found, key=last_change)


def record_start(run_dir: Path, index: int, task: dict) -> Path:
    """runs/<run>/starts/<task>-<job>-r<restart>.json: one file per start of a task (written once,
    then completed by record_end), so `sweep-status` can show tasks that started again."""
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


def record_end(path: Path, what: str, outcome: dict):
    record = records.read_json(path) or {}
    record.update(ended=records.iso(now()), result=what, status=outcome.get("status"))
    records.write_json_atomic(path, record)


def restart_lines(runs: list[Path], running: set) -> list[str]:
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


def local_queue(run: Path, count: int) -> dict[int, str]:
    """The tasks of a local run still to do, as Slurm's states: RUNNING (started, not ended), PENDING."""
    started = {}
    for f in sorted((run / "starts").glob("*.json")) if (run / "starts").is_dir() else []:
        rec = records.read_json(f) or {}
        if isinstance(rec.get("task"), int):
            started[rec["task"]] = started.get(rec["task"]) or bool(rec.get("ended"))
    return {i: "RUNNING" if i in started else "PENDING" for i in range(count) if not started.get(i)}
