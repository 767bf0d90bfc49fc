"""Who may do and read what in an installed course (docs/security.md, "Who reads what").
The course staff are a group: what one TA's command writes (the course state, the decision log,
sweeps, gradebook versions, exports, the students' views) a second TA in the staff group carries on
with — publish, decide, sweep, export, publish grades — and the log says who did each; a publish is
live and logged, or neither. A student reads only their own dates and grades (walked as
the student), never the reference sources, the roster or the staff's sections, and their grading
still finds the trusted build; a course.toml that does not parse, or that students cannot read,
stops no hand-in; validate refuses what is open to students and setup closes it.
Real Unix accounts (private_accounts.py: they exist only in this test's mount namespace); the
trusted grader build comes from the cluster tests' shared cache. The checkout is the courses'
trusted tree: its reference/ modes, which setup closes, are put back after each test.
Needs root (the accounts) and nvcc (gemmlab-config validates a course before it is published)."""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from support import private_accounts
from support import staff_class
from support.cluster_helpers import CACHE, ROOT, hand_in_dir, path_without_slurm, tool, trusted_tree_kept

import config  # noqa: E402  (cluster/, on sys.path through staff_class)
import course_state  # noqa: E402

ALICE, TA1, TA2, STAFF = "glab_alice", "glab_ta", "glab_ta2", "glab_staff"

pytestmark = pytest.mark.skipif(
    subprocess.run(["sh", "-c", "command -v nvcc || test -x /usr/local/cuda/bin/nvcc"], capture_output=True).returncode != 0,
    reason="needs nvcc (the CUDA toolkit) to build gemmlab-config, which validates a course before it is published")


@pytest.fixture(scope="module")
def accounts():
    yield from private_accounts.held_or_skipped({ALICE: [], TA1: [STAFF], TA2: [STAFF]}, [STAFF])


@pytest.fixture
def course(accounts):
    """A course set up by root (the instructor) with the staff group glab_staff; course.toml and the
    roster in a directory the staff group writes."""
    base = Path(tempfile.mkdtemp(prefix="gemmlab-cluster-test-", dir="/tmp"))
    os.chmod(base, 0o755)
    path = staff_class.write_config(base, roster=[ALICE])
    path.write_text(path.read_text().replace("[cluster]\n", f'[cluster]\nstaff_group = "{STAFF}"\n'))
    for p in (path, base / "roster.txt"):
        shutil.chown(p, group=STAFF)
        os.chmod(p, 0o664)
    CACHE.mkdir(parents=True, exist_ok=True)
    for d in (CACHE, CACHE.parent, CACHE.parent.parent):  # the staff's commands read the trusted build
        os.chmod(d, d.stat().st_mode | 0o055)
    # A build made before this course's setup gave the cache its group: its programs (gemmlab-config)
    # run for every TA, as those of a build made after it do through the group.
    for exe in CACHE.glob("trusted-*/**/*"):
        if exe.is_file() and exe.stat().st_mode & 0o100:
            os.chmod(exe, exe.stat().st_mode | 0o011)
    with trusted_tree_kept():
        r = tool(path, "setup")
        assert r.returncode == 0, r.stdout + r.stderr
        yield base, path
    shutil.rmtree(base, ignore_errors=True)


def _edit(path: Path, old: str, new: str):
    path.write_text(path.read_text().replace(old, new, 1))


def _as(user, path, *args):
    r = tool(path, *args, user=user)
    assert r.returncode == 0, f"{user}: {' '.join(map(str, args))}:\n{r.stdout}{r.stderr}"
    return r


def test_a_second_ta_carries_on_where_the_first_stopped(course):
    base, path = course
    cfg = config.load(path)
    _edit(path, "penalty_percent_per_day = 10", "penalty_percent_per_day = 20")
    _as(TA1, path, "publish", "--why", "20 % a day")
    _edit(path, "penalty_percent_per_day = 20", "penalty_percent_per_day = 15")
    _as(TA2, path, "publish", "--why", "15 % a day after all")
    _as(TA1, path, "override", "--user", ALICE, "--final", "10", "--why", "first look")
    _as(TA2, path, "override", "--user", ALICE, "--final", "20", "--why", "second look")
    for who in (TA1, TA2):
        _as(who, path, "sweep", "--before-deadline")
        _as(who, path, "gradebook")
    _as(TA2, path, "publish-grades", "--why", "midterm")
    _as(TA1, path, "publish-grades", "--why", "midterm, again")
    log = course_state.log(cfg).entries()
    assert [(e["action"], e["by"]) for e in log if e["action"] != "publish" or e["by"] != "root"] == [
        ("publish", TA1), ("publish", TA2), ("override", TA1), ("override", TA2),
        ("publish-grades", TA2), ("publish-grades", TA1)]
    state = course_state.current(cfg)
    assert state.id == [e for e in log if e["action"] == "publish"][-1]["state"]
    assert state.config().deadline.penalty_per_day == 15
    versions = sorted(p.name for p in (cfg.sweeps_dir / "final" / "versions").iterdir() if p.name.isdigit())
    assert versions == ["001", "002", "003", "004"]  # each sweep builds one, then each export
    # what the staff's commands wrote: the staff group's, group-writable (directories setgid)
    gid = cfg.staff_gid
    for p in (course_state.private_root(cfg) / "decisions.jsonl", course_state.public_root(cfg) / "current",
              cfg.sweeps_dir / "final", cfg.sweeps_dir / "final" / "plan.json", cfg.sweeps_dir / "final" / "versions",
              cfg.sweeps_dir / "final" / "versions" / "002" / "gradebook.csv"):
        st = p.stat()
        assert st.st_gid == gid and st.st_mode & 0o060 == 0o060, (p, oct(st.st_mode))
        assert not p.is_dir() or st.st_mode & 0o2000, p


