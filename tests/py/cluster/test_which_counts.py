"""cluster/which_counts.py, function by function: which of a student's attempts counts and why —
choose() under each late policy (latest, prefer-on-time, on-time-only) and a cutoff, the student's own
withdrawals within and after their deadline (mark_late), the staff's accept and withdraw decisions, the
hand-ins the staff entered, and standing()'s cases for a decision whose attempt changed.

Every test makes its own course under tmp_path and stores attempts through the real drop-box code; the
staff's decisions are log lines folded by student_standing.fold, as the decision log's are.

  /usr/bin/python3 -m pytest -q tests/py/cluster/test_which_counts.py
"""
import datetime as dt

import pytest

from support import staff_class
from support.staff_class import DUE

import attempts  # noqa: E402  (cluster/, on sys.path through staff_class)
import config  # noqa: E402
import dropbox  # noqa: E402
import student_standing  # noqa: E402
import which_counts  # noqa: E402

H = dt.timedelta(hours=1)
D = dt.timedelta(days=1)
PAST = dt.datetime(2026, 1, 5, 23, 59, tzinfo=dt.timezone.utc)  # a due date before the test's clock


def course(tmp_path, late="", due=None, deadline_extra=""):
    """A course due DUE (or `due`); late: lines of its [late] section; deadline_extra: of [deadline]."""
    path = staff_class.write_config(tmp_path, late, roster=["alice", "bob"])
    due_line = f"due = {(due or DUE).isoformat()}\n{deadline_extra}"
    path.write_text(path.read_text().replace(f"due = {DUE.isoformat()}\n", due_line))
    return config.load(path)


def hand_in(cfg, tmp_path, when, student="alice", variant=""):
    """An attempt of the handout's stubs; variant: a comment added to naive.cu, so its files differ."""
    stub = (staff_class.ROOT / "student" / "naive.cu").read_text()
    texts = {"naive": stub + f"\n// {variant}\n"} if variant else None
    return staff_class.hand_in(cfg, tmp_path, student, {}, when=when, texts=texts)


def enter(cfg, tmp_path, when, student="alice"):
    """A hand-in the staff entered for the student (the staff's area), dated `when`."""
    src = tmp_path / "e-mailed"
    if not src.is_dir():
        src.mkdir()
        for name in staff_class.STAGE_FILES:
            (src / name).write_text((staff_class.ROOT / "student" / name).read_text())
    return dropbox.store_attempt(cfg, student, dropbox.collect(cfg, src, None), submitted_at=when,
                                 entered_in=attempts.entered_dir(cfg, student))


def decided(*entries, student="alice"):
    """The student's decisions folded from log lines (seq numbered in order)."""
    lines = [dict(e, seq=i, student=student, at="2026-12-05T09:00:00Z", by="ta", why="test")
             for i, e in enumerate(entries, 1)]
    return student_standing.fold(lines)[student]


def about(cfg, path, action):
    """A decision line about the attempt at `path`, bound to its number and digest."""
    return dict(action=action, **student_standing.attempt_fields(attempts.one(cfg, path)))


def mine(cfg, student="alice", deadline=None):
    return which_counts.attempts_of(cfg, student, student_standing.StudentDecisions(), deadline=deadline or cfg.deadline)[0]


# ---- choose: the late policies ------------------------------------------------------------------
def on_time_and_late(tmp_path, late_section=""):
    cfg = course(tmp_path, late_section)
    first = hand_in(cfg, tmp_path, DUE - H)
    late = hand_in(cfg, tmp_path, DUE + D + 3 * H)
    return cfg, first, late


def test_latest_counts_the_late_attempt_with_its_started_days_penalty(tmp_path):
    cfg, first, late = on_time_and_late(tmp_path)
    pick, info = which_counts.choose(mine(cfg), cfg.deadline)
    assert pick.path == late
    assert info == {"late": True, "days_late": 2, "penalty_pct": 20.0, "note": "",
                    "effective_time": "2026-12-06T02:59:00Z"}


