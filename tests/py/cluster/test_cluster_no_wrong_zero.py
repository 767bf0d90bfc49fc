"""No wrong zero leaves the gradebook: a student whose own deadline (extension and late cutoff
included) has not passed is pending — blank in gradebook.csv, export/grades.csv and export/canvas.csv,
and listed in the summary —; no_gpu and error are never 0 in any file a TA uploads; a sweep started
before the course's deadline is refused unless the instructor asks for it (FORCE=1)."""
import csv
import datetime as dt
import subprocess
import sys

import pytest

from support import staff_class
from support.staff_class import DUE, ROOT

import config  # noqa: E402  (cluster/, on sys.path through staff_class)
import gemmlab_cluster  # noqa: E402
import records  # noqa: E402
from commands import sweep as sweep_commands  # noqa: E402
import gradebook  # noqa: E402

D = dt.timedelta(days=1)
H = dt.timedelta(hours=1)
TOOL = ROOT / "cluster" / "gemmlab_cluster.py"


def by_student(path):
    return {r["student"]: r for r in csv.DictReader(open(path))}


@pytest.mark.parametrize("extra, policy_line, expect", [
    ("", "", DUE),                                                   # no cutoff: the due date
    ("grace_minutes = 30\n", "", DUE + dt.timedelta(minutes=30)),    # with its grace
    ("", f"cutoff = {(DUE + 2 * D).isoformat()}\n", DUE + 2 * D),    # a late hand-in counts until the cutoff
    ("", f'policy = "on-time-only"\ncutoff = {(DUE + 2 * D).isoformat()}\n', DUE),  # late never counts
])
def test_open_until_follows_the_policy(tmp_path, extra, policy_line, expect):
    path = staff_class.write_config(tmp_path, policy_line)  # appended to [late]
    text = path.read_text().replace("[deadline]\n", "[deadline]\n" + extra)
    path.write_text(text)
    assert config.load(path).deadline.open_until() == expect


def class_before_and_after(tmp_path, planned):
    """alice on time; bob extended 3 days and handed in; carol extended, nothing yet; dave late
    within the cutoff; gus graded without a GPU; hal whose grading ended in error."""
    (tmp_path / "extensions.toml").write_text("[bob]\nlate_days = 3\n[carol]\nlate_days = 3\n")
    cfg = config.load(staff_class.write_config(
        tmp_path, f'cutoff = {(DUE + D).isoformat()}\n[extensions]\nfile = "extensions.toml"\n',
        roster=["alice", "bob", "carol", "dave", "gus", "hal"]))
    for s, when in (("alice", DUE - H), ("bob", DUE + H), ("dave", DUE + H), ("gus", DUE - H), ("hal", DUE - H)):
        staff_class.hand_in(cfg, tmp_path, s, {}, when=when)
    sweep = cfg.sweeps_dir / "final"
    sweep.mkdir(parents=True)
    records.write_json_atomic(sweep / "plan.json", {
        "schema": "gemmlab.sweep-plan/1", "sweep": "final", "course": cfg.course, "created": "x",
        "due": None, "policy": cfg.deadline.policy, "students": sweep_commands.plan_sweep(cfg, when=planned)})
    for s in ("alice", "bob", "dave"):
        staff_class.write_grade(sweep, s, staff_class.full_rows())
    staff_class.write_grade(sweep, "gus", [], status="no_gpu")
    staff_class.write_grade(sweep, "hal", [], status="error")
    return cfg, sweep


def export(cfg, sweep):
    r = subprocess.run([sys.executable, str(TOOL), "--config", str(cfg.path), "gradebook", "--name", sweep.name],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_right_after_the_course_deadline_extended_students_are_pending_and_blank(tmp_path):
    # Planned between the course's cutoff (DUE + 1 day) and the extended cutoff (DUE + 4 days).
    cfg, sweep = class_before_and_after(tmp_path, planned=DUE + 2 * D)
    out = export(cfg, sweep)
    book = by_student(sweep / "gradebook.csv")
    assert (book["alice"]["status"], book["alice"]["final"]) == ("graded", "50")
    assert (book["dave"]["status"], book["dave"]["penalty_pct"], book["dave"]["final"]) == ("graded", "10", "45")
    for s in ("bob", "carol"):
        assert book[s]["status"] == "pending", book[s]
        assert book[s]["total"] == book[s]["final"] == book[s]["penalty_pct"] == "", book[s]
        assert all(book[s][c] == "" for c in book[s] if c.startswith("points.") or c in staff_class.STAGES), book[s]
    due_bob = "2026-12-08T23:59:00Z"  # 3 late days, and his cutoff moved with them (one day after)
    assert book["bob"]["message"] == f"due {due_bob}: can still hand in (as it stands: 50 point(s))"
    assert book["carol"]["message"] == f"due {due_bob}: can still hand in (no attempt yet)"
    for s, status in (("gus", "no_gpu"), ("hal", "error")):
        assert book[s]["status"] == status and book[s]["total"] == book[s]["final"] == "", book[s]
    plain = by_student(sweep / "export" / "grades.csv")
    canvas = {r[0]: r for r in csv.reader(open(sweep / "export" / "canvas.csv"))}
    for s in ("bob", "carol", "gus", "hal"):
        assert plain[s]["total"] == plain[s]["final"] == "", plain[s]
        assert canvas[s][-1] == "", canvas[s]
    assert plain["alice"]["final"] == "50" and canvas["alice"][-1] == "50"
    summary = (sweep / "summary.md").read_text()
    assert "Pending (no score yet, blank in every export): 2" in summary and "bob (due" in summary
    assert "bob (pending)" in out and "carol (pending)" in out and "gus (no_gpu)" in out and "hal (error)" in out


def test_after_every_deadline_the_same_class_is_scored(tmp_path):
    cfg, sweep = class_before_and_after(tmp_path, planned=DUE + 10 * D)
    export(cfg, sweep)
    book = by_student(sweep / "gradebook.csv")
    assert (book["bob"]["status"], book["bob"]["final"], book["bob"]["late"]) == ("graded", "50", "no")
    assert (book["carol"]["status"], book["carol"]["final"]) == ("missing", "0")  # a zero now: her time is over
    assert "Pending" not in (sweep / "summary.md").read_text()


def run_sweep(cfg_path, *args):
    return subprocess.run([sys.executable, str(TOOL), "--config", str(cfg_path), "sweep", *args],
                          capture_output=True, text=True, timeout=120)


def test_a_sweep_before_the_course_deadline_is_refused_unless_asked_for(tmp_path):
    soon = dt.datetime.now(dt.timezone.utc).replace(microsecond=0) + 2 * H
    path = staff_class.write_config(tmp_path, roster=["alice", "bob"])
    path.write_text(path.read_text().replace(f"due = {DUE.isoformat()}", f"due = {soon.isoformat()}"))
    r = run_sweep(path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "the course's deadline has not passed" in r.stderr and "FORCE=1" in r.stderr, r.stderr
    assert not (tmp_path / "sweeps" / "final" / "plan.json").exists()  # nothing planned, nothing queued
    # Asked for: nobody has handed in, so nothing is graded; both students are pending, not missing.
    r = run_sweep(path, "--before-deadline")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "warning: 2 student(s) can still hand in" in r.stdout, r.stdout
    book = by_student(tmp_path / "sweeps" / "final" / "gradebook.csv")
    assert {s: (row["status"], row["final"]) for s, row in book.items()} == {"alice": ("pending", ""), "bob": ("pending", "")}


def test_make_sweep_force_passes_before_deadline():
    text = (ROOT / "Makefile").read_text()
    assert "$(if $(FORCE),--before-deadline)" in text
