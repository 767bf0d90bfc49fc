"""The Makefile as a student meets it, with no GPU needed: `make help` (grouped, every documented
target once, every variable) and `make sanitize` on a machine without a GPU (it says so first)."""
import os
import re
import subprocess

import pytest

from conftest import HAS_GPU, ROOT

GROUPS = ["Students", "Everyone", "Instructors & TAs"]
# The variables a student or TA sets most; `make help` lists each on a line of its own.
VARIABLES = ["SUBMISSION", "STAGE", "PREC", "FULL", "SEED", "SHAPE", "SHAPES", "ARCH", "CONFIG", "CUDA_HOME",
             "TAG", "V", "RERUN", "HISTORY", "ATTEMPT", "SWEEP"]


def make(*args, env=None):
    return subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), *args], capture_output=True,
                          text=True, timeout=120, env=env)


def documented_targets():
    """Targets with a `## ` comment, in the Makefile's order (what make_help.awk lists)."""
    text = (ROOT / "Makefile").read_text()
    return re.findall(r"^([a-zA-Z0-9_-]+):(?:[^=\n].*)?## ", text, re.M)


@pytest.fixture(scope="module")
def help_text():
    out = make("-s", "help")
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_help_groups_targets_by_who_runs_them(help_text):
    headings = re.findall(r"^(\S.*):$", help_text, re.M)
    assert headings[:3] == GROUPS and headings[3].startswith("Variables"), headings
    sections = dict(zip(headings, re.split(r"^\S.*:$", help_text, flags=re.M)[1:]))
    assert "make check " in sections["Students"] and "make submit " in sections["Students"]
    assert "make grade " in sections["Everyone"] and "make test " in sections["Everyone"]
    assert "make sweep " in sections["Instructors & TAs"] and "make handout " in sections["Instructors & TAs"]
    assert "(instructors)" not in help_text, "the heading says it"


def test_help_lists_every_documented_target_exactly_once(help_text):
    targets = documented_targets()
    assert len(targets) > 20
    listed = re.findall(r"^  make (\S+) ", help_text, re.M)
    assert sorted(listed) == sorted(targets)
    # nothing sits before the first group heading of the Makefile: no target falls into "Other"
    assert "Other:" not in help_text


def test_help_lists_the_variables_one_line_each(help_text):
    variables = help_text.split("\nVariables")[1]
    for name in VARIABLES:
        lines = re.findall(rf"^  {name}=\S*\s+\S.*$", variables, re.M)
        assert len(lines) == 1, f"{name}: {lines}"


@pytest.mark.skipif(HAS_GPU, reason="this machine has a GPU: the no-GPU path is not taken")
def test_sanitize_without_a_gpu_says_so_before_looking_for_compute_sanitizer(grader, tmp_path):
    """A compute-sanitizer that is on PATH is not run, and none that is missing is complained about:
    the GPU is what is missing. The grader `make test` built stands in for the Makefile's (-o: not remade)."""
    fake = tmp_path / "compute-sanitizer"
    fake.write_text("#!/bin/sh\necho COMPUTE-SANITIZER RAN\n")
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}"}
    out = make("sanitize", "STAGE=tiled/16", f"GRADER={grader}", "-o", str(grader), env=env)
    text = out.stdout + out.stderr
    assert out.returncode != 0, text
    assert "COMPUTE-SANITIZER RAN" not in text and "compute-sanitizer is not on PATH" not in text, text
    assert "gemmlab sanitize: " in text and "make sanitize needs an NVIDIA GPU" in text, text
    assert "srun --gres=gpu:1 make sanitize" in text
