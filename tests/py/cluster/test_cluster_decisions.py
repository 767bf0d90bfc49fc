"""The course staff's decisions (cluster/course_state.py's decision log): accept, withdraw for a student,
override, settle a needs_review, enter an e-mailed hand-in with its original time, publish grades — each
appended with who, when, what and why, honoured by the next plan and gradebook, shown to the student
without the why; an attempt edited after it was stored is a case for a person, not "after the cutoff,
ignored"; a student with an extension is told their own dates; gradebooks are versions.
No GPU: the planner and the gradebook run on synthetic grades (staff_class)."""
import csv
import datetime as dt
import json
import os

import pytest

from support import staff_class
from support.staff_class import D, DUE

import class_files  # noqa: E402  (cluster/, on sys.path through staff_class)
import attempts  # noqa: E402
import config  # noqa: E402
import course_state  # noqa: E402
import student_standing  # noqa: E402
import dropbox  # noqa: E402
import gemmlab_cluster  # noqa: E402
import attempt_records  # noqa: E402
import records  # noqa: E402
from commands import student  # noqa: E402
import attempt_state  # noqa: E402

H = dt.timedelta(hours=1)


def course(tmp_path, extra="", roster=("alice", "bob", "carol")):
    return config.load(staff_class.write_config(tmp_path, extra, roster=list(roster)))


def run(cfg, *args):
    return gemmlab_cluster.main(["--config", str(cfg.path), *args])


def plan(cfg) -> dict:
    sweep = staff_class.plan(cfg)
    return {e["student"]: e for e in json.loads((sweep / "plan.json").read_text())["students"]}


def gradebook(cfg, capsys) -> dict:
    capsys.readouterr()
    assert run(cfg, "gradebook", "--name", "final") == 0
    with open(cfg.sweeps_dir / "final" / "gradebook.csv") as f:
        return {r["student"]: r for r in csv.DictReader(f)}


def test_a_decision_needs_a_reason_and_the_staff(tmp_path, capsys, monkeypatch):
    cfg = course(tmp_path)
    staff_class.hand_in(cfg, tmp_path, "alice", {}, when=DUE - H)
    assert run(cfg, "accept", "--user", "alice", "--attempt", "1") == 1
    assert "say why" in capsys.readouterr().err
    assert run(cfg, "accept", "--user", "alcie", "--attempt", "1", "--why", "excused") == 1
    assert "'alcie' is not a student of this course (did you mean 'alice'?)" in capsys.readouterr().err
    assert run(cfg, "accept", "--user", "alice", "--attempt", "7", "--why", "excused") == 1
    assert "alice has no attempt '7'; their attempts: #1" in capsys.readouterr().err
    monkeypatch.setattr(course_state, "is_staff", lambda cfg: False)
    assert run(cfg, "override", "--user", "alice", "--final", "3", "--why", "x y z") == 1
    assert "override is for the course staff" in capsys.readouterr().err
    assert course_state.log(cfg).entries() == []


