"""A late hand-in says so at `make submit`: how late, the penalty, and which attempt counts under the
course's policy — and that after the due date only the course staff can change it — and `make status`
marks the attempt that counts. A student's own `make withdraw` (and its UNDO=1) is theirs until their
due date: refused after it, and a withdrawal mark made after it is not honoured.
(The same on a real Slurm: test_cluster_slurm.py.)"""
import datetime as dt

import pytest

from support import staff_class
from support.cluster_helpers import folder
from support.staff_class import DUE

import config  # noqa: E402  (cluster/, on sys.path through staff_class)
import dropbox  # noqa: E402
import gemmlab_cluster  # noqa: E402
import attempts  # noqa: E402
import which_counts  # noqa: E402
from commands import student  # noqa: E402
from commands import status as status_commands  # noqa: E402
import attempt_state  # noqa: E402

H = dt.timedelta(hours=1)
D = dt.timedelta(days=1)


def course(tmp_path, late="", extensions=None):
    extra = late
    if extensions is not None:
        (tmp_path / "extensions.toml").write_text(extensions)
        extra += '[extensions]\nfile = "extensions.toml"\n'
    return config.load(staff_class.write_config(tmp_path, extra, roster=["alice", "bob"]))


def hand_in(cfg, tmp_path, when, student="alice"):
    return staff_class.hand_in(cfg, tmp_path, student, {}, when=when)


def test_on_time_says_how_much_time_was_left(tmp_path):
    cfg = course(tmp_path)
    a = hand_in(cfg, tmp_path, DUE - 2 * H - 5 * 60 * dt.timedelta(seconds=1))
    assert attempt_state.how_it_counts(cfg, "alice", a) == ["on time: due 2026-12-04T23:59:00Z, 2 h 5 min to spare"]


def test_late_under_latest_counts_with_its_penalty_and_says_who_can_change_it(tmp_path, capsys, monkeypatch):
    cfg = course(tmp_path)
    first = hand_in(cfg, tmp_path, DUE - H)
    late = hand_in(cfg, tmp_path, DUE + D + 3 * H)
    lines = attempt_state.how_it_counts(cfg, "alice", late)
    assert lines[0] == "LATE: handed in 1 day 3 h after your due date 2026-12-04T23:59:00Z"
    assert lines[1] == "late penalty: 20 % of its score (10 % per started day late, at most 50 %)"
    assert lines[2].startswith("under the course's policy (latest) this attempt counts, with its penalty, in place "
                               "of your on-time attempt #1") and lines[2].endswith(
        "After the due date only the course staff can change that: if #1 should count instead, ask them"), lines[2]

    # make withdraw ATTEMPT=2 is refused, even while the clock is before the due date (the late hand-in's
    # time is set here): a withdrawal of a hand-in made after the due date is the staff's to make
    monkeypatch.setattr(dropbox, "current_user", lambda: "alice")
    with pytest.raises(student.Refused, match="attempt #2 was not withdrawn: it was handed in after your due date"):
        student.cmd_withdraw(cfg, gemmlab_cluster.parser().parse_args(["withdraw", "--attempt", "2"]))
    assert not (late / "withdrawn.json").exists()

    # make withdraw ATTEMPT=1, while it is still hers to do: the late attempt counts, make status marks both
    assert student.cmd_withdraw(cfg, gemmlab_cluster.parser().parse_args(["withdraw", "--attempt", "1"])) == 0
    out = capsys.readouterr().out
    assert "attempt #1 is withdrawn" in out and "counts now: #2" in out and "UNDO=1" in out, out
    pick, info = which_counts.choose(attempts.in_directory(folder(cfg, "alice")), cfg.deadline)
    assert pick.path == late and info["penalty_pct"] == 20 and "withdrawn by the student: #1" in info["note"]
    status_commands.cmd_status(cfg, gemmlab_cluster.parser().parse_args(["status", "--user", "alice"]))
    status = capsys.readouterr().out.splitlines()
    assert "(due 2026-12-04T23:59:00Z; policy latest)" in status[0], status
    assert "[withdrawn]" in status[1] and "[late 1 day 3 h]  <- counts" in status[2], status

    # undone: the on-time attempt is back (the late one, the latest, still counts)
    student.cmd_withdraw(cfg, gemmlab_cluster.parser().parse_args(["withdraw", "--attempt", "1", "--undo"]))
    (a1, a2) = attempts.in_directory(folder(cfg, "alice"))
    assert not a1.withdrawn and a1.path == first


