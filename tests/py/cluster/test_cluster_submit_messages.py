"""What `make submit` tells a student (cluster/handin.py): what was stored, what failed and whose
problem it is.

- Slurm's controller cannot be reached: a stand-in `sbatch` on PATH prints Slurm's own message for
  it ("sbatch: fatal: Could not establish a configuration source"). The hand-in is stored and counts;
  the student is told it is the cluster's problem — not their files, not course.toml — and how to
  queue the grading of that same hand-in later; `make status` says it was not queued and why.
- Slurm refuses an option of the course's: the course staff's to fix, named by its key.
- A stage file that does not compile, handed in through `make submit` as a student runs it: one
  progress line per stage file, the compiler's messages and the first error at the path the student
  knows and the line the error is on, and none of make's own chatter (its command lines, jobserver
  and clock notes, the scratch copy's paths).
"""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import staff_class

import config  # noqa: E402  (cluster/, on sys.path through staff_class)

ROOT = staff_class.ROOT
TOOL = ROOT / "cluster" / "gemmlab_cluster.py"
# Slurm's own words when the client finds no controller (no slurm.conf, and none to fetch).
NO_CONTROLLER = ("sbatch: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host\n"
                 "sbatch: error: fetch_config: DNS SRV lookup failed\n"
                 "sbatch: error: _establish_config_source: failed to fetch config\n"
                 "sbatch: fatal: Could not establish a configuration source\n")
BAD_PARTITION = "sbatch: error: Batch job submission failed: Invalid partition name specified\n"