def test_a_publish_that_cannot_be_logged_does_not_go_live(course):
    base, path = course
    cfg = config.load(path)
    before = course_state.current(cfg)
    log = course_state.private_root(cfg) / "decisions.jsonl"
    os.chmod(log, 0o640)  # as an older version left it: the staff group may read it, not append
    _edit(path, "penalty_percent_per_day = 10", "penalty_percent_per_day = 20")
    r = tool(path, "publish", "--why", "20 % a day", user=TA2)
    assert r.returncode == 1 and "permission denied" in r.stderr and str(log) in r.stderr, r.stdout + r.stderr
    assert course_state.current(cfg).id == before.id  # not live: it was not logged
    assert [e["action"] for e in course_state.log(cfg).entries()] == ["publish"]
    # setup (the instructor) gives the staff group what older versions wrote; then the TA publishes
    r = tool(path, "setup")
    assert r.returncode == 0 and f"made writable by the group {STAFF}" in r.stdout, r.stdout + r.stderr
    _as(TA2, path, "publish", "--why", "20 % a day")
    after = course_state.current(cfg)
    assert after.id != before.id and course_state.log(cfg).entries()[-1]["state"] == after.id


def test_a_course_file_that_does_not_parse_or_is_closed_stops_no_hand_in(course, accounts):
    base, path = course
    _edit(path, 'scheduler = "local"', 'scheduler = "slurm"')  # stored, not graded: Slurm is not on the PATH below
    r = tool(path, "publish", "--why", "grade on Slurm")
    assert r.returncode == 0, r.stdout + r.stderr
    pointer = course_state.pointer_path(path)
    assert pointer.stat().st_mode & 0o777 == 0o644
    mine = hand_in_dir(accounts.home(ALICE) / "gemm-lab" / "student", "stub")
    subprocess.run(["chown", "-R", f"{ALICE}:", str(accounts.home(ALICE) / "gemm-lab")], check=True)
    env = dict(os.environ, PATH=path_without_slurm(base / "path"))
    good = path.read_text()
    for n, breakage in enumerate(("an unterminated string", "mode 0640"), 1):
        if n == 1:
            path.write_text(good + '\n[handout]\ntitle = "unterminated\n')
        else:
            path.write_text(good)
            os.chmod(path, 0o640)  # the staff's, as the guide says: students read the published state
        r = tool(path, "submit", "--student-dir", mine, "--no-compile-check", user=ALICE, env=env)
        assert r.returncode == 0 and f"stored attempt #{n} of {ALICE}" in r.stdout, (breakage, r.stdout + r.stderr)
        assert "unterminated" not in r.stdout + r.stderr and "ermission" not in r.stdout + r.stderr, r.stderr
        r = tool(path, "status", user=ALICE, env=env)
        assert r.returncode == 0 and f"#{n}" in r.stdout, (breakage, r.stdout + r.stderr)
        # the staff hear of it: their next command, and make validate
        r = tool(path, "status", "--user", ALICE, user=TA1, env=env)
        if n == 1:
            assert r.returncode == 0 and "has a mistake, so it is not published" in r.stderr, r.stdout + r.stderr
            r = tool(path, "validate", user=TA1, env=env)
            assert r.returncode == 2 and "not valid TOML" in r.stderr, r.stdout + r.stderr
        else:
            assert r.returncode == 0 and "has a mistake" not in r.stderr, r.stdout + r.stderr


# What a student can read of the course, walked as the student: every file they can open under the
# drop box's .course (the published state, the views), the staff's live files and the sweeps.
READ_ALL = r"""
import json, os, sys
out = {"read": [], "text": "", "denied": []}
for top in sys.argv[1:]:
    for d, dirs, files in os.walk(top, onerror=lambda e: out["denied"].append(e.filename)):
        for f in files:
            try:
                out["text"] += open(os.path.join(d, f), errors="replace").read()
                out["read"].append(os.path.join(d, f))
            except OSError:
                out["denied"].append(os.path.join(d, f))
print(json.dumps(out))
"""
KEY = r"""
import sys
sys.path.insert(0, sys.argv[1])
import course_state, toolchain
state = course_state.state_from_pointer(sys.argv[2])
tools = toolchain.Toolchain(state.config(), say=lambda *a: None)
print(tools.key, tools.find_trusted())
"""


