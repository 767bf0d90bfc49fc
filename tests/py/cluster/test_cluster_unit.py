"""Cluster tools without a build or a cluster: course.toml validation, collecting and storing
hand-ins, the late policy, job-script templates, and the gradebook on committed fixtures.

The gradebook fixtures (tests/fixtures/cluster/) are SYNTHETIC results.json files: on a GPU-less
CI node every real grade is no_gpu with score 0, so real per-stage points are proven here.
"""
import argparse
import datetime as dt
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "cluster"))

import config  # noqa: E402
import dropbox  # noqa: E402
import gemmlab_cluster  # noqa: E402
from commands import grades as grade_commands  # noqa: E402
from commands import sweep as sweep_commands  # noqa: E402
import sweep_work  # noqa: E402  (cluster/staff/)
import sweeps  # noqa: E402
import gradebook  # noqa: E402
import grading  # noqa: E402
import toolchain  # noqa: E402
import attempts  # noqa: E402
import which_counts  # noqa: E402
import slurm  # noqa: E402
from support.cluster_helpers import folder  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "cluster"
STAGES = sorted(p.name for p in (ROOT / "student").glob("*.cu"))


def write_config(tmp_path, cluster="", extra=""):
    path = tmp_path / "course.toml"
    path.write_text(f'[course]\nname = "unit"\n[cluster]\ngrader_root = "{ROOT}"\n'
                    f'dropbox = "{tmp_path}/dropbox"\nsweeps = "{tmp_path}/sweeps"\nscheduler = "local"\n'
                    f"{cluster}\n{extra}\n")
    return path


def test_repo_course_toml_loads_with_defaults():
    cfg = config.load(ROOT / "course.toml")
    assert cfg.gres == "gpu:1" and cfg.sweep_concurrency == 8 and cfg.time_limit == "00:30:00"
    assert cfg.deadline.due is None and cfg.deadline.policy == "latest"
    assert cfg.grader_dir == ROOT


def test_repo_course_toml_shows_every_cluster_tool_key_with_its_default():
    """course.toml says every key of the cluster tools' sections shows its default: each key the
    tools read is there, with the value cluster/config.py uses when it is left out."""
    import tomllib
    course = tomllib.loads((ROOT / "course.toml").read_text())
    missing = [f"[{s}] {k}" for s, k in config.DEFAULTS if k not in course.get(s, {})]
    assert not missing, f"keys the cluster tools read that course.toml does not show: {missing}"
    # the values a course is meant to change (its name, where things live) are left out of the check
    chosen = {("course", "name"), ("course", "title")}
    differ = {f"[{s}] {k}": (course[s][k], d) for (s, k), (d, _) in config.DEFAULTS.items()
              if (s, k) not in chosen and course[s][k] != d}
    assert not differ, f"course.toml shows another value than the default (shown, default): {differ}"


def test_missing_sections_take_defaults(tmp_path):
    path = tmp_path / "course.toml"
    path.write_text(f'[course]\nname = "x"\n[cluster]\ngrader_root = "{ROOT}"\n')
    cfg = config.load(path)
    assert cfg.cpus_per_task == 2 and cfg.max_source_kb == 256 and cfg.dropbox_dir == tmp_path / "results/dropbox"


