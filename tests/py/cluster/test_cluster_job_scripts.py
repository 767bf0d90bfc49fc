"""Job scripts come from the trusted tree, never from an attempt. An attempt's directory is its
student's to write, so no job script is kept there: `make submit` and `make requeue` render the
student's own feedback job (it runs as them) into a private temporary file of theirs, and the staff's
`make regrade STUDENT= ATTEMPT=` renders its job (it runs as the staff) into <sweeps>/.course/regrades/.
A grade.sbatch planted in an attempt is never what any of them queues. A stand-in `sbatch` on PATH
keeps a copy of every script it is given (as Slurm keeps one) and queues nothing."""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import staff_class
from support.cluster_helpers import folder
from support.staff_class import ROOT

import config  # noqa: E402  (cluster/, on sys.path through staff_class)
import course_state  # noqa: E402

TOOL = ROOT / "cluster" / "gemmlab_cluster.py"
TEMPLATE_LINE = "# Rendered from the trusted cluster/templates/grade-attempt.sbatch"
NO_CONTROLLER = "sbatch: fatal: Could not establish a configuration source\n"


def stand_in_sbatch(tmp_path, fail_with=""):
    """PATH with an sbatch that copies each script it is given to <tmp>/queued/<n>.sbatch (with the
    path it was given in <n>.path) and prints a job id; or fails with `fail_with`."""
    bin_dir, kept = tmp_path / "bin", tmp_path / "queued"
    bin_dir.mkdir(exist_ok=True)
    kept.mkdir(exist_ok=True)
    body = (f"cat >&2 <<'EOF'\n{fail_with}EOF\nexit 1\n" if fail_with else
            f'for a; do script="$a"; done\nn=$(ls {kept} | wc -l)\ncp "$script" {kept}/$n.sbatch\n'
            f'printf %s "$script" > {kept}/$n.path\necho $((4000 + n))\n')
    (bin_dir / "sbatch").write_text("#!/bin/sh\n" + body)
    (bin_dir / "sbatch").chmod(0o755)
    # what the tools ask of a queued job: it waits
    (bin_dir / "scontrol").write_text('#!/bin/sh\nfor a; do job="$a"; done\necho "JobId=$job JobState=PENDING"\n')
    (bin_dir / "scontrol").chmod(0o755)
    drop = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "GEMMLAB_COMMAND")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    return env


def queued(tmp_path) -> list[tuple[Path, str]]:
    """(the path sbatch was given, the script's text) of each script queued, in order."""
    kept = tmp_path / "queued"
    return [(Path((kept / f"{n}.path").read_text()), (kept / f"{n}.sbatch").read_text())
            for n in range(len(list(kept.glob("*.sbatch"))))]


def job_name(script: str) -> str:
    """The name a queued script gives its job: everyone on the cluster sees it in squeue."""
    (name,) = re.findall(r"^#SBATCH --job-name=(.*)$", script, re.M)
    return name


def slurm_course(tmp_path, roster=None):
    path = staff_class.write_config(tmp_path, roster=roster)
    path.write_text(path.read_text().replace('scheduler = "local"', 'scheduler = "slurm"'))
    return path


def tool(cfg_path, env, *args):
    return subprocess.run([sys.executable, TOOL, "--config", cfg_path, *map(str, args)], capture_output=True,
                          text=True, env=env, timeout=600)


def student_copy(tmp_path) -> Path:
    d = tmp_path / "me" / "student"
    d.mkdir(parents=True)
    for src in (ROOT / "student").glob("*.cu"):
        (d / src.name).write_text(src.read_text())
    return d


def plant(attempt: Path, tmp_path) -> Path:
    """A grade.sbatch a student wrote into their attempt: it would run `touch <tmp>/PWNED` as whoever queued it."""
    planted = attempt / "grade.sbatch"
    planted.write_text(f"#!/bin/bash\ntouch {tmp_path}/PWNED\n")
    planted.chmod(0o755)
    return planted


def test_submit_keeps_no_job_script_in_the_attempt_and_queues_the_trusted_one(tmp_path):
    cfg_path = slurm_course(tmp_path)
    env = stand_in_sbatch(tmp_path)
    r = tool(cfg_path, env, "submit", "--student-dir", student_copy(tmp_path), "--no-compile-check")
    assert r.returncode == 0 and "grading job 4000 queued" in r.stdout, r.stdout + r.stderr
    (attempt,) = config.load(cfg_path).dropbox_dir.glob("*/attempt-0001-*")
    assert not list(attempt.glob("*.sbatch")), os.listdir(attempt)
    ((given, script),) = queued(tmp_path)
    assert attempt not in given.parents and not given.exists(), given  # a temporary file of the student's, gone
    assert TEMPLATE_LINE in script and f"grade-attempt --attempt {attempt}" in script, script
    assert f"#SBATCH --output={attempt}/grade-%j.log" in script, script
    assert f"--into {attempt}/grading" in script, script
    # its name in squeue says the course, never who hands in (the job's id is in the attempt's job.json)
    assert job_name(script) == f"gemmlab-{config.load(cfg_path).course}-grade", script
    assert json.loads((attempt / "job.json").read_text())["job_id"] == "4000"