def test_prefer_on_time_counts_the_last_on_time_attempt(tmp_path):
    cfg, first, late = on_time_and_late(tmp_path, 'policy = "prefer-on-time"\n')
    assert cfg.deadline.policy == "prefer-on-time"
    pick, info = which_counts.choose(mine(cfg), cfg.deadline)
    assert pick.path == first
    assert info == {"late": False, "days_late": 0, "penalty_pct": 0.0, "note": "",
                    "effective_time": "2026-12-04T22:59:00Z"}


def test_prefer_on_time_without_an_on_time_attempt_counts_the_latest_late_one(tmp_path):
    cfg = course(tmp_path, 'policy = "prefer-on-time"\n')
    hand_in(cfg, tmp_path, DUE + H)
    last = hand_in(cfg, tmp_path, DUE + 2 * H)
    pick, info = which_counts.choose(mine(cfg), cfg.deadline)
    assert pick.path == last and info["late"] and info["days_late"] == 1 and info["penalty_pct"] == 10.0


def test_on_time_only_never_counts_a_late_attempt(tmp_path):
    cfg, first, late = on_time_and_late(tmp_path, 'policy = "on-time-only"\n')
    pick, info = which_counts.choose(mine(cfg), cfg.deadline)
    assert pick.path == first and not info["late"]
    only_late = mine(cfg)[1:]
    pick, info = which_counts.choose(only_late, cfg.deadline)
    assert pick is None
    assert info == {"late": False, "days_late": 0, "penalty_pct": 0.0, "note": "no attempt counts under the late policy"}


def test_the_cutoff_drops_later_attempts_and_says_how_many(tmp_path):
    cfg = course(tmp_path, f"cutoff = {(DUE + 2 * H).isoformat()}\n")
    before = hand_in(cfg, tmp_path, DUE + H)
    hand_in(cfg, tmp_path, DUE + 3 * H)
    hand_in(cfg, tmp_path, DUE + D)
    pick, info = which_counts.choose(mine(cfg), cfg.deadline)
    assert pick.path == before
    assert info["note"] == "2 attempt(s) after the cutoff ignored" and info["penalty_pct"] == 10.0


def test_every_attempt_after_the_cutoff_leaves_none_that_counts(tmp_path):
    cfg = course(tmp_path, f"cutoff = {(DUE + 2 * H).isoformat()}\n")
    hand_in(cfg, tmp_path, DUE + 3 * H)
    pick, info = which_counts.choose(mine(cfg), cfg.deadline)
    assert pick is None
    assert info["note"] == "no attempt counts under the late policy; 1 attempt(s) after the cutoff ignored"


def test_no_attempts_count_nothing_and_say_nothing(tmp_path):
    cfg = course(tmp_path)
    assert which_counts.choose([], cfg.deadline) == (None, {"late": False, "days_late": 0, "penalty_pct": 0.0,
                                                             "note": ""})


def test_one_second_late_is_one_started_day(tmp_path):
    cfg = course(tmp_path)
    hand_in(cfg, tmp_path, DUE + dt.timedelta(seconds=1))
    _, info = which_counts.choose(mine(cfg), cfg.deadline)
    assert (info["late"], info["days_late"], info["penalty_pct"]) == (True, 1, 10.0)


def test_the_penalty_stops_at_the_courses_maximum(tmp_path):
    cfg = course(tmp_path)
    hand_in(cfg, tmp_path, DUE + 9 * D)
    _, info = which_counts.choose(mine(cfg), cfg.deadline)
    assert (info["days_late"], info["penalty_pct"]) == (9, 50.0)


# ---- the student's own withdrawals ----------------------------------------------------------------
def test_a_withdrawal_within_the_deadline_is_honoured_and_named(tmp_path):
    cfg = course(tmp_path)
    first = hand_in(cfg, tmp_path, DUE - 2 * H)
    second = hand_in(cfg, tmp_path, DUE - H)
    (second / "withdrawn.json").write_text('{"withdrawn_at": "2026-11-29T00:00:00Z", "by": "alice"}\n')
    a1, a2 = mine(cfg)
    assert a2.marked_withdrawn and not a2.mark_late and a2.withdrawn and not a1.withdrawn
    pick, info = which_counts.choose([a1, a2], cfg.deadline)
    assert pick.path == first and info["note"] == "withdrawn by the student: #2"