def test_accept_withdraw_and_override_are_recorded_and_honoured(tmp_path, capsys):
    cfg = course(tmp_path)
    on_time = staff_class.hand_in(cfg, tmp_path, "alice", {}, when=DUE - H)
    late = staff_class.hand_in(cfg, tmp_path, "alice", {"tiled": "tiled_textbook"}, when=DUE + 2 * D)
    staff_class.hand_in(cfg, tmp_path, "bob", {}, when=DUE - H)
    staff_class.hand_in(cfg, tmp_path, "carol", {}, when=DUE - H)
    assert plan(cfg)["alice"]["attempt_name"] == late.name  # policy latest: the late one, with its penalty

    # accept: the on-time attempt counts for alice
    assert run(cfg, "accept", "--user", "alice", "--attempt", "1", "--why", "late one was a mistake, by e-mail") == 0
    out = capsys.readouterr().out
    assert "alice: attempt #1" in out and "counts from now on (decision #1 by" in out, out
    entry = plan(cfg)["alice"]
    assert entry["attempt_name"] == on_time.name and not entry["late"] and "course staff's decision" in entry["note"]
    # withdraw for bob: none of his counts
    assert run(cfg, "withdraw", "--user", "bob", "--attempt", "1", "--why", "asked to withdraw from the course") == 0
    assert plan(cfg)["bob"]["status"] == "not_counted"
    # override carol's score
    sweep = staff_class.plan(cfg)
    for s in ("alice", "carol"):
        staff_class.write_grade(sweep, s, staff_class.full_rows())
    assert run(cfg, "override", "--user", "carol", "--final", "42.5", "--why", "regrade request #17: reuse ok") == 0
    book = gradebook(cfg, capsys)
    assert (book["carol"]["status"], book["carol"]["final"]) == ("override", "42.5")
    assert "regrade request #17" in book["carol"]["message"] and "[it was graded: 50 point(s)]" in book["carol"]["message"]
    assert book["carol"]["decisions"].startswith("#3 final 42.5 (root: regrade request #17")
    assert book["alice"]["decisions"].startswith("#1 accept #1 (")
    plain = {r["student"]: r for r in csv.DictReader(open(cfg.sweeps_dir / "final" / "export" / "grades.csv"))}
    assert plain["carol"]["final"] == "42.5"
    # the log: who, when, what, why; the student's view: what, never why
    log = course_state.log(cfg).entries()
    assert [(e["seq"], e["action"], e["student"]) for e in log] == [(1, "accept", "alice"), (2, "withdraw", "bob"),
                                                                     (3, "override", "carol")]
    assert all(e["by"] and e["at"] and e["why"] for e in log)
    student_standing.token(cfg, "carol", create=True)
    student_standing.write_views(cfg, ["carol"])
    view = student_standing.read_view(cfg, "carol")
    assert view["decisions"] == [{"seq": 3, "at": log[2]["at"], "action": "override", "final": 42.5}]
    # cleared: computed again
    assert run(cfg, "override", "--user", "carol", "--clear", "--why", "decided otherwise") == 0
    assert gradebook(cfg, capsys)["carol"]["status"] == "graded"
    capsys.readouterr()
    assert run(cfg, "decisions", "--user", "carol") == 0
    out = capsys.readouterr().out
    assert "override" in out and "clear-override" in out and "regrade request #17" in out, out


@pytest.mark.parametrize("final, words", [("850", "above the rubric's maximum, 110"), ("110.5", "above the rubric's"),
                                          ("nan", "not a finite number"), ("inf", "not a finite number"),
                                          ("-1", "below 0")])
def test_a_final_score_outside_the_rubric_is_refused_before_it_is_logged(tmp_path, capsys, final, words):
    cfg = course(tmp_path)
    staff_class.hand_in(cfg, tmp_path, "alice", {}, when=DUE - H)
    capsys.readouterr()
    assert run(cfg, "override", "--user", "alice", "--final", final, "--why", "regrade request") == 1
    err = capsys.readouterr().err
    assert words in err and "from 0 to 110 points" in err and "Nothing was recorded" in err, err
    assert run(cfg, "settle", "--user", "alice", "--final", final, "--why", "case closed") == 1
    assert course_state.log(cfg).entries() == []
    # the maximum, extra credit included, is a score a person may set
    assert run(cfg, "override", "--user", "alice", "--final", "110", "--why", "all of it, and the extra") == 0


def test_a_bad_score_an_older_version_logged_is_named_and_skipped(tmp_path, capsys):
    cfg = course(tmp_path)
    for s in ("alice", "bob", "carol"):
        staff_class.hand_in(cfg, tmp_path, s, {}, when=DUE - H)
    sweep = staff_class.plan(cfg)
    for s in ("alice", "bob", "carol"):
        staff_class.write_grade(sweep, s, staff_class.full_rows())
    # lines as an older version of the tools wrote them: no check of the score
    course_state.log(cfg).append("override", student="alice", why="typo", final=float("nan"))
    course_state.log(cfg).append("override", student="bob", why="typo", final=850.0)
    course_state.log(cfg).append("override", student="carol", why="partial credit", final=42.5)
    book = gradebook(cfg, capsys)
    out = capsys.readouterr().out
    assert (book["alice"]["status"], book["alice"]["final"]) == ("graded", "50")
    assert (book["bob"]["status"], book["bob"]["final"]) == ("graded", "50")
    assert (book["carol"]["status"], book["carol"]["final"]) == ("override", "42.5")
    summary = (sweep / "summary.md").read_text()
    for text in (out, summary):
        assert "decision #1 (override alice" in text and "final score to nan: nan is not a finite number; not applied" in text, text
        assert "decision #2 (override bob" in text and "850 is above the rubric's maximum, 110" in text, text
    # cleared afterwards: the gradebook still builds
    assert run(cfg, "override", "--user", "alice", "--clear", "--why", "computed again") == 0
    assert gradebook(cfg, capsys)["alice"]["status"] == "graded"


