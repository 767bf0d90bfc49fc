"""A student learns nothing of the class by trying names: every command a student can run that takes
another student's name (status, results, submit, requeue, withdraw, regrade, with --user) answers a
student alike for a classmate who handed in, one on the roster who did not, an account off the roster
and a name that is nobody's, while the course staff still see each student's attempts. Real Unix
accounts (private_accounts.py: they exist only in this test's mount namespace). No GPU, no build."""
import json
import os
import sys
import subprocess
import shutil
import tempfile
from pathlib import Path

import pytest

from support import private_accounts
from support import staff_class
from support.cluster_helpers import folder, tool

import config  # noqa: E402  (cluster/, on sys.path through staff_class)
import course_state  # noqa: E402
import dropbox  # noqa: E402
import student_standing  # noqa: E402

PROBER, HANDED_IN, ON_ROSTER, OFF_ROSTER = "glab_mal", "glab_alice", "glab_bob", "glab_zed"
NOBODY = "glab_nobody"
# What a student may run with another's name, each with the arguments it needs besides --user.
COMMANDS = (("status",), ("results",), ("submit", "--student-dir", "/nonexistent", "--no-compile-check"),
            ("requeue", "--attempt", "1"), ("withdraw", "--attempt", "1", "--why", "trying names"),
            ("regrade", "--attempt", "1"))


@pytest.fixture(scope="module")
def accounts():
    yield from private_accounts.held_or_skipped({PROBER: [], HANDED_IN: [], OFF_ROSTER: []}, [])


@pytest.fixture
def course(accounts):
    """A published course whose roster (the staff's file) is PROBER, HANDED_IN and ON_ROSTER (who has no
    account); HANDED_IN has handed in once, with a token and a view."""
    base = Path(tempfile.mkdtemp(prefix="gemmlab-roster-privacy-", dir="/tmp"))
    os.chmod(base, 0o755)
    try:
        path = staff_class.write_config(base, roster=[PROBER, HANDED_IN, ON_ROSTER])
        os.chmod(base / "roster.txt", 0o600)
        cfg = config.load(path)
        dropbox.setup_dirs(cfg)
        course_state.publish(cfg, {"measurement": {}, "rubric": {}})  # members/: validated elsewhere, no build here
        src = base / "src"
        src.mkdir()
        for name in staff_class.STAGE_FILES:
            shutil.copy(staff_class.ROOT / "student" / name, src / name)
        dropbox.store_attempt(cfg, HANDED_IN, dropbox.collect(cfg, src, None))
        student_standing.token(cfg, HANDED_IN, create=True)
        mine = folder(cfg, HANDED_IN)
        for p in [mine, *mine.rglob("*")]:  # as her own hand-in leaves it
            os.lchown(p, accounts.uid[HANDED_IN], accounts.gid[HANDED_IN])
        student_standing.write_views(cfg)
        yield path
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_student_who_tries_names_is_answered_alike_for_every_name(course, command):
    answers = {}
    for name in (HANDED_IN, ON_ROSTER, OFF_ROSTER, NOBODY):
        r = tool(course, *command, "--user", name, user=PROBER, timeout=120)
        assert "Traceback" not in r.stderr, r.stderr
        answers[name] = (r.returncode, (r.stdout + r.stderr).replace(name, "<name>"))
    assert len(set(answers.values())) == 1, "\n".join(f"--user {n}: exit {rc}\n{said}" for n, (rc, said) in answers.items())
    rc, said = answers[HANDED_IN]
    assert rc != 0 and "course staff" in said, said


def test_the_staff_and_the_student_herself_are_still_answered(course):
    r = tool(course, "status", "--user", HANDED_IN, timeout=120)  # root: the staff
    assert r.returncode == 0 and f"attempts of {HANDED_IN}" in r.stdout and "#1" in r.stdout, r.stdout + r.stderr
    r = tool(course, "status", "--user", HANDED_IN, user=HANDED_IN, timeout=120)  # her own name, named
    assert r.returncode == 0 and f"attempts of {HANDED_IN}" in r.stdout, r.stdout + r.stderr


PROBE = r"""
import json, os, sys
out = {}
for name in sys.argv[2:]:
    seen = []
    for d in json.loads(sys.argv[1]):
        for path in (os.path.join(d, name), os.path.join(d, name + ".json")):
            try:
                st = os.stat(path, follow_symlinks=False)
                seen.append([d, path.replace(name, "<name>"), "there", st.st_mtime])
            except OSError as e:
                seen.append([d, path.replace(name, "<name>"), e.errno, None])
    out[name] = seen
print(json.dumps(out))
"""


def test_a_student_who_tests_names_in_the_file_system_learns_nothing(course):
    """Not only the commands: a classmate who stats names where the course keeps anything a student may
    reach (the drop box, the published state, the students' views) gets the same answer for a student who
    handed in, one on the roster who did not, an account off the roster and a name that is nobody's."""
    cfg = config.load(course)
    state = course_state.current(cfg)
    where = [cfg.dropbox_dir, course_state.public_root(cfg), state.public_dir, state.public_dir / "members",
             course_state.public_root(cfg) / "to-student"]
    r = subprocess.run(["runuser", "-u", PROBER, "--", sys.executable, "-c", PROBE, json.dumps([str(d) for d in where]),
                        HANDED_IN, ON_ROSTER, OFF_ROSTER, NOBODY], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    answers = json.loads(r.stdout)
    assert all(a == answers[NOBODY] for a in answers.values()), json.dumps(answers, indent=1)
    assert all(seen[2] != "there" for seen in answers[HANDED_IN]), answers[HANDED_IN]