def test_a_withdrawal_mark_made_after_the_deadline_is_not_honoured(tmp_path):
    cfg = course(tmp_path, due=PAST)
    hand_in(cfg, tmp_path, PAST - 2 * H)
    second = hand_in(cfg, tmp_path, PAST - H)
    (second / "withdrawn.json").write_text('{"withdrawn_at": "2026-01-05T23:00:00Z", "by": "alice"}\n')
    a1, a2 = mine(cfg)
    assert a2.marked_withdrawn and a2.mark_late and not a2.withdrawn
    pick, info = which_counts.choose([a1, a2], cfg.deadline)
    assert pick.path == second
    assert info["note"] == "withdrawn by the student after the due date, not honoured: #2"


def test_withdrawing_every_attempt_leaves_none_that_counts(tmp_path):
    cfg = course(tmp_path)
    only = hand_in(cfg, tmp_path, DUE - H)
    (only / "withdrawn.json").write_text('{"withdrawn_at": "2026-11-29T00:00:00Z", "by": "alice"}\n')
    pick, info = which_counts.choose(mine(cfg), cfg.deadline)
    assert pick is None
    assert info["note"] == "no attempt counts under the late policy; withdrawn by the student: #1"


def test_withdraw_closes_at_the_due_date_with_its_grace(tmp_path):
    cfg = course(tmp_path, deadline_extra="grace_minutes = 15\n")
    assert which_counts.withdraw_closes(cfg.deadline) == DUE + 15 * dt.timedelta(minutes=1)
    assert which_counts.withdraw_closes(cfg.deadline.shifted(DUE + 2 * D)) == DUE + 2 * D + 15 * dt.timedelta(minutes=1)


# ---- the staff's decisions ---------------------------------------------------------------------
def test_the_staffs_accept_counts_that_attempt_with_its_own_lateness(tmp_path):
    cfg, first, late = on_time_and_late(tmp_path, 'policy = "on-time-only"\n')
    st = which_counts.standing(cfg, "alice", decided(about(cfg, late, "accept")), deadline=cfg.deadline)
    assert st.pick.path == late and st.accepted.path == late and st.cases == []
    assert st.info == {"late": True, "days_late": 2, "penalty_pct": 20.0,
                       "note": "attempt #2 counts: the course staff's decision", "effective_time": "2026-12-06T02:59:00Z"}


def test_the_staffs_withdrawal_drops_an_attempt_and_their_unwithdraw_brings_it_back(tmp_path):
    cfg, first, late = on_time_and_late(tmp_path)
    st = which_counts.standing(cfg, "alice", decided(about(cfg, late, "withdraw")), deadline=cfg.deadline)
    assert st.pick.path == first
    assert st.info["note"] == "withdrawn by the course staff: #2" and not st.info["late"]
    assert st.attempts[1].staff_withdrawn["seq"] == 1
    st = which_counts.standing(cfg, "alice", decided(about(cfg, late, "withdraw"), about(cfg, late, "unwithdraw")),
                               deadline=cfg.deadline)
    assert st.pick.path == late and st.info["note"] == "" and st.attempts[1].staff_restored["seq"] == 2


def test_a_staff_withdrawal_after_an_accept_of_the_same_attempt_ends_the_accept(tmp_path):
    cfg, first, late = on_time_and_late(tmp_path)
    st = which_counts.standing(cfg, "alice", decided(about(cfg, first, "accept"), about(cfg, first, "withdraw")),
                               deadline=cfg.deadline)
    assert st.accepted is None and st.pick.path == late