@pytest.mark.parametrize("cluster, extra, words", [
    ('time_limit = "2h"', "", ["[cluster] time_limit", "'2h'", "HH:MM:SS"]),
    ('gres = "gpus=1"', "", ["[cluster] gres", "gpu:N"]),
    ('partion = "gpu"', "", ["[cluster] partion", "did you mean 'partition'"]),
    ("sweep_concurrency = 0", "", ["[cluster] sweep_concurrency", "at least 1"]),
    ('sweep_concurrency = "8"', "", ["[cluster] sweep_concurrency", "whole number"]),
    ('scheduler = "pbs"', "", ["[cluster] scheduler", "auto, slurm, local"]),
    ('staff_group = "no-such-group-xyz"', "", ["[cluster] staff_group", "no such Unix group"]),
    ('mem = "lots"', "", ["[cluster] mem", "16G"]),
    ('constraint = "h100 or a100"', "", ["[cluster] constraint", "a100|h100"]),
    ("", "[deadline]\ndue = 2026-12-04T23:59:00", ["[deadline] due", "no time zone"]),
    ("", '[deadline]\ndue = "next friday"', ["[deadline] due", "not a date-time"]),
    ("", "[deadline]\ndue = 2026-12-04T23:59:00Z\n[late]\ncutoff = 2026-12-01T00:00:00Z",
     ["[late] cutoff", "before"]),
    ("", '[late]\npolicy = "best"', ["[late] policy", "prefer-on-time"]),
    ('grader_root = "/tmp"', "", ["[cluster] grader_root", "not a GEMM Lab tree"]),
])
def test_bad_config_values_are_named(tmp_path, cluster, extra, words):
    path = write_config(tmp_path, "", extra)
    if cluster.startswith("grader_root"):
        path.write_text(path.read_text().replace(f'grader_root = "{ROOT}"', cluster))
    elif cluster.startswith("scheduler"):
        path.write_text(path.read_text().replace('scheduler = "local"', cluster))
    else:
        path.write_text(path.read_text().replace("[cluster]\n", f"[cluster]\n{cluster}\n"))
    with pytest.raises(config.ConfigError) as err:
        config.load(path)
    for w in words:
        assert w in str(err.value), str(err.value)


