#!/usr/bin/env python3
"""cluster_gpu_jobs.py — the cluster's batch scripts on real GPUs, on a machine without Slurm
(tests/gpu_session/cluster_gpu_jobs.sh runs it; see there). The scripts are the ones `make sweep` and
`make submit` render (cluster/templates/), queued through a stand-in sbatch and run by
tests/slurm/fake_slurm.py with the environment Slurm gives a job (SLURM_JOB_ID,
SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID, CUDA_VISIBLE_DEVICES, SLURM_JOB_NODELIST, ...), one GPU
per job.

  class  a class of mixed hand-ins (reference, stubs, broken builds, wrong values, gallery entries,
         late, handed in twice, missing) graded by one sweep array over every GPU, plus one hand-in
         graded by its own grade-attempt job; checks every status and that each grade ran on the
         GPU its job was given; grades per GPU-hour.
  pair   two grade-attempt jobs at once on GPU 0 and GPU 1, and each GPU alone: which GPUs each job
         touched (results.json's GPU UUID; nvidia-smi's process list, sampled), and its timings
         against the lone run on the same GPU (within ±2%).

Without a GPU it runs all the same (a dry run: the grader records no_gpu, nothing is timed), on
GPU indices given by --gpus. Exit status 0 when every check passed.
"""
import argparse
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "py"))
sys.path.insert(0, str(ROOT / "cluster"))

from support.cluster_helpers import (stored_attempt, publish_if_set_up, CACHE, close_the_class, config, dropbox, hand_in_dir,  # noqa: E402
                                     write_config)
import records  # noqa: E402

FAKE = ROOT / "tests" / "slurm" / "fake_slurm.py"
TOOL = ROOT / "cluster" / "gemmlab_cluster.py"
PY = sys.executable

# The class: student -> (what is handed in, the status a GPU must give it). Sources: "reference",
# "stub", "broken" (tiled.cu does not compile) from cluster_helpers; a path: a directory laid out
# like student/ (tests/broken, tests/gallery). "late": handed in after the due date; "twice":
# a broken hand-in, then this one (the later counts).
FULL_CLASS = [
    ("ref1", "reference", "graded", ""),
    ("ref2", "reference", "graded", ""),
    ("stub1", "stub", "graded", ""),
    ("stub2", "stub", "graded", ""),
    ("broken", "broken", "graded", ""),  # tiled rejected, every other stage graded
    ("nolink", "tests/gallery/missing_instantiation", "graded", ""),  # unrolled/double rejected
    ("wrong", "tests/broken/wrong_values", "graded", ""),
    ("memory", "tests/broken/memory", "graded", ""),
    ("libgemm", "tests/gallery/library_gemm", "graded", ""),
    ("control", "tests/gallery/well_behaved", "graded", ""),
    ("cached", "tests/gallery/cached_answer", "graded", ""),
    ("exits", "tests/gallery/exits", "graded", ""),
    ("late", "reference", "graded", "late"),
    ("twice", "reference", "graded", "twice"),
]
MINI_CLASS = [("stub1", "stub", "graded", ""), ("broken", "broken", "graded", ""),
              ("twice", "stub", "graded", "twice")]
ABSENT = "absent"  # on the roster, handed in nothing


def say(*a):
    print(*a, flush=True)


