"""The drop box's door (cluster/attempts.py): how an attempt is dated and how a change after storing
is told apart from the store's own writes — precisely, with no slack and no window. The hostile
drop boxes themselves (links, FIFOs, squatted directories, hostile JSON, ...) are the gallery's:
tests/dropbox_gallery/, tests/py/cluster/test_dropbox_gallery.py."""
import datetime as dt
import json
import os
import re
import time

from support import staff_class

import attempts  # noqa: E402  (cluster/, on sys.path through staff_class)
import config  # noqa: E402
import dropbox  # noqa: E402
import attempt_records  # noqa: E402
import records  # noqa: E402


def course(tmp_path):
    return config.load(staff_class.write_config(tmp_path, roster=["alice"]))


def only_attempt(cfg, student="alice"):
    (a,) = attempts.of_student(cfg, student)
    return a


def rehash(attempt_dir, keep_times=True):
    """Rewrite the manifest so that it matches the files as they are now (what a careful student does)."""
    m = json.loads((attempt_dir / "manifest.json").read_text())
    for p in (attempt_dir / "files").iterdir():
        m["files"][p.name] = {"sha256": records.sha256_file(p), "bytes": p.stat().st_size}
    m["attempt_sha256"] = attempt_records.attempt_digest(m["files"])
    (attempt_dir / "manifest.json").write_text(json.dumps(m))