def test_cli_reports_bad_config_with_exit_2(tmp_path):
    path = write_config(tmp_path, 'time_limit = "soon"')
    r = subprocess.run([sys.executable, str(ROOT / "cluster/gemmlab_cluster.py"), "--config", str(path), "status"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "[cluster] time_limit = 'soon'" in r.stderr


def make_student(tmp_path, names=STAGES, extra=()):
    d = tmp_path / "hand-in" / "student"
    d.mkdir(parents=True)
    for n in names:
        shutil.copyfile(ROOT / "student" / n, d / n)
    for n in extra:
        (d / n).write_text("// extra\n")
    return d


def test_collect_refuses_missing_extra_and_large_files(tmp_path):
    cfg = config.load(write_config(tmp_path, "max_source_kb = 1"))
    d = make_student(tmp_path, names=STAGES[1:], extra=["helpers.cu", "notes.txt"])
    (d / STAGES[1]).write_text("x" * 2048)
    with pytest.raises(dropbox.SubmissionError) as err:
        dropbox.collect(cfg, d, None)
    msg = str(err.value)
    assert f"missing {d / STAGES[0]}" in msg
    assert "helpers.cu" in msg and "notes.txt" not in msg
    assert "max_source_kb" in msg


def test_collect_takes_whitelist_and_report(tmp_path):
    cfg = config.load(write_config(tmp_path))
    d = make_student(tmp_path, extra=["README.txt"])
    report = tmp_path / "hand-in" / "report" / "report.pdf"
    report.parent.mkdir()
    report.write_bytes(b"%PDF-1.4 synthetic\n")
    files = dropbox.collect(cfg, d, report)
    assert sorted(files) == sorted(STAGES + ["report.pdf"])


def test_attempts_are_kept_numbered_and_hashed(tmp_path):
    cfg = config.load(write_config(tmp_path))
    d = make_student(tmp_path)
    files = dropbox.collect(cfg, d, None)
    first = dropbox.store_attempt(cfg, "alice", files)
    (d / STAGES[0]).write_text((d / STAGES[0]).read_text() + "\n// changed\n")
    second = dropbox.store_attempt(cfg, "alice", dropbox.collect(cfg, d, None))
    stored = attempts.in_directory(folder(cfg, "alice"))
    assert [a.number for a in stored] == [1, 2]
    assert stored[0].path == first and stored[1].path == second
    assert stored[0].digest != stored[1].digest
    assert stored[0].verify() == "" and stored[1].verify() == ""
    m = json.loads((first / "manifest.json").read_text())
    assert m["user"] == "alice" and set(m["files"]) == set(STAGES)
    assert not list((folder(cfg, "alice")).glob(".incoming-*"))
    (first / "files" / STAGES[0]).write_text("// edited afterwards\n")
    assert stored[0].verify() == ""  # a listing is one reading of the drop box: the files as they were then
    assert "does not match" in attempts.in_directory(folder(cfg, "alice"))[0].verify()


def _hand_in_at_the_barrier(cfg_path, files, barrier, rounds, first_second, worker, out):
    """One process of the class: `rounds` hand-ins, each released with the others' at the barrier, each
    stamped with a second of its own (so no two directory names collide but by their number)."""
    cfg = config.load(cfg_path)
    for r in range(rounds):
        barrier.wait()
        when = first_second + dt.timedelta(seconds=r * 100 + worker)
        out.put(dropbox.store_attempt(cfg, "alice", files, submitted_at=when).name)


def test_hand_ins_at_one_instant_get_unique_consecutive_numbers(tmp_path):
    import multiprocessing
    cfg_path = write_config(tmp_path)
    cfg = config.load(cfg_path)
    files = dropbox.collect(cfg, make_student(tmp_path), None)
    dropbox.store_attempt(cfg, "alice", files)  # the student directory exists before the rush
    workers, rounds = 8, 6
    ctx = multiprocessing.get_context("fork")
    barrier, out = ctx.Barrier(workers), ctx.Queue()
    first = dt.datetime(2026, 12, 4, 23, 0, tzinfo=dt.timezone.utc)
    procs = [ctx.Process(target=_hand_in_at_the_barrier, args=(cfg_path, files, barrier, rounds, first, w, out))
             for w in range(workers)]
    for proc in procs:
        proc.start()
    names = [out.get(timeout=120) for _ in range(workers * rounds)]
    for proc in procs:
        proc.join(timeout=60)
        assert proc.exitcode == 0
    numbers = sorted(int(n.split("-")[1]) for n in names)
    assert numbers == list(range(2, 2 + workers * rounds)), numbers  # unique, consecutive after #1
    stored = [a.number for a in attempts.in_directory(folder(cfg, "alice"))]
    assert stored == list(range(1, 2 + workers * rounds))


def _attempt(cfg, d, when):
    return dropbox.store_attempt(cfg, "bob", dropbox.collect(cfg, d, None), submitted_at=when)


def test_late_policies(tmp_path):
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    due, cutoff = now + dt.timedelta(hours=1), now + dt.timedelta(days=3)
    d = make_student(tmp_path)
    cfg = config.load(write_config(tmp_path, extra=(
        f"[deadline]\ndue = {due.isoformat()}\n[late]\ncutoff = {cutoff.isoformat()}\n"
        "penalty_percent_per_day = 10\nmax_penalty_percent = 15\n")))
    _attempt(cfg, d, now)                               # 1: on time
    _attempt(cfg, d, now + dt.timedelta(days=2))        # 2: late, 2 started days
    _attempt(cfg, d, now + dt.timedelta(days=5))        # 3: after the cutoff
    stored = attempts.in_directory(folder(cfg, "bob"))
    pick, info = which_counts.choose(stored, cfg.deadline)
    assert pick.number == 2 and info["late"] and info["days_late"] == 2 and info["penalty_pct"] == 15
    assert "after the cutoff" in info["note"]
    cfg.deadline.policy = "prefer-on-time"
    pick, info = which_counts.choose(stored, cfg.deadline)
    assert pick.number == 1 and not info["late"]
    cfg.deadline.policy = "on-time-only"
    pick, info = which_counts.choose(stored[1:], cfg.deadline)
    assert pick is None and "no attempt counts" in info["note"]


def test_templates_render_config_options(tmp_path):
    cfg = config.load(write_config(tmp_path, 'partition = "gpu"\naccount = "cs101"\nqos = "class"\n'
                                             'gres = "gpu:h100:1"\nmem = "16G"\ntime_limit = "00:20:00"\n'
                                             'constraint = "h100|h200"'))
    out = slurm.render("sweep-array.sbatch", tmp_path / "a.sbatch", cfg.sbatch_options(), course="c", sweep="s",
                       sweep_dir=tmp_path / "sw", run="run-001", python=sys.executable, config=cfg.path,
                       logs=tmp_path / "logs", job_name="j", count=3, last=2, concurrency=2, tasks=tmp_path / "t.json")
    text = out.read_text()
    for line in ("#SBATCH --partition=gpu", "#SBATCH --account=cs101", "#SBATCH --qos=class",
                 "#SBATCH --gres=gpu:h100:1", "#SBATCH --mem=16G", "#SBATCH --time=00:20:00",
                 "#SBATCH --array=0-2%2", '--task "${SLURM_ARRAY_TASK_ID}"', "#SBATCH --constraint=h100|h200",
                 "#SBATCH --requeue", "#SBATCH --open-mode=append"):
        assert line in text, line
    assert subprocess.run(["bash", "-n", str(out)]).returncode == 0
    for name in ("grade-attempt.sbatch", "gradebook.sbatch"):
        o = slurm.render(name, tmp_path / name, cfg.sbatch_options(), course="c", sweep="s", sweep_dir="d",
                         run="r", python=sys.executable, config=cfg.path, logs="l", job_name="j", user="u",
                         attempt="/x/attempt-0001", into="/x/attempt-0001/grading", tool="/x/tool", log="/x/log")
        assert subprocess.run(["bash", "-n", str(o)]).returncode == 0


def test_gradebook_aggregates_synthetic_results(tmp_path):
    sweep = tmp_path / "sweep"
    shutil.copytree(FIXTURES / "sweep-synthetic", sweep)
    csv_path, summary, rows = gradebook.write(sweep, ["naive", "pitched", "reuse", "tiled", "unrolled"], "fixture")
    assert csv_path.read_text() == (FIXTURES / "expected-gradebook.csv").read_text()
    by = {r["student"]: r for r in rows}
    assert by["ada"]["total"] == 180 and by["ada"]["_points"]["reuse"] == 50
    assert by["bob"]["final"] == 32 and by["bob"]["late"] == "yes"
    assert [by[s]["status"] for s in ("cyd", "dee", "eve", "gus")] == ["build_failed", "missing", "pending", "no_gpu"]
    text = summary.read_text()
    assert "7 student(s)" in text and "median 35" in text and "unrolled/float: failed: 2 student(s)" in text
    assert "Late: 1 (bob)" in text
    # where each grade ran; bob's regrade ran on another GPU model than his first grade
    assert (by["ada"]["node"], by["ada"]["gpu"], by["ada"]["gpu_changed"]) == ("gpu01", "SYNTHETIC GPU A", "")
    assert by["bob"]["gpu_changed"] == "first graded on SYNTHETIC GPU A" and by["bob"]["gpu"] == "SYNTHETIC GPU B"
    assert by["gus"]["gpu"] == "a100 (gres)"  # no GPU seen by the grader: the type Slurm allocated
    assert "Graded on another GPU model than first: 1 — bob" in text and "gpu03 1" in text


def test_gpu_changed_compares_only_grades_that_ran_on_a_gpu():
    """A requeue (or a later sweep) grades a no_gpu or error result again wherever Slurm places it:
    on a mixed partition that is often another model, and no score was made on the first, so no
    "graded on another GPU model" is raised; a model change between two real grades still is."""
    sweep = FIXTURES / "sweep-requeued"
    rows, _ = gradebook.build(sweep, [])
    changed = {r["student"]: r["gpu_changed"] for r in rows}
    assert changed == {"ida": "", "jon": "", "kim": "first graded on SYNTHETIC GPU A", "lee": ""}, changed
    text = gradebook.summary_text(rows, [], "fixture")
    assert "Graded on another GPU model than first: 1 — kim (first graded on SYNTHETIC GPU A, now SYNTHETIC GPU B)" \
        in text, text


def test_the_gpu_slurm_allocated_is_read_from_scontrol():
    text = ("JobId=7 JobName=g\n   JOB_GRES=gpu:h100:1\n     Nodes=gpu07 CPU_IDs=0-1 Mem=0 "
            "GRES=gpu:h100:1(IDX:3)\n   TresPerNode=gres:gpu:h100:1\n")
    assert slurm.gpu_from_scontrol(text) == {"gres": "gpu:h100:1", "type": "h100"}
    assert slurm.gpu_from_scontrol("   TresPerNode=gres:gpu:1\n") == {"gres": "gpu:1", "type": ""}
    assert slurm.gpu_from_scontrol("JobId=7 JobName=cpu-only\n   JOB_GRES=(null)\n") == {}



def test_a_busy_controller_is_asked_again_for_the_gpu_of_a_job(tmp_path, monkeypatch):
    """scontrol that fails twice (a controller too busy to answer), then answers: the grade gets the GPU
    model; one that never answers gives {} after its few asks; an answer about another job (JobId=70
    for job 7) is no answer."""
    log = tmp_path / "asks"
    fake = tmp_path / "bin" / "scontrol"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho ask >> %s\nn=$(wc -l < %s)\n"
                    "if [ \"$n\" -le \"${FAILS:-2}\" ]; then echo 'slurm_load_jobs error: Socket timed out' >&2; exit 1; fi\n"
                    "echo \"JobId=${JOB:-7} JobName=g\"; echo '   JOB_GRES=gpu:h100:1'\n" % (log, log))
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{__import__('os').environ['PATH']}")
    monkeypatch.setattr(slurm, "SCONTROL_RETRY_WAITS", (0, 0, 0, 0))
    ask = slurm.slurm_gpu.__wrapped__  # not the per-process cache
    assert ask("7") == {"gres": "gpu:h100:1", "type": "h100"} and len(log.read_text().split()) == 3
    log.unlink()
    monkeypatch.setenv("FAILS", "99")
    assert ask("7") == {} and len(log.read_text().split()) == 5
    log.unlink()
    monkeypatch.setenv("FAILS", "0")
    monkeypatch.setenv("JOB", "70")
    assert ask("7") == {} and len(log.read_text().split()) == 5


def test_a_job_whose_gres_lost_its_node_line_takes_the_nodes_gpu_type(tmp_path, monkeypatch):
    """A job Slurm requeued as it started can come back with no per-node GRES line (slurmctld logs
    "gres/gpu: job N dealloc ... bad node_offset"): scontrol then says gres:gpu:1 with no type. The
    node's own GPU type stands in where the node has exactly one; with two, or none, it stays empty."""
    assert slurm.node_gpu_types("NodeName=n3 Arch=x86_64\n   Gres=gpu:h100:2(S:0-1)\n") == {"h100"}
    assert slurm.node_gpu_types("   Gres=gpu:h100:1,gpu:a100:1\n") == {"h100", "a100"}
    assert slurm.node_gpu_types("   Gres=gpu:2\n") == set() and slurm.node_gpu_types("   Gres=(null)\n") == set()
    fake = tmp_path / "bin" / "scontrol"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\ncase \"$2\" in\n job) echo 'JobId=9 JobName=g'; echo '   JOB_GRES=(null)'; "
                    "echo '   TresPerNode=gres:gpu:1';;\n node) echo \"NodeName=$3\"; echo \"   Gres=$NODE_GRES\";;\nesac\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{__import__('os').environ['PATH']}")
    monkeypatch.setenv("SLURM_JOB_ID", "9")
    monkeypatch.setenv("SLURMD_NODENAME", "glmn-n3")
    for node_gres, want in (("gpu:h100:2(S:0)", "h100"), ("gpu:h100:1,gpu:a100:1", ""), ("gpu:2", "")):
        monkeypatch.setenv("NODE_GRES", node_gres)
        slurm.slurm_gpu.cache_clear()
        gpu = slurm.job_context()["gpu"]
        assert gpu["gres"] == "gpu:1" and gpu.get("type", "") == want, (node_gres, gpu)
    slurm.slurm_gpu.cache_clear()

