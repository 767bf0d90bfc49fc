"""Integrity cases need a person: when the attempt that counts does not match its manifest, the
student is `needs_review` — no automatic score, blank in every export, listed in the summary with
what does not match — and the intact attempt that would count otherwise is graded and kept in view."""
import csv
import datetime as dt
import json
import os
import subprocess
import sys

from support import staff_class
from support.staff_class import DUE, ROOT

import config  # noqa: E402  (cluster/, on sys.path through staff_class)
import gradebook  # noqa: E402
import grading  # noqa: E402

H = dt.timedelta(hours=1)


def test_a_tampered_late_attempt_keeps_the_intact_on_time_one_in_view(tmp_path):
    cfg = config.load(staff_class.write_config(tmp_path, roster=["alice", "bob"]))
    intact = staff_class.hand_in(cfg, tmp_path, "alice", {}, when=DUE - H)
    late = staff_class.hand_in(cfg, tmp_path, "alice", {"tiled": "tiled_textbook"}, when=DUE + H)
    staff_class.hand_in(cfg, tmp_path, "bob", {}, when=DUE - H)
    f = late / "files" / "naive.cu"
    f.write_text(f.read_text() + "// changed after the hand-in\n")
    sweep = staff_class.plan(cfg)
    plan = {e["student"]: e for e in json.loads((sweep / "plan.json").read_text())["students"]}
    assert plan["alice"]["review"] == "attempt #2 naive.cu does not match its sha256 in the manifest"
    assert plan["alice"]["intact"]["attempt_name"] == intact.name and "review" not in plan["bob"]
    # the sweep grades both of alice's (the tampered one is `tampered` without running anything)
    staff_class.write_grade(sweep, "alice", [], status="tampered")
    d = sweep / "grades" / "alice" / plan["alice"]["intact"]["digest"][:16]
    d.mkdir(parents=True)
    rows = staff_class.full_rows()
    (d / "results.json").write_text(json.dumps({"score": {"total": 42.0, "max": 100, "stages": rows}, "results": []}))
    (d / "outcome.json").write_text(json.dumps({"schema": grading.OUTCOME_SCHEMA, "student": "alice", "status": "graded"}))
    staff_class.write_grade(sweep, "bob", staff_class.full_rows())
    r = subprocess.run([sys.executable, str(ROOT / "cluster" / "gemmlab_cluster.py"), "--config", str(cfg.path),
                        "gradebook", "--name", "final"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    book = {row["student"]: row for row in csv.DictReader(open(sweep / "gradebook.csv"))}
    assert book["alice"]["status"] == "needs_review" and book["alice"]["final"] == "" and book["alice"]["total"] == ""
    assert book["alice"]["message"] == (
        f"attempt #2 naive.cu does not match its sha256 in the manifest: a person decides. The intact attempt that "
        f"would count otherwise: #1 ({intact.name}, graded 42 point(s) after a 0 % penalty).")
    assert book["bob"]["status"] == "graded"
    plain = {row["student"]: row for row in csv.DictReader(open(sweep / "export" / "grades.csv"))}
    assert plain["alice"]["final"] == "" and plain["bob"]["final"] == "50"
    summary = (sweep / "summary.md").read_text()
    assert "## Needs review: 1 (no score, blank in every export)" in summary and "- alice: attempt #2" in summary
    assert "alice (needs_review)" in r.stdout


def test_the_sweep_queues_the_intact_attempt_too(tmp_path):
    """The sweep's task list names both of the student's attempts (local scheduler: planned, then
    graded here without a GPU — every grade no_gpu, the tampered one `tampered`). The GPU is hidden
    where there is one (CUDA_VISIBLE_DEVICES=), as in test_cluster_local.py: the flow is what is
    tested; tests/gpu_session/cluster_gpu_jobs.sh grades with the same scripts on real GPUs."""
    path = staff_class.write_config(tmp_path, roster=["alice"])
    path.write_text(path.read_text().replace(f"due = {DUE.isoformat()}", "due = 2026-01-01T00:00:00Z"))
    cfg = config.load(path)
    staff_class.hand_in(cfg, tmp_path, "alice", {})
    late = staff_class.hand_in(cfg, tmp_path, "alice", {"tiled": "tiled_textbook"})
    (late / "files" / "tiled.cu").write_text("// replaced\n")
    r = subprocess.run([sys.executable, str(ROOT / "cluster" / "gemmlab_cluster.py"), "--config", str(path), "sweep"],
                       capture_output=True, text=True, timeout=900, env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
    assert r.returncode == 0, r.stdout + r.stderr
    tasks = json.loads(next((cfg.sweeps_dir / "final" / "runs").glob("run-*/tasks.json")).read_text())
    assert sorted(t["attempt_name"].split("-")[1] for t in tasks) == ["0001", "0002"], tasks
    book = {row["student"]: row for row in csv.DictReader(open(cfg.sweeps_dir / "final" / "gradebook.csv"))}
    assert book["alice"]["status"] == "needs_review", book
    assert "The intact attempt that would count otherwise: #1" in book["alice"]["message"]