def test_the_staff_regrade_renders_the_trusted_template_and_never_runs_a_planted_script(tmp_path):
    cfg_path = slurm_course(tmp_path, roster=["alice"])
    cfg = config.load(cfg_path)
    staff_class.hand_in(cfg, tmp_path, "alice", {})
    (attempt,) = (folder(cfg, "alice")).glob("attempt-0001-*")
    planted = plant(attempt, tmp_path)
    before = planted.read_text()
    env = stand_in_sbatch(tmp_path)
    r = tool(cfg_path, env, "regrade", "--user", "alice", "--attempt", "1")
    assert r.returncode == 0, r.stdout + r.stderr
    ((given, script),) = queued(tmp_path)
    here = given.parent  # <sweeps>/.course/regrades/alice-attempt-0001-...-<time>/: the staff's only
    assert here.parent == course_state.private_root(cfg) / "regrades", given
    assert here.name.startswith(f"alice-{attempt.name}-") and given.name == "grade-attempt.sbatch", given
    assert TEMPLATE_LINE in script and f"grade-attempt --attempt {attempt} --into {here}/grading" in script, script
    assert "PWNED" not in script and f"#SBATCH --output={here}/grade-%j.log" in script, script  # its log: the staff's
    assert f"job 4000 grades alice's attempt #1 ({attempt}) into {here}/grading" in r.stdout, r.stdout
    assert job_name(script) == f"gemmlab-{cfg.course}-grade", script  # not alice's name, not #1
    assert planted.read_text() == before and not (tmp_path / "PWNED").exists()
    # the Makefile's target for it, beside the other staff targets
    assert '$(CLUSTER) regrade --user "$(STUDENT)" --attempt "$(ATTEMPT)"' in (ROOT / "Makefile").read_text()


def test_a_student_queues_a_hand_in_again_with_make_requeue(tmp_path):
    """sbatch failed at submit: the hint names `make requeue ATTEMPT=1`, which queues the trusted script."""
    cfg_path = slurm_course(tmp_path)
    r = tool(cfg_path, stand_in_sbatch(tmp_path, fail_with=NO_CONTROLLER), "submit", "--student-dir",
             student_copy(tmp_path), "--no-compile-check")
    assert r.returncode == 0 and "make requeue ATTEMPT=1" in r.stderr, r.stdout + r.stderr
    assert "sbatch " not in r.stderr.replace("sbatch: fatal", ""), r.stderr  # no script of the attempt's to queue
    (attempt,) = config.load(cfg_path).dropbox_dir.glob("*/attempt-0001-*")
    planted = plant(attempt, tmp_path)
    env = stand_in_sbatch(tmp_path)
    r = tool(cfg_path, env, "requeue", "--attempt", "1")
    assert r.returncode == 0 and "requeue: grading job 4000 queued" in r.stdout, r.stdout + r.stderr
    ((given, script),) = queued(tmp_path)
    assert given != planted and TEMPLATE_LINE in script and "PWNED" not in script, (given, script)
    assert not (tmp_path / "PWNED").exists()
    # queued now: asked again, it says so and queues nothing
    r = tool(cfg_path, env, "requeue", "--attempt", "1")
    assert r.returncode == 1 and "needs no grading" in r.stderr, r.stdout + r.stderr
    assert len(queued(tmp_path)) == 1


@pytest.mark.skipif(not (shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc")),
                    reason="needs nvcc (the CUDA toolkit) to build the hand-in")
def test_a_local_regrade_writes_its_results_where_the_staff_keep_them(tmp_path):
    """scheduler = "local": the regrade grades here, into <sweeps>/.course/regrades/...; the attempt's
    directory (the student's) is left as it was."""
    cfg_path = staff_class.write_config(tmp_path, roster=["alice"])
    cfg = config.load(cfg_path)
    staff_class.hand_in(cfg, tmp_path, "alice", {})
    (attempt,) = (folder(cfg, "alice")).glob("attempt-0001-*")
    before = sorted(os.listdir(attempt))
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    r = tool(cfg_path, env, "regrade", "--user", "alice", "--attempt", "1")
    assert r.returncode == 0, r.stdout + r.stderr
    (outcome,) = (course_state.private_root(cfg) / "regrades").glob(f"alice-{attempt.name}-*/grading/outcome.json")
    assert json.loads(outcome.read_text())["status"] == "no_gpu", outcome.read_text()
    assert sorted(os.listdir(attempt)) == before
