"""The published course state (cluster/course_state.py): students' commands and grading jobs read the
state the staff published — course.toml and the class files as they were validated — never the live
file; an edit with a mistake never stops a hand-in and is named to the staff (not the students);
`publish` validates first and records what changed; a record a student could have planted is not
believed; a grading job stays on the state it was queued under. The trusted grader build
(gemmlab-config validates [bench] and [scoring]) comes from the cluster tests' shared cache."""
import os
import subprocess
import sys

import pytest

from support import staff_class
from support.cluster_helpers import folder, trusted_tree_kept
from support.staff_class import ROOT

import config  # noqa: E402  (cluster/, on sys.path through staff_class)
import course_state  # noqa: E402
import dropbox  # noqa: E402
import gemmlab_cluster  # noqa: E402
import attempts  # noqa: E402

NEEDS_NVCC = pytest.mark.skipif(
    subprocess.run(["sh", "-c", "command -v nvcc || test -x /usr/local/cuda/bin/nvcc"], capture_output=True).returncode != 0,
    reason="needs nvcc (the CUDA toolkit) to build gemmlab-config, which validates a course before it is published")
TYPO = "\n[leaderbord]\nsize = 3\n"


def published(tmp_path, extra="", roster=("alice", "bob")):
    path = staff_class.write_config(tmp_path, extra, roster=list(roster))
    assert gemmlab_cluster.main(["--config", str(path), "setup"]) == 0
    assert gemmlab_cluster.main(["--config", str(path), "publish", "--why", "start of term"]) == 0
    return path


def student_copy(tmp_path, path):
    """A student's checkout holds its own course.toml (the handout's): a copy they can edit."""
    mine = tmp_path / "checkout" / "course.toml"
    mine.parent.mkdir(exist_ok=True)
    mine.write_text(path.read_text().replace("due = 2026-12-04T23:59:00+00:00", "due = 2027-06-01T00:00:00+00:00"))
    return mine


@NEEDS_NVCC
def test_students_read_the_published_state_not_a_copy_or_the_live_file(tmp_path, capsys):
    path = published(tmp_path)
    cfg = config.load(path)
    state = course_state.current(cfg)
    assert state is not None and (state.public_dir / "course.toml").read_bytes() == path.read_bytes()
    mine = student_copy(tmp_path, path)
    used = gemmlab_cluster.course_config(config.load(mine), "status")
    assert used.state.id == state.id and used.deadline.due.year == 2026
    assert used.roster_path == state.private_dir / "roster.txt"
    staff_class.hand_in(cfg, tmp_path, "alice", {})
    capsys.readouterr()
    assert gemmlab_cluster.main(["--config", str(mine), "status", "--user", "alice"]) == 0
    out = capsys.readouterr()
    assert "due 2026-12-04T23:59:00Z" in out.out and "2027" not in out.out, out


