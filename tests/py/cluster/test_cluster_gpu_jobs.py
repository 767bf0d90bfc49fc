"""tests/gpu_session/cluster_gpu_jobs.sh without a GPU (a dry run, as CI has no GPU): the batch scripts `make
sweep` and `make submit` render are queued through the stand-in sbatch (tests/slurm/fake_slurm.py)
and run with Slurm's job environment, one (absent) GPU per job; every grade is no_gpu. On a GPU
machine the script itself is the test (tests/gpu_session.sh cluster). Needs nvcc for the builds."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from support.cluster_helpers import ROOT
from support.gpu import HAS_GPU

pytestmark = [
    pytest.mark.skipif(not (shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc")),
                       reason="needs nvcc (the CUDA toolkit) to build submissions"),
    pytest.mark.skipif(HAS_GPU, reason="a GPU is here: run tests/gpu_session/cluster_gpu_jobs.sh itself (gpu_session.sh cluster)"),
]


def test_the_gpu_job_script_runs_the_rendered_scripts_with_slurms_environment(tmp_path):
    out = tmp_path / "out"
    r = subprocess.run(["bash", str(ROOT / "tests" / "gpu_session" / "cluster_gpu_jobs.sh"), "all", "--class", "mini"],
                       env=dict(os.environ, OUT=str(out), PYTHON=sys.executable), capture_output=True, text=True,
                       timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    report = json.loads((out / "cluster-gpu-jobs.json").read_text())
    assert report["failures"] == [] and not report["real"]
    rows = {row["student"]: row for row in report["class"]["rows"]}
    # a hand-in whose tiled.cu does not compile is graded like the others (tiled rejected), not build_failed
    assert rows["broken"]["status"] == "no_gpu" and rows["stub1"]["status"] == "no_gpu"
    # each job ran with the GPU it was given, as an array task of the sweep's array job
    runs = [json.loads(line) for line in (out / "fake-slurm-runs.jsonl").read_text().splitlines()]
    tasks = [x for x in runs if x.get("array_job_id") == int(report["class"]["array_job"])]
    assert sorted(x["task"] for x in tasks) == [0, 1, 2] and {x["gpu"] for x in tasks} <= {"0", "1"}
    for row in rows.values():
        task = next(x for x in tasks if str(x["job_id"]) == row["job"])
        assert row["visible"] == task["gpu"] and row["task"] == str(task["task"]), (row, task)
    # the scripts it ran are the rendered ones, with the options the course asks
    script = (out / "sweep-array.sbatch").read_text()
    for line in ("#SBATCH --gres=gpu:1", "#SBATCH --requeue", "#SBATCH --array=0-2%2", "sweep-task"):
        assert line in script, line
    assert "grade-attempt --attempt" in (out / "grade-attempt.sbatch").read_text()
    pair = report["pair"]
    assert pair["gpus"] == ["0", "1"] and pair["overlap_seconds"] > 0
    assert set(pair["jobs"]) == {"lone0", "lone1", "pair0", "pair1"}
    assert "nothing was timed (no GPU)" in r.stdout
