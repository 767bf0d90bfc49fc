"""Per-student extensions ([extensions] file): every mistake in the file is named (file, line, key,
value, what to do), and the sweep's plan applies them through the same deadline code as the
course's due date — which attempt counts, whether it is late, its penalty — and the gradebook shows
what was applied."""
import csv
import datetime as dt
import subprocess
import sys

import pytest

from support import staff_class
from support.staff_class import DUE, ROOT

import attempts  # noqa: E402  (cluster/, on sys.path through staff_class)
import class_files  # noqa: E402
import config  # noqa: E402
import gradebook  # noqa: E402

H = dt.timedelta(hours=1)
D = dt.timedelta(days=1)


def course(tmp_path, extensions: str, roster=("alice", "bob", "carol", "dave"), extra=""):
    (tmp_path / "extensions.toml").write_text(extensions)
    path = staff_class.write_config(tmp_path, extra + '[extensions]\nfile = "extensions.toml"\n', roster=list(roster))
    return config.load(path)


def load(cfg):
    known = set(attempts.students(cfg))
    return class_files.load_extensions(cfg, known, "the roster does not list them")


@pytest.mark.parametrize("text, words", [
    ("[alice]\nlate_days = 2\n[alcie]\nlate_days = 1\n",
     ["extensions.toml, line 3", "'alcie' is not a student", "did you mean 'alice'", "roster"]),
    ('[bob]\ndue = "next friday"\n', ["line 2", "[bob] due = 'next friday' is not a date-time", "write it like 2026-12-04T23:59:00Z"]),
    ("[bob]\ndue = 2026-12-08T23:59:00\n", ["line 2", "[bob] due = 2026-12-08 23:59:00 has no time zone", "-08:00"]),
    ("[bob]\n\ndue = 2026-12-08\n", ["line 3", "[bob] due = 2026-12-08 has no time of day"]),
    ("[bob]\ndue = 2026-13-08T23:59:00Z\n", ["extensions.toml: not valid TOML", "line 2"]),
    ("[bob]\ndue = 2026-11-08T23:59:00Z\n", ["line 2", "[bob] due = 2026-11-08T23:59:00Z is not after the course's due date",
                                            "2026-12-04T23:59:00Z"]),
    ("[carol]\nlate_days = 2\ndue = 2026-12-08T23:59:00Z\n", ["line 1", "[carol] needs exactly one of", "both"]),
    ("[carol]\nreason = \"flu\"\n", ["line 1", "[carol] needs exactly one of"]),
    ("[dave]\nlate_days = -1\n", ["line 2", "[dave] late_days = -1", "whole number of days, 1 or more"]),
    ("[dave]\nlate_days = 1.5\n", ["line 2", "[dave] late_days = 1.5"]),
    ("[dave]\nlate_day = 1\n", ["line 2", "[dave] late_day: unknown key", "did you mean 'late_days'"]),
    ("dave = 3\n", ["line 1", "dave = 3 should be a table", "late_days = 2"]),
])
def test_bad_extensions_are_named(tmp_path, text, words):
    cfg = course(tmp_path, text)
    with pytest.raises(config.ConfigError) as err:
        load(cfg)
    msg = str(err.value)
    assert str(tmp_path / "extensions.toml") in msg, msg
    for w in words:
        assert w in msg, msg


def test_extensions_need_a_course_due_date(tmp_path):
    (tmp_path / "extensions.toml").write_text("[alice]\nlate_days = 1\n")
    path = staff_class.write_config(tmp_path, '[extensions]\nfile = "extensions.toml"\n', roster=["alice"])
    path.write_text(path.read_text().replace(f"due = {DUE.isoformat()}", 'due = ""'))
    with pytest.raises(config.ConfigError, match=r"line 1: \[alice\] has an extension but the course has no due date"):
        load(config.load(path))


def test_a_missing_extensions_file_is_named(tmp_path):
    path = staff_class.write_config(tmp_path, '[extensions]\nfile = "nope.toml"\n', roster=["alice"])
    with pytest.raises(config.ConfigError, match=r"\[extensions\] file = '.*nope.toml': no such file"):
        load(config.load(path))


