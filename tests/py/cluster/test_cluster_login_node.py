"""What the cluster tools do to the machine they run on — a shared login node, a GPU node — with real
processes, no Slurm needed:

- where Slurm is the course's scheduler but cannot be found (sbatch not on PATH: a login node whose
  Slurm module is not loaded), `make sweep` grades nothing here and says how to load Slurm or how
  to grade here on purpose; `make submit` stores the hand-in (its time counts) and grades nothing;
- a grading stopped by SIGTERM (scancel, a time limit), SIGINT or SIGHUP removes its scratch and its
  unfinished results (the build is held by a stand-in for make, so the signal comes mid-build);
- a grading first reaps the scratch directories that its user's killed gradings left on this host
  (their process is gone), and never another user's, another host's or a live process's.

Needs nvcc (the Makefile the grading asks for its variables wants one); nothing is compiled.
"""
import datetime as dt
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.cluster_helpers import (stored_attempt, PYTHON, ROOT, TOOL, config, dropbox, hand_in_dir, path_without_slurm, stand_in_make,
                                     wait_for)

sys.path.insert(0, str(ROOT / "cluster"))
import gemmlab_cluster  # noqa: E402  (puts cluster/ and cluster/staff/ on sys.path)
from commands import sweep as sweep_commands  # noqa: E402
import sweep_work  # noqa: E402  (cluster/staff/)
import scratch  # noqa: E402

needs_nvcc = pytest.mark.skipif(not (shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc")),
                                reason="needs nvcc (the Makefile the grading reads wants a CUDA toolkit)")


def course(base: Path, scheduler: str) -> Path:
    due = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes=5)).replace(microsecond=0)
    path = base / "course.toml"
    path.write_text(f'[course]\nname = "login-node"\n[cluster]\nscheduler = "{scheduler}"\n'
                    f'dropbox = "{base}/dropbox"\nsweeps = "{base}/sweeps"\ngrader_root = "{ROOT}"\n'
                    f'trusted_cache = "{base}/cache"\nscratch = "{base}/scratch"\n'
                    f"[deadline]\ndue = {due.isoformat()}\n")
    return path


