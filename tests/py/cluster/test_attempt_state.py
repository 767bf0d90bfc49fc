"""cluster/attempt_state.py, how one attempt stands in a student's words: how_it_counts (on time, late
under each policy, after the cutoff, an attempt the staff accepted), described (where its feedback
grading stands, from its records, escaped) and hand_in_problems (what make submit found in it).
(What make submit and make status print around these lines: test_cluster_late.py.)

  /usr/bin/python3 -m pytest -q tests/py/cluster/test_attempt_state.py
"""
import datetime as dt
import json

import pytest

from support import staff_class
from support.staff_class import DUE

import attempt_state  # noqa: E402  (cluster/, on sys.path through staff_class)
import attempts  # noqa: E402
import config  # noqa: E402
import course_state  # noqa: E402
import dropbox  # noqa: E402
import student_standing  # noqa: E402

H = dt.timedelta(hours=1)
D = dt.timedelta(days=1)
MIN = dt.timedelta(minutes=1)


def course(tmp_path, late=""):
    return config.load(staff_class.write_config(tmp_path, late, roster=["alice"]))


def hand_in(cfg, tmp_path, when, extra=None):
    src = tmp_path / "src"
    if not src.is_dir():
        src.mkdir()
        for name in staff_class.STAGE_FILES:
            (src / name).write_text((staff_class.ROOT / "student" / name).read_text())
    return dropbox.store_attempt(cfg, "alice", dropbox.collect(cfg, src, None), submitted_at=when, extra=extra)


# ---- how_it_counts ----------------------------------------------------------------------------------
def test_on_time_says_the_due_date_and_the_time_to_spare(tmp_path):
    cfg = course(tmp_path)
    a = hand_in(cfg, tmp_path, DUE - D - 40 * MIN)
    assert attempt_state.how_it_counts(cfg, "alice", a) == ["on time: due 2026-12-04T23:59:00Z, 1 day to spare"]


def test_a_course_without_a_due_date_says_nothing(tmp_path):
    path = staff_class.write_config(tmp_path, roster=["alice"])
    path.write_text(path.read_text().replace(f"due = {DUE.isoformat()}\n", ""))
    cfg = config.load(path)
    a = hand_in(cfg, tmp_path, DUE + D)
    assert attempt_state.how_it_counts(cfg, "alice", a) == []


def test_an_attempt_not_among_the_students_says_nothing(tmp_path):
    cfg = course(tmp_path)
    hand_in(cfg, tmp_path, DUE - H)
    assert attempt_state.how_it_counts(cfg, "alice", tmp_path / "elsewhere") == []


def test_late_under_latest_counts_with_its_penalty(tmp_path):
    cfg = course(tmp_path)
    a = hand_in(cfg, tmp_path, DUE + 2 * D + 5 * MIN)
    assert attempt_state.how_it_counts(cfg, "alice", a) == [
        "LATE: handed in 2 days after your due date 2026-12-04T23:59:00Z",
        "late penalty: 30 % of its score (10 % per started day late, at most 50 %)",
        "this attempt counts (policy: latest)"]


def test_late_under_on_time_only_will_not_count_and_names_the_attempt_that_does(tmp_path):
    cfg = course(tmp_path, 'policy = "on-time-only"\n')
    hand_in(cfg, tmp_path, DUE - H)
    late = hand_in(cfg, tmp_path, DUE + H)
    assert attempt_state.how_it_counts(cfg, "alice", late) == [
        "LATE: handed in 1 h after your due date 2026-12-04T23:59:00Z",
        "the course counts on-time hand-ins only: it will not count",
        "your attempt #1 (2026-12-04T22:59:00Z) counts, not this one (policy: on-time-only)"]


def test_the_only_attempt_late_under_on_time_only_leaves_none_that_counts(tmp_path):
    cfg = course(tmp_path, 'policy = "on-time-only"\n')
    late = hand_in(cfg, tmp_path, DUE + H)
    assert attempt_state.how_it_counts(cfg, "alice", late)[1:] == [
        "the course counts on-time hand-ins only: it will not count",
        "no attempt of yours counts now: hand in before the cutoff, or ask the course staff"]


def test_after_the_cutoff_it_will_not_count(tmp_path):
    cfg = course(tmp_path, f"cutoff = {(DUE + 2 * H).isoformat()}\n")
    late = hand_in(cfg, tmp_path, DUE + 3 * H)
    assert attempt_state.how_it_counts(cfg, "alice", late) == [
        "LATE: handed in 3 h after your due date 2026-12-04T23:59:00Z",
        "it is after the late cutoff (2026-12-05T01:59:00Z): it will not count",
        "no attempt of yours counts now: hand in before the cutoff, or ask the course staff"]