def test_a_decision_whose_attempt_changed_is_a_case_and_is_not_applied(tmp_path):
    cfg, first, late = on_time_and_late(tmp_path)
    stale = dict(about(cfg, late, "withdraw"), digest="0" * 64)  # decided on other files than #2 holds now
    st = which_counts.standing(cfg, "alice", decided(stale), deadline=cfg.deadline)
    assert st.pick.path == late and not st.attempts[1].withdrawn
    assert len(st.cases) == 1
    case = st.cases[0]
    assert case.startswith(f"decision #1 (withdraw #2, 2026-12-05T09:00:00Z by ta) was made on attempt #2 "
                           f"({late.name}, files 000000000000): attempt #2 ({late.name}) now holds other files ("), case
    assert case.endswith("); the decision is not applied"), case


def test_a_decision_whose_attempt_is_gone_is_a_case(tmp_path):
    cfg, first, late = on_time_and_late(tmp_path)
    gone = dict(about(cfg, late, "accept"), number=7, label="#7", attempt="gone", digest="1" * 64)
    st = which_counts.standing(cfg, "alice", decided(gone), deadline=cfg.deadline)
    assert st.accepted is None and st.pick.path == late
    assert st.cases == ["decision #1 (accept #7, 2026-12-05T09:00:00Z by ta) was made on attempt #7 (gone, files "
                        "111111111111): that attempt is gone, and no attempt holds its files; the decision is not applied"]


# ---- entered hand-ins, standing ---------------------------------------------------------------------
def test_an_entered_hand_in_counts_like_the_students_own_by_its_time(tmp_path):
    cfg = course(tmp_path)
    own = hand_in(cfg, tmp_path, DUE - 2 * H)
    entered = enter(cfg, tmp_path, DUE - H)
    found = mine(cfg)
    assert [(a.label, a.entered) for a in found] == [("#1", False), ("E1", True)]
    pick, info = which_counts.choose(found, cfg.deadline)
    assert pick.path == entered and not info["late"]
    later = hand_in(cfg, tmp_path, DUE - H / 2)
    assert which_counts.choose(mine(cfg), cfg.deadline)[0].path == later
    assert own.exists()


def test_a_students_view_of_entered_hand_ins_comes_from_the_decisions(tmp_path):
    cfg = course(tmp_path)
    seen = decided({"action": "enter", "attempt": "0001-x", "label": "E1", "number": 1, "digest": "",
                    "submitted_at": "2026-12-04T22:00:00Z"},
                   {"action": "enter", "attempt": "bad", "label": "E", "submitted_at": "2026-12-04T22:00:00Z"})
    (a,) = which_counts.entered_as_told(cfg, "alice", seen)
    assert a.entered and a.label == "E1" and a.path == attempts.entered_dir(cfg, "alice") / "0001-x"
    assert a.manifest["submitted_at"] == "2026-12-04T22:00:00Z" and a.owner == "alice"
    assert which_counts.entered_as_told(cfg, "alice", None) == []


def test_standing_reads_the_extensions_file_for_the_students_deadline(tmp_path):
    cfg = course(tmp_path, '[extensions]\nfile = "extensions.toml"\n')
    (tmp_path / "extensions.toml").write_text("[alice]\nlate_days = 2\n")
    a = hand_in(cfg, tmp_path, DUE + D)
    st = which_counts.standing(cfg, "alice", student_standing.StudentDecisions())
    assert st.deadline.due == DUE + 2 * D
    assert st.whose == " (with your extension: 2 late days (due 2026-12-06T23:59:00Z))"
    assert st.pick.path == a and not st.info["late"]
    b = hand_in(cfg, tmp_path, DUE + D, student="bob")
    st = which_counts.standing(cfg, "bob", student_standing.StudentDecisions())
    assert (st.deadline.due, st.whose) == (DUE, "") and st.pick.path == b and st.info["days_late"] == 1


@pytest.mark.parametrize("policy", ["latest", "prefer-on-time", "on-time-only"])
def test_the_last_on_time_attempt_counts_when_all_are_on_time_under_every_policy(tmp_path, policy):
    cfg = course(tmp_path, f'policy = "{policy}"\n')
    hand_in(cfg, tmp_path, DUE - 3 * H)
    last = hand_in(cfg, tmp_path, DUE - H)
    pick, info = which_counts.choose(mine(cfg), cfg.deadline)
    assert pick.path == last and info["effective_time"] == "2026-12-04T22:59:00Z"
