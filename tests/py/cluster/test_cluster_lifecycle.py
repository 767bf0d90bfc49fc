"""A grade's lifecycle under course states: a sweep grades an attempt once, keeps a grade that is current
for the published rubric and grader, rescores it from its stored speeds when only points, targets or
weights changed (the trusted build's gemmlab-config --rescore: the grader's own arithmetic, no GPU),
and grades it again when what is measured changed — saying which and why, never "already graded".
A sweep under unpublished edits, or before the deadline, is refused and leaves nothing behind.

The grading on a GPU is the one part stood in for here (CI has no GPU): the stand-in writes a
results.json in the grader's own layout with speeds it chose, scored by the same gemmlab-config; the
H100 rehearsal (tests/semester_rehearsal.py) grades for real."""
import argparse
import csv
import datetime as dt
import json
import subprocess

import pytest

from support import staff_class
import config  # noqa: E402  (cluster/, on sys.path through staff_class)
import course_state  # noqa: E402
import gemmlab_cluster  # noqa: E402
from commands import course as course_commands, sweep as sweep_commands  # noqa: E402
import grading  # noqa: E402

pytestmark = pytest.mark.skipif(
    subprocess.run(["sh", "-c", "command -v nvcc || test -x /usr/local/cuda/bin/nvcc"], capture_output=True).returncode != 0,
    reason="needs nvcc (the CUDA toolkit) to build gemmlab-config, which validates and rescores")

SHAPES = ("4096x4096x4096", "2048x2048x2048")
PAST = dt.datetime(2026, 1, 5, 23, 59, tzinfo=dt.timezone.utc)  # the course's deadline has passed when it sweeps  # the repository's graded shapes (course.toml [[scoring.shapes]])


def timing(dims, gflops):
    m, n, k = map(int, dims.split("x"))
    return {"shape": {"M": m, "N": n, "K": k}, "disposition": "passed", "problem": "", "gflops": gflops,
            "cublas_item": "cublas"}


