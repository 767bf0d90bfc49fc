"""One student's trouble is one student's case: every class-wide command of the staff takes each student's
step inside a fault boundary (cluster/fault_boundary.py). For each command — planning a sweep, the
gradebook, its LMS files, sweep-status, the similarity report, the leaderboard, the decision log — one
student's step is made to raise (mallory's only), and the command must end normally, name mallory's
case, and still give everyone else their rows, pairs and places. Then mallory mounts a real oddity: a
hand-in whose every stage file is as large as the course accepts and costs the similarity report's
tokenizer more than a cell's CPU limit; the report is made for the others, in bounded time.
"""
import csv
import subprocess
import sys

import pytest

from support import staff_class
from support.staff_class import ROOT

pytest.importorskip("copydetect", reason="copydetect is not installed: `make setup` installs it")

import config  # noqa: E402  (cluster/, on sys.path through staff_class)
import course_state  # noqa: E402
import gemmlab_cluster  # noqa: E402
import gradebook  # noqa: E402
import leaderboard  # noqa: E402
import lms_export  # noqa: E402
import similarity  # noqa: E402
from commands import decisions as decision_commands  # noqa: E402
from commands import grades as grade_commands  # noqa: E402
from commands import sweep as sweep_commands  # noqa: E402
import sweep_plan  # noqa: E402

TARGET = "mallory"
HONEST = {"alice": "tiled_textbook", "bob": "tiled_textbook_copied", "carol": "tiled_pointer_walk"}
CLASS = [*HONEST, TARGET]
ALIASES = 'alice = "Ada"\nbob = "Bo"\ncarol = "Cee"\nmallory = "Mallet"\n'
PLANTED = "planted: this student's step fails"


def fails_for_mallory(monkeypatch, module, name, student_of):
    """module.name raises for mallory's step only; everyone else's runs as it is."""
    original = getattr(module, name)

    def step(*args, **kwargs):
        if student_of(*args, **kwargs) == TARGET:
            raise RuntimeError(PLANTED)
        return original(*args, **kwargs)
    monkeypatch.setattr(module, name, step)


def staff(cfg, capsys, *args) -> tuple[int, str]:
    code = gemmlab_cluster.main(["--config", str(cfg.path), *args])
    out = capsys.readouterr()
    assert "Traceback" not in out.err, out.err
    return code, out.out