def run(cfg_path, *args, env=None, timeout=120):
    return subprocess.run([PYTHON, str(TOOL), "--config", str(cfg_path), *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=timeout)


@pytest.mark.parametrize("scheduler", ["auto", "slurm"])
def test_without_slurm_a_sweep_grades_nothing_here(tmp_path, scheduler):
    cfg_path = course(tmp_path, scheduler)
    cfg = config.load(cfg_path)
    dropbox.store_attempt(cfg, "ann", dropbox.collect(cfg, hand_in_dir(tmp_path / "src", "stub"), None))
    env = dict(os.environ, PATH=path_without_slurm(tmp_path / "bin"))
    r = run(cfg_path, "sweep", env=env)
    assert r.returncode == 1, r.stdout + r.stderr
    err = r.stderr
    assert "Slurm was not found here (sbatch is not on PATH)" in err and f'scheduler = "{scheduler}"' in err, err
    assert "nothing was planned, graded or queued" in err and "module load slurm" in err, err
    assert "make sweep LOCAL=1" in err and 'scheduler = "local"' in err and socket.gethostname() in err, err
    assert not cfg.sweeps_dir.exists() and not (tmp_path / "scratch").exists()


def test_without_slurm_a_published_course_names_the_file_the_staff_edit(tmp_path):
    """The sweep reads the published state's copy of course.toml; its message names the staff's own
    file, where the setting is changed (the copy in <dropbox>/.course/states/ is not to be edited)."""
    import course_state
    cfg_path = course(tmp_path, "auto")
    cfg = config.load(cfg_path)
    dropbox.setup_dirs(cfg)
    state, _ = course_state.publish(cfg, {"measurement": {}, "rubric": {}})  # validated elsewhere: no build here
    env = dict(os.environ, PATH=path_without_slurm(tmp_path / "bin"))
    r = run(cfg_path, "sweep", env=env)
    assert r.returncode == 1, r.stdout + r.stderr
    assert f'([cluster] scheduler = "auto" in {cfg_path}): nothing was planned' in r.stderr, r.stderr
    assert str(state.public_dir) not in r.stderr, r.stderr


@pytest.mark.parametrize("scheduler", ["auto", "slurm"])
def test_without_slurm_a_hand_in_is_stored_and_not_graded_here(tmp_path, scheduler):
    cfg_path = course(tmp_path, scheduler)
    env = dict(os.environ, PATH=path_without_slurm(tmp_path / "bin"))
    r = run(cfg_path, "submit", "--student-dir", hand_in_dir(tmp_path / "me" / "student", "stub"),
            "--no-compile-check", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    attempt = stored_attempt(r.stdout)
    assert (attempt / "manifest.json").is_file() and "LATE: handed in" in r.stdout, r.stdout
    assert "grading now" not in r.stdout and not (attempt / "grading").exists(), r.stdout
    assert not (tmp_path / "scratch").exists()
    msg = " ".join(r.stderr.split())
    assert "submit: WARNING: Slurm was not found here (sbatch is not on PATH" in msg, msg
    assert "Your hand-in is stored and its time counts for the deadline" in msg, msg
    assert "`module load slurm`) and queue its grading: make requeue ATTEMPT=1" in msg, msg
    assert not list(attempt.glob("*.sbatch"))  # an attempt holds no job script: requeue renders the trusted one
    status = run(cfg_path, "status", env=env)
    assert "not queued (Slurm not found where it was handed in: no sbatch on PATH)" in status.stdout, status.stdout


def _stale_scratch(base: Path, live_pid: int) -> tuple[dict, set]:
    """Scratch directories as gradings killed earlier leave them: (name -> kept?, the ones reaped)."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    uid, host = os.getuid(), scratch.host()
    dirs = {f"gemmlab-{uid}-{host}-{dead.pid}-0000dead": False,       # its process is gone: reaped
            f"gemmlab-{uid}-{host}-{live_pid}-0000a11e": True,         # its process still runs
            f"gemmlab-{uid}-another-node-{dead.pid}-00000eed": True,   # another host's (shared scratch)
            "gemmlab-build-notes": True}                                # not a grading's
    if os.geteuid() == 0:  # another user's, by name and by owner
        dirs[f"gemmlab-65534-{host}-{dead.pid}-0000beef"] = True
        dirs[f"gemmlab-{uid}-{host}-{dead.pid}-0000f00d"] = True      # our name, another owner
    for name in dirs:
        (base / name / "submission").mkdir(parents=True)
        (base / name / "submission" / "naive.cu").write_text("// a student's file\n")
    if os.geteuid() == 0:
        for name in (f"gemmlab-65534-{host}-{dead.pid}-0000beef", f"gemmlab-{uid}-{host}-{dead.pid}-0000f00d"):
            for p in [base / name, *(base / name).rglob("*")]:
                os.chown(p, 65534, 65534)
    return dirs, {n for n, kept in dirs.items() if not kept}


@needs_nvcc
@pytest.mark.parametrize("command,sig", [pytest.param(c, s, id=f"{c}-{s.name}") for c, s in (
    ("grade-attempt", signal.SIGTERM), ("sweep-task", signal.SIGTERM), ("grade-attempt", signal.SIGINT),
    ("sweep-task", signal.SIGHUP))])
def test_a_stopped_grading_removes_its_scratch_and_reaps_what_killed_ones_left(tmp_path, command, sig):
    cfg_path = course(tmp_path, "local")
    cfg = config.load(cfg_path)
    attempt = dropbox.store_attempt(cfg, "ann", dropbox.collect(cfg, hand_in_dir(tmp_path / "src", "stub"), None))
    if command == "grade-attempt":
        args = ["grade-attempt", "--attempt", attempt]
    else:
        sweep = cfg.sweeps_dir / "final"
        (sweep / "runs" / "run-001").mkdir(parents=True)
        plan = sweep_commands.plan_sweep(cfg)
        (sweep / "plan.json").write_text(json.dumps({"students": plan}))
        todo = sweep_work.sweep_todo(sweep, plan).todo
        (sweep / "runs" / "run-001" / "tasks.json").write_text(json.dumps(todo))
        args = ["sweep-task", "--sweep", sweep, "--run", "run-001", "--task", "0"]
    base = tmp_path / "scratch"
    live = subprocess.Popen(["sleep", "300"])
    marker = tmp_path / "building"
    stand_in_make(tmp_path / "bin", marker, tmp_path / "never")  # the build hangs, as a long one would
    env = dict(os.environ, PATH=f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}", CUDA_VISIBLE_DEVICES="")
    for var in [v for v in env if v.startswith("SLURM_")]:
        env.pop(var)
    try:
        dirs, reaped = _stale_scratch(base, live.pid)
        grading = subprocess.Popen([PYTHON, str(TOOL), "--config", str(cfg_path), *map(str, args)], cwd=ROOT, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            wait_for(lambda: marker.exists() or grading.poll() is not None, 120, "the grading's build", poll=0.05)
            assert grading.poll() is None, grading.communicate()
            left = {p.name for p in base.iterdir()}
            own = {n for n in left if n.startswith(f"gemmlab-{os.getuid()}-{scratch.host()}-{grading.pid}-")}
            assert left == (set(dirs) - reaped) | own and len(own) == 1, (left, dirs)
            assert (base / own.pop() / "submission" / "naive.cu").is_file()
            os.killpg(grading.pid, sig)  # as Slurm signals every process of the job
            out, err = grading.communicate(timeout=60)
        finally:
            if grading.poll() is None:
                os.killpg(grading.pid, signal.SIGKILL)
                grading.wait()
        assert grading.returncode == 128 + sig, (grading.returncode, out, err)
        assert f"{command}: stopped by {sig.name}: its scratch and unfinished results were removed" in err, err
        assert {p.name for p in base.iterdir()} == set(dirs) - reaped  # its own is gone; the rest as they were
        for name in set(dirs) - reaped:
            assert (base / name / "submission" / "naive.cu").is_file(), name
        assert not list(attempt.glob(".grading-tmp-*")) and not (attempt / "grading").exists()
        assert not list((tmp_path / "cache").glob(".tmp-*"))  # a trusted build it had begun
        if command == "sweep-task":
            assert not [p for p in (cfg.sweeps_dir / "final" / "grades").rglob("*") if p.name.startswith(".tmp-")]
            (start,) = (cfg.sweeps_dir / "final" / "runs" / "run-001" / "starts").glob("*.json")
            assert "ended" not in json.loads(start.read_text())  # `sweep-status`: did not finish
    finally:
        live.kill()
        live.wait()


def test_reap_leaves_whatever_is_not_a_dead_gradings_scratch(tmp_path):
    """scratch.reap itself, on names that only look like a grading's."""
    uid, host = os.getuid(), scratch.host()
    dead = subprocess.Popen(["true"])
    dead.wait()
    names = [f"gemmlab-{uid}-{host}-{dead.pid}", f"gemmlab-{uid}-{host}-x{dead.pid}-00ff",
             f"gemmlab-{uid}-{host}-{dead.pid}-00ff-more", f"gemmlab-{uid}0-{host}-{dead.pid}-00ff"]
    for n in names:
        (tmp_path / n).mkdir()
    (tmp_path / f"gemmlab-{uid}-{host}-{dead.pid}-0file").write_text("a file, not a directory\n")
    link = tmp_path / f"gemmlab-{uid}-{host}-{dead.pid}-011ink"
    link.symlink_to(tmp_path / names[0])
    assert scratch.reap(tmp_path) == []
    assert all((tmp_path / n).is_dir() for n in names) and link.is_symlink()
    mine = tmp_path / f"gemmlab-{uid}-{host}-{dead.pid}-00ff"
    mine.mkdir()
    assert scratch.reap(tmp_path) == [mine] and not mine.exists()


WRITER = """import pathlib, sys, time
d, end, i = pathlib.Path(sys.argv[1]), time.monotonic() + float(sys.argv[2]), 0
while time.monotonic() < end:  # as make does: mkdir -p the target's folder, then write the target
    try:
        (d / "build" / "grader").mkdir(parents=True, exist_ok=True)
        (d / "build" / "grader" / f"{i}.o").write_bytes(b"object")
    except FileNotFoundError:  # removed between the two: the next target's mkdir -p makes it again
        pass
    i += 1
    time.sleep(0.01)
"""


class WriterPaced:
    """scratch.remove's clock, with each of its waits ended by the event the wait stands for: the
    writer wrote into d again, or exited. A loaded machine that leaves the writer unscheduled for
    longer than remove's quiet time can then not pass for a writer that is done."""
    monotonic = staticmethod(time.monotonic)

    def __init__(self, writer: subprocess.Popen, d: Path):
        self.writer, self.d = writer, d

    def sleep(self, seconds):
        wait_for(lambda: self.writer.poll() is not None or os.path.lexists(self.d), 60,
                 "the writer's next write into scratch, or its exit", poll=0.005)


def test_a_stopped_gradings_scratch_is_removed_while_its_build_still_writes_into_it(tmp_path, monkeypatch):
    """The build's processes, signalled with the grading, may write into scratch while it is removed:
    scratch.remove outlasts them; where one outlasts its patience, it says so and reap() is left."""
    d = scratch.new(tmp_path)
    t0 = time.monotonic()
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(d), "1.5"])
    wait_for(lambda: (d / "build" / "grader" / "0.o").exists() or writer.poll() is not None, 60,
             "the writer's first object", poll=0.005)
    monkeypatch.setattr(scratch, "time", WriterPaced(writer, d))
    assert scratch.remove(d, patience=60) is True
    assert not d.exists() and writer.poll() is not None and time.monotonic() - t0 >= 1.0
    d = scratch.new(tmp_path)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(d), "600"])  # until it is killed below
    monkeypatch.setattr(scratch, "time", WriterPaced(writer, d))
    try:
        wait_for(lambda: (d / "build" / "grader" / "0.o").exists(), 60, "the writer's first object", poll=0.005)
        assert scratch.remove(d, patience=0.5) is False and d.exists()
    finally:
        writer.kill()
        writer.wait(timeout=60)
    assert scratch.remove(d) is True