PAST = dt.datetime(2026, 1, 5, 23, 59, tzinfo=dt.timezone.utc)


def test_an_emailed_hand_in_keeps_its_original_time(tmp_path, capsys):
    path = staff_class.write_config(tmp_path, roster=["alice", "bob"])
    path.write_text(path.read_text().replace(f"due = {DUE.isoformat()}", f"due = {PAST.isoformat()}"))
    cfg = config.load(path)
    d = tmp_path / "mail"
    staff_class.hand_in(cfg, tmp_path, "bob", {})  # (writes hand-ins/bob-1: the e-mailed files)
    assert run(cfg, "enter", "--user", "alice", "--student-dir", str(tmp_path / "hand-ins" / "bob-1"),
               "--submitted-at", (PAST - 2 * H).isoformat(), "--why", "the cluster was down; e-mail at 21:59") == 0
    out = capsys.readouterr().out
    assert "alice: E1 stored" in out and "on time" in out, out
    entry = plan(cfg)["alice"]
    assert entry["label"] == "E1" and not entry["late"] and entry["effective_time"] == records.iso(PAST - 2 * H)
    assert course_state.log(cfg).entries()[0]["submitted_at"] == records.iso(PAST - 2 * H)
    assert run(cfg, "enter", "--user", "alice", "--student-dir", str(tmp_path / "hand-ins" / "bob-1"), "--submitted-at",
               "2099-01-01T00:00:00Z", "--why", "x y z") == 1
    assert "is in the future" in capsys.readouterr().err
    assert run(cfg, "enter", "--user", "alice", "--student-dir", str(d), "--submitted-at", "2026-01-04 23:00",
               "--why", "x y z") == 1
    assert "has no time zone" in capsys.readouterr().err
    capsys.readouterr()
    assert run(cfg, "status", "--user", "alice") == 0
    assert "E1" in capsys.readouterr().out


def test_a_student_whose_only_hand_in_was_entered_sees_it_in_status(tmp_path, capsys, monkeypatch):
    """alice's hand-in reached the staff by e-mail: she has no directory in the drop box, and cannot read
    the staff's area or the decision log. Her first `make status` makes her place (token) there; once
    the staff next publish, it lists E1 with its time, and that it counts."""
    path = staff_class.write_config(tmp_path, roster=["alice", "bob"])
    path.write_text(path.read_text().replace(f"due = {DUE.isoformat()}", f"due = {PAST.isoformat()}"))
    cfg = config.load(path)
    assert run(cfg, "setup") == 0  # the course is set up and published
    staff_class.hand_in(cfg, tmp_path, "bob", {})  # (writes hand-ins/bob-1: the e-mailed files)
    assert run(cfg, "enter", "--user", "alice", "--student-dir", str(tmp_path / "hand-ins" / "bob-1"),
               "--submitted-at", (PAST - 2 * H).isoformat(), "--why", "the cluster was down; e-mail at 21:59") == 0

    def as_a_student(cfg, student):  # the staff's area of entered hand-ins is closed to a student
        raise PermissionError(13, "Permission denied", str(attempts.entered_dir(cfg, student)))
    monkeypatch.setattr(dropbox, "current_user", lambda: "alice")
    monkeypatch.setattr(course_state, "is_staff", lambda c: False)
    monkeypatch.setattr(student_standing, "decisions", lambda c: {})  # the log is the staff's (PermissionError: {})
    monkeypatch.setattr(attempts, "entered_of", as_a_student)
    capsys.readouterr()
    assert run(cfg, "status") == 0
    assert student_standing.token(cfg, "alice", create=False), capsys.readouterr()  # her place, made by status
    monkeypatch.undo()  # the staff publish again (nothing changed: what each student may see is refreshed)
    assert run(cfg, "publish") == 0
    monkeypatch.setattr(dropbox, "current_user", lambda: "alice")
    monkeypatch.setattr(course_state, "is_staff", lambda c: False)
    monkeypatch.setattr(student_standing, "decisions", lambda c: {})
    monkeypatch.setattr(attempts, "entered_of", as_a_student)
    capsys.readouterr()
    assert run(cfg, "status") == 0
    out = capsys.readouterr().out
    line = next((x for x in out.splitlines() if x.strip().startswith("E1")), "")
    assert records.iso(PAST - 2 * H) in line and "entered by the course staff" in line and "<- counts" in line, out
    assert "e-mail" not in out  # what, never why