def test_the_due_date_is_shown_in_the_courses_time_zone_too(tmp_path, capsys):
    """A course.toml that writes its due date in its own time zone (-08:00) gets it back beside UTC, in
    what make submit and make status say; a course written in UTC is shown once."""
    path = staff_class.write_config(tmp_path, roster=["alice"])
    path.write_text(path.read_text().replace(f"due = {DUE.isoformat()}", "due = 2026-12-04T15:59:00-08:00"))
    cfg = config.load(path)
    assert cfg.deadline.due == DUE
    a = hand_in(cfg, tmp_path, DUE + 3 * H)
    course_time = "2026-12-04T23:59:00Z (2026-12-04 15:59 -08:00, the course's time)"
    assert attempt_state.how_it_counts(cfg, "alice", a)[0] == f"LATE: handed in 3 h after your due date {course_time}"
    status_commands.cmd_status(cfg, gemmlab_cluster.parser().parse_args(["status", "--user", "alice"]))
    assert f"(due {course_time}; policy latest)" in capsys.readouterr().out
    assert config.course_time(DUE, dt.timezone.utc) == "2026-12-04T23:59:00Z"


def test_status_shows_each_hand_ins_report_and_the_files_that_did_not_compile(tmp_path, capsys):
    """What make submit found is kept in the hand-in's manifest, and make status shows it per attempt."""
    cfg = course(tmp_path)
    src = tmp_path / "src"
    src.mkdir()
    for stub in staff_class.STAGE_FILES:
        (src / stub).write_text((staff_class.ROOT / "student" / stub).read_text())
    files = dropbox.collect(cfg, src, None)
    dropbox.store_attempt(cfg, "alice", files, submitted_at=DUE - 2 * H,
                          extra={"report": {"verdict": "mismatch"}, "does_not_compile": ["tiled.cu"]})
    dropbox.store_attempt(cfg, "alice", files, submitted_at=DUE - H, extra={"report": {"verdict": "ok"},
                                                                           "does_not_compile": []})
    status_commands.cmd_status(cfg, gemmlab_cluster.parser().parse_args(["status", "--user", "alice"]))
    first, second = capsys.readouterr().out.splitlines()[1:3]
    assert "report of other stage files  does not compile: tiled.cu  not graded" in first, first
    assert "report ok  not graded" in second and "compile" not in second, second


@pytest.mark.parametrize("late_section, words", [
    ('policy = "prefer-on-time"\n', ["late penalty: 10 %", "your attempt #1", "counts, not this one (policy: prefer-on-time)"]),
    ('policy = "on-time-only"\n', ["the course counts on-time hand-ins only: it will not count",
                                   "your attempt #1", "counts, not this one"]),
    (f"cutoff = {(DUE + 2 * H).isoformat()}\n", ["after the late cutoff (2026-12-05T01:59:00Z): it will not count",
                                                 "your attempt #1"]),
])
def test_each_policy_says_which_attempt_counts(tmp_path, late_section, words):
    cfg = course(tmp_path, late_section)
    hand_in(cfg, tmp_path, DUE - H)
    late = hand_in(cfg, tmp_path, DUE + 3 * H)
    text = "\n".join(attempt_state.how_it_counts(cfg, "alice", late))
    assert text.startswith("LATE: handed in 3 h after"), text
    for w in words:
        assert w in text, (w, text)
    assert "make withdraw" not in text