def run(cmd, env=None, timeout=1800, cwd=ROOT, log=None):
    t0 = time.time()
    r = subprocess.run([str(c) for c in cmd], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if log:
        with open(log, "a") as f:
            f.write(f"$ {' '.join(map(str, cmd))}\n{r.stdout}{r.stderr}(exit {r.returncode}, {time.time() - t0:.1f} s)\n")
    return r


def gpus_here() -> list[dict]:
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=index,name,uuid,pci.bus_id", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return []
    out = []
    for line in r.stdout.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 4 and parts[0].isdigit():
            out.append({"index": parts[0], "name": parts[1], "uuid": parts[2], "pci_bus_id": parts[3]})
    return out


class Course:
    """A throw-away course on this machine whose scheduler is the stand-in Slurm."""

    def __init__(self, base: Path, out: Path, gpus: list[str], cpus: int):
        self.base, self.out, self.gpus = base, out, gpus
        self.due = dt.datetime.now(dt.timezone.utc).replace(microsecond=0) + dt.timedelta(hours=2)
        self.state = base / "slurm"
        self.bin = base / "bin"
        self.env = dict(os.environ, FAKE_SLURM_STATE=str(self.state), PATH=f"{self.bin}:{os.environ['PATH']}")
        for k in [k for k in self.env if k.startswith("SLURM_")]:
            del self.env[k]
        self.log = out / "commands.log"
        r = run([PY, FAKE, "install", self.bin], env=self.env, log=self.log)
        assert r.returncode == 0, r.stderr
        CACHE.mkdir(parents=True, exist_ok=True)
        self.cfg_path = write_config(base, "slurm", self.due, course_timing=True, gres="gpu:1", cpus_per_task=cpus,
                                     time_limit="00:20:00", sweep_concurrency=max(1, len(gpus)),
                                     queued_per_student=8, graded_per_hour=60)
        self.cfg = config.load(self.cfg_path)

    def tool(self, *args, env=None, timeout=1800):
        r = run([PY, TOOL, "--config", self.cfg_path, *args], env=env or self.env, log=self.log, timeout=timeout)
        if r.returncode != 0:
            say(r.stdout + r.stderr)
        return r

    def slurm_run(self, gpus: list[str], only=(), sample=None, timeout=1800):
        cmd = [PY, FAKE, "run", "--gpus", ",".join(gpus)]
        if only:
            cmd += ["--only", ",".join(map(str, only))]
        if sample:
            cmd += ["--sample-gpus", sample]
        t0 = time.time()
        r = run(cmd, env=self.env, log=self.log, timeout=timeout)
        assert r.returncode == 0, f"fake_slurm run failed: {r.stdout}{r.stderr}"
        return time.time() - t0

    def runs(self) -> list[dict]:
        p = self.state / "runs.jsonl"
        return [json.loads(line) for line in p.read_text().splitlines()] if p.exists() else []


def _source(kind: str, scratch: Path) -> Path:
    if kind in ("reference", "stub", "broken"):
        return hand_in_dir(scratch / kind, kind)
    return ROOT / kind


def store_class(c: Course, klass) -> dict:
    """Hands the class in around a deadline on the drop box's own clock: the on-time hand-ins, then the
    deadline just after them (close_the_class), then the late ones; the sweep then runs after the deadline."""
    scratch = c.base / "class-src"
    c.cfg = config.load(c.cfg_path)
    on_time = []
    for student, kind, _, how in klass:
        if how == "twice":
            on_time.append(dropbox.store_attempt(c.cfg, student, dropbox.collect(c.cfg, _source("broken", scratch), None)))
        if how != "late":
            on_time.append(dropbox.store_attempt(c.cfg, student, dropbox.collect(c.cfg, _source(kind, scratch), None)))
    c.due = close_the_class(c.cfg, on_time)
    for student, kind, _, how in klass:
        if how == "late":
            dropbox.store_attempt(c.cfg, student, dropbox.collect(c.cfg, _source(kind, scratch), None))
    (c.base / "roster.txt").write_text("\n".join([s for s, *_ in klass] + [ABSENT]) + "\n")
    publish_if_set_up(c.cfg_path)  # the roster and the deadline, as the staff publish them
    return {s: (kind, want, how) for s, kind, want, how in klass}


def _gpu_of(outcome: dict) -> dict:
    return outcome.get("gpu") or {}


def _physical(visible: str, gpus: list[dict]):
    by_index = {g["index"]: g for g in gpus}
    return by_index.get(visible.split(",")[0]) if visible else None


def _seconds(o: dict) -> float:
    try:
        return (records.parse_iso(o["finished"]) - records.parse_iso(o["started"])).total_seconds()
    except (KeyError, ValueError):
        return 0.0


def phase_class(c: Course, klass, gpus: list[dict], real: bool, report: dict) -> list[str]:
    failures = []
    kinds = store_class(c, klass)
    say(f"== class: {len(kinds)} hand-ins + 1 absent, sweep array over GPU(s) {','.join(c.gpus)}")
    t0 = time.time()
    r = c.tool("sweep", "--name", "gpu")
    if r.returncode != 0:
        return [f"make sweep failed: {r.stderr.strip()}"]
    say("   " + r.stdout.strip().replace("\n", "\n   "))
    sweep = c.cfg.sweeps_dir / "gpu"
    run_dir = sweep / "runs" / "run-001"
    jobs = json.loads((run_dir / "jobs.json").read_text())
    wall = c.slurm_run(c.gpus)
    say(f"   the array and the gradebook job ran in {wall:.0f} s")
    # one more hand-in, graded by its own job (grade-attempt.sbatch, as `make submit` queues it)
    src = _source("reference" if any(k == "reference" for k, *_ in kinds.values()) else "stub", c.base / "mine")
    r = c.tool("submit", "--student-dir", src, "--off-roster")  # the staff hand in (not on the roster)
    if r.returncode != 0:
        return failures + [f"make submit failed: {r.stderr.strip()}"]
    own_job = re.search(r"grading job (\d+) queued", r.stdout).group(1)
    attempt = stored_attempt(r.stdout)
    c.slurm_run(c.gpus[:1], only=[own_job])
    took = time.time() - t0

    with open(sweep / "gradebook.csv") as f:
        import csv
        rows = {row["student"]: row for row in csv.DictReader(f)}
    tasks = json.loads((run_dir / "tasks.json").read_text())
    runs = {r["job_id"]: r for r in c.runs()}
    table, task_seconds = [], []
    for student, (kind, want, how) in kinds.items():
        row = rows.get(student, {})
        digest = next((t["digest"] for t in tasks if t["student"] == student), "")
        o = json.loads((sweep / "grades" / student / digest[:16] / "outcome.json").read_text()) if digest else {}
        expect = want if real or want != "graded" else "no_gpu"
        if row.get("status") != expect:
            failures.append(f"{student} ({kind}): status {row.get('status')!r}, expected {expect!r}: "
                            f"{row.get('message', '')}")
        g = _gpu_of(o)
        phys = _physical(g.get("visible_devices", ""), gpus)
        if real and o.get("status") == "graded" and (not phys or g.get("uuid") != phys["uuid"]):
            failures.append(f"{student}: graded on {g.get('uuid')} but its job was given GPU "
                            f"{g.get('visible_devices')} ({phys and phys['uuid']})")
        run_rec = runs.get(int(o["job_id"])) if o.get("job_id", "").isdigit() else None
        if run_rec:
            task_seconds.append(run_rec["end"] - run_rec["start"])
        results = {}
        rp = sweep / "grades" / student / digest[:16] / "results.json"
        if rp.exists():
            results = json.loads(rp.read_text())
        table.append({"student": student, "kind": kind + (f" ({how})" if how else ""), "status": row.get("status"),
                      "total": row.get("total"), "final": row.get("final"), "late": row.get("late"),
                      "node": row.get("node"), "gpu": row.get("gpu"), "uuid": g.get("uuid", ""),
                      "visible": g.get("visible_devices", ""), "job": o.get("job_id"), "task": o.get("array_task"),
                      "job_seconds": round(run_rec["end"] - run_rec["start"], 1) if run_rec else None,
                      "grade_seconds": results.get("seconds"), "build_and_grade_seconds": round(_seconds(o), 1)})
    if rows.get(ABSENT, {}).get("status") != "missing":
        failures.append(f"{ABSENT}: expected missing, got {rows.get(ABSENT)}")
    mine = json.loads((attempt / "grading" / "outcome.json").read_text()) if (attempt / "grading").is_dir() else {}
    want_own = "graded" if real else "no_gpu"
    if mine.get("status") != want_own or mine.get("job_id") != own_job:
        failures.append(f"the submit job {own_job}: {mine.get('status')} (job {mine.get('job_id')}), expected {want_own}")
    own_run = runs.get(int(own_job))
    if own_run:
        task_seconds.append(own_run["end"] - own_run["start"])

    # what the jobs saw: the rendered scripts and the environment Slurm would give
    for name in ("sweep-array.sbatch", "gradebook.sbatch"):
        shutil.copyfile(run_dir / name, c.out / name)
    queued = [json.loads(line) for line in (c.state / "queue.jsonl").read_text().splitlines()]
    shutil.copyfile(next(j["script"] for j in queued if str(j["id"]) == str(own_job)), c.out / "grade-attempt.sbatch")
    shutil.copytree(sweep, c.out / "class", dirs_exist_ok=True)  # plan, grades, gradebook, task logs
    n = len(task_seconds)
    gpu_hours = sum(task_seconds) / 3600
    report["class"] = {"hand_ins": len(kinds) + 1, "graded_jobs": n, "gpus": c.gpus, "wall_seconds": round(took, 1),
                       "sum_job_seconds": round(sum(task_seconds), 1),
                       "grades_per_gpu_hour": round(n / gpu_hours, 1) if gpu_hours else None,
                       "grades_per_gpu_hour_wall": round(n / (took / 3600 * len(c.gpus)), 1) if took else None,
                       "rows": table, "array_job": jobs.get("array"), "gradebook_job": jobs.get("gradebook"),
                       "submit_job": own_job}
    say("")
    say(f"{'student':<8} {'hand-in':<38} {'status':<12} {'total':>6} {'late':<4} {'GPU (CUDA_VISIBLE_DEVICES)':<34} "
        f"{'job s':>6} {'grade s':>7}")
    for t in table:
        say(f"{t['student']:<8} {t['kind'][:38]:<38} {str(t['status']):<12} {str(t['total']):>6} {str(t['late']):<4} "
            f"{(t['gpu'] or '-')[:28] + ' (' + (t['visible'] or '-') + ')':<34} {str(t['job_seconds']):>6} "
            f"{str(t['grade_seconds'] if t['grade_seconds'] is not None else '-'):>7}")
    say(f"\nthroughput: {n} grading jobs (sweep tasks + the submit job) held a GPU for {sum(task_seconds):.0f} s "
        f"in all: {report['class']['grades_per_gpu_hour']} grades per GPU-hour (each job: build + grade); "
        f"wall clock {took:.0f} s on {len(c.gpus)} GPU(s): {report['class']['grades_per_gpu_hour_wall']} per GPU-hour")
    return failures


# ---- pair: two jobs at once, one per GPU, against lone runs ------------------------------------------
def timings(results: dict) -> dict:
    """(what, precision, shape) -> GFLOPS of every timed item of a grade: the submission's stages, the
    naive and cuBLAS baselines and the reference's stages."""
    out = {}

    def shape_of(s):
        return f"{s.get('M')}x{s.get('N')}x{s.get('K')}"
    for r in results.get("results", []):
        for b in r.get("bench", []):
            if b.get("gflops"):
                name = r["stage"] + (f"/{r['variant']}" if r.get("variant") else "")
                out[(name, r["precision"], shape_of(b["shape"]))] = b["gflops"]
    for prec, rows in (results.get("baselines") or {}).items():
        for b in rows:
            for what in ("naive", "cublas"):
                if b.get(f"{what}_gflops"):
                    out[(f"[{what}]", prec, shape_of(b["shape"]))] = b[f"{what}_gflops"]
    for r in results.get("reference", []):
        for b in r.get("bench", []):
            if b.get("gflops"):
                name = "ref " + r["stage"] + (f"/{r['variant']}" if r.get("variant") else "")
                out[(name, r["precision"], shape_of(b["shape"]))] = b["gflops"]
    return out


def phase_pair(c: Course, gpus: list[dict], real: bool, report: dict, kind: str) -> list[str]:
    failures = []
    if len(c.gpus) < 2:
        say("== pair: needs two GPUs; skipped")
        report["pair"] = {"skipped": "fewer than two GPUs"}
        return failures
    g0, g1 = c.gpus[:2]
    say(f"== pair: {kind} hand-in graded by grade-attempt jobs: alone on GPU {g0}, alone on GPU {g1}, "
        f"then two at once (GPU {g0} and GPU {g1})")
    src = _source(kind, c.base / "pair-src")
    jobs = {}
    # First one job on each GPU at once, not compared: a GPU that has been idle (a freshly started
    # machine) ran the first job of an earlier run up to 13% slower at 1024³ than the same job later.
    # Each hand-in differs by a comment (the same files again would not be graded again); the course
    # allows this many jobs at once (queued_per_student, graded_per_hour in Course).
    for role in ("warm0", "warm1", "lone0", "lone1", "pair0", "pair1"):
        own = c.base / "pair-src" / role
        shutil.copytree(src, own)
        (own / "naive.cu").write_text((own / "naive.cu").read_text() + f"\n// {role}\n")
        r = c.tool("submit", "--student-dir", own, "--no-compile-check", "--off-roster")
        if r.returncode != 0:
            return [f"submit for {role} failed: {r.stderr.strip()}"]
        jobs[role] = (re.search(r"grading job (\d+) queued", r.stdout).group(1),
                      stored_attempt(r.stdout))
    walls = {"warm": c.slurm_run([g0, g1], only=[jobs["warm0"][0], jobs["warm1"][0]]),
             "lone0": c.slurm_run([g0], only=[jobs["lone0"][0]]),
             "lone1": c.slurm_run([g1], only=[jobs["lone1"][0]])}
    samples = c.out / "pair-gpu-samples.jsonl"
    walls["pair"] = c.slurm_run([g0, g1], only=[jobs["pair0"][0], jobs["pair1"][0]], sample=samples)
    runs = {r["job_id"]: r for r in c.runs()}
    data = {}
    for role, (job, attempt) in jobs.items():
        if role.startswith("warm"):
            continue
        o = json.loads((attempt / "grading" / "outcome.json").read_text())
        res_path = attempt / "grading" / "results.json"
        res = json.loads(res_path.read_text()) if res_path.exists() else {}
        shutil.copyfile(attempt / "grading" / "outcome.json", c.out / f"pair-{role}-outcome.json")
        if res_path.exists():
            shutil.copyfile(res_path, c.out / f"pair-{role}-results.json")
        rec = runs.get(int(job), {})
        data[role] = {"job": job, "outcome": o, "results": res, "run": rec}
        want_gpu = g0 if role.endswith("0") else g1
        if str(rec.get("gpu")) != want_gpu or _gpu_of(o).get("visible_devices") != want_gpu:
            failures.append(f"{role}: job {job} was given GPU {rec.get('gpu')} / saw CUDA_VISIBLE_DEVICES="
                            f"{_gpu_of(o).get('visible_devices')}, expected {want_gpu}")
        phys = _physical(want_gpu, gpus)
        if real:
            if o.get("status") != "graded":
                failures.append(f"{role}: {o.get('status')}: {o.get('message')}")
            elif not phys or _gpu_of(o).get("uuid") != phys["uuid"]:
                failures.append(f"{role}: results.json names GPU {_gpu_of(o).get('uuid')}, its job was given "
                                f"{phys and phys['uuid']}")
    p0, p1 = data["pair0"]["run"], data["pair1"]["run"]
    overlap = (min(p0.get("end", 0), p1.get("end", 0)) - max(p0.get("start", 0), p1.get("start", 0)))
    if overlap <= 0:
        failures.append("the two pair jobs did not run at the same time")

    # nvidia-smi's process list during the pair: each job's processes on its own GPU only
    seen = {}
    unattributed = 0
    if samples.exists():
        for line in samples.read_text().splitlines():
            s = json.loads(line)
            if s["job"]:
                seen.setdefault(s["job"], set()).add(s["gpu_uuid"])
            else:
                unattributed += 1
    expected_uuid = {data[r]["job"]: (_physical(g, gpus) or {}).get("uuid") for r, g in (("pair0", g0), ("pair1", g1))}
    process_check = {}
    for job, uuid in expected_uuid.items():
        got = seen.get(job, set())
        process_check[job] = {"expected": uuid, "seen": sorted(got)}
        if real and got and got != {uuid}:
            failures.append(f"job {job} had processes on {sorted(got)}, expected only {uuid}")
    if real and not seen:
        say("   note: nvidia-smi listed no process that could be traced to a job (a container's PID "
            "namespace hides them); the UUID in results.json is the check that remains")

    # timings: pair vs lone on the same GPU
    rows, worst = [], 0.0
    t = {role: timings(d["results"]) for role, d in data.items()}
    for key in sorted(set(t["lone0"]) | set(t["lone1"])):
        row = {"item": key[0], "precision": key[1], "shape": key[2]}
        for lone, pair in (("lone0", "pair0"), ("lone1", "pair1")):
            a, b = t[lone].get(key), t[pair].get(key)
            row[lone], row[pair] = a, b
            row[f"delta_{pair[-1]}_pct"] = round(100 * (b - a) / a, 2) if a and b else None
            if row[f"delta_{pair[-1]}_pct"] is not None:
                worst = max(worst, abs(row[f"delta_{pair[-1]}_pct"]))
        rows.append(row)
    within = sum(1 for r in rows for k in ("delta_0_pct", "delta_1_pct") if r[k] is not None and abs(r[k]) <= 2.0)
    compared = sum(1 for r in rows for k in ("delta_0_pct", "delta_1_pct") if r[k] is not None)
    if real and (not compared or worst > 2.0):
        failures.append(f"pair timings: {compared - within} of {compared} items differ from the lone run by more "
                        f"than 2% (worst {worst:.2f}%)" if compared else "pair timings: nothing timed")
    report["pair"] = {"gpus": [g0, g1], "jobs": {r: d["job"] for r, d in data.items()},
                      "walls": {k: round(v, 1) for k, v in walls.items()}, "overlap_seconds": round(overlap, 1),
                      "results_uuid": {r: _gpu_of(d["outcome"]).get("uuid") for r, d in data.items()},
                      "nvidia_smi_processes": process_check, "unattributed_samples": unattributed,
                      "timings": rows, "compared": compared, "within_2pct": within, "worst_abs_delta_pct": round(worst, 2)}
    say(f"   lone runs {walls['lone0']:.0f} s and {walls['lone1']:.0f} s; the pair together {walls['pair']:.0f} s "
        f"(both running for {overlap:.0f} s)")
    for role, d in data.items():
        o = d["outcome"]
        say(f"   {role}: job {d['job']} CUDA_VISIBLE_DEVICES={_gpu_of(o).get('visible_devices')} -> "
            f"{_gpu_of(o).get('model', '-')} {_gpu_of(o).get('uuid', '-')} ({o.get('status')}, "
            f"{(o.get('score') or {}).get('total', '-')}/{(o.get('score') or {}).get('max', '-')}), "
            f"CPUs {d['run'].get('cpu_ids') or '-'}")
    for job, pc in process_check.items():
        say(f"   nvidia-smi: job {job} processes seen on {pc['seen'] or 'no GPU (none attributed)'}; given {pc['expected']}")
    say("")
    say(f"{'timed item':<16} {'prec':<6} {'shape':<15} {'lone GPU' + g0:>11} {'pair GPU' + g0:>11} {'Δ%':>7} "
        f"{'lone GPU' + g1:>11} {'pair GPU' + g1:>11} {'Δ%':>7}")

    def f(x):
        return f"{x:,.0f}" if isinstance(x, (int, float)) else "-"

    def d(x):
        return f"{x:+.2f}" if isinstance(x, (int, float)) else "-"
    for r in rows:
        say(f"{r['item'][:16]:<16} {r['precision']:<6} {r['shape']:<15} {f(r['lone0']):>11} {f(r['pair0']):>11} "
            f"{d(r['delta_0_pct']):>7} {f(r['lone1']):>11} {f(r['pair1']):>11} {d(r['delta_1_pct']):>7}")
    say(f"\n{within} of {compared} timed items within ±2% of the lone run on the same GPU "
        f"(worst |Δ| {worst:.2f}%)" if compared else "\nnothing was timed (no GPU): the timing table is empty")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("phase", nargs="?", default="all", choices=("all", "class", "pair"))
    ap.add_argument("--out", default=os.environ.get("OUT") or str(ROOT / "build" / "cluster-gpu-jobs"))
    ap.add_argument("--gpus", default="", help="GPU indices to use (default: every GPU nvidia-smi lists; "
                                               "without one, a dry run on 0,1)")
    ap.add_argument("--class", dest="klass", default="full", choices=("full", "mini"),
                    help="mini: three hand-ins of the stub files (a quick dry run)")
    ap.add_argument("--keep", action="store_true", help="keep the course directory")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    gpus = gpus_here()
    real = bool(gpus)
    use = [g for g in args.gpus.split(",") if g] or ([g["index"] for g in gpus] if real else ["0", "1"])
    cpus = max(1, (os.cpu_count() or 2) // len(use))  # each job its share of the cores, as Slurm would
    say(f"cluster_gpu_jobs: {'GPUs: ' + '; '.join(g['index'] + ' ' + g['name'] + ' ' + g['uuid'] for g in gpus) if real else 'no GPU: a dry run (every grade no_gpu, nothing timed)'}")
    say(f"   using GPU(s) {','.join(use)}, {cpus} cores per job; logs in {out}")
    base = Path(tempfile.mkdtemp(prefix="gemmlab-gpu-jobs-", dir="/tmp"))
    os.chmod(base, 0o755)
    report = {"gpus": gpus, "real": real, "used": use, "cpus_per_job": cpus, "started": time.time()}
    failures = []
    t0 = time.time()
    try:
        c = Course(base, out, use, cpus)
        say("== trusted grader build (once; every core)")
        tb = time.time()
        r = c.tool("setup", "--build", env=dict(c.env, SLURM_CPUS_PER_TASK=str(os.cpu_count() or 2)))
        if r.returncode != 0:
            raise SystemExit(f"the trusted build failed: {r.stdout}{r.stderr}")
        report["trusted_build_seconds"] = round(time.time() - tb, 1)
        say(f"   {report['trusted_build_seconds']} s")
        klass = FULL_CLASS if args.klass == "full" else MINI_CLASS
        if args.phase in ("all", "class"):
            failures += phase_class(c, klass, gpus, real, report)
        if args.phase in ("all", "pair"):
            failures += phase_pair(c, gpus, real, report, "reference" if args.klass == "full" else "stub")
        shutil.copyfile(c.state / "runs.jsonl", out / "fake-slurm-runs.jsonl")
        shutil.copyfile(c.state / "queue.jsonl", out / "fake-slurm-queue.jsonl")
    finally:
        report["seconds"] = round(time.time() - t0, 1)
        report["failures"] = failures
        (out / "cluster-gpu-jobs.json").write_text(json.dumps(report, indent=2, default=str) + "\n")
        if args.keep:
            say(f"course kept in {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    say(f"\ncluster_gpu_jobs: {report['seconds']:.0f} s; " +
        ("all checks passed" if not failures else f"{len(failures)} check(s) failed:\n  - " + "\n  - ".join(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
