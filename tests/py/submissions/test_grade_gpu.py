"""GPU behaviour of `gemmlab bench` and `gemmlab grade` (marked `gpu`: skipped without one).

- the reference solutions earn full marks, in under a minute, every timed call verified, every time the judge's;
- two benchmarks of the same stage at 4096³ agree within 2%;
- a stage that leaves its work running on a side stream is failed (its done word came first);
- a stage that spends a millisecond on the host before launching is timed by its GPU work;
- a stage that replays a cached answer gets no credit (failed or rejected);
- the report team's sweep call (many shapes, --max-seconds) stays short and writes every shape.

Each builds what it needs with the Makefile into the BUILD directory of the grader under test.
"""
import json
import subprocess
import time
from pathlib import Path

import pytest

from support import gpu_prebuild
from support.gpu import gpu
from support.paths import ROOT

GRADE_SECONDS_LIMIT = 60     # the budget for a full grade of one submission on one H100
REPEAT_TOLERANCE = 0.02      # two benchmarks of the same stage agree within 2%
BUILD_TIMEOUT = 3600


def build_grader(grader, submission):
    """The grader binary for `submission` (a directory laid out like student/), built by make."""
    build = Path(grader).parent.parent
    sub_dir = str((ROOT / submission).resolve())
    if submission == "reference":
        gpu_prebuild.result("reference")  # built in the background while the GPU tests before these ran
    proc = subprocess.run(["make", "--no-print-directory", "-j4", f"BUILD={build}", f"SUBMISSION={sub_dir}", "grader"],
                          cwd=ROOT, capture_output=True, text=True, timeout=BUILD_TIMEOUT)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    cksum = subprocess.run(["cksum"], input=sub_dir.encode(), capture_output=True, check=True).stdout.split()[0]
    path = build / f"sub-{Path(sub_dir).name}-{cksum.decode()}" / "gemmlab"
    assert path.exists(), path
    return path


def run(grader, *args, timeout=600):
    return subprocess.run([str(grader), *args, "--no-color"], capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout)


def bench_entry(report, stage, precision="float", variant=""):
    for r in report["results"]:
        if (r["stage"], r["variant"], r["precision"]) == (stage, variant, precision):
            return r
    raise AssertionError(f"no result for {stage}/{variant} {precision}")


@gpu
def test_grade_of_the_reference_gives_full_marks_within_a_minute(grader, tmp_path):
    ref = build_grader(grader, "reference")
    t0 = time.time()
    out = run(ref, "grade", "--config", str(ROOT / "course.toml"), "--out", str(tmp_path))
    seconds = time.time() - t0
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-3000:]
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["status"] == "graded"
    rows = {(s["stage"], s["precision"]): s for s in res["score"]["stages"]}
    short = [f"{k}: {v['correctness']}+{v['performance']} of {v['correctness_max']}+{v['performance_max']} "
             f"({v['pct_cublas']:.1f}% of cuBLAS; {v['note']})" for k, v in rows.items()
             if v["correctness"] + v["performance"] < v["correctness_max"] + v["performance_max"]]
    assert not short, "the reference must earn full marks:\n" + "\n".join(short)
    # extra credit (the tensor stage by default) adds to the total, not to the 100-point maximum
    extra = sum(v["correctness_max"] + v["performance_max"] for v in rows.values() if v["extra_credit"])
    assert res["score"]["max"] == 100
    assert res["score"]["total"] == pytest.approx(100 + extra, rel=1e-9)
    for r in res["results"]:
        assert r["disposition"] == "passed", (r["stage"], r["variant"], r["precision"], r["problem"])
        for b in r["bench"]:
            # every timed call, in full, and the sizing call of the first interval when it was not kept
            assert b["verified"] == b["repetitions"] + (1 if b["calls_per_interval"] > 1 else 0), b
            assert b["repetitions"] == b["intervals"] * b["calls_per_interval"], b
            assert b["timed_by"] == "judge" and b["overhead_ms"] > 0, b
    for prec in ("float", "double"):
        assert res["device"][prec]["timing"] == "judge"
        for b in res["baselines"][prec]:
            assert b["naive_gflops"] > 0 and b["cublas_gflops"] > b["naive_gflops"]
            # cuBLAS is timed like every stage: the judge's interval less the calibration (docs/timing.md)
            t = b["cublas_timing"]
            assert t["timed_by"] == "judge", t
            assert t["judge_ms"] > t["time_ms"] > 0.9 * t["event_ms"], t
    assert seconds <= GRADE_SECONDS_LIMIT, f"grade took {seconds:.1f} s (budget {GRADE_SECONDS_LIMIT} s)"
    gs = json.loads((tmp_path / "gradescope.json").read_text())
    assert gs["score"] == pytest.approx(100 + extra, rel=1e-9)