def test_an_attempt_edited_after_it_was_stored_needs_a_person(tmp_path, capsys):
    cfg = course(tmp_path)
    intact = staff_class.hand_in(cfg, tmp_path, "alice", {}, when=DUE - 2 * H)
    edited = staff_class.hand_in(cfg, tmp_path, "alice", {}, when=DUE - H)
    # after the deadline, alice changes her on-time attempt and rewrites its manifest to match
    f = edited / "files" / "tiled.cu"
    f.write_text(staff_class.splice("tiled", "tiled_textbook"))
    manifest = json.loads((edited / "manifest.json").read_text())
    manifest["files"]["tiled.cu"] = {"sha256": records.sha256_file(f), "bytes": f.stat().st_size}
    manifest["attempt_sha256"] = attempt_records.attempt_digest(manifest["files"])
    (edited / "manifest.json").write_text(json.dumps(manifest))
    stored = records.parse_iso(manifest["stored_at"])
    os.utime(f)  # (its ctime is now; the test backdates the stored time instead of waiting two minutes)
    manifest["stored_at"] = records.iso(stored - 10 * 60 * dt.timedelta(seconds=1))
    manifest["submitted_at"] = manifest["stored_at"] if manifest["clock"] == "drop-box file system" else manifest["submitted_at"]
    (edited / "manifest.json").write_text(json.dumps(manifest))
    entry = plan(cfg)["alice"]
    assert "attempt #2 was changed on" in entry["review"] and "after it was stored" in entry["review"], entry
    assert entry["intact"]["attempt_name"] == intact.name
    # settled: the intact attempt counts; the case is closed in every later plan
    assert run(cfg, "settle", "--user", "alice", "--attempt", "1", "--why", "talked to alice: #2 edited by mistake") == 0
    entry = plan(cfg)["alice"]
    assert "review" not in entry and entry["attempt_name"] == intact.name
    # settled the other way: a score of 0
    assert run(cfg, "settle", "--user", "alice", "--zero", "--why", "integrity office: case 2026-114") == 0
    sweep = staff_class.plan(cfg)
    staff_class.write_grade(sweep, "alice", staff_class.full_rows())
    book = gradebook(cfg, capsys)
    assert (book["alice"]["status"], book["alice"]["final"]) == ("override", "0")


def test_a_student_with_an_extension_is_told_their_own_dates(tmp_path, capsys, monkeypatch):
    (tmp_path / "extensions.toml").write_text('[alice]\nlate_days = 2\nreason = "medical note"\n')
    cfg = course(tmp_path, '[extensions]\nfile = "extensions.toml"\n')
    late_for_class = staff_class.hand_in(cfg, tmp_path, "alice", {}, when=DUE + D)
    # alice cannot read the staff's extensions file (it holds reasons)
    real = class_files.load_extensions

    def students_cannot_read(c, known, source=""):
        raise PermissionError(13, "Permission denied", str(c.file_setting("extensions", "file")))
    monkeypatch.setattr(class_files, "load_extensions", students_cannot_read)
    lines = attempt_state.how_it_counts(cfg, "alice", late_for_class)
    assert lines[0].startswith("LATE") and "not shown here yet and still applies" in lines[0], lines
    # the staff publish the course state: alice's view holds her dates, not the reason
    monkeypatch.setattr(class_files, "load_extensions", real)
    student_standing.token(cfg, "alice", create=True)  # (alice's first command made it)
    assert run(cfg, "setup") == 0
    assert run(cfg, "publish") == 0
    view = student_standing.read_view(cfg, "alice")
    assert view["extension"]["due"] == "2026-12-06T23:59:00Z" and "medical" not in json.dumps(view)
    monkeypatch.setattr(class_files, "load_extensions", students_cannot_read)
    lines = attempt_state.how_it_counts(cfg, "alice", late_for_class)
    assert lines == ["on time: due 2026-12-06T23:59:00Z (with your extension: 2 late days (due 2026-12-06T23:59:00Z)), "
                     "1 day to spare"], lines


