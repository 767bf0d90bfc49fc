"""Where a handout's hand-ins go (cluster/shared_dropbox.py; docs/handout.md, "Where hand-ins go").

A hand-in counts only where the course staff can read it. The repository's course.toml keeps its
drop box at results/dropbox, relative to course.toml: in a handout that is a folder inside the
student's own checkout. These tests show, without building the reference library (seconds):
- `make handout` refuses such a course, before it writes anything, and says what to set;
- a handout made from it (its files as make handout writes them) stores nothing when the student
  runs `make submit`, and says why and whose setting it is;
- an absolute drop box the staff have not set up is refused too (and make handout warns loudly);
  once `setup` has recorded the course in it, the same `make submit` stores the hand-in there.

These tests need the instructor repository (handout.py) and never ship in a handout.
"""
import json
import os
import re
import subprocess
import sys

import pytest

from support import gpu_prebuild
from support.paths import ROOT

pytestmark = pytest.mark.skipif(not list((ROOT / "reference").glob("*.cu")),
                                reason="needs the instructor repository (reference/*.cu)")

handout = gpu_prebuild.load_handout_module()


def env():
    return {k: v for k, v in gpu_prebuild.clean_env().items() if not k.startswith("GEMMLAB_")}


def make(tree, *args):
    return subprocess.run(["make", "--no-print-directory", *args], cwd=tree, capture_output=True, text=True,
                          timeout=300, env=env())


def staged_handout(tmp_path, config):
    """A handout's files as make handout writes them (less the compiled reference, which make submit
    does not need), with a student's edit in student/."""
    tree = tmp_path / "gemm-lab-handout"
    handout.write_tree(handout.load_config(config), tree)
    (tree / "student" / "naive.cu").write_text((tree / "student" / "naive.cu").read_text() + "// my edit\n")
    return tree


def test_make_handout_refuses_a_drop_box_inside_the_students_checkout(tmp_path):
    proc = subprocess.run([sys.executable, ROOT / "grader/scripts/handout.py", "build", "--config", ROOT / "course.toml",
                           "--dist", tmp_path / "dist"], capture_output=True, text=True, env=env())
    assert proc.returncode == 1, proc.stdout + proc.stderr
    err = proc.stderr
    assert '[cluster] dropbox = "results/dropbox" is a relative path' in err, err
    assert "inside each student's own checkout" in err and "make submit" in err, err
    assert "absolute path on the cluster's shared file system" in err and " setup" in err, err
    assert not (tmp_path / "dist").exists(), "nothing is written before the refusal"


def test_the_shipped_course_toml_cannot_store_a_hand_in_in_the_checkout(tmp_path):
    tree = staged_handout(tmp_path, ROOT / "course.toml")
    assert 'dropbox = "results/dropbox"' in (tree / "course.toml").read_text()
    proc = make(tree, "submit")
    assert proc.returncode != 0, proc.stdout + proc.stderr
    err = proc.stderr
    assert "error: nothing was handed in: this course has no drop box the course staff can read" in err, err
    assert '[cluster] dropbox = "results/dropbox" is a relative path' in err, err
    assert str(tree / "results" / "dropbox") in err, err
    assert "This is the course's setting, not yours to change: tell the course staff" in err, err
    assert "stored" not in proc.stdout and "compiling" not in proc.stdout, proc.stdout
    assert not (tree / "results").exists(), "nothing may be stored inside the student's checkout"
    # make's own command line is not the student's business
    assert "gemmlab_cluster.py" not in proc.stdout, proc.stdout
    status = make(tree, "status")
    assert "status: note: this course has no drop box the course staff can read" in status.stderr, status.stderr
    assert "`make submit` hands nothing in until they set one up" in status.stderr, status.stderr


def test_an_absolute_drop_box_counts_once_the_staff_have_set_it_up(tmp_path):
    box = tmp_path / "shared" / "dropbox"
    config = gpu_prebuild.handout_config(tmp_path)
    config.write_text(config.read_text().replace(f'"{tmp_path.resolve()}/dropbox"', f'"{box}"'))
    # make handout would build it, warning loudly that the staff have not set the drop box up
    warning = handout.dropbox_check(handout.load_config(config))
    assert f"the drop box {box} does not exist" in warning and "refuses to hand in" in warning, warning
    tree = staged_handout(tmp_path, config)

    proc = make(tree, "submit")
    assert proc.returncode != 0 and f"the drop box {box} does not exist" in proc.stderr, proc.stderr
    assert not box.exists()

    # the staff set it up (as the instructor guide says: setup, on the course's own course.toml)
    staff = tmp_path / "staff" / "course.toml"
    staff.parent.mkdir()
    staff.write_text(re.sub(r'(?m)^grader_root = ""', f'grader_root = "{ROOT}"', config.read_text()))
    setup = subprocess.run([sys.executable, ROOT / "cluster/gemmlab_cluster.py", "--config", staff, "setup"],
                           capture_output=True, text=True, env=env())
    assert setup.returncode == 0, setup.stdout + setup.stderr
    assert handout.dropbox_check(handout.load_config(config)) == ""

    proc = subprocess.run([sys.executable, "cluster/gemmlab_cluster.py", "submit", "--no-compile-check"], cwd=tree,
                          capture_output=True, text=True, env=env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    stored = re.search(r"it is handed in \((\S+),", proc.stdout)
    assert stored and stored.group(1).startswith(str(box)), proc.stdout
    manifest = json.loads(open(os.path.join(stored.group(1), "manifest.json")).read())
    assert "naive.cu" in manifest["files"]
    assert not (tree / "results").exists()


def test_a_drop_box_inside_the_repository_is_refused(tmp_path):
    config = gpu_prebuild.handout_config(tmp_path)
    config.write_text(config.read_text().replace(f'"{tmp_path.resolve()}/dropbox"', f'"{ROOT}/results/dropbox"'))
    with pytest.raises(handout.HandoutError, match=r"lies inside this checkout"):
        handout.dropbox_check(handout.load_config(config))