def test_an_attempt_the_staff_accepted_stays_the_one_that_counts(tmp_path):
    cfg = course(tmp_path)
    first = hand_in(cfg, tmp_path, DUE - H)
    a = attempts.one(cfg, first)
    course_state.log(cfg).append("accept", student="alice", why="excused", **student_standing.attempt_fields(a))
    late = hand_in(cfg, tmp_path, DUE + H)
    assert attempt_state.how_it_counts(cfg, "alice", late)[1:] == [
        "late penalty: 10 % of its score (10 % per started day late, at most 50 %)",
        "the course staff decided that your attempt #1 (2026-12-04T22:59:00Z) counts: this hand-in does not change "
        "that (ask them if it should)"]


# ---- described ----------------------------------------------------------------------------------------
def with_record(cfg, path, name, record):
    target = path / name
    target.parent.mkdir(exist_ok=True)
    target.write_text(record if isinstance(record, str) else json.dumps(record))
    return attempts.one(cfg, path)


def test_an_attempt_without_records_is_not_graded(tmp_path):
    cfg = course(tmp_path)
    assert attempt_state.described(attempts.one(cfg, hand_in(cfg, tmp_path, DUE - H))) == "not graded"


def test_a_graded_attempt_says_its_score_after_whose_records_they_are(tmp_path):
    cfg = course(tmp_path)
    a = with_record(cfg, hand_in(cfg, tmp_path, DUE - H), "grading/outcome.json",
                    {"status": "graded", "message": "graded", "score": {"total": 41.5, "max": 60}})
    assert attempt_state.described(a) == "graded 41.5/60"
    assert attempt_state.described(a, says="alice's records: ") == "alice's records: graded 41.5/60"


def test_an_outcome_that_is_not_graded_says_its_status_escaped_without_a_score(tmp_path):
    cfg = course(tmp_path)
    a = with_record(cfg, hand_in(cfg, tmp_path, DUE - H), "grading/outcome.json",
                    {"status": "no_gpu\x1b[2J", "message": "m", "score": {"total": 1, "max": 60}})
    assert attempt_state.described(a) == "no_gpu\\x1b[2J"


def test_an_unreadable_outcome_is_said_and_sends_the_student_to_the_staff(tmp_path):
    cfg = course(tmp_path)
    a = with_record(cfg, hand_in(cfg, tmp_path, DUE - H), "grading/outcome.json", '{"status": ')
    text = attempt_state.described(a)
    assert text.startswith("its grading record cannot be read (") and text.endswith("): ask the course staff"), text


def test_a_job_that_was_not_queued_says_why(tmp_path):
    cfg = course(tmp_path)
    a = with_record(cfg, hand_in(cfg, tmp_path, DUE - H), "job.json", {"not_queued": "the same files as #1\r"})
    assert attempt_state.described(a) == "not queued (the same files as #1\\r)"


def test_a_job_gone_without_results_names_its_log(tmp_path, monkeypatch):
    cfg = course(tmp_path)
    path = hand_in(cfg, tmp_path, DUE - H)
    a = with_record(cfg, path, "job.json", {"job_id": "4242", "queued": "2026-12-04T22:59:01Z"})
    monkeypatch.setenv("PATH", str(tmp_path / "no-slurm-here"))  # no scontrol to ask
    assert attempt_state.described(a) == f"job 4242 ended (gone) without results: see {path}/grade-4242.log"


# ---- hand_in_problems ----------------------------------------------------------------------------------
@pytest.mark.parametrize("extra, shown", [
    ({}, ""),
    ({"report": {"verdict": "ok"}, "does_not_compile": []}, "report ok"),
    ({"report": {"verdict": "none"}}, "no report"),
    ({"report": {"verdict": "example"}}, "the EXAMPLE report"),
    ({"report": {"verdict": "mismatch"}, "does_not_compile": ["tiled.cu", "reuse.cu"]},
     "report of other stage files  does not compile: tiled.cu, reuse.cu"),
    ({"does_not_compile": ["naive.cu"]}, "does not compile: naive.cu"),
    ({"report": {"verdict": "odd\x07"}, "does_not_compile": ["a\nb.cu"]}, "report: odd\\x07  does not compile: a\\nb.cu"),
])
def test_hand_in_problems_says_the_report_and_what_did_not_compile(tmp_path, extra, shown):
    cfg = course(tmp_path)
    a = attempts.one(cfg, hand_in(cfg, tmp_path, DUE - H, extra=extra))
    assert attempt_state.hand_in_problems(a) == shown