def test_gradebooks_are_versions_and_official_grades_reach_the_students(tmp_path, capsys, monkeypatch):
    cfg = course(tmp_path)
    for s in ("alice", "bob"):
        staff_class.hand_in(cfg, tmp_path, s, {}, when=DUE - H)
    sweep = staff_class.plan(cfg)
    for s in ("alice", "bob"):
        staff_class.write_grade(sweep, s, staff_class.full_rows())
    gradebook(cfg, capsys)
    first = (sweep / "gradebook.csv").resolve()
    assert run(cfg, "override", "--user", "bob", "--final", "12", "--why", "plagiarism settled") == 0
    gradebook(cfg, capsys)
    second = (sweep / "gradebook.csv").resolve()
    assert (first.parent.name, second.parent.name) == ("001", "002")
    assert "bob,override" not in first.read_text() and "bob,override" in second.read_text()
    assert (sweep / "export" / "canvas.csv").resolve().parent.parent.name == "002"
    index = [json.loads(line) for line in (sweep / "versions" / "index.jsonl").read_text().splitlines()]
    assert [v["version"] for v in index] == ["001", "002"] and index[1]["decisions"] == 1 and index[1]["by"]
    # published: each student sees their official grade with make results — but not a gradebook older
    # than a decision: it is not the grade the decision gives
    student_standing.token(cfg, "bob", create=True)
    capsys.readouterr()
    assert run(cfg, "setup") == 0 and run(cfg, "publish") == 0
    assert run(cfg, "override", "--user", "alice", "--final", "40", "--why", "late work excused in part") == 0
    assert run(cfg, "publish-grades", "--name", "final") == 1
    err = capsys.readouterr().err
    assert "was built before decision(s) #3 override alice" in err and "Nothing was published" in err, err
    gradebook(cfg, capsys)
    assert run(cfg, "publish-grades", "--name", "final") == 0
    assert "gradebook version 003" in capsys.readouterr().out
    monkeypatch.setattr(dropbox, "current_user", lambda: "bob")
    capsys.readouterr()
    assert run(cfg, "results") == 0
    out = capsys.readouterr().out
    assert out.startswith("official grade (sweep final, published ") and ": 12 / 100" in out and "set by the course staff" in out, out
    assert course_state.log(cfg).entries()[-1]["action"] == "publish-grades"


@pytest.mark.parametrize("status", ["no_gpu", "error"])
def test_the_same_files_after_a_grading_that_found_nothing_are_graded_again(tmp_path, status):
    cfg = course(tmp_path)
    first = staff_class.hand_in(cfg, tmp_path, "alice", {})
    (first / "grading").mkdir()
    (first / "grading" / "outcome.json").write_text(json.dumps({"status": status}))
    again = staff_class.hand_in(cfg, tmp_path, "alice", {})
    assert attempt_state.why_not_queue(cfg, "alice", again) == ("", "")
    (first / "grading" / "outcome.json").write_text(json.dumps({"status": "graded", "score": {"total": 5, "max": 100}}))
    third = staff_class.hand_in(cfg, tmp_path, "alice", {})
    assert attempt_state.why_not_queue(cfg, "alice", third)[0].startswith("the same files as your attempt #1")


def renamed(attempt, number: int):
    """What a student can do to their own attempt: rename its directory (its files keep their change times)."""
    to = attempt.with_name(f"attempt-{number:04d}-{attempt.name.split('-')[2]}")
    attempt.rename(to)
    return to