@gpu
def test_naive_earns_no_performance_points(grader, tmp_path):
    """The student handout (naive complete, stubs elsewhere) scores 0: naive itself has no points (at
    the smallest scoring shape: so at every size)."""
    config = gpu_prebuild.smallest_scoring_shape(ROOT / "course.toml", tmp_path)
    out = run(grader, "grade", "--config", str(config), "--out", str(tmp_path), "--no-reference")
    assert out.returncode == 0, out.stdout[-4000:]
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["score"]["total"] == 0
    naive = bench_entry(res, "naive")
    assert 0.9 < naive["bench"][0]["x_naive"] < 1.1  # the same kernel as the baseline


@gpu
def test_repeated_bench_agrees_within_2_percent(grader, tmp_path):
    """Two processes, one after the other: the reference reuse stage at 4096³ and cuBLAS at 4096³
    and 2048³ (where its host-side work once moved it by up to 10% between processes)."""
    ref = build_grader(grader, "reference")
    runs = []
    for i in range(2):
        path = tmp_path / f"bench{i}.json"
        out = run(ref, "bench", "--stage", "reuse", "--prec", "float", "--shapes", "4096,2048", "--json", str(path))
        assert out.returncode == 0, out.stdout[-4000:]
        runs.append(json.loads(path.read_text()))
    a, b = (bench_entry(r, "reuse")["bench"][0]["gflops"] for r in runs)
    assert abs(a - b) / max(a, b) <= REPEAT_TOLERANCE, (a, b)
    for shape in range(2):
        ca, cb = (r["baselines"]["float"][shape]["cublas_gflops"] for r in runs)
        assert abs(ca - cb) / max(ca, cb) <= REPEAT_TOLERANCE, (shape, ca, cb)
    for r in runs:
        t = bench_entry(r, "reuse")["bench"][0]
        assert t["spread_pct"] < 2.0 and t["verified"] == t["repetitions"] + (1 if t["calls_per_interval"] > 1 else 0)


@gpu
def test_work_left_on_a_side_stream_fails_while_timed(grader, tmp_path):
    """The call's done word follows it on p.stream; the kernel on the stage's own stream is still
    writing C when the judge samples it (docs/timing.md)."""
    sub = build_grader(grader, "tests/gallery/side_stream")
    path = tmp_path / "bench.json"
    out = run(sub, "bench", "--stage", "reuse", "--prec", "float", "--shapes", "2048", "--json", str(path))
    assert out.returncode == 1, out.stdout[-4000:]
    r = bench_entry(json.loads(path.read_text()), "reuse")
    assert r["check_disposition"] == "passed"
    assert r["disposition"] == "failed", r
    assert "unwritten" in r["problem"], r["problem"]


@gpu
def test_host_side_work_before_the_launch_is_not_the_call(grader, tmp_path):
    """A millisecond on the host before each launch: the runner arms the call before the judge starts
    its clock, so the host time costs nothing, and buys nothing either: the inputs do not exist yet."""
    sub = build_grader(grader, "tests/gallery/host_side_work")
    path = tmp_path / "bench.json"
    out = run(sub, "bench", "--stage", "reuse", "--prec", "float", "--shapes", "1024", "--json", str(path))
    assert out.returncode == 0, out.stdout[-4000:]
    t = bench_entry(json.loads(path.read_text()), "reuse")["bench"][0]
    assert t["disposition"] == "passed", t
    assert t["timed_by"] == "judge", t
    assert t["time_ms"] < t["event_ms"] + 0.5, t  # not the millisecond
    assert 0.7 < t["x_naive"] < 1.4, t


@gpu
def test_cached_answer_gets_no_credit(grader, tmp_path):
    sub = build_grader(grader, "tests/gallery/cached_answer")
    path = tmp_path / "bench.json"
    out = run(sub, "bench", "--stage", "reuse", "--prec", "float", "--shapes", "2048", "--json", str(path))
    assert out.returncode == 1, out.stdout[-4000:]
    r = bench_entry(json.loads(path.read_text()), "reuse")
    assert r["check_disposition"] == "passed"
    assert r["disposition"] in ("failed", "rejected"), r
    assert "while timed" in r["problem"]


@gpu
def test_report_sweep_is_short_and_complete(grader, tmp_path):
    shapes = ["256", "512", "1024", "2048", "4096", "8192"]
    path = tmp_path / "sweep.json"
    t0 = time.time()
    out = run(grader, "bench", "--stage", "naive", "--prec", "double", "--shapes", ",".join(shapes),
              "--max-seconds", "0.5", "--json", str(path))
    assert out.returncode == 0, out.stdout[-4000:]
    assert time.time() - t0 < 180
    r = bench_entry(json.loads(path.read_text()), "naive", "double")
    assert [b["shape"]["M"] for b in r["bench"]] == [int(s) for s in shapes]
    assert all(b["disposition"] == "passed" and b["repetitions"] >= 3 for b in r["bench"])
