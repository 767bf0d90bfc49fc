"""A grading's scratch is private by construction (cluster/scratch.py): made with mode 0700 whatever the
umask of the command that makes it, under a directory that only its account or root may change (or
a sticky one, like /tmp); any other is refused, naming it and what to do. With real Unix accounts
(private_accounts.py), a classmate who shares the student's group cannot read the stage files a
grading copied into its scratch while it builds them.
"""
import datetime as dt
import json
import os
import shutil
import signal
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from support import private_accounts
from support.cluster_helpers import PYTHON, ROOT, TOOL, as_user_env, config, dropbox, hand_in_dir, stand_in_make, wait_for

import course_state  # noqa: E402  (cluster/, on sys.path through cluster_helpers)
import scratch  # noqa: E402

ANN, BEN, CLASS_GROUP, STAFF = "glab_ann", "glab_ben", "glab_class", "glab_staff"


def mode(p: Path) -> int:
    return stat.S_IMODE(os.lstat(p).st_mode)


@pytest.fixture
def umask_000():
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def test_a_gradings_scratch_is_0700_under_umask_000(tmp_path, umask_000):
    """The umask of the command (a TA's shell, a job's) never opens scratch to anyone: its mode is set."""
    made = scratch.new(tmp_path / "scratch")
    assert mode(made) == 0o700 and made.parent == tmp_path / "scratch"
    assert mode(tmp_path / "scratch") == 0o700  # the directory it made for it, too
    with scratch.temporary("gemmlab-test-", base=tmp_path) as tmp:
        assert mode(tmp) == 0o700 and tmp.name.startswith("gemmlab-test-")
    assert not tmp.exists()


def test_scratch_under_a_directory_others_may_change_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)  # writable by everyone, not sticky: anyone may rename a grading's scratch away
    with pytest.raises(scratch.UnsafeScratch, match="may be written by other accounts and is not sticky") as e:
        scratch.new(shared)
    assert str(shared) in str(e.value) and "chmod +t" in str(e.value) and "[cluster] scratch" in str(e.value)
    assert list(shared.iterdir()) == []
    os.chmod(shared, 0o1777)  # as /tmp is
    assert mode(scratch.new(shared)) == 0o700
    below = shared / "deeper" / "still"
    os.makedirs(below)
    os.chmod(shared / "deeper", 0o775)  # a directory above the one named, group-writable: refused too
    with pytest.raises(scratch.UnsafeScratch, match="deeper"):
        scratch.new(below)
    if os.geteuid() == 0:  # another account's directory (nobody's): refused, whatever its mode
        theirs = tmp_path / "theirs"
        theirs.mkdir(mode=0o755)
        os.chown(theirs, 65534, 65534)
        with pytest.raises(scratch.UnsafeScratch, match="belongs to another account"):
            scratch.new(theirs)


