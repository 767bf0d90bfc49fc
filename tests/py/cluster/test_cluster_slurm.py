"""Hand-ins and sweeps on a REAL single-node Slurm cluster (tests/slurm/start-slurm.sh: slurmctld,
slurmd, munge; two fake GPUs, so --gres=gpu:1 jobs run on this GPU-less node and the grader there
honestly records no_gpu). Students and staff are Unix accounts (runuser) that exist only in a
private mount namespace of this test (private_accounts.py: copies of passwd and group bind-mounted
over /etc/passwd and /etc/group there), in which the test cluster's daemons run too: no account or
group is created on the machine, and nothing under /etc is written. The cluster has its own
configuration, munge and ports (SLURM_CONF in its directory): a Slurm the machine runs of its own is
never touched — one test starts such a "site" cluster on Slurm's default ports first (where the
machine has none) and proves it. Needs root and Slurm installed (make setup); skipped with the
reason otherwise (the tests with students also where a mount namespace cannot be made)."""
import datetime as dt
import grp
import json
import os
import pwd
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from support import private_accounts
from support.cluster_helpers import (activity_of, deadline_passes, dropbox_clock, folder, hold_lock, publish_if_set_up, stored_attempt, CACHE, ROOT,
                                     check_gradebook, config, hand_in_dir, make_class, mark_graded, read_gradebook,
                                     stand_in_make_holding_gradings, tool, trusted_tree_kept, wait_for, wait_while_working,
                                     write_config)
import attempts  # noqa: E402  (cluster/, on sys.path through cluster_helpers)
import scratch  # noqa: E402

import course_state  # noqa: E402  (cluster/, on sys.path through cluster_helpers)

SLURM = ROOT / "tests" / "slurm"
ALICE, BOB, TA, STAFF = "glab_alice", "glab_bob", "glab_ta", "glab_staff"
CLASS_SIZE = 22
CONCURRENCY = 2  # array tasks of a sweep at once

if os.geteuid() != 0:
    pytest.skip("the Slurm cluster tests need root (they start slurmctld/slurmd as root)",
                allow_module_level=True)
if not (shutil.which("slurmctld") and shutil.which("slurmd") and shutil.which("sbatch") and shutil.which("munged")):
    pytest.skip("Slurm is not installed (slurmctld, slurmd, slurm-client, munge: `make setup`)",
                allow_module_level=True)


# The test's accounts: two students, a TA in the staff group (private_accounts.py: they exist only in
# this test's mount namespace, where the cluster's daemons run).
ACCOUNTS = {ALICE: [], BOB: [], TA: [STAFF]}

LOCK = Path("/tmp/gemmlab-slurm-ci.lock")
CI_DIR = Path("/tmp/gemmlab-slurm-ci")


@pytest.fixture(scope="module")
def accounts():
    """The students and the staff group, for this test and every process it starts (the cluster's
    daemons included: start the cluster after this). Where no mount namespace can be made, the tests
    that need them are skipped, saying why."""
    yield from private_accounts.held_or_skipped(ACCOUNTS, [STAFF])


