"""sweeps.py — a sweep's directory as the staff's commands read it: where a sweep lies, its runs and
their queued jobs, and the start records of each run's tasks (runs/<run>/starts/), written by a task
and read by `sweep-status`.

    <sweeps>/<name>/plan.json            the students' attempts that count (sweep_plan.py)
    <sweeps>/<name>/runs/run-NNN/        tasks.json, jobs.json, logs/, starts/
    <sweeps>/<name>/grades/<student>/    the grades (gradebook.grade_dir)
    <sweeps>/<name>/versions/NNN/        each build of the gradebook and its exports (write_version)

A run's manifest and the gradebook's versions are the sweep's ledger: written once, never rewritten.
"""
import collections
import fcntl
import hashlib
import json
import os
import secrets
import shutil
import socket
from pathlib import Path

import course_state
import slurm
import student_standing
from records import iso, iso_seconds, now, read_json, write_atomic, write_json_atomic

RUN_SCHEMA = "gemmlab.sweep-run/1"
VERSION_SCHEMA = "gemmlab.gradebook-version/1"


def sweep_dir(cfg, name) -> Path:
    return cfg.sweeps_dir / name


def runs_of(sweep: Path) -> list[Path]:
    return sorted((sweep / "runs").glob("run-*")) if (sweep / "runs").is_dir() else []


def active_jobs(run: Path) -> dict:
    jobs = read_json(run / "jobs.json") or {}
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
    ctx = slurm.job_context()
    job = os.environ.get("SLURM_ARRAY_JOB_ID") or os.environ.get("SLURM_JOB_ID") or "local"
    d = run_dir / "starts"
    d.mkdir(exist_ok=True)
    path = d / f"{index:04d}-{job}-r{ctx['restarts']}.json"
    if path.exists():  # the same start number again (a run queued twice by hand): keep both
        path = d / f"{index:04d}-{job}-r{ctx['restarts']}-{secrets.token_hex(3)}.json"
    write_json_atomic(path, {"task": index, "student": task["student"], "digest": task["digest"],
                                     "job_id": os.environ.get("SLURM_JOB_ID", ""), "array_job_id": job,
                                     "node": ctx["node"], "restarts": ctx["restarts"], "started": iso(now())})
    return path


def record_end(path: Path, what: str, outcome: dict):
    record = read_json(path) or {}
    record.update(ended=iso(now()), result=what, status=outcome.get("status"))
    write_json_atomic(path, record)


def restart_lines(runs: list[Path], running: set) -> list[str]:
    """Tasks that started more than once (requeued after a node failure, or queued again), from
    the start records of every run: where each start ran and how it ended."""
    starts = collections.defaultdict(list)
    for run in runs:
        for f in sorted((run / "starts").glob("*.json")) if (run / "starts").is_dir() else []:
            rec = read_json(f)
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
        rec = read_json(f) or {}
        if isinstance(rec.get("task"), int):
            started[rec["task"]] = started.get(rec["task"]) or bool(rec.get("ended"))
    return {i: "RUNNING" if i in started else "PENDING" for i in range(count) if not started.get(i)}


# ---- sweep runs and gradebook versions ----------------------------------------------------------
def write_run_manifest(run_dir: Path, cfg, state: "course_state.CourseState", argv: list[str], counts: dict, students=None):
    """runs/run-NNN/manifest.json: who swept, when, from where, with which flags, under which state
    and grader; how many were graded, rescored or current. Written once, when the run is made."""
    manifest = {"schema": RUN_SCHEMA, "run": run_dir.name, "at": iso_seconds(now()), "by": course_state.who(), "host": socket.gethostname(),
                "argv": argv, "students": students or [], "state": state.id, "grader": state.info.get("grader"),
                "grading": state.info.get("grading"), "decisions": student_standing.last_seq(cfg), "counts": counts}
    write_atomic(run_dir / "manifest.json", json.dumps(manifest, indent=2) + "\n", course_state.staff_modes(cfg)[0])
    return manifest


def complete_run_manifest(run_dir: Path, version: str, gpu_models: dict, cfg):
    """The end of a run's manifest, once its gradebook is built: the gradebook version and the GPU
    models its grades ran on."""
    manifest = read_json(run_dir / "manifest.json")
    if manifest is None:
        return
    manifest["gradebook"] = {"version": version, "at": iso_seconds(now()), "gpu_models": gpu_models}
    write_atomic(run_dir / "manifest.json", json.dumps(manifest, indent=2) + "\n", course_state.staff_modes(cfg)[0])


def write_version(sweep: Path, files: dict[str, str], meta: dict) -> tuple[Path, bool]:
    """Keep a gradebook and its exports as versions/NNN/ — a new one each build, never overwritten —
    and point the sweep's gradebook.csv, summary.md and export/* at the newest. The ledger
    (versions/index.jsonl) records each build; a version equal to the one before says so (`same_as`).
    Returns the version's directory and whether its content differs from the one before."""
    versions = sweep / "versions"
    versions.mkdir(exist_ok=True)
    with open(versions / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        existing = sorted(p for p in versions.iterdir() if p.is_dir() and p.name.isdigit())
        digests = {name: hashlib.sha256(text.encode()).hexdigest() for name, text in files.items()}
        newest = existing[-1] if existing else None
        same = newest is not None and (read_json(newest / "version.json") or {}).get("sha256") == digests
        target = versions / f"{len(existing) + 1:03d}"
        record = dict(meta, version=target.name, at=iso_seconds(now()), by=course_state.who(), previous=newest.name if newest else None,
                      same_as=newest.name if same else None, sha256=digests)
        tmp = versions / f".{target.name}.{os.getpid()}"
        for name, text in files.items():
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp / name).write_text(text)
        (tmp / "version.json").write_text(json.dumps(record, indent=2) + "\n")
        os.rename(tmp, target)
        with open(versions / "index.jsonl", "a") as f:
            f.write(json.dumps({k: record[k] for k in record if k != "sha256"}) + "\n")
        for name in files:
            link = sweep / name
            link.parent.mkdir(parents=True, exist_ok=True)
            if link.exists() and not link.is_symlink():  # a file of an older kit: kept beside the versions
                os.replace(link, link.with_name(f"{link.name}.before-versions"))
            rel = os.path.relpath(target / name, link.parent)
            tmp_link = link.with_name(f".{link.name}.{os.getpid()}.lnk")
            os.symlink(rel, tmp_link)
            os.replace(tmp_link, link)
        return target, not same