def test_a_link_to_scratch_is_resolved_and_its_target_checked(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    (tmp_path / "link").symlink_to(shared)
    with pytest.raises(scratch.UnsafeScratch, match=str(shared)):
        scratch.new(tmp_path / "link")
    os.chmod(shared, 0o700)
    assert scratch.new(tmp_path / "link").parent == shared  # made where the link leads, named so


def test_a_grading_with_no_private_scratch_is_the_machines_error(tmp_path):
    """A scratch directory others could reach into is the machine's set-up, never the hand-in: the
    grading records the machine's `error` outcome saying why (a sweep grades it again), instead of
    ending with a message and no outcome at all. Through grade-attempt (a feedback job, a regrade)
    and through a sweep's task."""
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)  # writable by everyone, not sticky
    due = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)
    path = tmp_path / "course.toml"
    path.write_text(f'[course]\nname = "scratch-error"\n[cluster]\nscheduler = "local"\ndropbox = "{tmp_path}/dropbox"\n'
                    f'sweeps = "{tmp_path}/sweeps"\ngrader_root = "{ROOT}"\ntrusted_cache = "{tmp_path}/cache"\n'
                    f'scratch = "{shared}"\n[deadline]\ndue = {due.isoformat()}\n')
    cfg = config.load(path)
    dropbox.setup_dirs(cfg)
    attempt = dropbox.store_attempt(cfg, "ann", dropbox.collect(cfg, hand_in_dir(tmp_path / "src", "stub"), None))
    (tmp_path / "regrade").mkdir()
    into = tmp_path / "regrade" / "grading"
    r = subprocess.run([PYTHON, str(TOOL), "--config", str(path), "grade-attempt", "--attempt", str(attempt),
                        "--into", str(into)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "Traceback" not in r.stderr and not r.stderr.startswith("error:"), r.stdout + r.stderr
    outcome = json.loads((into / "outcome.json").read_text())
    assert outcome["status"] == "error" and outcome["student"] == "ann", outcome
    assert "no private scratch" in outcome["message"] and str(shared) in outcome["message"], outcome
    assert "grade-attempt: error: no private scratch" in r.stdout, r.stdout
    assert list(shared.iterdir()) == []

    from support.staff_class import sweep_commands  # with the staff's tools on the path
    sweep = cfg.sweeps_dir / "final"
    (sweep / "runs" / "run-001").mkdir(parents=True)
    plan = sweep_commands.plan_sweep(cfg)
    task = {k: plan[0][k] for k in ("student", "attempt", "attempt_name", "digest")}
    (sweep / "runs" / "run-001" / "tasks.json").write_text(json.dumps([task]))
    outcome = sweep_commands.run_task(cfg, sweep, "run-001", 0)
    assert outcome["status"] == "error" and str(shared) in outcome["message"], outcome
    placed = sweep / "grades" / "ann" / task["digest"][:16] / "outcome.json"
    assert json.loads(placed.read_text())["status"] == "error"
    import sweep_work  # cluster/staff/, on the path with staff_class
    work = sweep_work.sweep_todo(sweep, [dict(plan[0])])
    assert len(work.todo) == 1 and "graded again" in next(iter(work.why)), work  # the next sweep grades it again


# ---- a classmate during grading, with real accounts -------------------------------------------
@pytest.fixture(scope="module")
def accounts():
    """Two students whose processes share a group (on many sites every student's primary group is
    the same one), and a staff group."""
    yield from private_accounts.held_or_skipped({ANN: [CLASS_GROUP], BEN: [CLASS_GROUP]}, [CLASS_GROUP, STAFF])


@pytest.mark.skipif(not (shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc")),
                    reason="needs nvcc (the Makefile the grading asks for its variables wants one)")
def test_a_classmate_cannot_read_a_gradings_scratch_while_it_builds(accounts):
    """ann's feedback grading (grade-attempt, run as her, in her group) holds its build; ben, in the same
    group, tries to read the stage file it copied into scratch, and to list the scratch."""
    base = Path(tempfile.mkdtemp(prefix="gemmlab-scratch-test-", dir="/tmp"))
    os.chmod(base, 0o755)  # the students reach the course through it
    try:
        (base / "scratch").mkdir()
        os.chmod(base / "scratch", 0o1777)  # shared by every grading on the node, like /tmp
        due = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)).replace(microsecond=0)
        path = base / "course.toml"
        path.write_text(f'[course]\nname = "scratch-privacy"\n[cluster]\nscheduler = "local"\n'
                        f'staff_group = "{STAFF}"\ndropbox = "{base}/dropbox"\nsweeps = "{base}/sweeps"\n'
                        f'grader_root = "{ROOT}"\ntrusted_cache = "{base}/cache"\nscratch = "{base}/scratch"\n'
                        f'[deadline]\ndue = {due.isoformat()}\n')
        os.chmod(path, 0o644)
        cfg = config.load(path)
        dropbox.setup_dirs(cfg)
        # published as the staff publish a course: ann's grading finds the trusted build by the digest the
        # state names, never by reading the reference sources (another test's setup may close them to her)
        course_state.publish(cfg, {"measurement": {}, "rubric": {}})
        src = hand_in_dir(base / "src", "stub")
        (src / "naive.cu").write_text((src / "naive.cu").read_text() + "// ann's own work\n")
        attempt = dropbox.store_attempt(cfg, ANN, dropbox.collect(cfg, src, None))  # stored as root, given to ann
        (base / "signals").mkdir()
        os.chmod(base / "signals", 0o1777)  # where the stand-in make, as ann, says that the build began
        marker, never = base / "signals" / "building", base / "signals" / "never"
        bin_dir = base / "bin"
        stand_in_make(bin_dir, marker, never)  # the build waits there, as a long one would
        os.chmod(bin_dir, 0o755)
        env = as_user_env(dict(os.environ, CUDA_VISIBLE_DEVICES=""))
        for var in [v for v in env if v.startswith("SLURM_")]:
            env.pop(var)
        path_with_make = f"PATH={bin_dir}{os.pathsep}{os.environ['PATH']}"  # runuser resets PATH: set after it
        grading = subprocess.Popen(["runuser", "-u", ANN, "-g", CLASS_GROUP, "--", "env", path_with_make, PYTHON,
                                    str(TOOL), "--config", str(path), "grade-attempt", "--attempt", str(attempt)],
                                   cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True)
        try:
            wait_for(lambda: marker.exists() or grading.poll() is not None, 120, "ann's grading to build", poll=0.05)
            assert grading.poll() is None, grading.communicate()
            (own,) = [d for d in (base / "scratch").iterdir() if d.name.startswith(f"gemmlab-{accounts.uid[ANN]}-")]
            copied = own / "submission" / "naive.cu"
            assert b"ann's own work" in copied.read_bytes()
            for look in (["cat", str(copied)], ["ls", str(own)]):  # ben, in ann's group, during her grading
                r = subprocess.run(["runuser", "-u", BEN, "-g", CLASS_GROUP, "--", *look], capture_output=True,
                                   text=True)
                assert r.returncode != 0 and "Permission denied" in r.stderr, (look, r.stdout, r.stderr)
                assert "ann's own work" not in r.stdout and "naive.cu" not in r.stdout
            st = os.stat(own)
            assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (accounts.uid[ANN], 0o700), oct(st.st_mode)
        finally:
            if grading.poll() is None:
                os.killpg(grading.pid, signal.SIGKILL)
            grading.wait(timeout=60)
    finally:
        shutil.rmtree(base, ignore_errors=True)
