"""Helpers shared by the cluster tests (test_cluster_local.py, test_cluster_slurm.py): a course.toml
for a throw-away course, and a synthetic class of hand-ins built from student/ (stubs),
reference/ (solutions) and deliberately broken copies."""
import contextlib
import datetime as dt
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .paths import ROOT

TOOL = ROOT / "cluster" / "gemmlab_cluster.py"
sys.path.insert(0, str(ROOT / "cluster"))

import config  # noqa: E402,F401  (re-exported to the tests)
import attempts  # noqa: E402
import dropbox  # noqa: E402

STAGES = sorted(p.name for p in (ROOT / "student").glob("*.cu"))
# Content-keyed, so safe to share between runs: the trusted grader build and compiled objects.
CACHE = ROOT / "build" / "cluster-tests" / "cache"
PYTHON = sys.executable


def folder(cfg, student: str) -> Path:
    """The student's folder in the drop box (<login>+<token>), as the staff find it (they may list it)."""
    name = attempts.folder_of(cfg.dropbox_dir, student)
    assert name is not None, f"{student} has no folder in {cfg.dropbox_dir}"
    return cfg.dropbox_dir / name


def write_config(base: Path, scheduler: str, due: dt.datetime, course_timing=False, **cluster) -> Path:
    """course_timing: grade with the repository course.toml's [bench] and [scoring] (its shapes,
    repetitions and targets: tests/gpu_session/cluster_gpu_jobs.py, where the speeds themselves are compared)
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


def hold_lock(path, default_wait: float):
    """An exclusive lock on `path` (a test cluster with fixed ports and one directory: two test sessions
    at once would restart each other's), waiting up to GEMMLAB_SLURM_LOCK_WAIT seconds (default
    `default_wait`); the open file that holds it, or None when another session still holds it."""
    import fcntl
    lock = open(path, "w")
    deadline = time.time() + float(os.environ.get("GEMMLAB_SLURM_LOCK_WAIT", default_wait))
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return lock
        except BlockingIOError:
            if time.time() > deadline:
                lock.close()
                return None
            time.sleep(2)


def set_due(cfg_path: Path, due: dt.datetime):
    """Rewrites [deadline] due of a course.toml written by write_config, and publishes it where the course
    has a published state (students' commands read that, never the file)."""
    text = Path(cfg_path).read_text()
    start = text.index("\ndue = ") + 1
    end = text.index("\n", start)
    Path(cfg_path).write_text(text[:start] + f"due = {due.isoformat()}" + text[end:])
    publish_if_set_up(cfg_path)


def stored_attempt(stdout: str) -> Path:
    """The attempt directory `make submit` says it stored ("... it is handed in (<path>, sha256 ...)")."""
    import re
    m = re.search(r"it is handed in \((/\S+), sha256", stdout)
    assert m, f"make submit named no stored attempt:\n{stdout}"
    return Path(m.group(1))


def publish_if_set_up(cfg_path: Path):
    """`publish` the course's files, as the staff would after an edit, where the course was set up."""
    import course_state
    if course_state.current(config.load(cfg_path)) is not None:
        r = tool(cfg_path, "publish", "--why", "the tests' edit")
        assert r.returncode == 0, r.stdout + r.stderr


def dropbox_clock(cfg) -> dt.datetime:
    """The drop box's clock: the modification time its file system gives a file written now beside it
    (what dates a hand-in there, as dropbox.store_attempt reads it)."""
    with tempfile.TemporaryFile(dir=cfg.dropbox_dir.parent) as probe:
        return dt.datetime.fromtimestamp(os.fstat(probe.fileno()).st_mtime, dt.timezone.utc)


def close_the_class(cfg, on_time: list[Path]) -> dt.datetime:
    """Sets the course's due date to the whole second after the latest recorded time of the stored
    attempts `on_time` (Attempt.effective_time: what the drop box dates them by), publishes it, and
    returns once the drop box's clock has passed it: every hand-in stored from then on is late, and
    a sweep is after the deadline. An attempt cannot be backdated, so the deadline follows the
    hand-ins, never a guess of how long storing them takes."""
    latest = max(a.effective_time() for p in on_time for a in attempts.in_directory(p.parent) if a.path == p)
    return deadline_passes(cfg, latest.replace(microsecond=0) + dt.timedelta(seconds=1))


def deadline_passes(cfg, due: dt.datetime) -> dt.datetime:
    """Sets the course's due date to `due` (published where the course is set up) and returns it once
    the drop box's clock has passed it (no later than the machine's own: the file system's is coarser)."""
    set_due(cfg.path, due)
    wait_for(lambda: dropbox_clock(cfg) > due, 60, f"the drop box's clock to pass the deadline {due}", poll=0.05)
    return due


def make_class(cfg, base: Path, n: int, due: dt.datetime = None) -> dict[str, str]:
    """n synthetic students s01.. (not Unix accounts) stored as root; returns student -> kind. The
    on-time hand-ins go in with the course's due date a day ahead; then the due date moves to just
    after them (close_the_class) and, once the drop box's clock has passed it, the late ones go in
    (the `due` given is ignored)."""
    set_due(cfg.path, dt.datetime.now(dt.timezone.utc).replace(microsecond=0) + dt.timedelta(days=1))
    work = base / "class-src"
    dirs = {k: hand_in_dir(work / k, k) for k in ("stub", "reference", "broken")}
    kinds, late, on_time = {}, [], []
    for i in range(n):
        student, kind = f"s{i + 1:02d}", KINDS[i % len(KINDS)]
        kinds[student] = kind
        if kind == "missing":
            continue
        if kind == "late":
            late.append(student)
            continue
        if kind == "twice":
            on_time.append(dropbox.store_attempt(cfg, student, dropbox.collect(cfg, dirs["broken"], None)))
        on_time.append(dropbox.store_attempt(cfg, student, dropbox.collect(cfg, dirs["stub" if kind == "twice" else kind], None)))
    close_the_class(cfg, on_time)
    for student in late:
        dropbox.store_attempt(cfg, student, dropbox.collect(cfg, dirs["stub"], None))
    (base / "roster.txt").write_text("# synthetic class\n" + "\n".join(kinds) + "\n")
    publish_if_set_up(cfg.path)
    return kinds


# Where a user keeps caches: the staff's own settings (an instructor's XDG_CACHE_HOME, a ccache directory)
# are not a student's, and a student could not write there. runuser keeps the environment (SLURM_CONF
# with it); these are left out of it, so a student's commands use their own home's caches, as in a
# session of their own.
OWN_CACHES = ("XDG_CACHE_HOME", "CCACHE_DIR")


def as_user_env(env=None) -> dict:
    return {k: v for k, v in (os.environ if env is None else env).items() if k not in OWN_CACHES}


@contextlib.contextmanager
def time_limit(seconds: int, what: str):
    """A block that must end within `seconds` (SIGALRM): a hang is a failure, never a stuck test."""
    def stop(signum, frame):
        raise TimeoutError(f"{what} did not finish in {seconds} s (a hang)")
    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def tool(cfg_path, *args, user=None, env=None, timeout=900):
    cmd = [PYTHON, str(TOOL), "--config", str(cfg_path), *map(str, args)]
    if user:
        cmd = ["runuser", "-u", user, "--", *cmd]
        env = as_user_env(env)
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


# How long a cluster may show no sign of work at all before a wait on it is a hang: no job changing
# state and no file of the course written. A loaded machine is slow, never that still.
STALLED_SECONDS = 900


def wait_while_working(predicate, activity, what, stalled=STALLED_SECONDS, poll=1.0):
    """Waits until predicate() is true (returns its value) for as long as the work it waits on goes on:
    fails only once activity() (a snapshot of that work: activity_of) has not changed for `stalled`
    seconds. A wait for an event, whatever the load; only a hang ends it."""
    seen, since = activity(), time.time()
    while True:
        value = predicate()
        if value:
            return value
        time.sleep(poll)
        now = activity()
        if now != seen:
            seen, since = now, time.time()
        elif time.time() - since > stalled:
            raise AssertionError(f"nothing moved for {stalled} s (no job changed state, no file was written) "
                                 f"while waiting for {what}")


def activity_of(*dirs, queue=None):
    """A function giving a snapshot of the work under way: every file below `dirs` with its size and
    modification time, and what `queue()` says (the scheduler's jobs and their states)."""
    def snapshot():
        files = set()
        for d in dirs:
            for parent, names, leaves in os.walk(d):
                for name in names + leaves:
                    with contextlib.suppress(OSError):
                        st = os.lstat(os.path.join(parent, name))
                        files.add((parent, name, st.st_size, st.st_mtime_ns))
        return frozenset(files), queue() if queue else None
    return snapshot


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


# Slurm's commands: where none of them is on PATH, the machine is a login node whose Slurm module is
# not loaded (or a machine without Slurm).
SLURM_COMMANDS = ("sbatch", "squeue", "scontrol", "scancel", "srun", "salloc", "sinfo", "sacct")


def path_without_slurm(tmp: Path) -> str:
    """This PATH with no Slurm command on it: each directory of it that has one is replaced by a
    directory of links to the rest of its commands."""
    dirs = []
    for i, d in enumerate(os.environ.get("PATH", "").split(os.pathsep)):
        if not any((Path(d) / c).exists() for c in SLURM_COMMANDS):
            dirs.append(d)
            continue
        shadow = tmp / f"path-{i}"
        shadow.mkdir(parents=True, exist_ok=True)
        for entry in os.scandir(d):
            if entry.name not in SLURM_COMMANDS and not (shadow / entry.name).exists():
                (shadow / entry.name).symlink_to(entry.path)
        dirs.append(str(shadow))
    return os.pathsep.join(dirs)


def stand_in_make(bin_dir: Path, marker: Path, release: Path, hold_under=None) -> Path:
    """A `make` for bin_dir (put it first on PATH) that answers the cluster tools' variable queries
    with the real make and holds a build: it creates `marker`, then waits until `release` exists
    (never, if nobody makes it) before it runs the real make. hold_under: only a build whose BUILD=
    lies under this directory (a grading's scratch) is held; None: every build."""
    real = shutil.which("make")
    bin_dir.mkdir(parents=True, exist_ok=True)
    held = f'*" BUILD={hold_under}/"*' if hold_under else "*"
    script = bin_dir / "make"
    script.write_text(f"""#!/bin/sh
# stand-in for make (tests/py/support/cluster_helpers.py: stand_in_make)
for a in "$@"; do [ "$a" = print-cluster-vars ] && exec {real} "$@"; done
case " $* " in {held}) ;; *) exec {real} "$@" ;; esac
: > '{marker}'
while [ ! -e '{release}' ]; do sleep 0.05; done
exec {real} "$@"
""")
    script.chmod(0o755)
    return script



def stand_in_make_holding_gradings(bin_dir: Path, armed: Path, held: Path, release: Path, node: str = "") -> Path:
    """A `make` for bin_dir (put it first on the PATH a sweep's jobs inherit) that, once `armed` exists,
    holds each grading in a Slurm job at the first thing it asks make (print-cluster-vars, before it
    takes any lock): it creates `held`, then waits until `release` exists (never, if nobody makes it:
    until the job is cancelled or its node killed). node: only gradings on that Slurm node
    (SLURMD_NODENAME); "": on every node. Every other call runs the real make."""
    real = shutil.which("make")
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "make"
    script.write_text(f"""#!/bin/sh
# stand-in for make (tests/py/support/cluster_helpers.py: stand_in_make_holding_gradings)
case " $* " in *" print-cluster-vars "*) ;; *) exec {real} "$@" ;; esac
if [ -e '{armed}' ] && [ -n "${{SLURMD_NODENAME:-}}" ] && {{ [ -z '{node}' ] || [ "$SLURMD_NODENAME" = '{node}' ]; }}; then
    : > '{held}'
    while [ ! -e '{release}' ]; do sleep 0.1; done
fi
exec {real} "$@"
""")
    script.chmod(0o755)
    return script


def stand_in_tool(bin_dir: Path, name: str, real: str, asks: str, work: str) -> Path:
    """bin_dir/name (put bin_dir first on PATH), a stand-in for the program `real`: a call with the
    argument `asks` (nvcc's --version, make's print-cluster-vars: what the cluster tools ask before
    they build) runs the real one; any other runs the shell lines `work` instead (a machine failure:
    `kill -KILL $$`, a message and an exit status)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / name
    script.write_text(f"""#!/bin/sh
# stand-in for {name} (tests/py/support/cluster_helpers.py: stand_in_tool)
for a in "$@"; do [ "$a" = {asks} ] && exec {real} "$@"; done
{work}
""")
    script.chmod(0o755)
    return script


@contextlib.contextmanager
def trusted_tree_kept():
    """The checkout's reference sources as they were, after a `setup` of a course with a staff group
    (whose trusted tree is this checkout) closed them to students: their mode and group put back."""
    kept = {p: (p.stat().st_mode & 0o7777, p.stat().st_gid) for p in (ROOT / "reference").rglob("*")
            if p.is_file() and not p.is_symlink()}
    try:
        yield
    finally:
        for p, (mode, gid) in kept.items():
            os.chown(p, -1, gid)
            os.chmod(p, mode)