def measured(speed: float, course_toml) -> dict:
    """What a grade measured: reuse at `speed` GFLOPS in both precisions next to naive = 100, cuBLAS = 1000
    and the reference's reuse = 1000 at each shape the course grades; every other stage not implemented."""
    import tomllib
    scoring = tomllib.loads(course_toml.read_text())["scoring"]
    shapes = [s["shape"] for s in scoring["shapes"]]
    stages = staff_class.STAGES  # one stage file per stage of the registry
    results = []
    for prec in ("float", "double"):
        for st in stages:
            if st == "reuse":
                results.append({"stage": st, "variant": "", "precision": prec, "disposition": "passed",
                                "check_disposition": "passed", "problem": "",
                                "bench": [timing(d, speed) for d in shapes]})
            else:
                results.append({"stage": st, "variant": "", "precision": prec, "disposition": "not_implemented",
                                "problem": "the stage is not implemented", "bench": []})
    base = [{"shape": timing(d, 0)["shape"], "naive_gflops": 100.0, "cublas_gflops": 1000.0} for d in shapes]
    listed = [{"shape": s["shape"], "weight": s.get("weight", 1)} for s in scoring["shapes"]]
    return {"schema": "gemmlab.results/1", "kind": "grade", "status": "graded", "created": "2026-12-05T10:00:00Z",
            "environment": {"gpu": {"name": "SYNTHETIC GPU"}}, "results": results,
            "baselines": {"float": base, "double": base},
            "reference": [{"stage": "reuse", "variant": "", "precision": p, "bench": [timing(d, 1000) for d in shapes]}
                          for p in ("float", "double")],
            "config": {"shapes": listed, "max_call_ms_at_peak": scoring.get("max_call_ms_at_peak", 0)},
            "targets": {"gpu": "SYNTHETIC GPU", "shapes": {p: {"shapes": listed, "why": ""} for p in ("float", "double")}}}


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A published course of three students who handed in on time, and a stand-in for the GPU grade
    whose results are scored by the trusted build's gemmlab-config, like a real grade's."""
    path = staff_class.write_config(tmp_path, roster=["alice", "bob", "carol"])
    path.write_text(path.read_text().replace(f"due = {staff_class.DUE.isoformat()}", f"due = {PAST.isoformat()}"))
    assert gemmlab_cluster.main(["--config", str(path), "setup"]) == 0
    assert gemmlab_cluster.main(["--config", str(path), "publish"]) == 0
    cfg = config.load(path)
    for s in ("alice", "bob", "carol"):
        staff_class.hand_in(cfg, tmp_path, s, {}, when=PAST - staff_class.D)
    checker = course_commands.validate_course(cfg, cfg.trusted_cache_dir / "trusted-build.log").checker
    graded = []

    def stand_in_grade(gcfg, files, out, meta, say=print):
        doc = measured(500.0, gcfg.path)
        (out / "measured.json").write_text(json.dumps(doc))
        r = subprocess.run([str(checker), "--config", str(gcfg.path), "--rescore", str(out / "measured.json"),
                            "--out", str(out)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        score = json.loads((out / "results.json").read_text())["score"]
        graded.append(meta["student"])
        return grading.finish_outcome(out, dict(meta, schema=grading.OUTCOME_SCHEMA, status="graded", node="synthetic",
                                         score={"total": score["total"], "max": score["max"]},
                                         message=f"graded: {score['total']} / {score['max']}"))
    monkeypatch.setattr(grading, "grade_into", stand_in_grade)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)

    def in_this_process(cfg, sweep, run, count):  # a local sweep's grader, here rather than detached
        return sweep_commands.cmd_sweep_local(cfg, argparse.Namespace(sweep=str(sweep), run=run.name))
    monkeypatch.setattr(sweep_commands, "sweep_here", in_this_process)
    return path, cfg, graded


def sweep(path, capsys, *extra):
    code = gemmlab_cluster.main(["--config", str(path), "sweep", *extra])
    out = capsys.readouterr()
    return code, out.out, out.err


def book(cfg, name="final"):
    with open(cfg.sweeps_dir / name / "gradebook.csv") as f:
        return {r["student"]: r for r in csv.DictReader(f)}


def edit(path, section, old, new):
    text = path.read_text()
    start = text.index(section)
    assert old in text[start:], old
    path.write_text(text[:start] + text[start:].replace(old, new, 1))


def test_a_grade_is_current_rescored_or_graded_again_as_the_state_says(course, capsys):
    path, cfg, graded = course
    code, out, err = sweep(path, capsys)
    assert code == 0, out + err
    assert "to grade: 3 (not graded in this sweep yet: 3); to rescore without a GPU: 0; current" in out, out
    first = book(cfg)
    assert {r["status"] for r in first.values()} == {"graded"} and len(graded) == 3
    state1 = course_state.current(cfg)
    outcome = json.loads(next((cfg.sweeps_dir / "final" / "grades" / "alice").glob("*/outcome.json")).read_text())
    assert outcome["course_state"] == state1.id and outcome["grading"]["rubric"] == state1.info["grading"]["rubric"]

    # nothing changed: every grade is current, nothing is graded
    code, out, _ = sweep(path, capsys)
    assert "to grade: 0; to rescore without a GPU: 0; current (graded under this rubric and grader): 3" in out, out

    # an edit not yet published: refused, nothing planned or queued
    edit(path, "[scoring.stages.reuse]", "performance_points = 10", "performance_points = 20")
    code, out, err = sweep(path, capsys)
    assert code == 1 and "differ from the published course state" in err and "course.toml" in err, err
    runs_before = sorted(p.name for p in (cfg.sweeps_dir / "final" / "runs").iterdir())

    # published: the reuse points doubled; the grades are rescored from their speeds, no GPU, no grading
    assert gemmlab_cluster.main(["--config", str(path), "publish", "--why", "reuse counts double"]) == 0
    capsys.readouterr()
    code, out, _ = sweep(path, capsys)
    assert code == 0
    assert "to grade: 0; to rescore without a GPU: 3 (the rubric's points, targets or weights changed)" in out, out
    assert len(graded) == 3  # nobody was graded again
    second = book(cfg)
    for s in ("alice", "bob", "carol"):
        assert float(second[s]["max"]) == float(first[s]["max"]) + 20  # 10 more in each precision
        assert float(second[s]["total"]) > float(first[s]["total"])
    gdir = next(p for p in (cfg.sweeps_dir / "final" / "grades" / "alice").iterdir() if ".replaced-" not in p.name)
    outcome = json.loads((gdir / "outcome.json").read_text())
    assert outcome["rescored"][-1]["from_state"] == state1.id and outcome["course_state"] != state1.id
    assert json.loads((gdir / "results.json").read_text())["rescored"][-1]["max_before"] == float(first["alice"]["max"])
    assert len(list(gdir.parent.glob(f"{gdir.name}.replaced-*"))) == 1  # the grade before the rescore, kept
    runs = sorted(p.name for p in (cfg.sweeps_dir / "final" / "runs").iterdir())
    manifest = json.loads((cfg.sweeps_dir / "final" / "runs" / runs[-1] / "manifest.json").read_text())
    assert len(runs) == len(runs_before) + 1 and manifest["counts"]["rescored"] == 3
    assert manifest["state"] == course_state.current(cfg).id and manifest["by"] and manifest["argv"][-1] == "sweep"
    assert manifest["grader"]["tree"] and manifest["gradebook"]["gpu_models"] == {}

    # what is measured changed (one graded shape fewer): every grade is graded again, and it says why
    text = path.read_text()
    path.write_text(text.replace('[[scoring.shapes]]\nshape = "2048x2048x2048"\nweight = 1\n', ""))
    assert gemmlab_cluster.main(["--config", str(path), "publish"]) == 0
    capsys.readouterr()
    code, out, _ = sweep(path, capsys)
    assert "to grade: 3 (what the grader measures changed ([bench], or the graded shapes): 3)" in out, out
    assert len(graded) == 6


def test_one_student_swept_on_a_new_sweep_is_the_only_one_it_counts(course, capsys):
    path, cfg, graded = course
    code, out, err = sweep(path, capsys, "--name", "regrade-bob", "--student", "bob")
    assert code == 0, out + err
    assert "1 of 1 student(s): 1 with an attempt that counts" in out and "to grade: 1" in out, out
    assert list(book(cfg, "regrade-bob")) == ["bob"] and graded == ["bob"]
    # on the final sweep, bob's regrade keeps the others' planned attempts as they were
    sweep(path, capsys)
    code, out, _ = sweep(path, capsys, "--student", "bob", "--force")
    assert "1 of 3 student(s)" in out and "to grade: 1 (forced (--force): 1)" in out, out
    assert sorted(book(cfg)) == ["alice", "bob", "carol"]


def test_a_refused_sweep_leaves_no_sweep_behind(course, capsys):
    path, cfg, _ = course
    path.write_text(path.read_text().replace(f"due = {PAST.isoformat()}", "due = 2099-12-04T23:59:00+00:00"))
    assert gemmlab_cluster.main(["--config", str(path), "publish"]) == 0
    code, out, err = sweep(path, capsys, "--name", "too-early")
    assert code == 1 and "deadline has not passed" in err, err
    assert not (cfg.sweeps_dir / "too-early").exists()
    code, out, err = sweep(path, capsys, "--name", "nobody", "--student", "dave")
    assert code == 1 and "no such student" in err and not (cfg.sweeps_dir / "nobody").exists()
