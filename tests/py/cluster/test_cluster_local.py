"""The hand-in and sweep flows on the local path ([cluster] scheduler = "local": grading on this
machine, chosen on purpose): a hand-in is graded right away, a sweep runs detached from the terminal
that started it, and each says first where it grades; no_gpu on a GPU-less machine. The GPU is
hidden from these jobs where there is one (CUDA_VISIBLE_DEVICES=): the flow is what is tested here;
the same job scripts grade on real GPUs in tests/gpu_session/cluster_gpu_jobs.sh (gpu_session.sh cluster).
Needs nvcc (the CUDA toolkit); the first run builds the trusted grader once (content-keyed cache
in build/cluster-tests/)."""
import datetime as dt
import json
import os
import re
import shutil
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from support.cluster_helpers import (CACHE, folder, PYTHON, ROOT, TOOL, check_gradebook, config, hand_in_dir, make_class,
                                     mark_graded, read_gradebook, stand_in_make, wait_for, write_config)
from support.cluster_helpers import tool as cluster_tool

pytestmark = pytest.mark.skipif(not (shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc")),
                                reason="needs nvcc (the CUDA toolkit) to build submissions")
NO_GPU = dict(os.environ, CUDA_VISIBLE_DEVICES="")


def tool(*args, **kw):
    return cluster_tool(*args, env=NO_GPU, **kw)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    base = tmp_path_factory.mktemp("local-course")
    due = dt.datetime.now(dt.timezone.utc).replace(microsecond=0) + dt.timedelta(hours=1)
    CACHE.mkdir(parents=True, exist_ok=True)
    return base, write_config(base, "local", due), due


def test_submit_grades_right_away(course):
    base, cfg_path, _ = course
    student = hand_in_dir(base / "me" / "student", "stub")
    r = tool(cfg_path, "submit", "--student-dir", student)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "submit: grading now on this machine ([cluster] scheduler = \"local\"): " \
           f"{socket.gethostname()}, no GPU (CUDA_VISIBLE_DEVICES hides them)" in r.stdout, r.stdout
    cfg = config.load(cfg_path)
    user = json.loads(next((cfg.dropbox_dir).glob("*/attempt-0001-*/manifest.json")).read_text())["user"]
    attempt = next((folder(cfg, user)).glob("attempt-0001-*"))
    outcome = json.loads((attempt / "grading" / "outcome.json").read_text())
    assert outcome["status"] == "no_gpu", outcome
    assert not list(attempt.glob(".grading-tmp-*"))
    # the same files again: stored (its time counts), and graded again, since #1's grading found no GPU
    # and says nothing of the files (a grade that stands would not be repeated: test_cluster_fair_use.py)
    r = tool(cfg_path, "submit", "--student-dir", student)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "not queued" not in r.stdout and "grading now" in r.stdout, r.stdout
    # a changed hand-in is stored beside the first, which is left as it was
    before = (attempt / "manifest.json").read_text()
    (student / "naive.cu").write_text((student / "naive.cu").read_text() + "\n// changed\n")
    r = tool(cfg_path, "submit", "--student-dir", student)
    assert r.returncode == 0 and "grading now" in r.stdout, r.stdout + r.stderr
    assert len(list((folder(cfg, user)).glob("attempt-*"))) == 3
    assert (attempt / "manifest.json").read_text() == before
    r = tool(cfg_path, "status")
    assert r.returncode == 0 and "#1" in r.stdout and "#2" in r.stdout and "not queued" not in r.stdout, r.stdout
    assert r.stdout.splitlines()[-1].startswith("  #3") and r.stdout.rstrip().endswith("<- counts"), r.stdout
    r = tool(cfg_path, "results")
    assert r.returncode == 0 and "attempt #3" in r.stdout, r.stdout + r.stderr


def test_submit_refuses_extra_and_missing_files(course):
    base, cfg_path, _ = course
    d = hand_in_dir(base / "bad" / "student", "stub")
    (d / "helpers.cuh").write_text("// a helper the grader would never see\n")
    (d / "naive.cu").unlink()
    r = tool(cfg_path, "submit", "--student-dir", d)
    assert r.returncode == 1
    assert "missing" in r.stderr and "naive.cu" in r.stderr and "helpers.cuh" in r.stderr


def test_submit_stores_a_hand_in_with_a_file_that_does_not_compile_and_grades_the_rest(course):
    """One stage file that does not compile costs its own stages only: the hand-in is stored (no
    question asked: near a deadline a prompt could cost the hand-in), with a warning naming the file,
    the stage that will score 0 and the compiler's first error (file:line); its grading job builds
    every other stage and records tiled as `rejected` with that error, not build_failed."""
    base, cfg_path, _ = course
    cfg = config.load(cfg_path)
    before = set(cfg.dropbox_dir.glob("*/attempt-*"))
    broken = hand_in_dir(base / "broken-one" / "student", "broken")
    r = tool(cfg_path, "submit", "--student-dir", broken)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "submit: stored" in r.stdout, r.stdout
    assert re.search(r"submit: \S*tiled\.cu does not compile; the compiler says:", r.stderr), r.stderr
    assert re.search(r"WARNING: stage tiled will be rejected and score 0 "
                     r"\(first error: \S*tiled\.cu:\d+: error: ", r.stderr), r.stderr
    assert "every other stage is graded" in r.stderr
    (attempt,) = set(cfg.dropbox_dir.glob("*/attempt-*")) - before
    assert (attempt / "files" / "tiled.cu").read_text() == (broken / "tiled.cu").read_text()
    outcome = json.loads((attempt / "grading" / "outcome.json").read_text())
    assert outcome["status"] == "no_gpu", outcome
    results = json.loads((attempt / "grading" / "results.json").read_text())["results"]
    tiled = [x for x in results if x["stage"] == "tiled"]
    assert tiled and all(x["disposition"] == "rejected" for x in tiled)
    assert all(re.search(r"tiled\.cu does not compile: \S*tiled\.cu:\d+: error: ", x["problem"]) for x in tiled)
    assert {x["disposition"] for x in results if x["stage"] != "tiled"} == {"no_gpu"}


def test_local_sweep_builds_a_complete_gradebook(course):
    base, cfg_path, due = course
    cfg = config.load(cfg_path)
    for d in (cfg.dropbox_dir.iterdir() if cfg.dropbox_dir.is_dir() else []):  # only the synthetic class
        shutil.rmtree(d)
    kinds = make_class(cfg, base, 8, due)
    sweep = cfg.sweeps_dir / "local"
    first_sweep(cfg_path, base, sweep)
    first = read_gradebook(sweep)
    check_gradebook(first, kinds)
    assert "8 student(s)" in (sweep / "summary.md").read_text()
    # again, once every node has a GPU: a grade is kept, a no_gpu one is graded again (the test marks
    # all but s01's as graded on a GPU; this machine gives no_gpu only)
    graded = set(mark_graded(sweep, [s for s in kinds if s != "s01"]))
    assert len(graded) == sum(k != "missing" for k in kinds.values()) - 1
    r = tool(cfg_path, "sweep", "--name", "local")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "to grade: 1 (graded again, their earlier result: no_gpu: 1)" in r.stdout, r.stdout
    assert f"current (graded under this rubric and grader): {len(graded)}" in r.stdout, r.stdout
    (old,) = (sweep / "grades" / "s01").glob("*.replaced-*")
    assert json.loads((old / "outcome.json").read_text())["status"] == "no_gpu"
    rows = read_gradebook(sweep)
    check_gradebook(rows, kinds, graded=graded)
    assert not [p for p in (sweep / "grades").glob("*/*.replaced-*") if p.parent.name != "s01"]
    # regrading one student replaces their result and keeps the old one beside it
    r = tool(cfg_path, "sweep", "--name", "local", "--student", "s02", "--force")
    assert r.returncode == 0 and "to grade: 1 (forced (--force): 1)" in r.stdout, r.stdout + r.stderr
    assert len(list((sweep / "grades" / "s02").glob("*.replaced-*"))) == 1
    after = read_gradebook(sweep)  # s02 is as the first sweep graded it, everyone else as before
    assert [r for r in after if r["student"] != "s02"] == [r for r in rows if r["student"] != "s02"]
    assert [r for r in after if r["student"] == "s02"] == [r for r in first if r["student"] == "s02"]
    r = tool(cfg_path, "sweep", "--name", "local", "--student", "nobody")
    assert r.returncode == 1 and "no such student" in r.stderr


def first_sweep(cfg_path, base: Path, sweep: Path):
    """`make sweep` in a terminal that is closed while the sweep grades (its first build held by a
    stand-in for make until the test has looked): the sweep goes on, `sweep-status` shows it running
    on this machine, a second sweep is refused meanwhile; released, it ends with the gradebook."""
    cfg = config.load(cfg_path)
    held, release = base / "held", base / "release"
    stand_in_make(base / "bin", held, release, hold_under=cfg.scratch_dir)
    env = dict(NO_GPU, PATH=f"{base / 'bin'}{os.pathsep}{os.environ['PATH']}")
    out = base / "terminal.out"
    with open(out, "w") as terminal:
        parent = subprocess.Popen([PYTHON, str(TOOL), "--config", str(cfg_path), "sweep", "--name", "local"], cwd=ROOT,
                                  env=env, stdout=terminal, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for(lambda: held.exists() or parent.poll() is not None, 600, "the sweep's first build", poll=0.1)
        assert parent.poll() is None, out.read_text()
        os.killpg(parent.pid, signal.SIGHUP)  # the terminal is closed
        assert parent.wait(timeout=60) == 0, out.read_text()
    finally:
        if parent.poll() is None:
            os.killpg(parent.pid, signal.SIGKILL)
    said = out.read_text()
    assert f'sweep local: grading on this machine ([cluster] scheduler = "local" in {cfg_path}): ' \
           f"{socket.gethostname()}, no GPU (CUDA_VISIBLE_DEVICES hides them)" in said, said
    assert "stopped by SIGHUP: no longer following; the sweep goes on" in said, said
    run = sorted((sweep / "runs").glob("run-*"))[-1]
    grader = json.loads((run / "local.json").read_text())["pid"]
    try:
        os.kill(grader, 0)  # still grading, with no terminal
        status = tool(cfg_path, "sweep-status", "--name", "local")
        assert status.returncode == 0 and "running 1, queued 6" in status.stdout, status.stdout
        assert f"local grading: grading since {json.loads((run / 'local.json').read_text())['started']} on " \
               f"{socket.gethostname()}, no GPU" in status.stdout, status.stdout
        assert f"pid {grader}; log {run / 'local.log'}" in status.stdout, status.stdout
        again = tool(cfg_path, "sweep", "--name", "local")
        assert again.returncode == 1, again.stdout + again.stderr
        assert f"sweep 'local' is still running ({run.name}): it is grading since" in again.stderr, again.stderr
        assert f"on this machine, pid {grader}: stop it with `kill {grader}`" in again.stderr, again.stderr
    finally:
        release.touch()
    follow = tool(cfg_path, "sweep-status", "--name", "local", "--follow", "0.2")
    assert follow.returncode == 0, follow.stdout + follow.stderr
    status = tool(cfg_path, "sweep-status", "--name", "local").stdout
    assert "done 7, running 0, queued 0, failed 0" in status and "finished at " in status and "(exit 0)" in status, status
    log = (run / "local.log").read_text()
    assert "[7/7]" in log and "gradebook: 8 student(s)" in log, log