def env_with_sbatch(tmp_path, said="", job=None):
    """An environment whose PATH starts with a stand-in sbatch: it prints `said` on stderr and fails,
    or queues `job` (prints its id, as sbatch --parsable does). No make state of a make running us."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    body = f"echo {job}\nexit 0\n" if job else f"cat >&2 <<'EOF'\n{said}EOF\nexit 1\n"
    (bin_dir / "sbatch").write_text("#!/bin/sh\n" + body)
    (bin_dir / "sbatch").chmod(0o755)
    drop = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "GEMMLAB_GRADER", "GEMMLAB_COMMAND")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    return env


def slurm_course(tmp_path):
    path = staff_class.write_config(tmp_path)
    path.write_text(path.read_text().replace('scheduler = "local"', 'scheduler = "slurm"'))
    return path


def student_copy(where: Path) -> Path:
    d = where / "student"
    d.mkdir(parents=True)
    for src in (ROOT / "student").glob("*.cu"):
        shutil.copyfile(src, d / src.name)
    return d


def submit(cfg_path, student, env, *extra, cwd=None):
    return subprocess.run([sys.executable, TOOL, "--config", cfg_path, "submit", "--student-dir", student, *extra],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=600)


def test_controller_down_is_the_clusters_problem_and_the_hand_in_counts(tmp_path):
    cfg_path = slurm_course(tmp_path)
    env = env_with_sbatch(tmp_path, NO_CONTROLLER)
    r = submit(cfg_path, student_copy(tmp_path), env, "--no-compile-check")
    assert r.returncode == 0, r.stdout + r.stderr
    attempt = Path(re.search(r"it is handed in \((\S+),", r.stdout).group(1))
    assert "submit: stored attempt #1 of " in r.stdout and (attempt / "manifest.json").is_file(), r.stdout
    err = r.stderr
    assert "submit: your hand-in is stored and counts; its feedback grading was not queued" in err, err
    assert "Slurm, the cluster's scheduler, did not answer" in err and "Could not establish a configuration source" in err
    assert "That is the cluster's problem" in err and "not your files and not course.toml" in err, err
    assert "make requeue ATTEMPT=1" in err and not list(attempt.glob("*.sbatch")), err
    assert "tell the course staff" in err and "no need to hand in again" in err, err
    # nothing about settings the student cannot change (the guide says their copy is not used)
    for wrong in ("check [cluster]", "partition", "time_limit", "error:"):
        assert wrong not in err, (wrong, err)
    job = json.loads((attempt / "job.json").read_text())
    assert job["not_queued"] == "Slurm did not answer"
    status = subprocess.run([sys.executable, TOOL, "--config", cfg_path, "status"], capture_output=True, text=True,
                            env=env)
    assert "not queued (Slurm did not answer)" in status.stdout and "<- counts" in status.stdout, status.stdout


def test_a_refused_option_is_the_course_staffs_to_fix(tmp_path):
    cfg_path = slurm_course(tmp_path)
    r = submit(cfg_path, student_copy(tmp_path), env_with_sbatch(tmp_path, BAD_PARTITION), "--no-compile-check")
    assert r.returncode == 0, r.stdout + r.stderr
    err = r.stderr
    assert "submit: your hand-in is stored and counts; its feedback grading was not queued" in err, err
    assert "Invalid partition name specified" in err and "for the course staff to fix" in err, err
    assert "[cluster] partition of the course's course.toml" in err and "the copy in your checkout is not used" in err
    assert "the cluster's problem" not in err


def test_a_file_that_does_not_compile_is_shown_as_the_student_knows_it(tmp_path):
    """Through `make submit`, as a student runs it (make's jobserver and all), from the repository's
    root with the submission below it, so that its paths are relative as a student's are."""
    where = ROOT / "build" / "submit-messages" / tmp_path.name
    shutil.rmtree(where, ignore_errors=True)
    try:
        student = student_copy(where)
        lines = (student / "tiled.cu").read_text().splitlines(keepends=True)
        at = next(i for i, line in enumerate(lines) if "TODO(student): write the kernel body." in line) + 1
        lines.insert(at, "    T acc = alpha * undefined_name;\n")  # inside the kernel: the error is on line at + 1
        (student / "tiled.cu").write_text("".join(lines))
        line = at + 1
        shown = student.relative_to(ROOT)
        cfg_path = slurm_course(tmp_path)
        r = subprocess.run(["make", "-j2", "submit", f"SUBMISSION={shown}", f"CONFIG={cfg_path}"], cwd=ROOT,
                           capture_output=True, text=True, env=env_with_sbatch(tmp_path, job=4242), timeout=900)
        out, err = r.stdout, r.stderr
        assert r.returncode == 0, out + err
        # a progress line for every stage file (or the note that it compiled before)
        assert re.search(r"^submit: compiling the 6 stage files as the grader will \(sm_\w+\), one line each:$", out,
                         re.M), out
        progress = re.findall(r"^submit:   \[(\d)/6\] (\S+)$", out, re.M)
        reused = re.search(r"^submit:   (.+): compiled before from the same bytes \(object cache\)$", out, re.M)
        named = {Path(p).name for _, p in progress} | (set(Path(p).name for p in reused.group(1).split(", "))
                                                        if reused else set())
        assert named == {p.name for p in (ROOT / "student").glob("*.cu")}, out
        assert all(p.startswith(f"{shown}/") for _, p in progress), progress
        # the compiler's messages and the first error where the student finds them
        assert f"submit: {shown}/tiled.cu does not compile; the compiler says:" in err, err
        assert f"    {shown}/tiled.cu({line}): error: identifier \"undefined_name\" is undefined" in err, err
        assert (f"submit: WARNING: stage tiled will be rejected and score 0 (first error: {shown}/tiled.cu:{line}: "
                "error: identifier \"undefined_name\" is undefined)") in err, err
        assert "handing in anyway: every other stage is graded" in err
        assert "submit: stored attempt #1 of " in out and "grading job 4242 queued" in out, out
        # make status shows it per attempt, with the report's verdict
        status = subprocess.run(["make", "-s", "status", f"CONFIG={cfg_path}"], cwd=ROOT, capture_output=True, text=True,
                                env=env_with_sbatch(tmp_path, job=4242), timeout=120)
        assert "no report  does not compile: tiled.cu" in status.stdout, status.stdout + status.stderr
        # none of make's own business
        for noise in ("gemmlab-submit-", "/submission/", "forced in submake", "jobserver", "Clock skew", "$ make",
                      "PYTHON=", "make[", "gemmlab_cluster.py"):
            assert noise not in out + err, (noise, out + err)
    finally:
        shutil.rmtree(where, ignore_errors=True)