def test_extensions_are_parsed(tmp_path):
    cfg = course(tmp_path, 'carol = { late_days = 1 }\n[alice]\nlate_days = 2\nreason = "flu"\n\n'
                           '[bob]\ndue = 2026-12-08T15:59:00-08:00\n')
    ext = load(cfg)
    assert ext["alice"].due == DUE + 2 * D and ext["alice"].line == 2
    assert ext["alice"].describe() == "2 late days (due 2026-12-06T23:59:00Z); flu"
    assert ext["bob"].due == dt.datetime(2026, 12, 8, 23, 59, tzinfo=dt.timezone.utc)
    assert ext["bob"].describe() == "due 2026-12-08T23:59:00Z"
    assert ext["carol"].line == 1 and ext["carol"].late_days == 1


def test_the_plan_applies_extensions_and_the_gradebook_shows_them(tmp_path):
    cfg = course(tmp_path, '[alice]\nlate_days = 2\nreason = "flu"\n[bob]\ndue = 2026-12-07T23:59:00Z\n'
                           "[dave]\nlate_days = 3\n",
                 extra=f"cutoff = {(DUE + D).isoformat()}\n")  # [late] cutoff: one day after the due date
    assert cfg.deadline.cutoff == DUE + D
    staff_class.hand_in(cfg, tmp_path, "alice", {}, when=DUE + D - H)   # late for the class, on time for her
    staff_class.hand_in(cfg, tmp_path, "bob", {}, when=DUE + 4 * D - H)     # 1 day after his own due date
    staff_class.hand_in(cfg, tmp_path, "carol", {}, when=DUE + 20 * 60 * dt.timedelta(seconds=1))  # 20 min late
    staff_class.hand_in(cfg, tmp_path, "dave", {}, when=DUE + 2 * D)        # after the class cutoff, before his
    sweep = staff_class.plan(cfg)
    for s in ("alice", "bob", "carol", "dave"):
        staff_class.write_grade(sweep, s, staff_class.full_rows())
    csv_path, summary, rows = gradebook.write(sweep, staff_class.STAGES, "ext")
    by = {r["student"]: r for r in csv.DictReader(open(csv_path))}
    assert (by["alice"]["late"], by["alice"]["penalty_pct"], by["alice"]["final"]) == ("no", "0", "50")
    assert by["alice"]["extension"] == "2 late days (due 2026-12-06T23:59:00Z); flu"
    assert (by["bob"]["late"], by["bob"]["days_late"], by["bob"]["penalty_pct"], by["bob"]["final"]) == ("yes", "1", "10", "45")
    assert by["bob"]["extension"] == "due 2026-12-07T23:59:00Z"
    assert (by["carol"]["late"], by["carol"]["penalty_pct"], by["carol"]["extension"]) == ("yes", "10", "")
    assert (by["dave"]["status"], by["dave"]["late"]) == ("graded", "no"), by["dave"]  # his cutoff moved too
    text = summary.read_text()
    assert "Extensions applied: 3" in text and "- bob: due 2026-12-07T23:59:00Z" in text
    assert "Late: 2 (bob, carol)" in text


def test_without_the_extension_the_same_hand_ins_are_late(tmp_path):
    """The control of the test above: the same hand-ins and no extensions file."""
    cfg = config.load(staff_class.write_config(tmp_path, f"cutoff = {(DUE + D).isoformat()}\n",
                                               roster=["alice", "dave"]))
    staff_class.hand_in(cfg, tmp_path, "alice", {}, when=DUE + D - H)
    staff_class.hand_in(cfg, tmp_path, "dave", {}, when=DUE + 2 * D)
    by = {e["student"]: e for e in staff_class.sweep_commands.plan_sweep(cfg)}
    assert by["alice"]["late"] and by["alice"]["penalty_pct"] == 10 and "extension" not in by["alice"]
    assert by["dave"]["status"] == "not_counted"


def test_sweep_stops_on_a_bad_extensions_file_with_exit_2(tmp_path):
    cfg = course(tmp_path, "[alice]\nlate_days = 1\n\n[zed]\nlate_days = 1\n")
    r = subprocess.run([sys.executable, str(ROOT / "cluster" / "gemmlab_cluster.py"), "--config", str(cfg.path),
                        "sweep"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"{tmp_path / 'extensions.toml'}, line 4: 'zed' is not a student of this course" in r.stderr
    assert not (cfg.sweeps_dir / "final" / "plan.json").exists()