def read_csv(path) -> dict[str, dict]:
    with open(path) as f:
        return {row.get("student") or row.get("a"): row for row in csv.DictReader(f)}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A graded class: alice, bob (a copy of alice's tiled kernel), carol and mallory, all opted in to
    the leaderboard."""
    base = tmp_path_factory.mktemp("fault-boundary")
    (base / "aliases.toml").write_text(ALIASES)
    cfg = config.load(staff_class.write_config(base, '[leaderboard]\naliases = "aliases.toml"\n', roster=CLASS))
    for student, part in {**HONEST, TARGET: "tiled_fma_padded"}.items():
        staff_class.hand_in(cfg, base, student, {"tiled": part})
    sweep = staff_class.plan(cfg)
    for n, student in enumerate(CLASS):
        staff_class.write_grade(sweep, student, staff_class.full_rows(speeds={("reuse", "float"): 1000.0 + n}))
    return cfg, sweep


def test_planning_a_sweep(course, monkeypatch):
    cfg, _ = course
    fails_for_mallory(monkeypatch, sweep_plan, "_plan_student", lambda cfg, student, *_: student)
    entries = {e["student"]: e for e in sweep_commands.plan_sweep(cfg, when=staff_class.PLANNED)}
    assert set(entries) == set(CLASS)
    assert PLANTED in entries[TARGET]["review"] and entries[TARGET]["review"].startswith(f"{TARGET}'s hand-ins")
    assert all(entries[s]["status"] == "selected" and not entries[s].get("review") for s in HONEST), entries


def test_the_gradebook_and_its_exports(course, monkeypatch, capsys):
    cfg, sweep = course
    fails_for_mallory(monkeypatch, gradebook, "row_of", lambda sweep, entry, *_: entry["student"])
    code, out = staff(cfg, capsys, "gradebook", "--name", "final")
    assert code == 0
    assert f"gradebook: warning: {TARGET}: their gradebook row stopped" in out and PLANTED in out, out
    book = read_csv(sweep / "gradebook.csv")
    assert set(book) == set(CLASS)
    assert book[TARGET]["status"] == "needs_review" and PLANTED in book[TARGET]["message"], book[TARGET]
    assert book[TARGET]["total"] == "" and book[TARGET]["final"] == ""
    assert all(book[s]["status"] == "graded" and book[s]["total"] for s in HONEST), book
    exported = read_csv(sweep / "export" / "grades.csv")
    assert set(exported) == set(CLASS) and all(exported[s]["total"] for s in HONEST), exported
    assert exported[TARGET]["total"] == ""


def test_the_lms_exports(course, monkeypatch, capsys):
    cfg, sweep = course
    fails_for_mallory(monkeypatch, lms_export, "row_maxima", lambda row: row["student"])
    code, out = staff(cfg, capsys, "gradebook", "--name", "final")
    assert code == 0
    assert f"export: warning: {TARGET}: their LMS cells stopped (RuntimeError: {PLANTED})" in out, out
    assert read_csv(sweep / "gradebook.csv")[TARGET]["total"]  # the gradebook's row is as it was
    exported = read_csv(sweep / "export" / "grades.csv")
    assert set(exported) == set(CLASS)
    assert exported[TARGET]["status"] == "needs_review" and exported[TARGET]["final"] == "", exported[TARGET]
    assert all(exported[s]["final"] and exported[s]["max"] for s in HONEST), exported
    with open(sweep / "export" / "canvas.csv") as f:
        canvas = {row["Student"]: row for row in csv.DictReader(f)}
    assert all(canvas[s][next(c for c in canvas[s] if c.endswith(": total"))] for s in HONEST), canvas


def test_sweep_status(course, monkeypatch, capsys):
    cfg, _ = course
    fails_for_mallory(monkeypatch, grade_commands, "_task_standing", lambda sweep, e, *_: e["student"])
    code, out = staff(cfg, capsys, "sweep-status", "--name", "final")
    assert code == 0
    assert "done 3, running 0, queued 0, failed 0 (of 3 graded attempts)" in out, out
    assert f"{TARGET}: their grade's standing stopped" in out and PLANTED in out, out


def test_the_similarity_report(course, monkeypatch, capsys):
    cfg, sweep = course
    fails_for_mallory(monkeypatch, similarity, "prepared", lambda how, kind, label, a: label)
    code, out = staff(cfg, capsys, "similarity", "--name", "final")
    assert code == 0
    assert f"similarity: {TARGET}: comparing their hand-in stopped" in out and PLANTED in out, out
    pairs = [r for r in csv.DictReader(open(sweep / "similarity" / "pairs.csv"))]
    assert not [r for r in pairs if TARGET in (r["a"], r["b"])]
    copied = [r for r in pairs if {r["a"], r["b"]} == {"alice", "bob"}]
    assert copied and float(copied[0]["similarity"]) >= 0.8, pairs  # the others are compared as ever
    index = (sweep / "similarity" / "index.html").read_text()
    assert f"{TARGET}: comparing their hand-in stopped" in index and "not compared" in index


def test_the_leaderboard(course, monkeypatch, capsys):
    cfg, sweep = course
    fails_for_mallory(monkeypatch, leaderboard, "standing", lambda row, alias: row["student"])
    code, out = staff(cfg, capsys, "leaderboard", "--name", "final")
    assert code == 0
    assert f"leaderboard: warning: {TARGET}: their place on the leaderboard stopped" in out and PLANTED in out, out
    for name in ("leaderboard.md", "leaderboard.html"):
        page = (sweep / "leaderboard" / name).read_text()
        assert "Ada" in page and "Bo" in page and "Cee" in page, page
        assert "Mallet" not in page and TARGET not in page and PLANTED not in page  # the pages name no student


def test_the_decision_log(course, monkeypatch, capsys):
    cfg, _ = course
    for student in CLASS:
        course_state.log(cfg).append("clear-override", student=student, why="a decision to list")
    fails_for_mallory(monkeypatch, decision_commands, "_decision_line", lambda e: e.get("student"))
    code, out = staff(cfg, capsys, "decisions")
    assert code == 0
    lines = [ln for ln in out.splitlines() if ln.startswith("#")]
    assert len(lines) == len(CLASS), out
    shown = [ln for ln in lines if "clear-override" in ln]
    assert sorted(ln.split()[4] for ln in shown) == sorted(HONEST), out  # student is the fifth column
    case = f"{TARGET}: showing a decision about them stopped (RuntimeError: {PLANTED})"
    assert any(case in ln for ln in lines), out


# ---- a real oddity: a hand-in that runs the similarity report's cell into its CPU limit ------------
def test_a_hand_in_too_costly_to_fingerprint_is_its_students_case(tmp_path):
    """mallory hands in stage files as large as the course accepts ([cluster] max_source_kb), each a
    run of tokens that costs copydetect's tokenizer seconds of CPU: more than the cell's limit
    ([cells] cpu_seconds = 1 here; the wall time only bounds a hang, so that a loaded machine, which
    spends CPU seconds slowly, cannot make it the wall time's case). Her hand-in is her case; the
    others are compared."""
    path = staff_class.write_config(tmp_path, "[cells]\ncpu_seconds = 1\nwall_seconds = 300\n", roster=CLASS)
    cfg = config.load(path)
    for student, part in HONEST.items():
        staff_class.hand_in(cfg, tmp_path, student, {"tiled": part})
    heavy = {}
    for stage in ("tiled", "unrolled", "reuse"):
        stub = (ROOT / "student" / f"{stage}.cu").read_text()
        room = cfg.max_source_kb * 1024 - len(stub) - 64
        heavy[stage] = stub + "\nint tokens = " + "a+b;" * (room // 4) + "\n"
    staff_class.hand_in(cfg, tmp_path, TARGET, {}, texts=heavy)
    sweep = staff_class.plan(cfg)
    r = subprocess.run([sys.executable, str(ROOT / "cluster" / "gemmlab_cluster.py"), "--config", str(path),
                        "similarity", "--name", "final"], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stdout + r.stderr
    assert f"{TARGET}: comparing their hand-in stopped" in r.stdout and "CPU limit of 1 s" in r.stdout, r.stdout
    pairs = list(csv.DictReader(open(sweep / "similarity" / "pairs.csv")))
    assert not [p for p in pairs if TARGET in (p["a"], p["b"])]
    assert [p for p in pairs if {p["a"], p["b"]} == {"alice", "bob"}], pairs
