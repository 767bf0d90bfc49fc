"""Fair use of the GPUs at `make submit`: a hand-in with the same files as an earlier graded one is
stored (its time counts) but not graded again; the course's limits on a student's waiting jobs and
hand-ins per hour keep extra hand-ins stored but unqueued, saying until when; only the roster's
students hand in, unless the staff hand in for someone (--off-roster). The waiting-jobs limit on a
real Slurm is in test_cluster_slurm.py."""
import datetime as dt
import json
import os

import pytest

from support import staff_class
from support.staff_class import DUE

import config  # noqa: E402  (cluster/, on sys.path through staff_class)
import dropbox  # noqa: E402
import gemmlab_cluster  # noqa: E402
from commands import common, student  # noqa: E402
from commands import status as status_commands  # noqa: E402
import attempt_state  # noqa: E402
import grading  # noqa: E402
import records  # noqa: E402


def course(tmp_path, extra="", scheduler="local"):
    path = staff_class.write_config(tmp_path, roster=["alice", "bob"])
    path.write_text(path.read_text().replace('scheduler = "local"', f'scheduler = "{scheduler}"').replace(
        "[cluster]\n", "[cluster]\n" + extra))
    return config.load(path)


def test_the_same_files_again_are_stored_but_not_graded_again(tmp_path):
    cfg = course(tmp_path)
    first = staff_class.hand_in(cfg, tmp_path, "alice", {}, when=DUE - dt.timedelta(hours=2))
    (first / "grading").mkdir()
    records.write_json_atomic(first / "grading" / "outcome.json", {"status": "graded", "score": {"total": 5, "max": 100}})
    again = staff_class.hand_in(cfg, tmp_path, "alice", {}, when=DUE - dt.timedelta(hours=1))
    _, why = attempt_state.why_not_queue(cfg, "alice", again)
    assert why.startswith("the same files as your attempt #1 (graded 5/100): its grading stands"), why
    assert "counts for the deadline" in why
    # changed files are graded
    other = staff_class.hand_in(cfg, tmp_path, "alice", {"tiled": "tiled_textbook"}, when=DUE - dt.timedelta(minutes=30))
    assert attempt_state.why_not_queue(cfg, "alice", other) == ("", "")


def test_identical_to_an_attempt_that_was_never_graded_is_graded(tmp_path):
    cfg = course(tmp_path)
    first = staff_class.hand_in(cfg, tmp_path, "alice", {}, when=DUE - dt.timedelta(hours=2))
    records.write_json_atomic(first / "job.json", {"not_queued": "limit", "at": "x"})
    again = staff_class.hand_in(cfg, tmp_path, "alice", {}, when=DUE - dt.timedelta(hours=1))
    assert attempt_state.why_not_queue(cfg, "alice", again) == ("", "")


def test_hand_ins_per_hour_are_limited_and_the_next_slot_is_named(tmp_path, monkeypatch):
    # A Slurm course: the limit counts hand-ins queued by sbatch (a stand-in here: nothing is queued).
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sbatch").write_text("#!/bin/sh\nexit 1\n")
    (bin_dir / "sbatch").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    cfg = course(tmp_path, "graded_per_hour = 2\n", scheduler="slurm")
    t = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    for i, ago in enumerate((50, 20)):  # two queued in the last hour, jobs long gone
        a = staff_class.hand_in(cfg, tmp_path, "alice", {"tiled": "tiled_textbook"} if i else {}, when=DUE - dt.timedelta(hours=3 - i))
        records.write_json_atomic(a / "job.json", {"job_id": str(990000 + i), "queued": records.iso(t - dt.timedelta(minutes=ago))})
    third = staff_class.hand_in(cfg, tmp_path, "alice", {"tiled": "tiled_pointer_walk"}, when=DUE - dt.timedelta(hours=1))
    _, why = attempt_state.why_not_queue(cfg, "alice", third)
    free = records.iso(t - dt.timedelta(minutes=50) + dt.timedelta(hours=1))
    assert why == ("2 of your hand-ins were queued for grading in the last hour (the course allows 2). Your hand-in "
                   f"is stored and counts for the deadline; the next one can be graded from {free}"), why


