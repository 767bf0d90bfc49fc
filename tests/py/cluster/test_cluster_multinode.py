"""Sweeps on a real MULTI-node Slurm cluster on this one machine (tests/slurm/multinode.sh): a
controller and three compute nodes, each slurmd with its own host name and address in its own
network namespace, joined by a bridge in a namespace of its own (no address outside them is ever
used), a private munged, fake GRES GPUs of two models (a100 on node 1, h100 on nodes 2 and 3) and
the same drop box path everywhere. The grader on these GPU-less nodes honestly records no_gpu;
what is tested is where and how often every attempt is graded:

- a class of 32 hand-ins spreads over the three nodes (the gradebook's node column);
- one node is killed mid-sweep (every process in its namespace, then marked DOWN): its tasks are
  requeued and the gradebook ends complete, every attempt graded exactly once (a no_gpu result a
  requeued start finds is graded again, the old one kept beside it), the restarts shown by
  `make sweep-status`;
- a student hands in during the sweep: the sweep grades the attempt it planned, the new one is
  graded by its own job;
- `scancel` of a whole sweep, then `make sweep` again: only what is missing, or found no GPU, is
  graded (the test marks the other first grades as graded on a GPU);
- the GPU model of every grade is recorded; course.toml pins grading by gres type or by node
  feature (constraint), and a regrade on another model than the first grade is flagged — between
  grades that ran on a GPU (the test marks them so): a no_gpu result graded again elsewhere, as after
  the node failure above, is not.

Needs root, network and UTS namespaces and Slurm (make setup); skipped with the reason otherwise.
"""
import csv
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from support.cluster_helpers import (activity_of, folder, hold_lock, stored_attempt, CACHE, PYTHON, ROOT, TOOL, check_gradebook, config,
                                     dropbox, hand_in_dir, make_class, mark_graded, stand_in_make_holding_gradings, wait_while_working,
                                     write_config)
import attempts  # noqa: E402  (cluster/, on sys.path through cluster_helpers)

MULTINODE = ROOT / "tests" / "slurm" / "multinode.sh"
MN_DIR = "/tmp/gemmlab-slurm-mn"
LOCK = Path("/tmp/gemmlab-slurm-mn.lock")
CLASS_SIZE = 36  # every 8th student is on the roster with no hand-in: 32 attempts to grade
HOLD = "2"       # seconds each task holds its finished results before publishing (a wider kill window)
CONCURRENCY = 6  # array tasks of a sweep at once


