"""Helpers shared by the cluster tests (test_cluster_local.py, test_cluster_slurm.py): a course.toml
for a throw-away course, and a synthetic class of hand-ins built from student/ (stubs),
reference/ (solutions) and deliberately broken copies."""
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "cluster" / "gemmlab_cluster.py"
sys.path.insert(0, str(ROOT / "cluster"))

import config  # noqa: E402,F401  (re-exported to the tests)
import dropbox  # noqa: E402

STAGES = sorted(p.name for p in (ROOT / "student").glob("*.cu"))
# Content-keyed, so safe to share between runs: the trusted grader build and compiled objects.
CACHE = ROOT / "build" / "cluster-tests" / "cache"
PYTHON = sys.executable


def write_config(base: Path, scheduler: str, due: dt.datetime, course_timing=False, **cluster) -> Path:
    """course_timing: grade with the repository course.toml's [bench] and [scoring] (its shapes,
    repetitions and targets: tests/cluster_gpu_jobs.py, where the speeds themselves are compared)
    instead of a short budget at one small shape."""
    lines = ['[course]', 'name = "cluster-test"', "[cluster]", f'scheduler = "{scheduler}"',
             f'dropbox = "{base}/dropbox"', f'sweeps = "{base}/sweeps"', f'grader_root = "{ROOT}"',
             f'trusted_cache = "{CACHE}"', f'roster = "{base}/roster.txt"',
             "roster_accounts = false"]  # the synthetic students s01.. are not accounts
    lines += [f"{k} = {json.dumps(v)}" for k, v in cluster.items()]
    lines += ["[deadline]", f"due = {due.isoformat()}", "[late]", 'policy = "latest"', "penalty_percent_per_day = 10"]
    if course_timing:
        course = (ROOT / "course.toml").read_text()
        lines.append(course[course.index("\n[bench]"):])
    else:
        # Where a GPU is, the jobs really grade: a short timing budget at one small shape keeps each
        # grade to seconds (what these tests prove is the flow, not the speeds).
        # The rubric's points and targets are the repository's (course.toml holds them, nothing else).
        course = (ROOT / "course.toml").read_text()
        lines += ["[bench]", "min_repetitions = 3", "max_repetitions = 5", "max_seconds = 0.2",
                  "[scoring]", "measure_reference = false", "[[scoring.shapes]]", 'shape = "1024x1024x1024"',
                  "weight = 1", course[course.index("\n[scoring.stages.naive]"):]]
    path = base / "course.toml"
    path.write_text("\n".join(lines) + "\n")
    os.chmod(path, 0o644)
    return path


def hand_in_dir(dest: Path, kind: str) -> Path:
    """A directory laid out like student/: 'stub', 'reference' or 'broken' (tiled.cu does not compile)."""
    dest.mkdir(parents=True, exist_ok=True)
    src = ROOT / ("reference" if kind == "reference" else "student")
    for name in STAGES:
        shutil.copyfile(src / name, dest / name)
    if kind == "broken":
        (dest / "tiled.cu").write_text((dest / "tiled.cu").read_text() + "\nthis line is not C++;\n")
    return dest


# The class: kind per student, cycled. 'late' hands in stubs after the due date; 'twice' hands in
# twice (the later one counts); 'missing' is on the roster with no hand-in.
KINDS = ["stub", "reference", "broken", "late", "twice", "stub", "reference", "missing"]
# 'broken' hands in a tiled.cu that does not compile: every other stage is graded (tiled is rejected).
EXPECTED_STATUS = {"stub": "no_gpu", "reference": "no_gpu", "broken": "no_gpu", "late": "no_gpu",
                   "twice": "no_gpu", "missing": "missing"}
# The class's deadline, set this far ahead of the last on-time hand-in, once they are all in: the
# on-time hand-ins go in before it, the late ones after it, on the drop box's own clock (an attempt
# cannot be backdated), and the sweep that follows runs after the deadline, as a final sweep does.
CLASS_DEADLINE_SECONDS = 1


def set_due(cfg_path: Path, due: dt.datetime):
    """Rewrites [deadline] due of a course.toml written by write_config."""
    text = Path(cfg_path).read_text()
    start = text.index("\ndue = ") + 1
    end = text.index("\n", start)
    Path(cfg_path).write_text(text[:start] + f"due = {due.isoformat()}" + text[end:])


