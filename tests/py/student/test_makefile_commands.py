"""The Makefile as a student meets it, with no GPU needed: `make help` (grouped, every documented
target once, every variable) and `make sanitize` on a machine without a GPU (it says so first)."""
import os
import re
import subprocess
import sys

import pytest

from support.gpu import HAS_GPU
from support.paths import ROOT

GROUPS = ["Students", "Everyone", "Instructors & TAs"]
# The variables a student or TA sets most; `make help` lists each on a line of its own.
VARIABLES = ["SUBMISSION", "STAGE", "PREC", "FULL", "SEED", "SHAPE", "SHAPES", "ARCH", "CONFIG", "CUDA_HOME",
             "TAG", "V", "RERUN", "HISTORY", "ATTEMPT", "SWEEP"]


def make(*args, env=None):
    return subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), *args], capture_output=True,
                          text=True, timeout=120, env=env)


def documented_targets():
    """(group, target) of every target with a `## ` comment, in the Makefile's order (what
    make_help.awk lists); `all`, the default goal, is listed as plain `make`."""
    group, found = "Other", []
    for line in (ROOT / "Makefile").read_text().splitlines():
        if line.startswith("##@ "):
            group = line[4:]
        m = re.match(r"^([a-zA-Z0-9_-]+):(?:[^=\n].*)?## ", line)
        if m:
            found.append((group, "" if m.group(1) == "all" else m.group(1)))
    return found


# A handout has no reference sources: its `make help` leaves out the instructors' commands (they need
# the instructor repository), and this test, which ships, runs there too.
HANDOUT = not list((ROOT / "reference").glob("*.cu"))
SHOWN_GROUPS = GROUPS[:2] if HANDOUT else GROUPS


