"""Validate before queuing: `make validate`, `setup --build` and every `make sweep` check the course's
files as each tool reads them — course.toml's sections and keys (a typo'd section or key is an error
with "did you mean"), the roster (valid names, listed once, no case collisions, real accounts), and
[bench]/[scoring] by the grader's own gemmlab-config from the trusted build — and a sweep refuses with
the first mistake before anything is planned or queued. The Slurm side is in test_cluster_slurm.py."""
import datetime as dt
import os
import pwd
import subprocess
import sys

import pytest

from support.cluster_helpers import ROOT, TOOL, write_config

NEEDS_NVCC = pytest.mark.skipif(
    not (os.environ.get("NVCC") or subprocess.run(["sh", "-c", "command -v nvcc || test -x /usr/local/cuda/bin/nvcc"],
                                                  capture_output=True).returncode == 0),
    reason="needs nvcc (the CUDA toolkit) to build gemmlab-config")
PAST = dt.datetime(2026, 1, 5, 23, 59, tzinfo=dt.timezone.utc)  # a course whose deadline has passed


def course(tmp_path, append="", roster=("alice", "bob")):
    path = write_config(tmp_path, "local", PAST)
    (tmp_path / "roster.txt").write_text("# the class\n" + "\n".join(roster) + "\n")
    if append:
        path.write_text(path.read_text() + append)
    return path


def tool(path, *args):
    return subprocess.run([sys.executable, str(TOOL), "--config", str(path), *args], capture_output=True, text=True,
                          timeout=900)


def edit(path, old, new):
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize("change, words", [
    (("[deadline]", "[deadlines]"), ["line ", "unknown section [deadlines] (did you mean [deadline]?)", "[late]"]),
    (("[late]", "[lates]"), ["unknown section [lates] (did you mean [late]?)"]),
    (("[course]", 'due = 2026-12-04T23:59:00Z\n[course]'), ["line 1", "'due' is a key outside any section",
                                                          "it belongs under [deadline]"]),
    (('name = "cluster-test"', 'name = "cluster-test"\ntitel = "x"'), ["[course] titel: unknown key (did you mean 'title'?)"]),
    (('policy = "latest"', 'policy = "latest"\ncutof = 2026-12-05T00:00:00Z'), ["[late] cutof: unknown key (did you mean 'cutoff'?)"]),
    (('name = "cluster-test"', 'name = "cluster test"'), ["[course] name", "letters, digits"]),
])
def test_course_toml_mistakes_are_named_before_anything_else(tmp_path, change, words):
    path = course(tmp_path)
    edit(path, *change)
    r = tool(path, "validate")
    assert r.returncode == 2, r.stdout + r.stderr
    for w in words:
        assert w in r.stderr, (w, r.stderr)
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("section, words", [
    ("[report]\nsquare_size = [256]\n", ["[report]: unknown key 'square_size' (did you mean 'square_sizes'?"]),
    ("[handout]\narch = [\"sm_80\"]\n", ["[handout] arch: unknown key (did you mean 'archs'?)"]),
])
def test_the_other_tools_sections_are_checked_by_their_own_readers(tmp_path, section, words):
    r = tool(course(tmp_path, section), "validate")
    assert r.returncode == 2, r.stdout + r.stderr
    for w in words:
        assert w in r.stderr, (w, r.stderr)


def someone_real():
    """An account of this machine that is not root (any will do), else root."""
    return next((p.pw_name for p in pwd.getpwall() if p.pw_uid != 0), "root")


@pytest.mark.parametrize("roster, words", [
    (["alice", "jöhn doe"], ["roster.txt, line 3: 'jöhn doe' is not a user name", "no spaces"]),
    (["ben", "alice", "BEN"], ["roster.txt, lines 2 and 4: 'ben' and 'BEN' differ only in case"]),
    (["ben", "alice", "ben"], ["roster.txt, line 4: 'ben' is listed twice (line 2 too)"]),
])
def test_roster_mistakes_are_named(tmp_path, roster, words):
    r = tool(course(tmp_path, roster=roster), "validate")
    assert r.returncode == 2, r.stdout + r.stderr
    for w in words:
        assert w in r.stderr, (w, r.stderr)


def test_roster_names_must_be_accounts_unless_the_course_says_otherwise(tmp_path):
    real = someone_real()
    path = course(tmp_path, roster=[real, "glab-no-such-user-x", "glab-no-such-user-y"])
    edit(path, "roster_accounts = false", "roster_accounts = true")
    r = tool(path, "validate")
    assert r.returncode == 2, r.stdout + r.stderr
    assert ("2 name(s) are not accounts on this machine: 'glab-no-such-user-x' (line 3), "
            "'glab-no-such-user-y' (line 4)") in r.stderr, r.stderr
    assert "roster_accounts = false" in r.stderr and repr(real) not in r.stderr


@NEEDS_NVCC
def test_the_grader_checks_its_own_sections_with_its_own_reader(tmp_path):
    path = course(tmp_path)
    r = tool(path, "validate")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[bench] and [scoring] by the grader: 100 points; graded at 1024x1024x1024 (weight 1)" in r.stdout, r.stdout
    edit(path, "target_pct_reference = { float = 80, double = 95 }", 'target_pct_reference = { float = "fifteen" }')
    r = tool(path, "validate")
    assert r.returncode == 2, r.stdout + r.stderr
    assert ('the grader refuses this course.toml: ' in r.stderr and '[scoring.stages.tiled] target_pct_reference.float '
            'must be a number between 0 and 1000, got "fifteen"' in r.stderr), r.stderr
    edit(path, "[scoring.stages.tiled]", "[scoring.stages.tield]")
    r = tool(path, "validate")
    assert r.returncode == 2 and "did you mean 'tiled'?" in r.stderr, r.stderr


@NEEDS_NVCC
def test_a_sweep_with_a_bad_rubric_is_refused_before_anything_is_planned(tmp_path):
    from support.cluster_helpers import config, dropbox, hand_in_dir
    path = course(tmp_path)
    edit(path, "performance_points = 10", "performance_points = -3")  # [scoring.stages.reuse]
    cfg = config.load(path)
    dropbox.store_attempt(cfg, "alice", dropbox.collect(cfg, hand_in_dir(tmp_path / "src", "stub"), None))
    r = tool(path, "sweep")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "[scoring.stages.reuse] performance_points must be a number between 0 and 1000, got -3" in r.stderr
    assert "The sweep queued nothing" in r.stderr and "make validate" in r.stderr
    sweep = tmp_path / "sweeps" / "final"
    assert not (sweep / "plan.json").exists() and not (sweep / "runs").exists()


def test_the_checker_is_part_of_the_trusted_build():
    text = (ROOT / "Makefile").read_text()
    assert "GRADER_TRUSTED := " in text and "$(CONFIG_CHECKER)" in text.split("GRADER_TRUSTED := ")[1].split("\n$(")[0]
    assert "CONFIG_CHECKER=$(CONFIG_CHECKER)" in (ROOT / "cluster" / "make-vars.mk").read_text()
