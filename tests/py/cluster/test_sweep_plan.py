"""cluster/sweep_plan.py, a sweep's plan: plan_sweep's entry per student (selected with the attempt, its
label and digest; missing; not_counted; open_until while a deadline has not passed; the extension and
the decisions that apply; a review case for an attempt changed after it was stored or a decision whose
attempt changed), and plan_record's fields with the drop box's folders the roster does not list.

  /usr/bin/python3 -m pytest -q tests/py/cluster/test_sweep_plan.py
"""
import datetime as dt

from support import staff_class
from support.staff_class import DUE, PLANNED

import attempts  # noqa: E402  (cluster/, on sys.path through staff_class)
import config  # noqa: E402
import course_state  # noqa: E402
import dropbox  # noqa: E402
import records  # noqa: E402
import student_standing  # noqa: E402
import sweep_plan  # noqa: E402

H = dt.timedelta(hours=1)
D = dt.timedelta(days=1)
ROSTER = ["alice", "bob", "carol"]
TOKEN = "0123456789abcdef" * 2


def course(tmp_path, late="", extensions=None, roster=ROSTER):
    extra = late
    if extensions is not None:
        (tmp_path / "extensions.toml").write_text(extensions)
        extra += '[extensions]\nfile = "extensions.toml"\n'
    cfg = config.load(staff_class.write_config(tmp_path, extra, roster=list(roster)))
    dropbox.setup_dirs(cfg)
    return cfg


def hand_in(cfg, tmp_path, student, when):
    return staff_class.hand_in(cfg, tmp_path, student, {}, when=when)


def by_student(entries):
    return {e["student"]: e for e in entries}


def test_each_student_is_selected_missing_or_not_counted(tmp_path):
    cfg = course(tmp_path)
    hand_in(cfg, tmp_path, "alice", DUE - H)
    late = hand_in(cfg, tmp_path, "alice", DUE + H)
    only = hand_in(cfg, tmp_path, "carol", DUE - H)
    (only / "withdrawn.json").write_text('{"withdrawn_at": "2026-11-29T00:00:00Z", "by": "carol"}\n')
    plan = by_student(sweep_plan.plan_sweep(cfg, when=PLANNED))
    assert sorted(plan) == ROSTER

    alice = plan["alice"]
    a = attempts.one(cfg, late)
    assert alice == {"student": "alice", "attempts": 2, "late": True, "days_late": 1, "penalty_pct": 10.0, "note": "",
                     "effective_time": records.iso(DUE + H), "status": "selected", "attempt": str(late),
                     "attempt_name": late.name, "label": "#2", "digest": a.digest, "report": a.report_verdict()}

    assert plan["bob"] == {"student": "bob", "attempts": 0, "late": False, "days_late": 0, "penalty_pct": 0.0,
                           "note": "", "status": "missing"}
    carol = plan["carol"]
    assert carol["status"] == "not_counted" and carol["attempts"] == 1 and "attempt" not in carol
    assert carol["note"] == "no attempt counts under the late policy; withdrawn by the student: #1"


def test_students_plans_only_those(tmp_path):
    cfg = course(tmp_path)
    hand_in(cfg, tmp_path, "alice", DUE - H)
    assert [e["student"] for e in sweep_plan.plan_sweep(cfg, when=PLANNED, students=["bob"])] == ["bob"]


def test_a_student_whose_deadline_has_not_passed_is_open_until_it(tmp_path):
    cfg = course(tmp_path, f"cutoff = {(DUE + D).isoformat()}\n", extensions="[bob]\nlate_days = 3\n")
    hand_in(cfg, tmp_path, "alice", DUE - H)
    hand_in(cfg, tmp_path, "bob", DUE - H)
    plan = by_student(sweep_plan.plan_sweep(cfg, when=DUE + 2 * H))
    assert plan["alice"]["open_until"] == records.iso(DUE + D)  # the cutoff
    assert plan["bob"]["open_until"] == records.iso(DUE + 4 * D)  # his cutoff moves with his extension
    assert plan["bob"]["extension"] == "3 late days (due 2026-12-07T23:59:00Z)"
    assert "extension" not in plan["alice"]
    plan = by_student(sweep_plan.plan_sweep(cfg, when=DUE + 2 * D))
    assert "open_until" not in plan["alice"] and "open_until" in plan["bob"]


