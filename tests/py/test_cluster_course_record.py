"""Feedback from the staff's configuration: `setup` records the course's course.toml in the drop box,
and every student command (submit, status, results, withdraw) and grading job reads that one,
whatever copy the student's checkout holds; a record a student could have planted is not believed.
(On a real Slurm, the rendered grading job: test_cluster_slurm.py.)"""
import os

import staff_class

import config  # noqa: E402  (cluster/, on sys.path through staff_class)
import dropbox  # noqa: E402
import gemmlab_cluster  # noqa: E402


def setup_course(tmp_path):
    path = staff_class.write_config(tmp_path, roster=["alice"])
    assert gemmlab_cluster.main(["--config", str(path), "setup"]) == 0
    return path


def test_a_students_edited_copy_is_not_used(tmp_path, capsys):
    path = setup_course(tmp_path)
    mine = tmp_path / "checkout" / "course.toml"
    mine.parent.mkdir()
    mine.write_text(path.read_text().replace("due = 2026-12-04T23:59:00+00:00", "due = 2027-06-01T00:00:00+00:00")
                    .replace('interpolation = "log"', 'interpolation = "linear"'))
    cfg = config.load(mine)
    assert cfg.deadline.due.year == 2027
    used = gemmlab_cluster.course_config(cfg)
    assert used.path == path and used.deadline.due.year == 2026
    assert f"the course's configuration is {path}; {mine} is not used" in capsys.readouterr().err
    staff_class.hand_in(config.load(path), tmp_path, "alice", {})
    assert gemmlab_cluster.main(["--config", str(mine), "status", "--user", "alice"]) == 0
    out = capsys.readouterr()
    assert "due 2026-12-04T23:59:00Z" in out.out and "2027" not in out.out, out


def test_staff_commands_read_the_file_they_are_given(tmp_path, capsys):
    path = setup_course(tmp_path)
    copy = tmp_path / "trial.toml"
    copy.write_text(path.read_text().replace("[deadline]", "[deadlines]"))
    assert gemmlab_cluster.main(["--config", str(copy), "validate"]) == 2  # the trial file itself, refused
    assert "unknown section [deadlines]" in capsys.readouterr().err


def test_a_record_others_could_write_is_not_believed(tmp_path):
    path = setup_course(tmp_path)
    cfg = config.load(path)
    record = cfg.dropbox_dir / dropbox.COURSE_RECORD
    assert dropbox.recorded_course(cfg) == path
    os.chmod(record, 0o666)
    assert dropbox.recorded_course(cfg) is None
    os.chmod(record, 0o644)
    os.chown(record, 12345, -1)  # not the drop box's owner, not root: a student's plant
    assert dropbox.recorded_course(cfg) is None


def test_setup_gives_the_staff_the_files_they_edit(tmp_path, capsys):
    import grp
    staff = grp.getgrgid(0).gr_name  # a group of this machine stands in for the staff group
    (tmp_path / "extensions.toml").write_text("[alice]\nlate_days = 1\n")
    (tmp_path / "aliases.toml").write_text('alice = "ace"\n')
    path = staff_class.write_config(tmp_path, f'[extensions]\nfile = "extensions.toml"\n[leaderboard]\n'
                                              f'aliases = "aliases.toml"\n', roster=["alice"])
    path.write_text(path.read_text().replace("[cluster]\n", f'[cluster]\nstaff_group = "{staff}"\n'))
    os.chmod(tmp_path, 0o755)
    assert gemmlab_cluster.main(["--config", str(path), "setup"]) == 0
    for name, mode in (("extensions.toml", 0o660), ("aliases.toml", 0o660), ("roster.txt", 0o664)):
        st = (tmp_path / name).stat()
        assert (st.st_mode & 0o777, st.st_gid) == (mode, 0), name
    out = capsys.readouterr().out
    assert f"is not writable by {staff}" in out  # the directory: named, with the commands that fix it