@NEEDS_NVCC
def test_a_broken_edit_never_stops_a_hand_in_and_is_named_to_the_staff(tmp_path, capsys, monkeypatch):
    path = published(tmp_path)
    before = course_state.current(config.load(path))
    mine = student_copy(tmp_path, path)  # the handout's copy, made before
    path.write_text(path.read_text() + TYPO)  # the staff's typo, mid-term
    # A student hands in: it works, on the published state, and the student hears nothing of the typo.
    staff_class.hand_in(before.config(), tmp_path, "bob", {})  # writes the stage files of a hand-in: alice's below
    student_dir = tmp_path / "hand-ins" / "bob-1"
    monkeypatch.setattr(dropbox, "current_user", lambda: "alice")
    capsys.readouterr()
    assert gemmlab_cluster.main(["--config", str(mine), "submit", "--student-dir",
                                 str(student_dir), "--no-compile-check"]) == 0, capsys.readouterr()
    out = capsys.readouterr()
    assert "leaderbord" not in out.out + out.err and "stored" in out.out, out
    (attempt,) = attempts.in_directory(folder(before.config(), "alice"))
    assert attempt.manifest["course_state"] == before.id
    # Nor does a student who names the staff's own file (make submit CONFIG=<the course's course.toml>).
    assert gemmlab_cluster.main(["--config", str(path), "status"]) == 0
    out = capsys.readouterr()
    assert "#1" in out.out and "leaderbord" not in out.out + out.err, out
    assert "published configuration" not in out.err, out
    # The staff are told, by any staff command, what is unpublished and what is wrong with it.
    assert gemmlab_cluster.main(["--config", str(path), "status", "--user", "alice"]) == 0
    err = capsys.readouterr().err
    assert "has a mistake, so it is not published" in err and "unknown section [leaderbord]" in err, err
    assert f"published course state {before.id}" in err
    # A sweep is refused before anything is planned: a grade must say which rubric made it.
    assert gemmlab_cluster.main(["--config", str(path), "sweep", "--before-deadline"]) == 2
    assert "unknown section [leaderbord]" in capsys.readouterr().err
    assert not before.config().sweeps_dir.joinpath("final").exists()
    # Publishing it is refused, and the state stays as it was.
    assert gemmlab_cluster.main(["--config", str(path), "publish"]) == 2
    err = capsys.readouterr().err
    assert "unknown section [leaderbord]" in err and "Nothing was published" in err, err
    assert course_state.current(before.config()).id == before.id


@NEEDS_NVCC
def test_every_staff_command_names_an_unpublished_edit_and_a_students_own_command_does_not(tmp_path, capsys,
                                                                                             monkeypatch):
    """A valid edit that is not published (a rubric typo, an extension) is named, with what differs and how
    to publish it, by every staff's run: the staff's commands and a student's command run for a student
    (--user); a student's own command says nothing of it."""
    extensions = tmp_path / "extensions.toml"
    extensions.write_text("[alice]\nlate_days = 1\n")
    path = published(tmp_path, '[extensions]\nfile = "extensions.toml"\n')
    state = course_state.current(config.load(path))
    staff_class.hand_in(config.load(path), tmp_path, "alice", {})
    text = path.read_text()
    start = text.index("[scoring.stages.tiled]")
    rubric_typo = text[:start] + text[start:].replace("performance_points = 5", "performance_points = 50", 1)
    edits = ((lambda: path.write_text(rubric_typo), path, "[scoring.stages.tiled] performance_points 5 -> 50"),
             (lambda: extensions.write_text("[alice]\nlate_days = 2\n"), extensions, "[alice] late_days 1 -> 2"))
    staff_runs = (["status", "--user", "alice"], ["decisions"], ["gradebook"], ["results", "--user", "alice"])
    for edit, edited, what in edits:
        path.write_text(text)
        extensions.write_text("[alice]\nlate_days = 1\n")
        edit()
        capsys.readouterr()
        for run in staff_runs:
            gemmlab_cluster.main(["--config", str(path), *run])  # gradebook and results: no sweep yet (exit 1)
            err = capsys.readouterr().err
            notes = [line for line in err.splitlines() if line.startswith("note: not published:")]
            assert len(notes) == 1, (run, err)
            assert f"{edited} ({what})" in notes[0] and f"published course state {state.id}" in notes[0], (run, err)
            assert "`make publish-course`" in notes[0], (run, err)
            other = extensions if edited == path else path
            assert str(other) not in notes[0], (run, err)  # only the file that differs is named
        # A student's own status: the published state, and not a word of the staff's edit.
        monkeypatch.setattr(dropbox, "current_user", lambda: "alice")
        assert gemmlab_cluster.main(["--config", str(path), "status"]) == 0
        out = capsys.readouterr()
        assert "#1" in out.out and "not published" not in out.err and what not in out.out + out.err, out
        monkeypatch.undo()


@NEEDS_NVCC
def test_a_mistake_in_the_students_own_copy_does_not_stop_their_commands(tmp_path, capsys, monkeypatch):
    path = published(tmp_path)
    mine = student_copy(tmp_path, path)
    mine.write_text(mine.read_text() + TYPO)
    staff_class.hand_in(config.load(path), tmp_path, "alice", {})
    monkeypatch.setattr(dropbox, "current_user", lambda: "alice")
    capsys.readouterr()
    assert gemmlab_cluster.main(["--config", str(mine), "status"]) == 0
    out = capsys.readouterr()
    assert "#1" in out.out and "the course's published configuration is used" in out.err, out


