"""LMS export: export/canvas.csv in Canvas's gradebook import layout and the plain export/grades.csv,
from the committed synthetic sweep (tests/fixtures/cluster/sweep-synthetic) and from a synthetic
class with a Canvas roster."""
import csv
import io
import shutil
import subprocess
import sys

from pathlib import Path

import pytest

from support import staff_class
from support.staff_class import ROOT

import config  # noqa: E402  (cluster/, on sys.path through staff_class)
import gradebook  # noqa: E402
import lms_export  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "cluster" / "sweep-synthetic"
TOOL = ROOT / "cluster" / "gemmlab_cluster.py"


def rows_of(path):
    return list(csv.reader(io.StringIO(path.read_text())))


@pytest.fixture
def fixture_sweep(tmp_path):
    """The committed synthetic sweep (ada full marks, bob 2 days late, cyd build_failed, dee missing,
    eve pending, fay partial, gus no_gpu), exported through the command line."""
    cfg_path = staff_class.write_config(tmp_path, "[export]\nstage_columns = true\n")
    sweep = tmp_path / "sweeps" / "synthetic"
    shutil.copytree(FIXTURE, sweep)
    r = subprocess.run([sys.executable, str(TOOL), "--config", str(cfg_path), "gradebook", "--name", "synthetic"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return sweep, r.stdout


def test_canvas_layout_from_the_fixture(fixture_sweep):
    sweep, out = fixture_sweep
    rows = rows_of(sweep / "export" / "canvas.csv")
    # Canvas's columns, then one per stage of the registry (in the fixture naive has points; its
    # results predate the tensor stage, so that column has no maximum and scores 0) and the total.
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "staff-test: naive",
                       "staff-test: tiled", "staff-test: unrolled", "staff-test: pitched", "staff-test: reuse",
                       "staff-test: tensor", "staff-test: total"]
    assert rows[1] == ["    Points Possible", "", "", "", "", "10", "40", "40", "40", "50", "", "180"]
    by = {r[0]: r for r in rows[2:]}
    assert by["ada"] == ["ada", "", "", "ada", "", "10", "40", "40", "40", "50", "0", "180"]
    assert by["bob"][5:] == ["10", "30", "0", "0", "0", "0", "32"]     # the total is after the 20 % late penalty
    assert by["cyd"][5:] == ["0"] * 7 and by["dee"][5:] == ["0"] * 7   # build_failed and missing score 0
    assert by["eve"][5:] == [""] * 7 and by["gus"][5:] == [""] * 7     # pending and no_gpu: left blank
    assert "left blank (Canvas keeps what it has): eve (pending), gus (no_gpu)" in out


def test_plain_export_from_the_fixture(fixture_sweep):
    sweep, _ = fixture_sweep
    rows = list(csv.DictReader(open(sweep / "export" / "grades.csv")))
    assert list(rows[0]) == ["student", "status", "points.naive", "points.tiled", "points.unrolled", "points.pitched",
                             "points.reuse", "points.tensor", "total", "max", "penalty_pct", "final", "extension"]
    bob = next(r for r in rows if r["student"] == "bob")
    assert (bob["total"], bob["max"], bob["penalty_pct"], bob["final"], bob["points.tiled"]) == ("40", "180", "20", "32", "30")
    assert [r["student"] for r in rows] == ["ada", "bob", "cyd", "dee", "eve", "fay", "gus"]


CANVAS_EXPORT = """Student,ID,SIS User ID,SIS Login ID,Section,staff-test: total (4711),Quiz 1 (77)
    Points Possible,,,,,180,10
"Lovelace, Ada",1001,S-1,ada,Lab A,,9
"Tester, Bob",1002,S-2,bob,Lab B,,7
"Student, Test",9999,,,Lab A,,
"""


def test_canvas_roster_gives_names_ids_and_assignment_ids(tmp_path):
    cfg_path = staff_class.write_config(tmp_path, '[export]\ncanvas_roster = "canvas-export.csv"\n'
                                                  'assignment = "GEMM Lab"\nstage_columns = false\n')
    (tmp_path / "canvas-export.csv").write_text(CANVAS_EXPORT.replace("staff-test: total", "GEMM Lab: total"))
    sweep = tmp_path / "sweeps" / "synthetic"
    shutil.copytree(FIXTURE, sweep)
    r = subprocess.run([sys.executable, str(TOOL), "--config", str(cfg_path), "gradebook", "--sweep", str(sweep)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rows = rows_of(sweep / "export" / "canvas.csv")
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "GEMM Lab: total (4711)"]
    assert rows[2:] == [["Lovelace, Ada", "1001", "S-1", "ada", "Lab A", "180"],
                        ["Tester, Bob", "1002", "S-2", "bob", "Lab B", "32"]]
    assert "not in the Canvas roster, so not in canvas.csv: cyd, dee, eve, fay, gus" in r.stdout
    assert "Canvas columns 'GEMM Lab: total (4711)' ([export] assignment)" in r.stdout, r.stdout  # the one it fills


def test_a_file_that_is_not_a_canvas_export_is_named(tmp_path):
    cfg_path = staff_class.write_config(tmp_path, '[export]\ncanvas_roster = "roster.csv"\n')
    (tmp_path / "roster.csv").write_text("name,login\nAda,ada\n")
    cfg = config.load(cfg_path)
    with pytest.raises(config.ConfigError, match=r"roster.csv, line 1: not a Canvas gradebook export: no column "
                                                 r"Student, ID, SIS User ID, SIS Login ID, Section"):
        lms_export.texts(cfg, [], [])


@pytest.mark.parametrize("section, words", [
    ('[export]\ncanvas_match = "Email"', ["[export] canvas_match = 'Email'", "use one of SIS Login ID"]),
    ("[export]\nstage_columns = 1", ["[export] stage_columns = 1", "true or false"]),
    ("[similarity]\nnoise_threshold = 30\nguarantee_threshold = 20", ["[similarity] guarantee_threshold = 20",
                                                                     "at least noise_threshold (30)"]),
    ("[similarity]\nreport_threshold = 50", ["[similarity] report_threshold = 50.0", "between 0 and 1"]),
    ("[similarity]\ntop_pair = 5", ["[similarity] top_pair: unknown key", "did you mean 'top_pairs'"]),
    ('[leaderboard]\nstages = "reuse"', ["[leaderboard] stages = 'reuse'", "a list of strings"]),
    ("[leaderboard]\nstages = []", ["[leaderboard] stages = []", "name at least one stage"]),
    ("[extensions]\nfile = 3", ["[extensions] file = 3", "should be a string"]),
])
def test_bad_staff_settings_are_named(tmp_path, section, words):
    path = staff_class.write_config(tmp_path, section + "\n")
    with pytest.raises(config.ConfigError) as err:
        config.load(path)
    for w in words:
        assert w in str(err.value), str(err.value)


def test_extension_and_penalty_reach_the_plain_export(tmp_path):
    (tmp_path / "extensions.toml").write_text("[alice]\nlate_days = 1\n")
    cfg = config.load(staff_class.write_config(tmp_path, '[extensions]\nfile = "extensions.toml"\n'
                                               '[export]\nstage_columns = true\n', roster=["alice", "bob"]))
    staff_class.hand_in(cfg, tmp_path, "alice", {}, when=staff_class.DUE + 3 * staff_class.D)
    staff_class.hand_in(cfg, tmp_path, "bob", {}, when=staff_class.DUE + 3 * staff_class.D)
    sweep = staff_class.plan(cfg)
    no_points = [staff_class.stage_row("naive", p, correctness=0, correctness_max=0, performance_max=0)
                 for p in ("float", "double")]  # as in the course's rubric: the baseline has no points
    for s in ("alice", "bob"):  # full marks in tiled, unrolled, pitched, reuse: 40 (tensor, extra credit, not graded)
        staff_class.write_grade(sweep, s, no_points + staff_class.full_rows([x for x in staff_class.SCORED_STAGES
                                                                            if x != "naive"]))
    rows, stages = gradebook.build(sweep, staff_class.STAGES)
    files, _, _ = lms_export.texts(cfg, rows, stages)
    written = {Path(name).name: text for name, text in files.items()}
    plain = {r["student"]: r for r in csv.DictReader(io.StringIO(written["grades.csv"]))}
    assert "points.naive" not in plain["alice"] and "points.tiled" in plain["alice"]
    assert (plain["alice"]["penalty_pct"], plain["alice"]["final"]) == ("20", "32")   # 2 days after her due date
    assert plain["alice"]["extension"] == "1 late day (due 2026-12-05T23:59:00Z)"
    assert (plain["bob"]["penalty_pct"], plain["bob"]["final"], plain["bob"]["extension"]) == ("30", "28", "")
    canvas = {r[0]: r for r in csv.reader(io.StringIO(written["canvas.csv"]))}
    assert "staff-test: naive" not in canvas["Student"] and "staff-test: tiled" in canvas["Student"]
    assert canvas["alice"][-1] == "32" and canvas["bob"][-1] == "28"


def test_stage_columns_are_off_by_default(tmp_path):
    cfg_path = staff_class.write_config(tmp_path)
    sweep = tmp_path / "sweeps" / "synthetic"
    shutil.copytree(FIXTURE, sweep)
    r = subprocess.run([sys.executable, str(TOOL), "--config", str(cfg_path), "gradebook", "--name", "synthetic"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert rows_of(sweep / "export" / "canvas.csv")[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                                                           "staff-test: total"]


@pytest.mark.parametrize("target, command", [("gradebook-export", "gradebook --name midterm"),
                                             ("similarity", "similarity --name midterm"),
                                             ("leaderboard", "leaderboard --name midterm")])
def test_make_targets_call_the_tool(target, command):
    r = subprocess.run(["make", "-n", target, "SWEEP=midterm", "CONFIG=/srv/course.toml"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert f"cluster/gemmlab_cluster.py --config /srv/course.toml {command}" in r.stdout


def test_the_guide_names_the_canvas_column_the_export_writes():
    """The LMS column a course gets from the shipped course.toml is the one the instructor guide names
    (a course that creates the documented assignment in Canvas must not get a second one), and every
    export says which columns it fills."""
    cfg = config.load(ROOT / "course.toml")
    files, columns, _ = lms_export.texts(cfg, [], [])
    header = next(csv.reader(io.StringIO(files["export/canvas.csv"])))
    assert header[-1] == f"{cfg.course}: total" == "gemm-lab: total"
    assert "'gemm-lab: total'" in columns and "[course] name" in columns
    guide = (ROOT / "docs" / "instructor-grading.md").read_text()
    assert "with the shipped course.toml, `gemm-lab: total`" in guide