def test_a_student_reads_nothing_of_the_class_and_grading_still_finds_its_build(course, accounts):
    import json
    base, path = course
    path.write_text(path.read_text() + "\n[similarity]\nnoise_threshold = 29\nguarantee_threshold = 47\n"
                    '[extensions]\nfile = "extensions.toml"\n')
    (base / "extensions.toml").write_text(f'[{ALICE}]\nlate_days = 2\nreason = "a medical note"\n')
    (base / "roster.txt").write_text(f"# the class\n{ALICE}\nglab_bobby\n")
    r = tool(path, "publish", "--why", "the class and its similarity thresholds")
    assert r.returncode == 0, r.stdout + r.stderr
    cfg = config.load(path)
    state = course_state.current(cfg)
    tops = [str(course_state.public_root(cfg)), str(path), str(base / "roster.txt"), str(cfg.sweeps_dir),
            str(ROOT / "reference")]
    r = subprocess.run(["runuser", "-u", ALICE, "--", sys.executable, "-c", READ_ALL, *tops],
                       capture_output=True, text=True)
    seen = json.loads(r.stdout)
    assert any(p.endswith("/course.toml") for p in seen["read"]) and any(p.endswith("state.json") for p in seen["read"])
    for secret in ("glab_bobby", "guarantee_threshold", "[similarity]", "medical"):
        assert secret not in seen["text"], (secret, seen["read"])
    solutions = [p for p in seen["read"] if p.startswith(str(ROOT / "reference")) and not Path(p).is_symlink()]
    assert solutions == [], solutions  # the links to the stubs (naive.cu) aside
    assert str(path) in seen["denied"] and str(base / "roster.txt") in seen["denied"]
    assert not (state.public_dir / "members").exists()  # nobody's name, not even hers, to test
    # what students may read of the course files: the rubric and the dates, as the handout ships them
    public = (state.public_dir / "course.toml").read_text()
    assert "[deadline]" in public and "[scoring.stages.tiled]" in public and "[similarity]" not in public
    # the trusted build is found by the key the staff published, though its sources are closed
    mine = subprocess.run(["runuser", "-u", ALICE, "--", sys.executable, "-c", KEY, str(ROOT / "cluster"), str(path)],
                          capture_output=True, text=True)
    import toolchain  # noqa: E402
    staff = toolchain.Toolchain(cfg, say=lambda *a: None)
    assert mine.returncode == 0, mine.stderr
    assert mine.stdout.split() == [staff.key, str(staff.find_trusted())], (mine.stdout, mine.stderr)
    # and alice hands in
    d = hand_in_dir(accounts.home(ALICE) / "gemm-lab" / "student", "stub")
    subprocess.run(["chown", "-R", f"{ALICE}:", str(accounts.home(ALICE) / "gemm-lab")], check=True)
    _edit(path, 'scheduler = "local"', 'scheduler = "slurm"')
    assert tool(path, "publish", "--why", "grade on Slurm").returncode == 0
    env = dict(os.environ, PATH=path_without_slurm(base / "path"))
    r = tool(path, "submit", "--student-dir", d, "--no-compile-check", user=ALICE, env=env)
    assert r.returncode == 0 and f"stored attempt #1 of {ALICE}" in r.stdout, r.stdout + r.stderr
    # her extension reaches her through her own view, never the staff's file with its reason
    assert tool(path, "publish").returncode == 0  # the staff's next publish leaves each student's view
    r = tool(path, "status", user=ALICE, env=env)
    assert r.returncode == 0 and "with your extension: 2 late days" in r.stdout, r.stdout + r.stderr
    assert "medical" not in r.stdout + r.stderr


def test_validate_refuses_what_students_could_read_and_setup_closes_it(course):
    base, path = course
    os.chmod(path, 0o644)
    os.chmod(ROOT / "reference" / "tiled.cu", 0o644)
    r = tool(path, "validate", user=TA1)
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"{path}: the staff's, and others may read or write it" in r.stderr and f"chmod o-rwx {path}" in r.stderr
    assert f"{ROOT / 'reference' / 'tiled.cu'}: a reference solution students may read" in r.stderr, r.stderr
    r = tool(path, "setup")
    assert r.returncode == 0 and f"{ROOT / 'reference' / 'tiled.cu'}: a reference solution" in r.stdout, r.stdout
    assert (ROOT / "reference" / "tiled.cu").stat().st_mode & 0o777 == 0o640 and path.stat().st_mode & 0o777 == 0o640
    r = tool(path, "validate", user=TA1)
    assert r.returncode == 0 and "what students may read: closed to them" in r.stdout, r.stdout + r.stderr