@NEEDS_NVCC
def test_publish_validates_records_what_changed_and_publishes_nothing_twice(tmp_path, capsys):
    path = published(tmp_path)
    cfg = config.load(path)
    first = course_state.current(cfg)
    assert gemmlab_cluster.main(["--config", str(path), "publish"]) == 0
    assert "nothing to publish" in capsys.readouterr().out
    text = path.read_text()
    start = text.index("[scoring.stages.tiled]")
    path.write_text(text[:start] + text[start:].replace("performance_points = 5", "performance_points = 7", 1))
    (tmp_path / "roster.txt").write_text("alice\nbob\ncarol\n")
    assert gemmlab_cluster.main(["--config", str(path), "publish", "--why", "tiled is worth more"]) == 0
    out = capsys.readouterr().out
    second = course_state.current(cfg)
    assert second.id != first.id
    assert "[scoring.stages.tiled] performance_points 5 -> 7" in out and "roster.txt" in out, out
    log = course_state.log(cfg).entries()
    assert [e["action"] for e in log] == ["publish", "publish"]
    assert log[-1]["state"] == second.id and log[-1]["previous"] == first.id and log[-1]["why"] == "tiled is worth more"
    assert second.info["grading"]["rubric"] != first.info["grading"]["rubric"]
    assert second.info["grading"]["measurement"] == first.info["grading"]["measurement"]
    assert (second.private_dir / "roster.txt").read_text() == "alice\nbob\ncarol\n"
    # the students' half names nobody: a student learns nothing of the roster, not even by testing a name
    assert not (second.public_dir / "members").exists()
    for p in second.public_dir.rglob("*"):
        assert p.is_dir() or not any(n in p.read_text() for n in ("alice", "bob", "carol")), p
    # the first state is still there, as it was: a grade made under it can say what it was
    assert "performance_points = 5" in (first.public_dir / "course.toml").read_text()


@NEEDS_NVCC
def test_a_grading_job_stays_on_the_state_it_was_queued_under(tmp_path):
    path = published(tmp_path)
    cfg = config.load(path)
    first = course_state.current(cfg)
    path.write_text(path.read_text().replace("penalty_percent_per_day = 10", "penalty_percent_per_day = 20"))
    assert gemmlab_cluster.main(["--config", str(path), "publish"]) == 0
    job_cfg = course_state.load_file(first.course_toml)  # what a rendered job script names
    assert job_cfg.state.id == first.id and job_cfg.deadline.penalty_per_day == 10
    assert gemmlab_cluster.course_config(job_cfg, "grade-attempt") is job_cfg
    assert course_state.current(cfg).config().deadline.penalty_per_day == 20


@NEEDS_NVCC
def test_a_state_a_student_could_have_planted_is_not_believed(tmp_path):
    path = published(tmp_path)
    cfg = config.load(path)
    record = course_state.public_root(cfg) / "current"
    assert course_state.current(cfg) is not None
    os.chmod(record, 0o666)
    assert course_state.current(cfg) is None
    os.chmod(record, 0o644)
    os.chown(course_state.public_root(cfg), 12345, -1)  # a .course the drop box's owner did not make
    assert course_state.current(cfg) is None


def test_without_a_published_state_commands_read_the_file_as_given(tmp_path):
    path = staff_class.write_config(tmp_path, roster=["alice"])
    cfg = config.load(path)
    assert course_state.current(cfg) is None
    assert gemmlab_cluster.course_config(cfg, "submit") is cfg
    assert course_state.unpublished(cfg, None) == ["no course state is published yet"]