def test_a_task_started_again_is_graded_once(tmp_path, monkeypatch, capsys):
    """A sweep task that Slurm starts again (requeued after its node failed) or that a later run
    meets grades each attempt once; a --force regrade replaces once, however often it starts."""
    cfg = config.load(write_config(tmp_path))
    dropbox.store_attempt(cfg, "ann", dropbox.collect(cfg, make_student(tmp_path), None))
    sweep = cfg.sweeps_dir / "final"
    (sweep / "runs" / "run-001").mkdir(parents=True)
    plan = sweep_commands.plan_sweep(cfg)
    (sweep / "plan.json").write_text(json.dumps({"students": plan}))
    task = {k: plan[0][k] for k in ("student", "attempt", "attempt_name", "digest")}
    (sweep / "runs" / "run-001" / "tasks.json").write_text(json.dumps([task]))
    graded = []

    def stand_in_grade(cfg, files, out, meta, say=print):  # what grade_into writes, without a build
        graded.append(meta["run"])  # a grade on a GPU: no_gpu would be graded again (the next test)
        return grading.finish_outcome(out, dict(meta, schema=grading.OUTCOME_SCHEMA, status="graded", message="stand-in",
                                         **slurm.job_context()))
    monkeypatch.setattr(grading, "grade_into", stand_in_grade)
    for var in ("SLURM_JOB_ID", "SLURM_RESTART_COUNT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("SLURM_ARRAY_JOB_ID", "77")
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "0")
    final = gradebook.grade_dir(sweep, "ann", task["digest"])

    # the first start, on n2, dies mid-way (kill -9: no clean-up) and leaves its temporary directory
    monkeypatch.setenv("SLURMD_NODENAME", "n2")
    sweeps.record_start(sweep / "runs" / "run-001", 0, task)
    (final.parent / ".tmp-77_0-dead00").mkdir(parents=True)
    # Slurm requeues it: the second start grades, removes what the first left, publishes
    monkeypatch.setenv("SLURMD_NODENAME", "n1")
    monkeypatch.setenv("SLURM_RESTART_COUNT", "1")
    out = sweep_commands.run_task(cfg, sweep, "run-001", 0)
    assert out["node"] == "n1" and out["restarts"] == 1 and graded == ["run-001"]
    assert not list(final.parent.glob(".tmp-*"))
    # started a third time (or met by a later run): nothing graded, the result is kept
    monkeypatch.setenv("SLURM_RESTART_COUNT", "2")
    assert sweep_commands.run_task(cfg, sweep, "run-001", 0) == out and graded == ["run-001"]
    # a result already in place wins over a late publisher
    late = final.parent / ".late"
    late.mkdir()
    (late / "outcome.json").write_text("{}")
    assert grading.publish(late, final, replace=False) is False and json.loads((final / "outcome.json").read_text()) == out

    # a --force regrade replaces the result once, even when its task starts twice
    (sweep / "runs" / "run-002").mkdir()
    (sweep / "runs" / "run-002" / "tasks.json").write_text(json.dumps([dict(task, force=True)]))
    monkeypatch.setenv("SLURM_ARRAY_JOB_ID", "90")
    for restarts in ("0", "1"):
        monkeypatch.setenv("SLURM_RESTART_COUNT", restarts)
        sweep_commands.run_task(cfg, sweep, "run-002", 0)
    assert graded == ["run-001", "run-002"]
    assert len(list(final.parent.glob(f"{final.name}.replaced-*"))) == 1

    # sweep-status shows the restarts: where each start ran and how it ended
    assert grade_commands.cmd_sweep_status(cfg, argparse.Namespace(name="final", follow=0)) == 0
    status = capsys.readouterr().out
    assert "restarted: 2 task(s)" in status, status
    assert "run-001 task 0 (ann): n2 #0: did not finish; n1 #1: graded; n1 #2: kept the result already in place" \
        in status, status
    assert "done 1" in status and "graded on: n1 (GPU unknown) 1" in status, status
    assert "no GPU on the node" not in status, status