def _probe():
    try:
        r = subprocess.run(["bash", str(MULTINODE), "probe"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"multinode.sh probe did not run: {e}"
    return "" if r.returncode == 0 else (r.stdout.strip() or r.stderr.strip() or f"probe exit {r.returncode}")


WHY_NOT_HERE = _probe()  # why the multi-node cluster cannot run on this machine ("" where it can)
if WHY_NOT_HERE:
    pytest.skip(f"the multi-node Slurm cluster cannot run here: {WHY_NOT_HERE}", allow_module_level=True)


def login(*cmd, env=None, timeout=300, check=False):
    """A command on the cluster's login node (the controller's namespace; SLURM_CONF set)."""
    r = subprocess.run(["bash", str(MULTINODE), "login", *map(str, cmd)], capture_output=True, text=True,
                       env=env, timeout=timeout, cwd=ROOT)
    if check:
        assert r.returncode == 0, f"{cmd}: {r.stdout}\n{r.stderr}"
    return r


def tool(cfg_path, *args, env=None, timeout=600):
    return login(PYTHON, TOOL, "--config", cfg_path, *args, env=env, timeout=timeout)


@pytest.fixture(scope="module")
def cluster():
    lock = hold_lock(LOCK, 60)
    if lock is None:
        pytest.skip(f"another test session is using this machine's multi-node test cluster ({LOCK})")
    env = dict(os.environ, SLURM_MN_DIR=MN_DIR)
    try:
        r = subprocess.run(["bash", str(MULTINODE), "start"], env=env, capture_output=True, text=True, timeout=180)
        if r.returncode == 77:
            pytest.skip(f"the multi-node Slurm cluster cannot run here: {r.stderr.strip()}")
        assert r.returncode == 0, f"multinode.sh start failed:\n{r.stdout}\n{r.stderr}"
        print(r.stdout)
        info = dict(line.split("=", 1) for line in
                    subprocess.run(["bash", str(MULTINODE), "env"], env=env, capture_output=True,
                                   text=True).stdout.splitlines() if "=" in line)
        nodes = info["SLURM_MN_NODES"].strip('"').split()
        types = dict(zip(nodes, info["SLURM_MN_TYPES"].strip('"').split()))
        yield {"nodes": nodes, "types": types}
    finally:
        subprocess.run(["bash", str(MULTINODE), "stop"], env=env, capture_output=True, timeout=180)
        lock.close()


@pytest.fixture(scope="module")
def course(cluster):
    base = Path(tempfile.mkdtemp(prefix="gemmlab-mn-test-", dir="/tmp"))
    os.chmod(base, 0o755)
    due = dt.datetime.now(dt.timezone.utc).replace(microsecond=0) + dt.timedelta(hours=2)
    cfg_path = write_config(base, "slurm", due, gres="gpu:1", cpus_per_task=1, time_limit="00:10:00",
                            sweep_concurrency=CONCURRENCY)
    CACHE.mkdir(parents=True, exist_ok=True)
    r = tool(cfg_path, "setup", "--build", timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    cfg = config.load(cfg_path)
    kinds = make_class(cfg, base, CLASS_SIZE, due)
    yield {"base": base, "cfg_path": cfg_path, "cfg": cfg, "kinds": kinds, "due": due, **cluster}
    shutil.rmtree(base, ignore_errors=True)


# ---- helpers -------------------------------------------------------------------------------------
def job_gone(job):
    r = login("squeue", "-h", "-j", job)
    return r.returncode == 0 and r.stdout.strip() == ""


def sweep_jobs(cfg, name, run):
    return json.loads((cfg.sweeps_dir / name / "runs" / run / "jobs.json").read_text())


def cluster_activity(cfg):
    """The course's work under way on the cluster: its jobs and their states, and its files (activity_of)."""
    return activity_of(cfg.sweeps_dir, cfg.dropbox_dir, queue=lambda: login("squeue", "-h", "-o", "%i %T %N").stdout)


def wait_on_cluster(cfg, predicate, what):
    """Waits until predicate() is true for as long as the cluster works (wait_while_working): however
    long a loaded machine takes, only a cluster that stopped moving fails it."""
    return wait_while_working(predicate, cluster_activity(cfg), what, poll=0.5)


def wait_gradebook(cfg, name, run):
    jobs = sweep_jobs(cfg, name, run)
    wait_on_cluster(cfg, lambda: job_gone(jobs["gradebook"]), f"sweep {name} {run}: its gradebook job")
    return jobs


def gradebook_rows(cfg, name):
    with open(cfg.sweeps_dir / name / "gradebook.csv") as f:
        return {r["student"]: r for r in csv.DictReader(f)}


def starts(cfg, name, run):
    d = cfg.sweeps_dir / name / "runs" / run / "starts"
    return [json.loads(p.read_text()) for p in sorted(d.glob("*.json"))] if d.is_dir() else []


def published(cfg, name):
    """Published grades of a sweep in place: (student, hash dir) -> outcome (not the hidden .tmp-*
    directories of unfinished tasks, nor the <hash>.replaced-<time> results a regrade kept)."""
    return {(p.parent.parent.name, p.parent.name): json.loads(p.read_text())
            for p in (cfg.sweeps_dir / name / "grades").glob("*/*/outcome.json")
            if not p.parent.name.startswith(".") and ".replaced-" not in p.parent.name}


def assert_exactly_once(cfg, name):
    """Every planned attempt has one result in place, no leftovers, and exactly one start of its
    task published a grade. A result that says nothing of the hand-in (no_gpu, error:
    grading.SWEEP_RETRIES) is graded again by the next start that meets it — a requeue or a later
    run — and kept beside the new one: those are the only results replaced, each by the start that
    published after it. Returns the grades in place and the replaced results (student, hash) -> [outcome]."""
    sweep = cfg.sweeps_dir / name
    plan = json.loads((sweep / "plan.json").read_text())["students"]
    planned = {(e["student"], e["digest"][:16]) for e in plan if e.get("digest")}
    grades = published(cfg, name)
    assert set(grades) == planned, (set(grades) ^ planned)
    replaced = {}
    for p in sorted((sweep / "grades").glob("*/*.replaced-*")):
        o = json.loads((p / "outcome.json").read_text())
        assert o["status"] in ("no_gpu", "error"), f"a grade was replaced (graded twice): {p}: {o['status']}"
        replaced.setdefault((p.parent.name, p.name.split(".replaced-")[0]), []).append(o)
    assert not list((sweep / "grades").glob("*/.tmp-*")), "temporary results left behind"
    publishers = {}
    for run in sorted((sweep / "runs").glob("run-*")):
        for s in starts(cfg, name, run.name):
            if s.get("result") == "published":
                publishers.setdefault((s["student"], s["digest"][:16]), []).append(s)
    assert set(publishers) == planned
    for key, pubs in publishers.items():  # one publish per result, in place or replaced
        assert len(pubs) == 1 + len(replaced.get(key, [])), f"{key} published {len(pubs)} times: {pubs}"
    return grades, replaced


# ---- the tests -------------------------------------------------------------------------------------
def test_sweep_spreads_survives_a_node_failure_and_a_hand_in(course):
    cfg, cfg_path, kinds = course["cfg"], course["cfg_path"], course["kinds"]
    nodes, victim = course["nodes"], course["nodes"][1]
    # The sweep's jobs make with a stand-in that, once armed, holds every grading that starts on the
    # victim: the node is killed with a task of its in progress, whatever the load.
    hold = course["base"] / "hold-on-victim"
    armed, held, release = hold / "armed", hold / "held", hold / "release"
    stand_in_make_holding_gradings(hold / "bin", armed, held, release, node=victim)
    env = dict(os.environ, GEMMLAB_CLUSTER_HOLD_BEFORE_PUBLISH=HOLD, PATH=f"{hold / 'bin'}{os.pathsep}{os.environ['PATH']}")
    t0 = time.time()
    try:
        r = tool(cfg_path, "sweep", env=env)
        assert r.returncode == 0, r.stdout + r.stderr
        tasks = json.loads((cfg.sweeps_dir / "final" / "runs" / "run-001" / "tasks.json").read_text())
        assert len(tasks) == sum(k != "missing" for k in kinds.values()) >= 30

        # Kill the victim node while one of its tasks is in progress, once it has published a grade
        # (so all three nodes appear in the gradebook): armed then, the stand-in holds its next grading.
        wait_on_cluster(cfg, lambda: any(o.get("node") == victim for o in published(cfg, "final").values()),
                        f"a grade published on {victim}")
        armed.touch()
        wait_on_cluster(cfg, held.exists, f"a grading on {victim} held by the stand-in make")
        in_progress = [s for s in starts(cfg, "final", "run-001") if s["node"] == victim and not s.get("ended")]
        r = subprocess.run(["bash", str(MULTINODE), "kill-node", victim], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
    finally:
        release.touch()  # (a held grading that outlived a failure above goes on)
    killed_at = time.time()
    st = login("scontrol", "show", "node", victim).stdout
    assert re.search(r"State=DOWN", st), st

    # A student hands in while the sweep runs: a new attempt, queued as its own grading job.
    student = next(s for s, k in kinds.items() if k == "stub")
    src = hand_in_dir(course["base"] / "late-change" / "student", "stub")
    (src / "naive.cu").write_text((src / "naive.cu").read_text() + "\n// handed in during the sweep\n")
    r = tool(cfg_path, "submit", "--student-dir", src, "--user", student, "--no-compile-check")
    assert r.returncode == 0, r.stdout + r.stderr
    new_job = re.search(r"grading job (\d+) queued", r.stdout).group(1)
    new_attempt = stored_attempt(r.stdout)
    assert "LATE: handed in" in r.stdout, r.stdout  # the class's deadline has passed (make_class)

    wait_gradebook(cfg, "final", "run-001")
    took = time.time() - t0
    wait_on_cluster(cfg, lambda: (new_attempt / "grading" / "outcome.json").exists() or job_gone(new_job),
                    f"the hand-in's own grading job {new_job}")

    # complete, right, exactly once
    rows = gradebook_rows(cfg, "final")
    check_gradebook(list(rows.values()), kinds)
    kinds[student] = "late"  # for the sweeps that follow, the stub handed in late during this one counts
    grades, replaced = assert_exactly_once(cfg, "final")
    # spread over every node, and the GPU model of each grade is the one of its node. The victim's
    # results count where they were published: a job killed on it just after it published was
    # requeued, and its no_gpu result graded again elsewhere (kept beside the new one, checked below).
    by_node = {}
    for o in [*grades.values(), *(o for olds in replaced.values() for o in olds)]:
        by_node[o["node"]] = by_node.get(o["node"], 0) + 1
    assert set(by_node) == set(nodes), by_node
    for s, row in rows.items():
        if row["status"] != "missing":
            assert row["node"] in nodes and row["gpu"] == f"{course['types'][row['node']]} (gres)", row
            assert row["gpu_changed"] == "", row

    # The node failure: Slurm requeued every task that had a job on the victim. A task killed in
    # progress did not finish there and was graded by its next start elsewhere (SLURM_RESTART_COUNT
    # 1); a task whose job was killed after it had published found its result in place: kept if a
    # grade, graded again if no_gpu (what these GPU-less nodes give) — its result then replaced once.
    records = starts(cfg, "final", "run-001")
    died = [s for s in records if s["node"] == victim and not s.get("ended")]
    assert died, f"no task was in progress on {victim} when it was killed (in progress just before: {in_progress})"
    # (A job killed before its script got going leaves no start record: its task shows one start,
    # with SLURM_RESTART_COUNT 1.)
    restarted = {s["task"] for s in records if sum(r["task"] == s["task"] for r in records) > 1}
    assert {d["task"] for d in died} <= restarted
    for d in died:
        again = [s for s in records if s["task"] == d["task"] and s["restarts"] > d["restarts"]]
        assert again and again[-1]["node"] != victim and again[-1]["result"] == "published", (d, again)
        o = grades[(d["student"], d["digest"][:16])]
        assert o["restarts"] >= 1 and o["node"] != victim and o["job_id"], o
    for task in {s["task"] for s in records if s["restarts"] > 0}:
        mine = [s for s in records if s["task"] == task]
        results = sorted(s.get("result", "") for s in mine)
        again = len(replaced.get((mine[0]["student"], mine[0]["digest"][:16]), []))
        assert results.count("published") == 1 + again and set(results) <= {
            "", "published", "kept the result already in place"}, mine
    assert all(o["node"] == victim for olds in replaced.values() for o in olds), replaced  # only requeues
    status = login("make", "-s", "--no-print-directory", "sweep-status", f"CONFIG={cfg_path}", "SWEEP=final",
                   f"PYTHON={PYTHON}", check=True).stdout
    assert f"done {len(tasks)}, running 0, queued 0, failed 0" in status, status
    assert f"restarted: {len(restarted)} task(s)" in status and f"{victim} #0: did not finish" in status, status

    # the hand-in during the sweep: the sweep graded the attempt it planned; the new attempt was
    # graded by its own job; nothing mixed
    planned = next(t for t in tasks if t["student"] == student)
    swept = grades[(student, planned["digest"][:16])]
    assert swept["attempt"] == planned["attempt_name"] == rows[student]["attempt"]
    assert swept["attempt_sha256"] == planned["digest"] and swept["job_id"] != new_job
    mine = json.loads((new_attempt / "grading" / "outcome.json").read_text())
    new_digest = json.loads((new_attempt / "manifest.json").read_text())["attempt_sha256"]
    assert mine["job_id"] == new_job and mine["attempt_sha256"] == new_digest != planned["digest"]
    assert mine["attempt"] == new_attempt.name != swept["attempt"]
    assert not any(t["digest"] == new_digest for t in tasks)
    print(f"sweep of {len(tasks)} on {len(nodes)} nodes in {took:.0f} s (node killed after "
          f"{killed_at - t0:.0f} s); per node: {by_node}\n{status}")

    # the node comes back for what follows
    r = subprocess.run(["bash", str(MULTINODE), "start-node", victim], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


def test_scancel_of_a_whole_sweep_then_sweep_again_grades_only_what_is_missing(course):
    cfg, cfg_path, kinds = course["cfg"], course["cfg_path"], course["kinds"]
    # Once 6 grades are in, the stand-in make holds every grading that starts: the cancel finds the
    # sweep part-way, with a task running, whatever the load.
    hold = course["base"] / "hold-resume"
    armed, held, release = hold / "armed", hold / "held", hold / "release"
    stand_in_make_holding_gradings(hold / "bin", armed, held, release)
    try:
        r = tool(cfg_path, "sweep", "--name", "resume", env=dict(os.environ, PATH=f"{hold / 'bin'}{os.pathsep}{os.environ['PATH']}"))
        assert r.returncode == 0, r.stdout + r.stderr
        jobs = sweep_jobs(cfg, "resume", "run-001")
        total = len(json.loads((cfg.sweeps_dir / "resume" / "runs" / "run-001" / "tasks.json").read_text()))
        wait_on_cluster(cfg, lambda: len(published(cfg, "resume")) >= 6, "6 grades of the sweep 'resume'")
        graded_when_armed = len(published(cfg, "resume"))
        armed.touch()
        wait_on_cluster(cfg, held.exists, "a grading held by the stand-in make")
        login("scancel", jobs["array"], check=True)
        wait_on_cluster(cfg, lambda: job_gone(jobs["array"]) and job_gone(jobs["gradebook"]), "the cancelled sweep to end")
    finally:
        release.touch()
    first = published(cfg, "resume")
    # what was published when the stand-in was armed, and at most the tasks then past it
    assert 6 <= len(first) <= graded_when_armed + CONCURRENCY < total, (len(first), graded_when_armed, total)
    status = tool(cfg_path, "sweep-status", "--name", "resume").stdout
    assert "failed" in status and "make sweep" in status, status

    # These nodes have no GPU: the test marks all but one of the first grades as graded on a GPU. The
    # sweep again grades what is missing and the one that found no GPU, and keeps the rest.
    retried = min(first)
    marked = mark_graded(cfg.sweeps_dir / "resume", {s for s, _ in first} - {retried[0]})
    first = published(cfg, "resume")
    r = login("make", "-s", "--no-print-directory", "sweep", f"CONFIG={cfg_path}", "SWEEP=resume",
              f"PYTHON={PYTHON}", timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"to grade: {total - len(marked)} (" in r.stdout and "graded again, their earlier result: no_gpu: 1" in r.stdout, r.stdout
    assert f"current (graded under this rubric and grader): {len(marked)}" in r.stdout, r.stdout
    wait_gradebook(cfg, "resume", "run-002")
    rows = gradebook_rows(cfg, "resume")
    check_gradebook(list(rows.values()), kinds, graded=marked)
    grades, replaced = assert_exactly_once(cfg, "resume")
    assert replaced == {retried: [first[retried]]}, replaced
    for key, o in first.items():  # kept as they were, not graded again
        if key != retried:
            assert grades[key] == o
    second = json.loads((cfg.sweeps_dir / "resume" / "runs" / "run-002" / "tasks.json").read_text())
    assert {(t["student"], t["digest"][:16]) for t in second} & set(first) == {retried}
    status = tool(cfg_path, "sweep-status", "--name", "resume").stdout
    assert f"done {total}, running 0, queued 0, failed 0" in status, status
    assert f"no GPU on the node: {total - len(marked)} " in status, status


def test_gpu_type_pins_and_a_regrade_on_another_model_is_flagged(course):
    cfg, cfg_path, types = course["cfg"], course["cfg_path"], course["types"]
    rows = gradebook_rows(cfg, "final")
    # students whose graded attempt still counts (not the one who handed in during the first sweep)
    same = {s for s, r in rows.items() if r["attempt"] and r["attempt"] == attempts.in_directory(
        folder(cfg, s))[-1].path.name}
    on = {t: [s for s, r in rows.items() if s in same and r["status"] == "no_gpu" and types.get(r["node"]) == t]
          for t in set(types.values())}
    a100_student, h100_student = on["a100"][0], on["h100"][0]
    a100_nodes = {n for n, t in types.items() if t == "a100"}
    # regrade a student first graded on an a100 node, pinned by node feature to h100 nodes; and one
    # first graded on h100, pinned by gres type to the a100 GPUs. Only grades that ran on a GPU are
    # compared: these nodes have none, so the test marks the first grade as graded on one (and the
    # regrade, once it is shown that a regrade that found no GPU is not flagged).
    sweep = cfg.sweeps_dir / "final"
    for student, pin, want in ((a100_student, 'constraint = "h100"', "h100"),
                               (h100_student, 'gres = "gpu:a100:1"', "a100")):
        assert mark_graded(sweep, {student})
        text = cfg_path.read_text().replace('gres = "gpu:1"\n', "")
        pinned = cfg_path.with_name(f"course-{want}.toml")
        pinned.write_text(text.replace("[cluster]\n", f"[cluster]\n{pin}\n"))
        os.chmod(pinned, 0o644)
        r = tool(pinned, "publish", "--why", f"regrade {student} on {want}")  # the pin, published for the regrade
        assert r.returncode == 0, r.stdout + r.stderr
        runs_before = len(list((cfg.sweeps_dir / "final" / "runs").glob("run-*")))
        r = tool(pinned, "sweep", "--student", student, "--force")
        assert r.returncode == 0, r.stdout + r.stderr
        run = f"run-{runs_before + 1:03d}"
        script = (cfg.sweeps_dir / "final" / "runs" / run / "sweep-array.sbatch").read_text()
        assert f"#SBATCH --{pin.split(' = ')[0]}={pin.split(' = ')[1].strip(chr(34))}" in script, script
        wait_gradebook(cfg, "final", run)
        row = gradebook_rows(cfg, "final")[student]
        assert types[row["node"]] == want and row["gpu"] == f"{want} (gres)", row
        assert (row["status"], row["gpu_changed"]) == ("no_gpu", ""), row  # no score made there: nothing to compare
        assert mark_graded(sweep, {student})
        r = tool(cfg_path, "gradebook", "--name", "final")
        assert r.returncode == 0, r.stdout + r.stderr
        row = gradebook_rows(cfg, "final")[student]
        gdir = cfg.sweeps_dir / "final" / "grades" / student
        assert row["gpu_changed"] == f"first graded on {rows[student]['gpu']}", (
            row, {p.name: json.loads((p / "outcome.json").read_text()) for p in gdir.iterdir()})
        assert (row["node"] in a100_nodes) == (want == "a100")
        r = tool(cfg_path, "publish", "--why", "the pin taken back")
        assert r.returncode == 0, r.stdout + r.stderr
    # Flagged: the two regrades only — not the requeued tasks of the node failure, nor the stub handed
    # in during the first sweep, whose grades all found no GPU wherever Slurm placed them.
    changed = {s for s, r in gradebook_rows(cfg, "final").items() if r["gpu_changed"]}
    assert changed == {a100_student, h100_student}, changed
    summary = (cfg.sweeps_dir / "final" / "summary.md").read_text()
    assert f"Graded on another GPU model than first: {len(changed)} — " in summary, summary
    for s in changed:
        assert f"{s} (first graded on " in summary, summary
    assert "GPU models: a100 (gres)" in summary and "h100 (gres)" in summary