def test_an_attempt_is_dated_by_its_latest_change_to_the_microsecond(tmp_path):
    """A manifest rewritten 0.6 s after the deadline makes the attempt 0.6 s late (the old rule took
    2 s off every change time: on time)."""
    cfg = course(tmp_path)
    d = dropbox.store_attempt(cfg, "alice", dropbox.collect(cfg, staff_class.ROOT / "student", None))
    due = only_attempt(cfg).effective_time() + dt.timedelta(seconds=0.3)
    deadline = cfg.deadline.shifted(due)
    assert deadline.lateness(only_attempt(cfg).effective_time()) <= dt.timedelta(0)
    time.sleep(max(0.0, (due - dt.datetime.now(dt.timezone.utc)).total_seconds()) + 0.6)
    (d / "manifest.json").write_bytes((d / "manifest.json").read_bytes())  # the same bytes, written again
    a = only_attempt(cfg)
    ctime = attempts.EPOCH + dt.timedelta(microseconds=(d / "manifest.json").stat().st_ctime_ns // 1000)
    assert a.effective_time() == ctime  # no slack: the change time itself
    assert deadline.lateness(a.effective_time()) >= dt.timedelta(seconds=0.5), (a.effective_time(), due)


def test_the_stores_own_writes_are_not_a_change(tmp_path):
    cfg = course(tmp_path)
    dropbox.store_attempt(cfg, "alice", dropbox.collect(cfg, staff_class.ROOT / "student", None))
    a = only_attempt(cfg)
    assert a.changed_after_store() == "" and a.integrity_problem() == ""


def test_an_edit_seconds_after_storing_is_a_case_for_a_person(tmp_path):
    """Edited (and the manifest rewritten to match) 50 ms after the store: raised for a person, where
    the old rule let any change within two minutes of the store pass as the store's own."""
    cfg = course(tmp_path)
    d = dropbox.store_attempt(cfg, "alice", dropbox.collect(cfg, staff_class.ROOT / "student", None))
    time.sleep(0.05)
    f = d / "files" / "tiled.cu"
    f.write_text(staff_class.splice("tiled", "tiled_textbook"))
    rehash(d)
    a = only_attempt(cfg)
    assert a.verify() == ""  # the manifest matches the files: only the change times tell
    why = a.changed_after_store()
    assert why.startswith("was changed on ") and "after it was stored on" in why, why
    assert "files/tiled.cu: changed" in why and "manifest.json: changed" in why, why


def test_a_touch_is_named_as_such(tmp_path):
    cfg = course(tmp_path)
    d = dropbox.store_attempt(cfg, "alice", dropbox.collect(cfg, staff_class.ROOT / "student", None))
    time.sleep(0.05)
    os.utime(d / "files" / "tiled.cu")
    why = only_attempt(cfg).changed_after_store()
    assert why.endswith("(files/tiled.cu: touched, bytes intact)"), why


def test_records_are_read_with_a_schema(tmp_path):
    """Whatever JSON a student leaves beside a hand-in, the door answers a record or names the case."""
    cfg = course(tmp_path)
    d = dropbox.store_attempt(cfg, "alice", dropbox.collect(cfg, staff_class.ROOT / "student", None))
    (d / "grading").mkdir()
    for text, words in [("1", "is not a JSON object"), ("[]", "is not a JSON object"),
                        ("[" * 100000 + "]" * 100000, "is not valid JSON"), ('{"status": NaN}', "is not valid JSON"),
                        ('{"status": "graded", "score": {"total": 1e999}}', "is not valid JSON"),
                        ('{"status": 7}', "'status' is int, not a text"), ("\xff", "is not valid JSON")]:
        (d / "grading" / "outcome.json").write_bytes(text.encode("latin-1"))
        a = only_attempt(cfg)
        assert a.record("grading/outcome.json") is None
        assert words in a.record_problems["grading/outcome.json"], (text[:20], a.record_problems)
    (d / "grading" / "outcome.json").write_text('{"status": "graded", "score": {"total": 3, "max": 10}}')
    assert only_attempt(cfg).record("grading/outcome.json")["score"]["total"] == 3


def test_the_sweep_lists_off_roster_directories_and_grades_only_roster_students(tmp_path):
    """The real `sweep` (graded here, the GPU hidden): a directory for a name the roster does not list
    is named in its output and the summary, and is no row of the gradebook or the export."""
    import csv
    import subprocess
    import sys
    path = staff_class.write_config(tmp_path, roster=["alice"])
    path.write_text(path.read_text().replace(f"due = {staff_class.DUE.isoformat()}", "due = 2026-01-01T00:00:00Z"))
    cfg = config.load(path)
    staff_class.hand_in(cfg, tmp_path, "alice", {})
    staff_class.hand_in(cfg, tmp_path, "zed", {})  # (stored as root: what a student's own mkdir in the box leaves)
    r = subprocess.run([sys.executable, str(staff_class.ROOT / "cluster" / "gemmlab_cluster.py"), "--config", str(path),
                        "sweep"], capture_output=True, text=True, timeout=900, env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(re.escape("directories in the drop box for names not on the roster (never graded, never in an "
                               f"export; look at them in {cfg.dropbox_dir}): ") + r"zed\+[0-9a-f]{32}\n", r.stdout), r.stdout
    sweep = cfg.sweeps_dir / "final"
    with open(sweep / "gradebook.csv") as f:
        assert [row["student"] for row in csv.DictReader(f)] == ["alice"]
    with open(sweep / "export" / "grades.csv") as f:
        assert [row["student"] for row in csv.DictReader(f)] == ["alice"]
    assert re.search(r"## Directories in the drop box for names not on the roster\n\nzed\+[0-9a-f]{32}:",
                     (sweep / "summary.md").read_text())


def test_an_attempt_holding_more_files_than_a_hand_in_is_a_case_and_none_of_them_is_read(tmp_path):
    """What the staff's process holds of one attempt is bounded: at most MAX_FILES files, each capped."""
    cfg = course(tmp_path)
    stored = staff_class.hand_in(cfg, tmp_path, "alice", {})
    for i in range(attempt_records.MAX_FILES):
        (stored / "files" / f"extra{i}.cu").write_bytes(b"// one of many\n")
    a = only_attempt(cfg)
    assert a.stage_bytes() == {} and a.digest == ""
    assert f"more than the {attempt_records.MAX_FILES} entries a hand-in may hold" in a.problem
    assert "more than the" in a.integrity_problem()


def test_a_drop_box_flooded_with_directories_costs_the_plan_a_few_names(tmp_path):
    """Off-roster directories are named up to OFF_ROSTER_SHOWN (the first by name), the rest counted."""
    cfg = course(tmp_path)
    dropbox.setup_dirs(cfg)
    extra = attempts.OFF_ROSTER_SHOWN + 37
    for i in range(extra):
        (cfg.dropbox_dir / f"squat{i:05d}").mkdir()
    names = attempts.off_roster(cfg)
    assert names[:-1] == [f"squat{i:05d}" for i in range(attempts.OFF_ROSTER_SHOWN)]
    assert names[-1] == "(and 37 more)"