def test_an_extension_moves_the_students_own_due_date(tmp_path):
    cfg = course(tmp_path, extensions="[alice]\nlate_days = 2\n")
    a = hand_in(cfg, tmp_path, DUE + D)
    assert attempt_state.how_it_counts(cfg, "alice", a) == [
        "on time: due 2026-12-06T23:59:00Z (with your extension: 2 late days (due 2026-12-06T23:59:00Z)), 1 day to spare"]
    b = hand_in(cfg, tmp_path, DUE + D, student="bob")
    assert attempt_state.how_it_counts(cfg, "bob", b)[0] == "LATE: handed in 1 day after your due date 2026-12-04T23:59:00Z"


def test_the_first_and_only_late_attempt_counts_without_a_way_back(tmp_path):
    cfg = course(tmp_path)
    a = hand_in(cfg, tmp_path, DUE + 30 * 60 * dt.timedelta(seconds=1))
    lines = attempt_state.how_it_counts(cfg, "alice", a)
    assert lines == ["LATE: handed in 30 min after your due date 2026-12-04T23:59:00Z",
                     "late penalty: 10 % of its score (10 % per started day late, at most 50 %)",
                     "this attempt counts (policy: latest)"]


PAST = dt.datetime(2026, 1, 5, 23, 59, tzinfo=dt.timezone.utc)  # a due date before the test's clock


def test_after_the_due_date_a_withdrawal_is_refused_and_a_mark_made_then_is_not_honoured(tmp_path, capsys, monkeypatch):
    """alice's due date has passed (bob's extension moves his past the test's clock): her `make withdraw`
    and its UNDO=1 are refused, naming her due date and the staff; a mark she writes herself now (its
    change time is after the due date, whatever time it claims) is not honoured: the attempt counts,
    and the plan's note and `make status` say so. bob may still withdraw his."""
    path = staff_class.write_config(tmp_path, '[extensions]\nfile = "extensions.toml"\n', roster=["alice", "bob"])
    (tmp_path / "extensions.toml").write_text('[bob]\ndue = 2099-01-01T00:00:00Z\nreason = "medical note"\n')
    path.write_text(path.read_text().replace(f"due = {DUE.isoformat()}", f"due = {PAST.isoformat()}"))
    cfg = config.load(path)
    first = hand_in(cfg, tmp_path, None)
    second = hand_in(cfg, tmp_path, None)
    monkeypatch.setattr(dropbox, "current_user", lambda: "alice")
    for undo, done in (([], "withdrawn"), (["--undo"], "counted again")):
        capsys.readouterr()
        assert gemmlab_cluster.main(["--config", str(cfg.path), "withdraw", "--attempt", "2", *undo]) == 1
        err = capsys.readouterr().err
        assert f"attempt #2 was not {done}: it is after your due date (2026-01-05T23:59:00Z)" in err, err
        assert "Nothing was changed" in err and "ask the course staff" in err, err
    assert not (second / "withdrawn.json").exists()

    # the mark written by hand, claiming a time before the due date
    (second / "withdrawn.json").write_text('{"withdrawn_at": "2026-01-05T23:00:00Z", "by": "alice"}\n')
    (a1, a2), _ = which_counts.attempts_of(cfg, "alice")
    assert a2.marked_withdrawn and a2.mark_late and not a2.withdrawn and not a1.mark_late
    pick, info = which_counts.choose([a1, a2], cfg.deadline)
    assert pick.path == second and "withdrawn by the student after the due date, not honoured: #2" in info["note"], info
    status_commands.cmd_status(cfg, gemmlab_cluster.parser().parse_args(["status", "--user", "alice"]))
    line = next(x for x in capsys.readouterr().out.splitlines() if x.strip().startswith("#2"))
    assert "after the due date: not honoured" in line and line.endswith("<- counts"), line
    assert first.exists()

    # bob's own due date (his extension) has not passed: his withdrawal is his, and honoured
    bobs = hand_in(cfg, tmp_path, None, student="bob")
    monkeypatch.setattr(dropbox, "current_user", lambda: "bob")
    assert gemmlab_cluster.main(["--config", str(cfg.path), "withdraw", "--attempt", "1"]) == 0
    (b1,), _ = which_counts.attempts_of(cfg, "bob")
    assert b1.path == bobs and b1.withdrawn and not b1.mark_late
