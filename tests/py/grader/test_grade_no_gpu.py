"""`gemmlab grade` and `gemmlab bench` without a GPU, as CI and the cluster's login nodes see them:
grade still writes results.json (status no_gpu) and gradescope.json and exits with status 3; a bad
course.toml is reported with the key at fault before anything runs."""
import json
import subprocess

import pytest

from support.gpu import HAS_GPU
from support.paths import STUBS

needs_no_gpu = pytest.mark.skipif(HAS_GPU, reason="this machine has a GPU: the no-GPU path is not taken")


def run(grader, *args, cwd=None):
    return subprocess.run([str(grader), *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def registry(grader):
    return json.loads(run(grader, "list", "--json").stdout)["stages"]


@needs_no_gpu
def test_grade_without_gpu_writes_both_files_and_exits_3(grader, root, tmp_path):
    out = run(grader, "grade", "--config", str(root / "course.toml"), "--out", str(tmp_path))
    assert out.returncode == 3, out.stdout + out.stderr
    # run by hand, the hint is the very command run, on a GPU node
    assert "gemmlab grade needs an NVIDIA GPU" in out.stderr
    assert f"srun ... {grader} grade --config {root / 'course.toml'} --out {tmp_path}" in out.stderr

    res = json.loads((tmp_path / "results.json").read_text())
    assert res["schema"] == "gemmlab.results/1"
    assert res["kind"] == "grade"
    assert res["status"] == "no_gpu"
    assert res["environment"]["gpu_available"] is False
    assert res["environment"]["no_gpu_reason"]
    assert res["created"].endswith("Z")
    expected = {(s["name"], v, p) for s in registry(grader) for v in s["variants"] or [""]
                for p in ("float", "double")}
    got = {(r["stage"], r["variant"], r["precision"]) for r in res["results"]}
    assert got == expected
    assert {r["disposition"] for r in res["results"]} == {"no_gpu"}
    assert all(r["bench"] == [] for r in res["results"])
    assert res["score"]["total"] == 0
    assert res["score"]["max"] == 100
    assert {row["disposition"] for row in res["score"]["stages"]} == {"no_gpu"}
    assert all(row["correctness"] == 0 and row["performance"] == 0 for row in res["score"]["stages"])

    gs = json.loads((tmp_path / "gradescope.json").read_text())
    assert "score" not in gs  # no score, not a 0 the submission did not earn
    assert "Not graded: no usable NVIDIA GPU on the grading machine: " in gs["output"]
    # the reason leads with words (gpu_probe.h), CUDA's own text only in parentheses
    assert not res["environment"]["no_gpu_reason"].startswith("cudaGetDeviceCount")
    assert res["environment"]["no_gpu_reason"] in gs["output"]
    assert isinstance(gs["execution_time"], int)
    assert gs["tests"], "one test per stage and precision with points: what is known without a GPU"
    for t in gs["tests"]:
        assert set(t) == {"name", "output", "visibility"}, t  # no score, no maximum
        assert t["output"].startswith("no_gpu")


@needs_no_gpu
def test_grade_records_the_fingerprint_of_the_stage_files(grader, root, tmp_path):
    """results.json `submission` carries what grader/scripts/fingerprint.py --json wrote, as it is."""
    fp_file = tmp_path / "fingerprint.json"
    made = subprocess.run(["python3", str(root / "grader" / "scripts" / "fingerprint.py"), str(STUBS),
                           "--json", str(fp_file)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    fp = json.loads(fp_file.read_text())
    out = run(grader, "grade", "--config", str(root / "course.toml"), "--submission", str(STUBS),
              "--fingerprint", str(fp_file), "--out", str(tmp_path))
    assert out.returncode == 3, out.stdout + out.stderr
    sub = json.loads((tmp_path / "results.json").read_text())["submission"]
    assert sub["name"] == "student"
    assert (sub["fingerprint"], sub["files"], sub["scheme"]) == (fp["fingerprint"], fp["files"], fp["scheme"])
    fp_file.write_text('{"files": {}}')
    out = run(grader, "grade", "--config", str(root / "course.toml"), "--fingerprint", str(fp_file),
              "--out", str(tmp_path / "bad"))
    assert out.returncode not in (0, 3) and "holds no fingerprint" in out.stderr, out.stdout + out.stderr


def test_grade_without_a_rubric_is_refused_before_anything_runs(grader, tmp_path):
    # The rubric lives in course.toml only: without it there is nothing to score against.
    out = run(grader, "grade", "--config", str(tmp_path / "absent.toml"), "--out", str(tmp_path))
    assert out.returncode == 2
    assert "grading needs the rubric of every stage; missing [scoring.stages.naive]" in out.stderr, out.stderr
    assert not (tmp_path / "results.json").exists()


def test_bad_config_names_the_key(grader, tmp_path):
    bad = tmp_path / "course.toml"
    bad.write_text('[scoring.stages.tiled]\ntarget_pct_reference = "fast"\n')
    out = run(grader, "grade", "--config", str(bad), "--out", str(tmp_path))
    assert out.returncode == 2
    assert '[scoring.stages.tiled] target_pct_reference must be a number between 0 and 1000' in out.stderr
    assert 'got "fast"' in out.stderr
    assert not (tmp_path / "results.json").exists()
    bad.write_text("[bench]\nmax_secs = 1\n")
    out = run(grader, "bench", "--config", str(bad))
    assert out.returncode == 2
    assert "unknown key 'max_secs'" in out.stderr and "max_seconds" in out.stderr


@needs_no_gpu
def test_bench_without_gpu_exits_3(grader, root):
    out = run(grader, "bench", "--config", str(root / "course.toml"), "--shapes", "256")
    assert out.returncode == 3
    assert "gemmlab bench needs an NVIDIA GPU" in out.stderr
    assert "make submit" not in out.stderr  # it does not do what bench does


def test_bench_rejects_a_bad_shape_list(grader, root):
    out = run(grader, "bench", "--config", str(root / "course.toml"), "--shapes", "4096,oops")
    assert out.returncode == 2  # the arguments are checked before the machine
    assert "oops" in out.stderr
