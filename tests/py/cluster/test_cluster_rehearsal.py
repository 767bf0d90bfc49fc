"""The semester rehearsal (tests/semester_rehearsal.py) as a test: a class of seven through a term on
the private test cluster (root and Slurm; else on this machine, the local path) — hand-ins around the
deadline, an extension, a file that does not compile, an attempt edited after the deadline and
settled, an e-mailed hand-in entered with its time, a node failure mid-sweep, a rubric change rescored,
an override, a regrade, the exports and the published grades — ending in the gradebook the course's
rules say it must be. Without a GPU every grade is no_gpu, and the expected gradebook says so."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SLURM = os.geteuid() == 0 and all(shutil.which(c) for c in ("slurmctld", "slurmd", "sbatch", "munged"))

pytestmark = pytest.mark.skipif(
    subprocess.run(["sh", "-c", "command -v nvcc || test -x /usr/local/cuda/bin/nvcc"], capture_output=True).returncode != 0,
    reason="needs nvcc (the CUDA toolkit) to build the class's hand-ins")


def test_a_term_ends_in_the_gradebook_the_rules_say(tmp_path):
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")  # the flow, not the speeds: gpu_session.sh rehearsal grades
    r = subprocess.run([sys.executable, str(ROOT / "tests" / "semester_rehearsal.py"), "--scheduler",
                        "slurm" if SLURM else "local", "--work", str(tmp_path / "course")],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0 and "rehearsal: PASSED" in r.stdout, r.stdout[-6000:] + r.stderr[-3000:]
    for line in ("the sweep's process died" if not SLURM else "killed and requeued mid-grade",
                 "settle         fay", "override       ben", "enter          gus", "publish-grades"):
        assert line in r.stdout, line