def help_of(handout):
    out = subprocess.run(["awk", "-v", f"handout={int(handout)}", "-f", "grader/scripts/make_help.awk", "Makefile"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.fixture(scope="module")
def help_text():
    out = make("-s", "help")
    assert out.returncode == 0, out.stderr
    assert out.stdout == help_of(HANDOUT)
    return out.stdout


def sections_of(text):
    headings = re.findall(r"^(\S.*):$", text, re.M)
    return headings, dict(zip(headings, re.split(r"^\S.*:$", text, flags=re.M)[1:]))


def test_help_groups_targets_by_who_runs_them(help_text):
    headings, sections = sections_of(help_text)
    assert headings[:len(SHOWN_GROUPS)] == SHOWN_GROUPS and headings[len(SHOWN_GROUPS)].startswith("Variables"), headings
    assert "make check " in sections["Students"] and "make submit " in sections["Students"]
    # plain `make`, the build a student runs first, is listed, and says that a refused file fails it
    assert re.search(r"^  make {20,}build the grader with your stages; fails when a stage file", sections["Students"],
                     re.M), sections["Students"]
    assert "make grade " in sections["Everyone"] and "make test " in sections["Everyone"]
    if not HANDOUT:
        assert "make sweep " in sections["Instructors & TAs"] and "make handout " in sections["Instructors & TAs"]
    assert "(instructors)" not in help_text, "the heading says it"


def test_a_handouts_help_lists_no_instructors_command_or_variable():
    text = help_of(True)
    headings, _ = sections_of(text)
    assert "Instructors & TAs" not in headings, headings
    for staff in ("make sweep ", "make handout", "make similarity", "make arch-matrix", "SWEEP=", "DIST=",
                  "MATRIX_ONLY=", "STUDENT=", "GALLERY="):
        assert staff not in text, staff
    assert "make submit " in text and "STAGE=" in text and "WERROR=1" in text


def test_help_lists_every_documented_target_exactly_once(help_text):
    targets = [t for g, t in documented_targets() if not (HANDOUT and g == "Instructors & TAs")]
    assert len(targets) > 20
    listed = [t.strip() for t in re.findall(r"^  make (\S*) ", help_text, re.M)]
    assert sorted(listed) == sorted(targets)
    # nothing sits before the first group heading of the Makefile: no target falls into "Other"
    assert "Other:" not in help_text


def test_help_lists_the_variables_one_line_each(help_text):
    variables = help_text.split("\nVariables")[1]
    for name in VARIABLES:
        lines = re.findall(rf"^  {name}=\S*\s+\S.*$", variables, re.M)
        assert len(lines) == (0 if HANDOUT and name == "SWEEP" else 1), f"{name}: {lines}"


# The course a test's make runs for: the one this tree (or handout) was made for, and one whose [cluster]
# sets what a real cluster asks for (a partition, an account, a QoS, a time limit). The second is given
# through the environment (make takes CONFIG from there as from the command line, but the command typed
# stays the same), as a handout made for such a course has it in its own course.toml.
COURSES = ["this course", "a course with partition, account and qos"]


@pytest.fixture(params=COURSES)
def course_env(request, tmp_path):
    """The environment of the test's make for the course of `request.param`."""
    if request.param == COURSES[0]:
        return dict(os.environ)
    course = tmp_path / "course-with-account.toml"
    course.write_text(f'[course]\nname = "cs101-gpu"\n[cluster]\ngrader_root = "{ROOT}"\npartition = "gpu"\n'
                      'account = "cs101"\nqos = "class"\ntime_limit = "00:20:00"\n')
    env = {**os.environ, "CONFIG": str(course)}
    assert "--partition=gpu --account=cs101 --qos=class" in courses_srun(env)  # not the bare `srun --gres=gpu:1`
    return env


def courses_srun(env):
    """The course's srun line, as `make hint` prints it: the one home of that line is cluster/config.py
    srun_line (the Makefile's GEMMLAB_SRUN), never a literal in a test."""
    out = make("-s", "hint", env=env)
    assert out.returncode == 0 and out.stdout.startswith("srun "), out.stdout + out.stderr
    return out.stdout.strip()


@pytest.mark.skipif(HAS_GPU, reason="this machine has a GPU: the no-GPU path is not taken")
def test_sanitize_without_a_gpu_says_so_before_looking_for_compute_sanitizer(grader, tmp_path, course_env):
    """A compute-sanitizer that is on PATH is not run, and none that is missing is complained about:
    the GPU is what is missing. The grader `make test` built stands in for the Makefile's (-o: not remade)."""
    fake = tmp_path / "compute-sanitizer"
    fake.write_text("#!/bin/sh\necho COMPUTE-SANITIZER RAN\n")
    fake.chmod(0o755)
    env = {**course_env, "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}"}
    out = make("sanitize", "STAGE=tiled/16", f"GRADER={grader}", "-o", str(grader), env=env)
    text = out.stdout + out.stderr
    assert out.returncode != 0, text
    assert "COMPUTE-SANITIZER RAN" not in text and "compute-sanitizer is not on PATH" not in text, text
    assert "gemmlab sanitize: " in text and "make sanitize needs an NVIDIA GPU" in text, text
    # the hint is the command typed, with its variables, on a GPU node of the course: pasted, it does the same job
    assert f"{courses_srun(course_env)} make sanitize STAGE=tiled/16 GRADER=" in text, text
    assert "make submit" not in text, text
    # make's "Error 3" that follows is explained, not left to look like a crash
    assert 'Nothing ran here (exit status 3, which make reports as "Error 3")' in text, text


@pytest.mark.skipif(HAS_GPU, reason="this machine has a GPU: the no-GPU path is not taken")
def test_check_without_a_gpu_names_the_command_typed_with_its_variables(grader, course_env):
    out = make("check", "STAGE=tiled", "PREC=double", "FULL=1", f"GRADER={grader}", "-o", str(grader), env=course_env)
    assert out.returncode != 0
    assert f"{courses_srun(course_env)} make check STAGE=tiled PREC=double FULL=1 GRADER={grader}\n" in out.stderr, \
        out.stderr
    assert f"{grader} check" not in out.stdout, "make's own command line is not shown"


def test_a_mistyped_target_names_the_nearest_and_files_build_as_before(tmp_path):
    """make chek: the nearest targets make help lists (the Makefile's .DEFAULT, suggest_target.py), in
    make's own words, not a bare "No rule to make target". Files are as before: one that exists is up to
    date, one that a pattern rule makes is built (the test below), and a missing file that a target needs
    is still an error of its own, which names it."""
    out = make("chek")
    assert out.returncode == 2 and "no target 'chek'; did you mean 'check'? (make help lists every target)" \
        in out.stderr, out.stderr
    assert "No rule to make target" not in out.stderr
    out = make("Makefile")
    assert out.returncode == 0, out.stderr
    out = make("-B", "-n", "help")  # -B remakes every file, the Makefile and sources too: they are left as they are
    assert out.returncode == 0 and "no rule makes" not in out.stderr, out.stderr
    extra = tmp_path / "extra.mk"
    extra.write_text(f"needs-a-file: {tmp_path}/input.txt\n\t@echo built from it\n")
    out = make("-f", "Makefile", "-f", str(extra), "needs-a-file")
    assert out.returncode == 2 and f"no rule makes '{tmp_path}/input.txt', a file that a target needs" in out.stderr, \
        out.stderr
    (tmp_path / "input.txt").write_text("")
    out = make("-f", "Makefile", "-f", str(extra), "needs-a-file")
    assert out.returncode == 0 and "built from it" in out.stdout, out.stdout + out.stderr


def test_the_suggestions_are_what_make_help_lists():
    """In a handout, make help leaves the instructors' commands out: so do the suggestions."""
    def suggest(goal, handout):
        return subprocess.run([sys.executable, "grader/scripts/suggest_target.py", goal], input=help_of(handout),
                              cwd=ROOT, capture_output=True, text=True).stdout
    assert "did you mean 'similarity'?" in suggest("similarty", False)
    assert "similarity" not in suggest("similarty", True)
    assert "did you mean 'submit'?" in suggest("sumbit", True)
    assert suggest("zzzz", True) == "no target 'zzzz', and no file of that name (make help lists every target)\n"


def in_student(*args, env=None):
    return subprocess.run(["make", "--no-print-directory", "-C", str(ROOT / "student"), *args], capture_output=True,
                          text=True, timeout=120, env=env)


def test_make_in_student_is_make_in_the_folder_above(tmp_path):
    """student/Makefile runs the kit's Makefile with the goals and variables typed: plain make runs the
    default goal there, several goals run there at once, a variable reaches it, a typo is told the nearest
    target. (MAKE=echo shows the delegation without running it.)"""
    assert in_student("-s", "MAKE=echo").stdout == "-C ..\n"
    assert in_student("-s", "MAKE=echo", "check", "bench").stdout == "-C .. check bench\n"
    course = tmp_path / "course.toml"
    course.write_text(f'[cluster]\ngrader_root = "{ROOT}"\npartition = "gpu"\naccount = "cs101"\nqos = "class"\n')
    out = in_student("-s", "hint", f"CONFIG={course}")
    assert out.returncode == 0 and out.stdout == "srun --partition=gpu --account=cs101 --qos=class --gres=gpu:1\n", \
        out.stdout + out.stderr
    out = in_student("chek")
    assert out.returncode != 0 and "did you mean 'check'?" in out.stderr, out.stderr


def test_make_in_report_is_make_in_the_folder_above(tmp_path):
    """report/, where a student writes report.md, has student/'s Makefile rules: make there is make in
    the folder above, goals and variables as typed."""
    def rules(folder):
        return [line for line in (ROOT / folder / "Makefile").read_text().splitlines() if not line.startswith("#")]
    assert rules("report") == rules("student")

    def in_report(*args):
        return subprocess.run(["make", "--no-print-directory", "-C", str(ROOT / "report"), *args], capture_output=True,
                              text=True, timeout=120)
    assert in_report("-s", "MAKE=echo").stdout == "-C ..\n"
    assert in_report("-s", "MAKE=echo", "report", "report-pdf").stdout == "-C .. report report-pdf\n"
    course = tmp_path / "course.toml"
    course.write_text(f'[cluster]\ngrader_root = "{ROOT}"\naccount = "cs101"\n')
    out = in_report("-s", "hint", f"CONFIG={course}")
    assert out.returncode == 0 and out.stdout == "srun --account=cs101 --gres=gpu:1\n", out.stdout + out.stderr
    out = in_report("repotr")
    assert out.returncode != 0 and "did you mean 'report'" in out.stderr, out.stderr


def test_the_tests_build_one_short_line_per_file(tmp_path):
    """`make test` builds its own objects as the rest of the build does: one line per file (V=1 shows
    the commands), not the compiler's command line."""
    obj = tmp_path / "build" / "tests" / "host" / "main.o"
    out = make(f"BUILD={tmp_path}/build", str(obj))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "  CXX     tests/host/main.cpp" in out.stdout, out.stdout
    assert "-std=c++17" not in out.stdout + out.stderr, out.stdout
    assert obj.is_file()


def test_without_a_gpu_the_build_targets_the_courses_gpu(tmp_path):
    """On a login node (no GPU: GPU_CC= stands for nvidia-smi finding none) make, make sass and make
    resources build for course.toml [cluster] arch; ARCH= still wins, and a course that names no arch
    gets sm_90."""
    def arch(config, *more):
        out = make("-f", "Makefile", "-f", "cluster/make-vars.mk", "print-cluster-vars", f"CONFIG={config}", *more)
        assert out.returncode == 0, out.stderr
        return re.search(r"^ARCH=(\S*)$", out.stdout, re.M).group(1)
    course = tmp_path / "course.toml"
    course.write_text('[course]\nname = "a100-course"\n\n[cluster]\npartition = "gpu"\narch = "sm_80"   # A100\n\n'
                      '[handout]\narchs = ["sm_75"]\narch = "sm_75"\n')
    assert arch(course, "GPU_CC=") == "sm_80"
    assert arch(course, "GPU_CC=", "ARCH=sm_75") == "sm_75"
    assert arch(course, "GPU_CC=89") == "sm_89"  # a GPU here: its own
    course.write_text('[cluster]\narch = ""\n')
    assert arch(course, "GPU_CC=") == "sm_90"


@pytest.mark.skipif(HAS_GPU, reason="this machine has a GPU: the no-GPU path is not taken")
def test_the_no_gpu_hint_is_the_courses_srun_line(grader, tmp_path):
    """A course whose cluster needs a partition, an account, a qos, a GPU type and a node feature: the hint
    of a command that needs a GPU carries all of them (make hint's line, from the course), ready to paste."""
    course = tmp_path / "course.toml"
    course.write_text(f'[course]\nname = "a100-course"\n[cluster]\ngrader_root = "{ROOT}"\npartition = "gpu"\n'
                      'account = "cs101"\nqos = "class"\ngres = "gpu:a100:1"\nconstraint = "a100"\n')
    line = "srun --partition=gpu --account=cs101 --qos=class --gres=gpu:a100:1 --constraint=a100"
    hint = make("-s", "hint", f"CONFIG={course}")
    assert hint.returncode == 0 and hint.stdout == line + "\n", hint.stdout + hint.stderr
    out = make("check", "STAGE=tiled", f"CONFIG={course}", f"GRADER={grader}", "-o", str(grader))
    assert out.returncode != 0
    assert f"      {line} make check STAGE=tiled CONFIG={course} GRADER={grader}\n" in out.stderr, out.stderr


def test_a_dependency_list_that_vanished_mid_read_is_nothing_to_make():
    """make reads every build/**/*.d it found; a build beside this one (another test, another terminal)
    may remove one between the find and the read. It is nothing to make, never "no rule makes it"."""
    r = make("-s", "--eval=-include build/vanished-by-another-make/stages/tensor.d", "hint")
    assert r.returncode == 0 and r.stdout.startswith("srun "), r.stdout + r.stderr
