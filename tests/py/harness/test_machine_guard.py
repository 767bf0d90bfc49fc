"""tests/machine_guard.py, which `make test` runs around the whole suite: a file it guards that a
test writes, creates, removes or re-permissions is named, and nothing else is."""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import machine_guard  # noqa: E402


def test_every_change_under_the_guarded_paths_is_named(tmp_path):
    passwd, slurm, absent = tmp_path / "passwd", tmp_path / "slurm", tmp_path / "munge"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\n")
    (slurm / "conf.d").mkdir(parents=True)
    (slurm / "slurm.conf").write_text("ClusterName=site\n")
    guarded = [str(passwd), str(slurm), str(absent)]
    before = machine_guard.snapshot(guarded)
    assert before[str(absent)] == "absent" and str(slurm / "slurm.conf") in before
    assert machine_guard.changes(before, machine_guard.snapshot(guarded)) == []

    passwd.write_text(passwd.read_text() + "glab_alice:x:1001:1001::/home/glab_alice:/bin/bash\n")  # useradd
    (slurm / "slurm.conf").chmod(0o600)
    (slurm / "conf.d" / "test.conf").write_text("NodeName=ci\n")
    absent.mkdir()
    changed = machine_guard.changes(before, machine_guard.snapshot(guarded))
    assert [line.split(":")[0] for line in changed] == sorted(
        [str(absent), str(passwd), str(slurm / "conf.d" / "test.conf"), str(slurm / "slurm.conf")]), changed
    assert f"{slurm / 'conf.d' / 'test.conf'}: absent -> sha256 " in "\n".join(changed)


def test_the_machines_files_are_guarded():
    assert {"/etc/passwd", "/etc/group", "/etc/slurm", "/etc/munge"} <= set(machine_guard.GUARDED)
    snap = machine_guard.snapshot()
    assert snap["/etc/passwd"].startswith("sha256 ") or not os.access("/etc/passwd", os.R_OK)