@pytest.mark.parametrize("key, value", [("queued_per_student", 0), ("graded_per_hour", 0)])
def test_limits_must_be_positive(tmp_path, key, value):
    with pytest.raises(config.ConfigError, match=f"{key} = {value}: must be at least 1"):
        course(tmp_path, f"{key} = {value}\n")


def test_only_the_rosters_students_hand_in_unless_the_staff_say_so(tmp_path):
    cfg = course(tmp_path)
    with pytest.raises(common.Refused, match="carol is not on this course's roster, so nothing was handed in"):
        student.on_the_roster(cfg, "carol", override=False)
    student.on_the_roster(cfg, "alice", override=False)
    student.on_the_roster(cfg, "carol", override=True)  # root here: staff


def test_submit_refuses_before_storing_anything(tmp_path):
    cfg = course(tmp_path)
    src = tmp_path / "src"
    src.mkdir()
    args = gemmlab_cluster.parser().parse_args(["submit", "--student-dir", str(src), "--user", "carol", "--no-compile-check"])
    with pytest.raises(common.Refused):
        student.cmd_submit(cfg, args)
    assert not (cfg.dropbox_dir / "carol").exists()


def test_status_says_why_an_attempt_was_not_graded(tmp_path, capsys):
    cfg = course(tmp_path)
    first = staff_class.hand_in(cfg, tmp_path, "alice", {}, when=DUE - dt.timedelta(hours=2))
    (first / "grading").mkdir()
    records.write_json_atomic(first / "grading" / "outcome.json", {"status": "graded", "score": {"total": 5, "max": 100}})
    again = staff_class.hand_in(cfg, tmp_path, "alice", {}, when=DUE - dt.timedelta(hours=1))
    short, why = attempt_state.why_not_queue(cfg, "alice", again)
    records.write_json_atomic(again / "job.json", {"not_queued": short, "why": why})
    status_commands.cmd_status(cfg, gemmlab_cluster.parser().parse_args(["status", "--user", "alice"]))
    out = capsys.readouterr().out.splitlines()
    assert "not queued (the same files as your attempt #1 (graded 5/100))" in out[2] and out[2].endswith("<- counts"), out
    json.dumps(out)


def test_hand_ins_per_hour_are_limited_without_slurm_too(tmp_path):
    """Without a queue a grading runs on this machine while make submit waits: the limit on gradings
    an hour holds there too (the guide says make submit checks it); gradings of more than an hour ago
    do not count."""
    cfg = course(tmp_path, "graded_per_hour = 2\n")  # scheduler = "local"
    t = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    for i, ago in enumerate((90, 40, 10)):
        a = staff_class.hand_in(cfg, tmp_path, "alice", {"tiled": ["tiled_textbook", "tiled_pointer_walk"][i - 1]} if i else {},
                                when=DUE - dt.timedelta(hours=4 - i))
        (a / "grading").mkdir()
        records.write_json_atomic(a / "grading" / "outcome.json", {  # as grade_into records a local grading
            "status": "no_gpu", "job_id": "", "started": records.iso(t - dt.timedelta(minutes=ago))})
    fourth = staff_class.hand_in(cfg, tmp_path, "alice", {"unrolled": "unrolled_outer_product"}, when=DUE - dt.timedelta(minutes=30))
    short, why = attempt_state.why_not_queue(cfg, "alice", fourth)
    free = records.iso(t - dt.timedelta(minutes=40) + dt.timedelta(hours=1))
    assert short == "2 graded in the last hour, the course allows 2", short
    assert why == ("2 of your hand-ins were graded in the last hour (the course allows 2). Your hand-in is stored and "
                   f"counts for the deadline; the next one can be graded from {free}"), why