@pytest.fixture(scope="module")
def cluster(accounts):
    # The test cluster has fixed ports and one directory: two test sessions at once (say, two
    # `make test` in different checkouts) would restart each other's cluster. The second one waits
    # a while, then skips with this reason.
    lock = hold_lock(LOCK, 60)
    if lock is None:
        pytest.skip(f"another test session is using this machine's test Slurm cluster ({LOCK})")
    env = dict(os.environ, SLURM_CI_GPUS="2", SLURM_CI_DIR=str(CI_DIR))
    r = subprocess.run(["bash", str(SLURM / "start-slurm.sh")], env=env, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        pytest.fail(f"start-slurm.sh failed:\n{r.stdout}\n{r.stderr}")
    # Every Slurm command of the tests and of the tools they run (students' too: runuser keeps the
    # environment) talks to this cluster, never to the machine's own.
    old = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = str(CI_DIR / "etc" / "slurm.conf")
    try:
        yield
    finally:
        subprocess.run(["bash", str(SLURM / "stop-slurm.sh")], env=env, capture_output=True, timeout=120)
        if old is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = old
        lock.close()


@pytest.fixture(scope="module")
def course(cluster):
    base = Path(tempfile.mkdtemp(prefix="gemmlab-cluster-test-", dir="/tmp"))
    os.chmod(base, 0o755)  # the students reach the config and the drop box through it
    due = dt.datetime.now(dt.timezone.utc).replace(microsecond=0) + dt.timedelta(hours=2)
    (base / "scratch").mkdir()
    os.chmod(base / "scratch", 0o1777)  # like /tmp: every job builds there (a directory of the course's, to look into)
    cfg_path = write_config(base, "slurm", due, staff_group=STAFF, gres="gpu:1", cpus_per_task=1,
                            time_limit="00:15:00", sweep_concurrency=CONCURRENCY, scratch=str(base / "scratch"))
    CACHE.mkdir(parents=True, exist_ok=True)
    for d in (CACHE, CACHE.parent, CACHE.parent.parent):  # the students' jobs read the trusted build
        os.chmod(d, d.stat().st_mode | 0o055)
    with trusted_tree_kept():  # setup closes the reference sources of the trusted tree (this checkout) to students
        r = tool(cfg_path, "setup", "--build")
        assert r.returncode == 0, r.stdout + r.stderr
        (base / "roster.txt").write_text(f"{ALICE}\n")  # bob is not on it
        publish_if_set_up(cfg_path)  # the course, published as the staff would
        yield base, cfg_path, due
    shutil.rmtree(base, ignore_errors=True)


def _left_scratch(base: Path) -> list[str]:
    """Scratch directories of gradings whose process is gone: what a killed grading leaves on a node."""
    return [d.name for d in (base / "scratch").iterdir()
            if not scratch.process_alive(int(d.name.rsplit("-", 2)[1]))]


def wait_on_cluster(base: Path, predicate, what):
    """Waits until predicate() is true for as long as the test cluster works on the course under `base`
    (wait_while_working: its jobs change state or its files are written): however long a loaded machine
    takes, only a cluster that stopped moving fails it."""
    queue = lambda: subprocess.run(["squeue", "-h", "-o", "%i %T %N"], capture_output=True, text=True).stdout  # noqa: E731
    return wait_while_working(predicate, activity_of(base, queue=queue), what, poll=0.5)


def _student_copy(user, kind="stub"):
    home = Path(pwd.getpwnam(user).pw_dir)
    d = hand_in_dir(home / "gemm-lab" / "student", kind)
    subprocess.run(["chown", "-R", f"{user}:", str(home / "gemm-lab")], check=True)
    return d


def _submit_as(cfg_path, user, student_dir):
    r = tool(cfg_path, "submit", "--student-dir", student_dir, user=user)
    assert r.returncode == 0, r.stdout + r.stderr
    job = re.search(r"grading job (\d+) queued", r.stdout)
    assert job, r.stdout
    attempt = stored_attempt(r.stdout)
    return attempt, job.group(1)


def test_submit_is_stored_queued_run_and_recorded(course):
    base, cfg_path, _ = course
    attempt, job = _submit_as(cfg_path, ALICE, _student_copy(ALICE))
    # stored: owned by the student, group staff, no access for others
    st = attempt.stat()
    assert pwd.getpwuid(st.st_uid).pw_name == ALICE and grp.getgrgid(st.st_gid).gr_name == STAFF
    assert st.st_mode & 0o7777 == 0o2750, oct(st.st_mode)
    assert (attempt / "files" / "naive.cu").stat().st_mode & 0o777 == 0o640
    outcome_file = attempt / "grading" / "outcome.json"
    wait_on_cluster(base, lambda: outcome_file.exists() or _job_gone(job), f"job {job} to write {outcome_file}")
    log = attempt / f"grade-{job}.log"
    assert outcome_file.exists(), f"job {job} ended without results: {log.read_text() if log.exists() else ''}"
    outcome = json.loads(outcome_file.read_text())
    assert outcome["status"] == "no_gpu", outcome  # the honest result on a GPU-less node
    assert outcome["job_id"] == job and outcome["student"] == ALICE
    # the job's script was rendered from the trusted template outside the attempt: none lies in it
    assert not [n for n in os.listdir(attempt) if n.endswith(".sbatch")], os.listdir(attempt)
    r = tool(cfg_path, "status", user=ALICE)
    assert r.returncode == 0 and "no_gpu" in r.stdout, r.stdout + r.stderr
    r = tool(cfg_path, "results", user=ALICE)
    assert r.returncode == 0 and "no_gpu" in r.stdout, r.stdout + r.stderr


def test_second_attempt_is_kept_beside_the_first(course):
    base, cfg_path, _ = course
    cfg = config.load(cfg_path)
    first = sorted((folder(cfg, ALICE)).glob("attempt-*"))
    before = {p: p.read_bytes() for p in first[0].rglob("*") if p.is_file() and "grading" not in p.parts}
    d = _student_copy(ALICE)
    (d / "naive.cu").write_text((d / "naive.cu").read_text() + "\n// second attempt\n")
    attempt, job = _submit_as(cfg_path, ALICE, d)
    attempts = sorted((folder(cfg, ALICE)).glob("attempt-*"))
    assert len(attempts) == len(first) + 1 and attempts[-1] == attempt
    assert {p: p.read_bytes() for p in before} == before
    m1, m2 = (json.loads((a / "manifest.json").read_text()) for a in (first[0], attempt))
    assert m1["attempt_sha256"] != m2["attempt_sha256"]


def test_another_student_cannot_read_an_attempt(course):
    base, cfg_path, _ = course
    cfg = config.load(cfg_path)
    attempt = sorted((folder(cfg, ALICE)).glob("attempt-*"))[0]
    for cmd in (["cat", str(attempt / "manifest.json")], ["cat", str(attempt / "files" / "naive.cu")],
                ["ls", str(folder(cfg, ALICE))], ["ls", str(cfg.dropbox_dir)],
                ["touch", str(folder(cfg, ALICE) / "planted")]):
        r = subprocess.run(["runuser", "-u", BOB, "--", *cmd], capture_output=True, text=True)
        assert r.returncode != 0 and "Permission denied" in r.stderr, (cmd, r.stdout, r.stderr)
    r = tool(cfg_path, "results", "--user", ALICE, user=BOB)
    assert r.returncode != 0
    # the course staff can
    r = subprocess.run(["runuser", "-u", TA, "--", "cat", str(attempt / "manifest.json")],
                       capture_output=True, text=True)
    assert r.returncode == 0 and ALICE in r.stdout, r.stderr


def _sweep_jobs(cfg, name, run):
    return json.loads((cfg.sweeps_dir / name / "runs" / run / "jobs.json").read_text())


def _job_gone(job):
    return subprocess.run(["squeue", "-h", "-j", job], capture_output=True, text=True).stdout.strip() == ""


def test_sweep_cancelled_halfway_resumes_to_a_complete_gradebook(course):
    base, cfg_path, due = course
    cfg = config.load(cfg_path)
    kinds = make_class(cfg, base, CLASS_SIZE, due)
    kinds[ALICE] = "stub"  # she handed in (stubs) above
    graded_count = sum(1 for k in kinds.values() if k != "missing")
    (base / "roster.txt").write_text("\n".join(kinds) + "\n")
    publish_if_set_up(cfg_path)  # the roster with alice, published
    sweep = cfg.sweeps_dir / "final"

    # run 1: every task holds its finished results 3 s before publishing; cancel the array midway: once
    # 4 grades are in, a stand-in make holds every grading that starts, so the cancel finds the sweep
    # part-way, with a task running, whatever the load
    hold = base / "hold"
    armed, held, release = hold / "armed", hold / "held", hold / "release"
    stand_in_make_holding_gradings(hold / "bin", armed, held, release)
    env = dict(os.environ, GEMMLAB_CLUSTER_HOLD_BEFORE_PUBLISH="3", PATH=f"{hold / 'bin'}{os.pathsep}{os.environ['PATH']}")
    # published results in place only: a task killed while holding leaves a hidden .tmp-* directory;
    # a result graded again is kept beside the new one as <hash>.replaced-<time>
    graded = lambda: [p for p in (sweep / "grades").glob("*/*/outcome.json")  # noqa: E731
                      if not p.parent.name.startswith(".") and ".replaced-" not in p.parent.name]
    try:
        r = tool(cfg_path, "sweep", env=env)
        assert r.returncode == 0, r.stdout + r.stderr
        jobs = _sweep_jobs(cfg, "final", "run-001")
        wait_on_cluster(base, lambda: len(graded()) >= 4, "4 graded tasks")
        graded_when_armed = len(graded())
        armed.touch()

        def running_tasks():
            return subprocess.run(["squeue", "-h", "-r", "-j", jobs["array"], "-t", "RUNNING", "-o", "%i"],
                                  capture_output=True, text=True).stdout.split()
        wait_on_cluster(base, held.exists, "a grading held by the stand-in make")
        running = wait_on_cluster(base, running_tasks, "the held task, running, in the queue")
        subprocess.run(["scancel", jobs["array"]], check=True)
        wait_on_cluster(base, lambda: _job_gone(jobs["gradebook"]), "the gradebook job after the cancel")
    finally:
        release.touch()
    # scancel sent every task SIGTERM (SIGKILL KillWait seconds later): none left its scratch
    assert not _left_scratch(base), _left_scratch(base)
    first = {p.parent.parent.name: json.loads(p.read_text()) for p in graded()}
    errors = {s: o.get("message", "") + o.get("log_tail", "")[-800:] for s, o in first.items() if o["status"] == "error"}
    assert not errors, errors
    # what was published when the stand-in was armed, and at most the tasks then past it
    assert 4 <= len(first) <= graded_when_armed + CONCURRENCY < graded_count, (len(first), graded_when_armed)
    for d in (sweep / "grades").glob("*/*"):  # killed tasks left nothing in place (only hidden .tmp-*)
        assert d.name.startswith(".tmp-") or (d / "outcome.json").is_file(), d
    killed_mid_publish = list((sweep / "grades").glob("*/.tmp-*/outcome.json"))
    rows = read_gradebook(sweep)
    assert sum(r["status"] == "pending" for r in rows) >= 1
    status = tool(cfg_path, "sweep-status")
    assert "failed" in status.stdout and "make sweep" in status.stdout, status.stdout
    print(f"cancelled with {len(first)} graded; running at cancel: {running}")

    # run 2: grades only what is missing, and what found no GPU, then the gradebook is complete. This
    # node has no GPU: the test marks all but one of the first run's grades as graded on a GPU
    retried = min(first)
    marked = mark_graded(sweep, set(first) - {retried})
    first.update(marked)
    r = tool(cfg_path, "sweep")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"to grade: {graded_count - len(marked)} (" in r.stdout and "graded again, their earlier result: no_gpu: 1" in r.stdout, r.stdout
    assert f"current (graded under this rubric and grader): {len(marked)}" in r.stdout, r.stdout
    jobs2 = _sweep_jobs(cfg, "final", "run-002")
    wait_on_cluster(base, lambda: _job_gone(jobs2["gradebook"]) and _gradebook_of(sweep / "runs" / "run-002"),
                    "the second sweep's gradebook")
    rows = read_gradebook(sweep)
    check_gradebook(rows, kinds, graded=marked)
    assert len(rows) == CLASS_SIZE + 1
    for p in graded():  # the first run's grades were kept, not graded twice; its no_gpu was graded again
        o = json.loads(p.read_text())
        if o["student"] in marked:
            assert o == first[o["student"]]
        elif o["student"] == retried:
            assert o["run"] == "run-002" and o["status"] == "no_gpu", o
    replaced = list((sweep / "grades").glob("*/*.replaced-*"))
    assert [p.parent.name for p in replaced] == [retried], replaced
    assert json.loads((replaced[0] / "outcome.json").read_text()) == first[retried]
    assert not list((sweep / "grades").glob("*/.tmp-*")), "stale temporary results left"
    assert running, "no task was running when the array was cancelled (the test proved less)"
    print(f"killed while holding finished results: {len(killed_mid_publish)} task(s)")
    status = tool(cfg_path, "sweep-status")
    assert f"done {graded_count}, running 0, queued 0, failed 0" in status.stdout, status.stdout
    assert f"no GPU on the node: {graded_count - len(marked)} " in status.stdout, status.stdout
    summary = (sweep / "summary.md").read_text()
    assert f"{CLASS_SIZE + 1} student(s)" in summary and "build_failed" not in summary  # one bad file is not that


def _sweep_and_wait(cfg_path, *args):
    r = tool(cfg_path, "sweep", *args)
    if r.returncode != 0:
        return r
    cfg = config.load(cfg_path)
    run = sorted((cfg.sweeps_dir / "final" / "runs").glob("run-*"))[-1]
    jobs = _sweep_jobs(cfg, "final", run.name)
    # make sweep-status FOLLOW=1: reports until the sweep's jobs have left the queue
    follow = tool(cfg_path, "sweep-status", "--follow", "1", timeout=1800)  # (the bound of a hang)
    assert follow.returncode == 0 and follow.stdout.startswith("sweep final (run-"), follow.stdout + follow.stderr
    assert _job_gone(jobs["gradebook"]), follow.stdout
    wait_on_cluster(cfg.path.parent, lambda: _job_gone(jobs["gradebook"]) and (cfg.sweeps_dir / "final" / "gradebook.csv").exists()
                    and _gradebook_of(run), f"the gradebook of {run.name}")
    return r


def _gradebook_of(run: Path) -> str:
    """The gradebook version built after a sweep run ('' until its gradebook job has built one): the
    run's manifest records it."""
    manifest = json.loads((run / "manifest.json").read_text()) if (run / "manifest.json").exists() else {}
    return (manifest.get("gradebook") or {}).get("version", "")


def _queued_names():
    return subprocess.run(["squeue", "-h", "-o", "%j"], capture_output=True, text=True).stdout.split()


def test_a_semester_of_sweeps_around_the_deadline(course):
    """As a TA lives it: a rubric with a mistake is refused before anything is queued; a sweep before
    the deadline is refused, then run with FORCE (everyone pending, blank); after the course's deadline
    the extended student stays pending and blank, the absent one is a 0, the absent extended one blank."""
    import csv
    base = Path(tempfile.mkdtemp(prefix="gemmlab-semester-", dir="/tmp"))
    os.chmod(base, 0o755)
    due = dt.datetime.now(dt.timezone.utc).replace(microsecond=0) + dt.timedelta(days=1)  # moved once swept
    cfg_path = write_config(base, "slurm", due, gres="gpu:1", cpus_per_task=1, time_limit="00:15:00",
                            sweep_concurrency=2)
    cfg_path.write_text(cfg_path.read_text() + '[extensions]\nfile = "extensions.toml"\n')
    (base / "extensions.toml").write_text("[ext]\nlate_days = 1\n[ext_absent]\nlate_days = 1\n")
    (base / "roster.txt").write_text("on_time\next\nabsent\next_absent\n")
    cfg = config.load(cfg_path)
    from support.cluster_helpers import dropbox
    for student in ("on_time", "ext"):
        dropbox.store_attempt(cfg, student, dropbox.collect(cfg, hand_in_dir(base / "src", "stub"), None))
    sweep = cfg.sweeps_dir / "final"
    try:
        # a mistake in the rubric: refused with the grader's own message, nothing planned or queued
        bad = base / "bad.toml"
        bad.write_text(cfg_path.read_text().replace("target_pct_reference = { float = 80, double = 95 }",
                                                    'target_pct_reference = { float = "fifteen" }'))
        r = tool(bad, "sweep", "--before-deadline")
        assert r.returncode == 2, r.stdout + r.stderr
        assert 'target_pct_reference.float must be a number between 0 and 1000, got "fifteen"' in r.stderr, r.stderr
        assert not (sweep / "plan.json").exists() and not (sweep / "runs").exists()
        assert not [n for n in _queued_names() if n.startswith("gemmlab-")], _queued_names()

        # before the deadline: refused; asked for, everyone is pending
        r = tool(cfg_path, "sweep")
        assert r.returncode == 1 and "deadline has not passed" in r.stderr and "FORCE=1" in r.stderr, r.stderr
        assert dt.datetime.now(dt.timezone.utc) < due, "the class took longer than its deadline allows"
        r = _sweep_and_wait(cfg_path, "--before-deadline")
        assert r.returncode == 0, r.stdout + r.stderr
        assert "warning: 4 student(s) can still hand in" in r.stdout, r.stdout
        rows = {row["student"]: row for row in read_gradebook(sweep)}
        assert {s: (row["status"], row["final"]) for s, row in rows.items()} == {
            s: ("pending", "") for s in ("on_time", "ext", "absent", "ext_absent")}, rows

        # after the course's deadline (the extended students' runs a day longer): the staff move it to
        # the next second, and it passes
        deadline_passes(cfg, dropbox_clock(cfg).replace(microsecond=0) + dt.timedelta(seconds=1))
        r = _sweep_and_wait(cfg_path)
        assert r.returncode == 0, r.stdout + r.stderr
        # the first sweep's grades of on_time and ext found no GPU (none here): graded again, kept beside
        assert "warning: 2 student(s) can still hand in" in r.stdout, r.stdout
        assert "to grade: 2 (graded again, their earlier result: no_gpu: 2)" in r.stdout, r.stdout
        assert sorted(p.parent.name for p in (sweep / "grades").glob("*/*.replaced-*")) == ["ext", "on_time"]
        rows = {row["student"]: row for row in read_gradebook(sweep)}
        assert (rows["on_time"]["status"], rows["on_time"]["final"]) == ("no_gpu", "")  # no GPU here: never a 0
        assert (rows["absent"]["status"], rows["absent"]["final"]) == ("missing", "0")
        assert rows["ext"]["status"] == "pending" and rows["ext"]["final"] == "", rows["ext"]
        assert "can still hand in (as it stands: no_gpu)" in rows["ext"]["message"], rows["ext"]
        assert rows["ext_absent"]["status"] == "pending" and rows["ext_absent"]["final"] == ""
        with open(sweep / "export" / "grades.csv") as f:
            plain = {row["student"]: row for row in csv.DictReader(f)}
        assert {s: plain[s]["final"] for s in plain} == {"on_time": "", "ext": "", "absent": "0", "ext_absent": ""}
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_late_repeated_or_excess_hand_in_on_slurm(course):
    """make submit as a student after the deadline: it says how late and what it costs; a second
    hand-in while the first still waits is stored but not queued (queued_per_student = 1); the same
    files again are not graded again; a student not on the roster hands in nothing."""
    from support.cluster_helpers import set_due
    base, cfg_path, _ = course
    due = dt.datetime.now(dt.timezone.utc).replace(microsecond=0) - dt.timedelta(hours=1, minutes=5)
    set_due(cfg_path, due)
    cfg_path.write_text(cfg_path.read_text().replace("[cluster]\n", "[cluster]\nqueued_per_student = 1\n", 1))
    roster = base / "roster.txt"
    names = roster.read_text().split() if roster.exists() else []
    roster.write_text("\n".join(names + ([] if ALICE in names else [ALICE])) + "\n")
    os.chmod(roster, 0o644)  # every student's make submit reads it
    publish_if_set_up(cfg_path)  # the roster and queued_per_student, as the staff publish them
    state = course_state.current(config.load(cfg_path))
    d = _student_copy(ALICE)
    (d / "naive.cu").write_text((d / "naive.cu").read_text() + "\n// late, first\n")
    # her checkout's course.toml, edited (another rubric, a later due date): not what grades her
    mine = d.parent / "course.toml"
    mine.write_text(cfg_path.read_text().replace("\ndue = ", "\ndue = 2027-01-01T00:00:00Z\n# was: ")
                    .replace("correctness_points = 0\nperformance_points = 0", "correctness_points = 50\nperformance_points = 0"))
    subprocess.run(["chown", "-R", f"{ALICE}:", str(d.parent)], check=True)
    r = tool(mine, "submit", "--student-dir", d, "--no-compile-check", user=ALICE)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"(the course's published configuration is used; {mine} is not)" in r.stderr, r.stderr
    attempt = stored_attempt(r.stdout)
    # how late, from the time the drop box recorded (at least the 1 h 5 min the due date was set back)
    late = next(a for a in attempts.in_directory(attempt.parent) if a.path == attempt).effective_time() - due
    minutes = int(late.total_seconds()) // 60
    assert 65 <= minutes < 120 and f"submit: LATE: handed in 1 h {minutes - 60} min after your due date" in r.stdout, r.stdout
    assert "late penalty: 10 % of its score (10 % per started day late, at most 100 %)" in r.stdout, r.stdout
    job = re.search(r"grading job (\d+) queued", r.stdout).group(1)
    script = subprocess.run(["scontrol", "write", "batch_script", job, "-"], capture_output=True, text=True).stdout
    # her job reads the students' half of the published state (course.toml without the staff's sections)
    assert f"--config {state.public_dir / 'course.toml'} grade-attempt" in script, script
    subprocess.run(["scontrol", "hold", job], check=True)  # it waits (as on a busy cluster)
    try:
        (d / "naive.cu").write_text((d / "naive.cu").read_text() + "// late, second\n")
        r = tool(cfg_path, "submit", "--student-dir", d, "--no-compile-check", user=ALICE)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "submit: not queued for grading: 1 grading job(s) of yours are still waiting or running" in r.stdout, r.stdout
        assert not re.search(r"grading job \d+ queued", r.stdout), r.stdout
    finally:
        subprocess.run(["scontrol", "release", job], check=True)
    (d / "naive.cu").write_text((d / "naive.cu").read_text().replace("// late, second\n", ""))
    r = tool(cfg_path, "submit", "--student-dir", d, "--no-compile-check", user=ALICE)  # the first one's files again
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"not queued for grading: the same files as your attempt #\d+ \(", r.stdout), r.stdout
    status = tool(cfg_path, "status", user=ALICE)
    assert "not queued (the same files as your attempt" in status.stdout and "<- counts" in status.stdout, status.stdout
    # not on the roster: a student cannot tell (the roster is the staff's), so the hand-in is stored, and
    # the staff's sweep names it among the folders of names the roster does not list
    r = tool(cfg_path, "submit", "--student-dir", _student_copy(BOB), "--no-compile-check", user=BOB)
    assert r.returncode == 0, r.stdout + r.stderr
    assert [n for n in attempts.off_roster(config.load(cfg_path)) if n.startswith(f"{BOB}+")], "off the roster"
    wait_on_cluster(base, lambda: _job_gone(job), f"the released job {job}")
    # the controller does not answer (a copy of the configuration naming a port nobody listens on):
    # the hand-in is kept, and the message says it is the scheduler, not the course's settings
    down = base / "controller-down" / "slurm.conf"
    down.parent.mkdir(exist_ok=True)
    conf = (CI_DIR / "etc" / "slurm.conf").read_text()
    down.write_text(re.sub(r"(?m)^SlurmctldPort=\d+", "SlurmctldPort=16999", conf))
    os.chmod(down.parent, 0o755)
    (d / "naive.cu").write_text((d / "naive.cu").read_text() + "// while the controller is down\n")
    r = tool(cfg_path, "submit", "--student-dir", d, "--no-compile-check", user=ALICE,
             env=dict(os.environ, SLURM_CONF=str(down)))
    assert r.returncode == 0, r.stdout + r.stderr  # handed in: only its feedback grading waits
    assert "your hand-in is stored and counts" in r.stderr, r.stderr
    assert "Slurm, the cluster's scheduler, did not answer" in r.stderr and "the cluster's problem" in r.stderr, r.stderr
    assert "check [cluster]" not in r.stderr and "make requeue ATTEMPT=" in r.stderr, r.stderr