@pytest.mark.parametrize("earlier", grading.SWEEP_RETRIES)
def test_a_sweep_grades_no_gpu_and_error_again(tmp_path, monkeypatch, capsys, earlier):
    """A result that says nothing of the hand-in (the node had no GPU; the grading failed) is graded
    again by the next sweep without --force, the old one kept beside it; a graded one is kept."""
    cfg = config.load(write_config(tmp_path))
    for student in ("ann", "bob"):
        dropbox.store_attempt(cfg, student, dropbox.collect(cfg, make_student(tmp_path / student), None))
    sweep = cfg.sweeps_dir / "final"
    plan = sweep_commands.plan_sweep(cfg)
    (sweep / "runs" / "run-001").mkdir(parents=True)
    (sweep / "plan.json").write_text(json.dumps({"students": plan}))
    status = {"ann": earlier, "bob": "graded"}

    def stand_in_grade(cfg, files, out, meta, say=print):
        return grading.finish_outcome(out, dict(meta, schema=grading.OUTCOME_SCHEMA, status=status[meta["student"]],
                                         message="stand-in", **slurm.job_context()))
    monkeypatch.setattr(grading, "grade_into", stand_in_grade)
    for var in ("SLURM_JOB_ID", "SLURM_RESTART_COUNT", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID"):
        monkeypatch.delenv(var, raising=False)
    work = sweep_work.sweep_todo(sweep, plan)
    todo = work.todo
    assert [t["student"] for t in todo] == ["ann", "bob"] and set(work.why) == {"not graded in this sweep yet"}
    (sweep / "runs" / "run-001" / "tasks.json").write_text(json.dumps(todo))
    for i in range(2):
        sweep_commands.run_task(cfg, sweep, "run-001", i)

    # the node is fixed: the next sweep grades ann again, not bob
    status["ann"] = "graded"
    work = sweep_work.sweep_todo(sweep, plan)
    todo = work.todo
    assert [(t["student"], t["force"]) for t in todo] == [("ann", False)]
    assert work.why == {f"graded again, their earlier result: {earlier}": 1} and work.current == 1
    (sweep / "runs" / "run-002").mkdir()
    (sweep / "runs" / "run-002" / "tasks.json").write_text(json.dumps(todo))
    assert sweep_commands.run_task(cfg, sweep, "run-002", 0)["status"] == "graded"
    ann = gradebook.grade_dir(sweep, "ann", todo[0]["digest"])
    (old,) = ann.parent.glob(f"{ann.name}.replaced-*")
    assert json.loads((old / "outcome.json").read_text())["status"] == earlier
    work = sweep_work.sweep_todo(sweep, plan)
    assert (work.todo, work.rescore, work.current) == ([], [], 2)
    # a requeued start of a task whose first start published such a result grades too
    status["bob"] = earlier
    shutil.rmtree(gradebook.grade_dir(sweep, "bob", plan[1]["digest"]))
    todo = sweep_work.sweep_todo(sweep, plan, students=["bob"]).todo
    (sweep / "runs" / "run-003").mkdir()
    (sweep / "runs" / "run-003" / "tasks.json").write_text(json.dumps(todo))
    first = sweep_commands.run_task(cfg, sweep, "run-003", 0)
    status["bob"] = "graded"
    assert first["status"] == earlier and sweep_commands.run_task(cfg, sweep, "run-003", 0)["status"] == "graded"


def test_a_test_cluster_is_held_by_one_session_at_a_time(tmp_path, monkeypatch):
    """hold_lock (the test clusters' and the dry run's lock): a second session gets None once its wait is
    over, and the lock once the first lets go."""
    from support.cluster_helpers import hold_lock
    monkeypatch.setenv("GEMMLAB_SLURM_LOCK_WAIT", "0")
    first = hold_lock(tmp_path / "cluster.lock", 60)
    assert first is not None
    assert hold_lock(tmp_path / "cluster.lock", 60) is None
    first.close()
    second = hold_lock(tmp_path / "cluster.lock", 60)
    assert second is not None
    second.close()


def test_gradings_of_the_same_file_at_once_compile_it_once(tmp_path, monkeypatch):
    """A sweep starts many gradings at once, and a class hands in the same files: while one grading
    compiles a file that is not in the object cache, another with the same file waits, then copies
    the object (newer than its flags stamp, so that make keeps it) instead of compiling it too."""
    import threading
    from types import SimpleNamespace
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    tc = toolchain.Toolchain.__new__(toolchain.Toolchain)
    tc.cfg = SimpleNamespace(trusted_cache_dir=tmp_path / "staff-cache")

    tc.root = tmp_path

    def build_dir(name):
        d = tmp_path / name
        submission = d / "submission"
        submission.mkdir(parents=True)
        for stage in ("reuse", "naive"):
            (submission / f"{stage}.cu").write_text(f"// {stage}\n")
        v = {"SUB_FLAGS_STAMP": str(d / "flags.stamp"), "SUB_FLAGS": "-O3"}
        return v, {d / "stages" / "reuse.o": "key-reuse", d / "stages" / "naive.o": "key-naive"}, submission

    compiled, found, stale = [], {}, []
    # The order of events, whatever the load: the first holds the locks, then the second asks for them,
    # then the first compiles (each wait's 60 s only bound a hang).
    first_holds, second_asks = threading.Event(), threading.Event()
    real_lock_by = toolchain._lock_by

    def lock_by(lock, give_up):
        if threading.current_thread().name == "second":
            second_asks.set()
        return real_lock_by(lock, give_up)
    monkeypatch.setattr(toolchain, "_lock_by", lock_by)

    def grade(name):
        if name == "second":
            assert first_holds.wait(60)
        v, keys, submission = build_dir(name)
        with tc._compiling(v, keys, submission):
            found[name] = sorted(o.name for o in keys if o.is_file())
            if name == "first":
                first_holds.set()
                assert second_asks.wait(60)
            for obj in keys:
                if not obj.is_file():  # what make would compile, with the dependency list it writes
                    obj.parent.mkdir(parents=True, exist_ok=True)
                    obj.write_text(f"compiled by {name}")
                    obj.with_suffix(".d").write_text(f"{obj}: {submission / (obj.stem + '.cu')}\n")
                    compiled.append((name, obj.name))
            tc._store(keys, submission)
        stamp = Path(v["SUB_FLAGS_STAMP"]).stat().st_mtime
        stale.extend((name, o.name) for o in keys if o.stat().st_mtime <= stamp)  # make would compile it again

    threads = [threading.Thread(target=grade, args=(n,), name=n) for n in ("first", "second")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads)
    assert sorted(compiled) == [("first", "naive.o"), ("first", "reuse.o")], compiled
    assert found == {"first": [], "second": ["naive.o", "reuse.o"]}, found
    assert not stale, f"objects older than their flags stamp: {stale}"
    assert (tmp_path / "second" / "stages" / "reuse.o").read_text() == "compiled by first"


def test_the_entry_point_declares_each_command_once_and_its_module_carries_it_out():
    """gemmlab_cluster.py only declares: its table lists every command the parser knows, in its order,
    each with an audience and a function of cluster/commands/ that carries it out."""
    names = [c.name for c in gemmlab_cluster.COMMANDS]
    assert len(names) == len(set(names))
    sub = next(a for a in gemmlab_cluster.parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == names
    for c in gemmlab_cluster.COMMANDS:
        assert c.audience in ("student", "staff"), c
        assert callable(gemmlab_cluster.implementation(c)), c
    assert not [n for n in vars(gemmlab_cluster) if n.startswith("cmd_")]


def test_only_the_staff_tools_modules_import_the_staff_tools():
    """A handout leaves cluster/staff/ out: the commands that need it are those of the command modules
    that import it (STAFF_TOOL_MODULES), and no other command module imports a staff tool."""
    import ast
    staff_tools = {p.stem for p in (ROOT / "cluster" / "staff").glob("*.py")}
    needing = {c.name for c in gemmlab_cluster.COMMANDS if c.module in gemmlab_cluster.STAFF_TOOL_MODULES}
    assert needing == {"sweep", "sweep-task", "sweep-local", "sweep-status", "gradebook", "similarity", "leaderboard",
                       "publish-grades"}
    for path in (ROOT / "cluster" / "commands").glob("*.py"):
        imported = {a.name.split(".")[0] for n in ast.walk(ast.parse(path.read_text()))
                    if isinstance(n, ast.Import) for a in n.names}
        assert bool(imported & staff_tools) == (path.stem in gemmlab_cluster.STAFF_TOOL_MODULES), path.name
