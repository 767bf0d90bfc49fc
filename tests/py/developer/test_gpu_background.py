"""tests/gpu_session/background.sh: phases longer than one call on a lent GPU run detached, later calls
wait for them, and a call that lands on a fresh machine says so at once instead of waiting out its time.
A stand-in for tests/gpu_session.sh takes the GPU's place; its slow phase runs until the test lets it
end (a file), so that what a call finds does not hang on how fast a loaded machine is."""
import os
import subprocess
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "tests/gpu_session/background.sh"

STAND_IN = """#!/usr/bin/env bash
mkdir -p "$OUT"; echo "phase $1 ran" > "$OUT/result.txt"
[ "$1" = slow ] && while [ ! -e "$SLOW_MAY_END" ]; do sleep 0.1; done
[ "$1" = broken ] && { echo "phase broken failed"; exit 5; }
echo "phase $1 done"
"""


def call(tmp_path, *args, out="out"):
    """background.sh with these arguments; its waits are the test's to choose, the 900 s only bound a hang."""
    env = dict(os.environ, GPU_BG_DIR=str(tmp_path / "bg"), GPU_SESSION_SCRIPT=str(tmp_path / "session.sh"),
               OUT=str(tmp_path / out), SLOW_MAY_END=str(tmp_path / "slow-may-end"))
    return subprocess.run(["bash", str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=900)


def test_a_run_outlives_its_call_and_the_next_call_collects_it(tmp_path):
    (tmp_path / "session.sh").write_text(STAND_IN)
    try:
        p = call(tmp_path, "start", "quick", "slow", "--", "1")
        assert p.returncode == 2, p.stdout + p.stderr  # still running when the first call ends (slow waits for the test)
        assert "still running" in p.stdout
    finally:
        (tmp_path / "slow-may-end").touch()  # (the detached run ends, whatever happened above)
    p = call(tmp_path, "wait", "600", out="out2")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "quick: exit 0" in p.stdout and "slow: exit 0" in p.stdout and "phase slow done" in p.stdout
    with tarfile.open(tmp_path / "out2/background.tar.gz") as t:
        names = t.getnames()
        assert "out/slow/result.txt" in names and "out/quick.log" in names


def test_a_failed_phase_is_the_runs_failure_and_the_next_phases_still_run(tmp_path):
    (tmp_path / "session.sh").write_text(STAND_IN)
    p = call(tmp_path, "start", "broken", "quick", "--", "600")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "broken: exit 5" in p.stdout and "phase broken failed" in p.stdout and "quick: exit 0" in p.stdout


def test_waiting_on_a_fresh_machine_says_so_at_once(tmp_path):
    (tmp_path / "session.sh").write_text(STAND_IN)
    p = call(tmp_path, "wait", "100000")  # a call that waited it out would run past call()'s bound of a hang
    assert p.returncode == 3
    assert "no run on this machine" in p.stderr and "Start it again" in p.stderr