def _snapshot(*dirs):
    """Every file under `dirs` with its bytes' hash and mode (a missing directory: nothing)."""
    import hashlib
    out = {}
    for d in dirs:
        for p in sorted(Path(d).rglob("*")) if Path(d).is_dir() else []:
            if p.is_file():
                out[str(p)] = (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mode)
    return out


def test_a_sites_own_slurm_is_left_untouched():
    """make test as root on a login node: a Slurm the machine runs of its own — on Slurm's default
    ports, with a job running — keeps its configuration, its daemons and its job while the test
    cluster is started, used and stopped beside it; and nothing under /etc/slurm or /etc/munge is
    written. (The stand-in site keeps its own files in its own directory, like every test file; where
    the default ports are taken, the machine runs a Slurm of its own and the test is skipped.)"""
    site = SLURM / "site-slurm.sh"
    etc_before = _snapshot("/etc/slurm", "/etc/munge")
    r = subprocess.run(["bash", str(site), "start"], capture_output=True, text=True, timeout=120)
    if r.returncode == 3:
        pytest.skip(r.stderr.strip())
    site_conf = Path("/tmp/gemmlab-site-slurm/etc/slurm.conf")
    try:
        assert r.returncode == 0, r.stdout + r.stderr
        site_env = dict(os.environ, SLURM_CONF=str(site_conf))
        conf_before = site_conf.read_bytes()
        daemons = [int(Path(f"/tmp/gemmlab-site-slurm/{d}.pid").read_text()) for d in ("slurmctld", "slurmd")]
        # (it runs until the site's cluster is stopped: an hour only bounds a hang)
        job = subprocess.run(["sbatch", "--parsable", "-o", "/dev/null", "--wrap", "sleep 3600"], env=site_env,
                             capture_output=True, text=True, check=True).stdout.strip()
        wait_for(lambda: _state(job, site_env) == "RUNNING", 600, f"the site's job {job} to run")

        # The test cluster, as the cluster tests start it, beside it: its own directory and ports (a
        # directory every user may enter: munged runs as munge).
        beside = Path(tempfile.mkdtemp(prefix="gemmlab-slurm-beside-", dir="/tmp"))
        os.chmod(beside, 0o755)
        ci = dict(os.environ, SLURM_CI_DIR=str(beside / "ci"), SLURM_CI_PORT=str(_free_port_pair(16917)),
                  SLURM_CI_GPUS="1")
        ci.pop("SLURM_CONF", None)
        r = subprocess.run(["bash", str(SLURM / "start-slurm.sh")], env=ci, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        ci_env = dict(os.environ, SLURM_CONF=str(beside / "ci" / "etc" / "slurm.conf"))
        ours = subprocess.run(["sbatch", "--parsable", "--wait", "-o", "/dev/null", "--wrap", "true"], env=ci_env,
                              capture_output=True, text=True, timeout=120)
        assert ours.returncode == 0, ours.stderr
        r = subprocess.run(["bash", str(SLURM / "stop-slurm.sh")], env=ci, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr

        assert site_conf.read_bytes() == conf_before, "the site's slurm.conf changed"
        for pid in daemons:
            os.kill(pid, 0)  # the site's slurmctld and slurmd still run
        # (squeue can miss an answer from a controller on a loaded machine: asked again until it answers)
        try:
            state = wait_for(lambda: _state(job, site_env), 600, f"the site's controller to answer for job {job}", poll=0.5)
        except AssertionError:
            state = ""
        if state != "RUNNING":
            why = subprocess.run(["scontrol", "show", "job", job], env=site_env, capture_output=True, text=True)
            logs = "".join(f"--- {log} (last lines)\n" + "\n".join(log.read_text(errors="replace").splitlines()[-25:]) + "\n"
                           for log in sorted(Path("/tmp/gemmlab-site-slurm/log").glob("*.log")))
            pytest.fail(f"the site's job did not survive the test cluster: {state!r}\n{why.stdout}{why.stderr}{logs}")
    finally:
        subprocess.run(["bash", str(site), "stop"], capture_output=True, timeout=120)
        for d in Path("/tmp").glob("gemmlab-slurm-beside-*"):
            shutil.rmtree(d, ignore_errors=True)
    assert _snapshot("/etc/slurm", "/etc/munge") == etc_before, "a test wrote under /etc/slurm or /etc/munge"
    assert not Path("/tmp/gemmlab-site-slurm").exists(), "the stand-in left its files behind"


def _free_port_pair(first: int) -> int:
    """The first port from `first` up that is free, with the next one (slurmctld's and slurmd's):
    another test cluster on this machine may hold the first pair."""
    import socket
    for port in range(first, first + 200, 2):
        try:
            with socket.socket() as a, socket.socket() as b:
                a.bind(("0.0.0.0", port))
                b.bind(("0.0.0.0", port + 1))
            return port
        except OSError:
            continue
    raise AssertionError(f"no two free ports from {first} to {first + 200}")


def _state(job, env):
    return subprocess.run(["squeue", "-h", "-j", job, "-o", "%T"], env=env, capture_output=True,
                          text=True).stdout.strip()