def make_class(cfg, base: Path, n: int, due: dt.datetime = None) -> dict[str, str]:
    """n synthetic students s01.. (not Unix accounts) stored as root; returns student -> kind. The
    on-time hand-ins go in with the course's due date a day ahead; then the due date moves to
    CLASS_DEADLINE_SECONDS to a second more after them (a whole second), and once it has passed the
    late ones go in (the `due` given is ignored)."""
    set_due(cfg.path, dt.datetime.now(dt.timezone.utc).replace(microsecond=0) + dt.timedelta(days=1))
    work = base / "class-src"
    dirs = {k: hand_in_dir(work / k, k) for k in ("stub", "reference", "broken")}
    kinds, late = {}, []
    for i in range(n):
        student, kind = f"s{i + 1:02d}", KINDS[i % len(KINDS)]
        kinds[student] = kind
        if kind == "missing":
            continue
        if kind == "late":
            late.append(student)
            continue
        if kind == "twice":
            dropbox.store_attempt(cfg, student, dropbox.collect(cfg, dirs["broken"], None))
        dropbox.store_attempt(cfg, student, dropbox.collect(cfg, dirs["stub" if kind == "twice" else kind], None))
    due = dt.datetime.now(dt.timezone.utc).replace(microsecond=0) + dt.timedelta(seconds=CLASS_DEADLINE_SECONDS + 1)
    set_due(cfg.path, due)
    time.sleep(max(0.0, (due - dt.datetime.now(dt.timezone.utc)).total_seconds()) + 0.5)
    for student in late:
        dropbox.store_attempt(cfg, student, dropbox.collect(cfg, dirs["stub"], None))
    (base / "roster.txt").write_text("# synthetic class\n" + "\n".join(kinds) + "\n")
    return kinds


def tool(cfg_path, *args, user=None, env=None, timeout=900):
    cmd = [PYTHON, str(TOOL), "--config", str(cfg_path), *map(str, args)]
    if user:
        cmd = ["runuser", "-u", user, "--", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=timeout)


def read_gradebook(sweep: Path) -> list[dict]:
    import csv
    with open(sweep / "gradebook.csv") as f:
        return list(csv.DictReader(f))


def wait_for(predicate, timeout, what, poll=0.25):
    t0 = time.time()
    while time.time() - t0 < timeout:
        value = predicate()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def mark_graded(sweep: Path, students) -> dict[str, dict]:
    """Rewrites the published grades of these students in a sweep as if a GPU node had graded them
    (status `graded`; the results stay the GPU-less ones): a result a later sweep keeps, where
    no_gpu, the only status a GPU-less test node gives, is graded again. Returns student -> outcome."""
    marked = {}
    for p in sorted(Path(sweep, "grades").glob("*/*/outcome.json")):
        if p.parent.parent.name in students and not p.parent.name.startswith(".") and ".replaced-" not in p.parent.name:
            o = dict(json.loads(p.read_text()), status="graded", message="marked graded by the test")
            p.write_text(json.dumps(o, indent=2) + "\n")
            marked[p.parent.parent.name] = o
    return marked


def check_gradebook(rows, kinds, gpu=False, graded=()):
    """One row per student, each with the status its kind must give (on a GPU-less node: no_gpu;
    `graded` for the students whose grades the test marked so, mark_graded)."""
    students = [r["student"] for r in rows]
    assert len(students) == len(set(students)), f"duplicate rows: {students}"
    assert sorted(students) == sorted(kinds)
    for r in rows:
        kind = kinds[r["student"]]
        want = EXPECTED_STATUS[kind]
        if (gpu or r["student"] in graded) and want == "no_gpu":
            want = "graded"
        assert r["status"] == want, (r["student"], kind, r["status"], r["message"])
        assert r["late"] == ("yes" if kind == "late" else "" if kind == "missing" else "no"), r
        if not gpu:
            assert float(r["total"] or 0) == 0  # honest: no GPU, no points
        elif kind == "reference":
            assert float(r["total"]) > 0, r