def test_an_attempt_changed_after_it_was_stored_is_a_case_and_the_intact_one_is_kept_in_view(tmp_path):
    cfg = course(tmp_path)
    first = hand_in(cfg, tmp_path, "alice", DUE - 2 * H)
    second = hand_in(cfg, tmp_path, "alice", DUE - H)
    with open(second / "files" / "naive.cu", "a") as f:
        f.write("// edited after the hand-in\n")
    alice = by_student(sweep_plan.plan_sweep(cfg, when=PLANNED))["alice"]
    assert alice["status"] == "selected" and alice["label"] == "#2"
    assert alice["review"] == "attempt #2 naive.cu does not match its sha256 in the manifest", alice["review"]
    intact = attempts.one(cfg, first)
    assert alice["intact"] == {"attempt": str(first), "attempt_name": first.name, "label": "#1", "number": 1,
                               "digest": intact.digest, "penalty_pct": 0.0}


def test_a_decision_whose_attempt_changed_is_a_review_case_and_decisions_are_listed(tmp_path):
    cfg = course(tmp_path)
    hand_in(cfg, tmp_path, "alice", DUE - 2 * H)
    second = hand_in(cfg, tmp_path, "alice", DUE - H)
    fields = dict(student_standing.attempt_fields(attempts.one(cfg, second)), digest="0" * 64)
    course_state.log(cfg).append("withdraw", student="alice", why="copied", **fields)
    alice = by_student(sweep_plan.plan_sweep(cfg, when=PLANNED))["alice"]
    assert alice["decisions"] == [1]
    assert alice["label"] == "#2"  # the decision is not applied
    assert alice["review"].startswith("decision #1 (withdraw #2, ") and alice["review"].endswith(
        "; the decision is not applied"), alice["review"]
    assert alice["intact"]["label"] == "#2"


def test_the_staffs_accept_is_planned_with_its_own_lateness(tmp_path):
    cfg = course(tmp_path, 'policy = "on-time-only"\n')
    hand_in(cfg, tmp_path, "alice", DUE - H)
    late = hand_in(cfg, tmp_path, "alice", DUE + H)
    course_state.log(cfg).append("accept", student="alice", why="excused",
                                 **student_standing.attempt_fields(attempts.one(cfg, late)))
    alice = by_student(sweep_plan.plan_sweep(cfg, when=PLANNED))["alice"]
    assert (alice["label"], alice["penalty_pct"], alice["decisions"]) == ("#2", 10.0, [1])
    assert alice["note"] == "attempt #2 counts: the course staff's decision" and "review" not in alice


def test_unreadable_entry_is_a_case_naming_the_student_and_why(tmp_path):
    class Fault:
        student, why = "alice", "PermissionError: denied"
    assert sweep_plan.unreadable_entry(Fault) == {
        "student": "alice", "attempts": 0, "status": "not_counted",
        "review": "alice's hand-ins could not be read (PermissionError: denied)"}


def test_plan_record_holds_the_plan_and_the_folders_off_the_roster(tmp_path):
    cfg = course(tmp_path, roster=["alice"])
    hand_in(cfg, tmp_path, "alice", DUE - H)
    (cfg.dropbox_dir / f"mallory+{TOKEN}").mkdir()
    (cfg.dropbox_dir / "stray-file").write_text("x")
    (cfg.dropbox_dir / ".staff-note").write_text("x")
    entries = sweep_plan.plan_sweep(cfg, when=PLANNED)
    course_state.log(cfg).append("override", student="alice", why="regrade", final=10)
    before = records.now().replace(microsecond=0)
    record = sweep_plan.plan_record(cfg, "final", entries, state_id="s1")
    created = records.parse_iso(record.pop("created"))
    assert before <= created <= records.now()
    assert record == {"schema": "gemmlab.sweep-plan/1", "sweep": "final", "course": "staff-test",
                      "due": "2026-12-04T23:59:00Z", "policy": "latest", "state": "s1", "decisions": 1,
                      "students": entries, "off_roster": sorted([f"mallory+{TOKEN}", "stray-file"])}