def test_setup_gives_the_staff_the_files_they_edit(tmp_path, capsys):
    import grp
    staff = grp.getgrgid(0).gr_name  # a group of this machine stands in for the staff group
    (tmp_path / "extensions.toml").write_text("[alice]\nlate_days = 1\n")
    (tmp_path / "aliases.toml").write_text('alice = "ace"\n')
    path = staff_class.write_config(tmp_path, f'[extensions]\nfile = "extensions.toml"\n[leaderboard]\n'
                                              f'aliases = "aliases.toml"\n', roster=["alice"])
    path.write_text(path.read_text().replace("[cluster]\n", f'[cluster]\nstaff_group = "{staff}"\n'))
    os.chmod(tmp_path, 0o755)
    with trusted_tree_kept():
        assert gemmlab_cluster.main(["--config", str(path), "setup"]) == 0
    for name, mode in (("extensions.toml", 0o660), ("aliases.toml", 0o660), ("roster.txt", 0o660)):
        st = (tmp_path / name).stat()
        assert (st.st_mode & 0o777, st.st_gid) == (mode, 0), name
    out = capsys.readouterr().out
    assert f"is not writable by {staff}" in out  # the directory: named, with the commands that fix it


def test_setup_refuses_a_layout_where_students_cannot_find_the_published_state(tmp_path):
    """The pointer beside course.toml (.course.toml.published) is how students' commands find the
    published state: where it cannot be written (here a read-only mount of course.toml's directory, in a
    private mount namespace), setup refuses before making anything, saying where and what to do."""
    if os.geteuid() != 0 or subprocess.run(["unshare", "-m", "--propagation", "private", "true"],
                                           capture_output=True).returncode != 0:
        pytest.skip("needs root and unshare -m (a read-only mount in a private mount namespace)")
    staff = tmp_path / "staff"
    staff.mkdir()
    path = staff / "course.toml"
    staff_class.write_config(tmp_path, roster=["alice"]).rename(path)  # its paths are absolute: the drop box beside
    script = (f'mount --bind "{staff}" "{staff}" && mount -o remount,bind,ro "{staff}" && '
              f'exec "{sys.executable}" "{ROOT}/cluster/gemmlab_cluster.py" --config "{path}" setup')
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                       capture_output=True, text=True, timeout=120)
    pointer = staff / ".course.toml.published"
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"{pointer} cannot be written" in r.stderr and f"{staff} must be writable by the account that runs " \
        "setup and publish-course" in r.stderr and "setup made nothing" in r.stderr, r.stderr
    assert not pointer.exists() and not (tmp_path / "dropbox").exists() and not (tmp_path / "sweeps").exists()


@NEEDS_NVCC
def test_hints_and_the_rubric_come_from_the_published_course_not_a_students_copy(tmp_path, capsys):
    """`make hint` (the srun line every "run it on a GPU node" hint prints) and `make rubric` (course-file:
    the course.toml it shows) read the published course; a student's stale copy names other options."""
    path = staff_class.write_config(tmp_path, roster=["alice"])
    path.write_text(path.read_text().replace("[cluster]\n", '[cluster]\npartition = "gpu"\naccount = "cs101"\n'
                                             'qos = "class"\ngres = "gpu:a100:1"\nconstraint = "a100"\n', 1))
    assert gemmlab_cluster.main(["--config", str(path), "setup"]) == 0
    mine = student_copy(tmp_path, path)
    mine.write_text(mine.read_text().replace('account = "cs101"', 'account = "old"'))
    capsys.readouterr()
    assert gemmlab_cluster.main(["--config", str(mine), "hint", "make", "check"]) == 0
    assert capsys.readouterr().out == ("srun --partition=gpu --account=cs101 --qos=class --gres=gpu:a100:1 "
                                       "--constraint=a100 make check\n")
    assert gemmlab_cluster.main(["--config", str(mine), "course-file"]) == 0
    state = course_state.current(config.load(path))
    assert capsys.readouterr().out.strip() == str(state.public_dir / "course.toml")
    # the grading jobs' #SBATCH lines carry the same options
    assert config.load(path).sbatch_options()[:5] == ["--partition=gpu", "--account=cs101", "--qos=class",
                                                      "--gres=gpu:a100:1", "--constraint=a100"]