def test_a_decision_follows_its_attempts_files_and_a_renamed_attempt_needs_a_person(tmp_path, capsys):
    cfg = course(tmp_path)
    on_time = staff_class.hand_in(cfg, tmp_path, "alice", {}, when=DUE - H)
    late = staff_class.hand_in(cfg, tmp_path, "alice", {"tiled": "tiled_textbook"}, when=DUE + 2 * D)
    assert run(cfg, "withdraw", "--user", "alice", "--attempt", "2", "--why", "copied: integrity office") == 0
    e = course_state.log(cfg).entries()[-1]
    assert (e["attempt"], e["label"], e["number"]) == (late.name, "#2", 2)
    assert e["digest"] == attempts.at(late).digest and len(e["digest"]) == 64
    assert plan(cfg)["alice"]["attempt_name"] == on_time.name

    # alice renames the withdrawn attempt: it is not counted silently, the decision is not applied silently
    moved = renamed(late, 3)
    entry = plan(cfg)["alice"]
    assert entry["review"].startswith("decision #1 (withdraw #2, "), entry
    assert (f"was made on attempt #2 ({late.name}, files {e['digest'][:12]}): that attempt is gone: its files are now "
            f"attempt #3 ({moved.name}); the decision is not applied") in entry["review"], entry
    capsys.readouterr()
    assert run(cfg, "status", "--user", "alice") == 0
    out = capsys.readouterr().out
    assert "status: alice: needs_review: decision #1 (withdraw #2," in out and "its files are now attempt #3" in out, out

    # a person decides: withdrawn again under its new name, the earlier decision's place is taken
    assert run(cfg, "withdraw", "--user", "alice", "--attempt", "3", "--why", "renamed after decision #1") == 0
    entry = plan(cfg)["alice"]
    assert "review" not in entry and entry["attempt_name"] == on_time.name, entry

    # renamed back: the first decision holds again, and the second is the case now
    renamed(moved, 2)
    entry = plan(cfg)["alice"]
    assert entry["attempt_name"] == on_time.name and entry["review"].startswith("decision #2 (withdraw #3, "), entry
    assert f"that attempt is gone: its files are now attempt #2 ({late.name})" in entry["review"], entry


def test_a_decision_on_an_attempt_whose_files_changed_under_its_number_needs_a_person(tmp_path, capsys):
    """alice swaps the names of her two attempts: #1, which the staff accepted, now holds her late files."""
    cfg = course(tmp_path)
    first = staff_class.hand_in(cfg, tmp_path, "alice", {}, when=DUE - H)
    second = staff_class.hand_in(cfg, tmp_path, "alice", {"tiled": "tiled_textbook"}, when=DUE + 2 * D)
    assert run(cfg, "accept", "--user", "alice", "--attempt", "1", "--why", "the late one was a mistake") == 0
    accepted = course_state.log(cfg).entries()[-1]
    assert "files" not in accepted and accepted["digest"] == attempts.at(first).digest
    assert plan(cfg)["alice"]["attempt_name"] == first.name
    swap = first.with_name("attempt-0009-20000101T000000Z")
    first.rename(swap)
    second.rename(first)
    swap.rename(second)
    entry = plan(cfg)["alice"]
    assert entry["review"].startswith("decision #1 (accept #1, "), entry
    assert (f"attempt #1 ({first.name}) now holds other files ({attempts.at(first).digest[:12]}), and the files decided "
            f"on are now attempt #2 ({second.name}); the decision is not applied") in entry["review"], entry
    # settled: the attempt that holds the files decided on counts
    assert run(cfg, "settle", "--user", "alice", "--attempt", "2", "--why", "the on-time files, renamed") == 0
    entry = plan(cfg)["alice"]
    assert "review" not in entry and entry["attempt_name"] == second.name, entry

    # gone altogether: a case again, until a final score is set
    assert run(cfg, "withdraw", "--user", "alice", "--attempt", "1", "--why", "asked to") == 0
    (first / "files" / "tiled.cu").unlink()
    entry = plan(cfg)["alice"]
    assert "decision #3 (withdraw #1, " in entry["review"] and "now holds other files" in entry["review"], entry
    import shutil
    shutil.rmtree(first)
    assert "that attempt is gone, and no attempt holds its files" in plan(cfg)["alice"]["review"]
    assert run(cfg, "override", "--user", "alice", "--final", "0", "--why", "integrity office: case 2026-9") == 0
    assert "review" not in plan(cfg)["alice"]


def test_a_decision_logged_before_decisions_recorded_a_digest_names_its_attempt_by_name(tmp_path):
    """An older line (no number, no digest) applies to the attempt of its directory name, as it always did."""
    cfg = course(tmp_path)
    on_time = staff_class.hand_in(cfg, tmp_path, "alice", {}, when=DUE - H)
    late = staff_class.hand_in(cfg, tmp_path, "alice", {}, when=DUE + 2 * D)
    course_state.log(cfg).append("withdraw", student="alice", why="asked to", attempt=late.name, label="#2")
    assert plan(cfg)["alice"]["attempt_name"] == on_time.name
    moved = renamed(late, 3)
    entry = plan(cfg)["alice"]
    assert "review" not in entry and entry["attempt_name"] == moved.name, entry
