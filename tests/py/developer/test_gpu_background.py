"""tests/gpu_session/background.sh: phases longer than one call on a lent GPU run detached, later calls
wait for them, and a call that lands on a fresh machine says so at once instead of waiting out its time.
A stand-in for tests/gpu_session.sh takes the GPU's place."""
import os
import subprocess
import tarfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "tests/gpu_session/background.sh"

STAND_IN = """#!/usr/bin/env bash
mkdir -p "$OUT"; echo "phase $1 ran" > "$OUT/result.txt"
[ "$1" = slow ] && sleep 4
[ "$1" = broken ] && { echo "phase broken failed"; exit 5; }
echo "phase $1 done"
"""


def call(tmp_path, *args, out="out"):
    env = dict(os.environ, GPU_BG_DIR=str(tmp_path / "bg"), GPU_SESSION_SCRIPT=str(tmp_path / "session.sh"),
               OUT=str(tmp_path / out))
    t0 = time.time()
    p = subprocess.run(["bash", str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=60)
    return p, time.time() - t0


def test_a_run_outlives_its_call_and_the_next_call_collects_it(tmp_path):
    (tmp_path / "session.sh").write_text(STAND_IN)
    p, _ = call(tmp_path, "start", "quick", "slow", "--", "1")
    assert p.returncode == 2, p.stdout + p.stderr  # still running when the first call ends
    assert "still running" in p.stdout and "quick: exit 0" in p.stdout
    p, _ = call(tmp_path, "wait", "30", out="out2")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "slow: exit 0" in p.stdout and "phase slow done" in p.stdout
    with tarfile.open(tmp_path / "out2/background.tar.gz") as t:
        names = t.getnames()
        assert "out/slow/result.txt" in names and "out/quick.log" in names


def test_a_failed_phase_is_the_runs_failure_and_the_next_phases_still_run(tmp_path):
    (tmp_path / "session.sh").write_text(STAND_IN)
    p, _ = call(tmp_path, "start", "broken", "quick", "--", "30")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "broken: exit 5" in p.stdout and "phase broken failed" in p.stdout and "quick: exit 0" in p.stdout


def test_waiting_on_a_fresh_machine_says_so_at_once(tmp_path):
    (tmp_path / "session.sh").write_text(STAND_IN)
    p, seconds = call(tmp_path, "wait", "300")
    assert p.returncode == 3
    assert "no run on this machine" in p.stderr and "Start it again" in p.stderr
    assert seconds < 10
