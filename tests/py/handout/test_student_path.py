"""A new student's first week, end to end, on a machine without a GPU: a handout made for a course whose
[cluster] sets a partition, an account, a QoS and a time limit (as the instructor guide suggests), then,
as an unprivileged student (a private account: tests/py/support/private_accounts.py) in a copy of the
handout they own:

  make setup PLAN=1   set-up without root, offline: what it would install into the user prefix, nothing
                      installed (the install itself, from PyPI: test_setup_no_root.py)
  make                the first build
  (an edit)           a tiled kernel written into the stub, student/tiled.cu
  make                the rebuild after the edit
  make test           the handout's own suite, all of it, as the student
  make check          no GPU here: the hint, with the course's own srun line
  make report         no GPU here: the draft, report/build/draft/report-draft.pdf (typed in report/)
  make submit         stored in the course's drop box (set up by the staff beforehand)

Each step's outcome is asserted, and each step's time printed (a table at the end; docs/performance.md
keeps the latest). The student's ccache is kept between runs in STUDENT_CCACHE: the first run builds
from an empty cache, the later ones find the grader's objects there (the table says which); remove it
for a cold first build. Runs as root (the private accounts' mount namespace; CI does): 5 to 7 minutes on
2 cores, two thirds of it the handout's own `make test`; GEMMLAB_SKIP_HANDOUT=1 skips it with make
handout-check.

These tests need the instructor repository (reference/*.cu, the solution fixtures) and never ship.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from support import gpu_prebuild
from support import private_accounts
from support import staff_class
from support.gpu import HAS_GPU
from support.paths import ROOT

pytestmark = [
    pytest.mark.skipif(not list((ROOT / "reference").glob("*.cu")),
                       reason="needs the instructor repository (reference/*.cu)"),
    pytest.mark.skipif(bool(os.environ.get("GEMMLAB_SKIP_HANDOUT")), reason="GEMMLAB_SKIP_HANDOUT is set"),
    pytest.mark.skipif(HAS_GPU, reason="the path of a student without a GPU (the hint, the draft): this machine has one"),
]

STUDENT = "newcomer"
# The course's cluster, as an instructor sets it: what every hint's srun line must carry.
CLUSTER = {"partition": "gpu", "account": "cs101", "qos": "class", "time_limit": "00:20:00"}
SRUN = "srun --partition=gpu --account=cs101 --qos=class --gres=gpu:1"
STUDENT_CCACHE = Path("/var/tmp/gemmlab-student-path-ccache")  # the student's ccache, kept between runs
PATH = "/usr/local/bin:/usr/bin:/bin"  # a login shell's; the CUDA toolkit in /usr/local/cuda, as on a cluster


@pytest.fixture(scope="module")
def accounts():
    yield from private_accounts.held_or_skipped({STUDENT: []}, [])


def course(work: Path) -> Path:
    """The repository's course.toml with a drop box under `work` and CLUSTER's keys set."""
    path = gpu_prebuild.handout_config(work, first_arch_only=True)
    text = path.read_text()
    for key, value in CLUSTER.items():
        text, n = re.subn(rf'(?m)^{key} = "[^"]*"', f'{key} = "{value}"', text, count=1)
        assert n == 1, f"course.toml has no [cluster] {key} line to set"
    path.write_text(text)
    return path


def set_up_the_drop_box(config: Path, work: Path):
    """What the staff run once, before the term (the instructor guide's setup), on their own copy of the
    course's course.toml: the drop box the handout's make submit stores into."""
    staff = work / "staff" / "course.toml"
    staff.parent.mkdir()
    text = re.sub(r'(?m)^grader_root = ""', f'grader_root = "{ROOT}"', config.read_text())
    staff.write_text(re.sub(r'(?m)^trusted_cache = "[^"]*"', f'trusted_cache = "{staff_class.CACHE}"', text))
    proc = gpu_prebuild.run([sys.executable, ROOT / "cluster/gemmlab_cluster.py", "--config", staff, "setup"], cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:]


class Student:
    """Commands run as the student, in their own shell's environment (env -i: nothing of root's or of the
    make that runs this suite), each one timed."""

    def __init__(self, accounts, tree: Path):
        self.tree, self.times = tree, []
        home = accounts.home(STUDENT)
        self.env = {"HOME": str(home), "USER": STUDENT, "LOGNAME": STUDENT, "PATH": PATH, "LANG": "C.UTF-8",
                    "CCACHE_DIR": str(STUDENT_CCACHE), "TMPDIR": str(home / "tmp")}

    def run(self, step: str, *cmd, cwd=None, timeout=3600):
        env = [f"{k}={v}" for k, v in self.env.items()]
        t = time.monotonic()
        proc = subprocess.run(["runuser", "-u", STUDENT, "--", "env", "-i", *env, *cmd], cwd=cwd or self.tree,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
        secs = time.monotonic() - t
        self.times.append((step, secs))
        print(f"$ {step}  ({secs:.1f} s, exit {proc.returncode})\n{proc.stdout[-4000:]}{proc.stderr[-4000:]}",
              flush=True)
        return proc

    def make(self, *args, step=None, **kw):
        return self.run(step or " ".join(["make", *args]), "make", "--no-print-directory", *args, **kw)


def ccache_files() -> int:
    return sum(1 for p in STUDENT_CCACHE.rglob("*") if p.is_file()) if STUDENT_CCACHE.is_dir() else 0


def test_a_new_students_first_week_without_root_or_a_gpu(accounts):
    uid, gid = accounts.uid[STUDENT], accounts.gid[STUDENT]
    work = Path(tempfile.mkdtemp(prefix="gemmlab-student-path-"))
    try:
        work.chmod(0o755)  # the student reads the tarball and reaches the drop box through it
        t0 = time.monotonic()
        config = course(work)
        set_up_the_drop_box(config, work)
        made = gpu_prebuild.run(["make", "--no-print-directory", "handout", f"DIST={work / 'dist'}", f"CONFIG={config}"],
                                cwd=ROOT)
        assert made.returncode == 0, made.stdout[-4000:]
        assert "WARNING" not in made.stdout, made.stdout[-3000:]  # the drop box is set up: nothing to warn of
        tarball = next((work / "dist").glob("*-handout.tar.gz"))
        handout_secs = time.monotonic() - t0

        home = accounts.home(STUDENT)
        (home / "tmp").mkdir()
        os.chown(home / "tmp", uid, gid)
        STUDENT_CCACHE.mkdir(mode=0o700, exist_ok=True)
        for p in [STUDENT_CCACHE, *STUDENT_CCACHE.rglob("*")]:  # the private account's id differs from run to run
            os.lchown(p, uid, gid)
        cold = ccache_files() == 0
        tree = home / tarball.name.removesuffix(".tar.gz")
        student = Student(accounts, tree)

        proc = student.run("tar -xzf (the handout)", "tar", "-xzf", str(tarball), "-C", str(home), cwd=home)
        assert proc.returncode == 0 and (tree / "Makefile").is_file(), proc.stderr
        assert tree.stat().st_uid == uid and (tree / "student" / "tiled.cu").stat().st_uid == uid

        # set-up without root: no apt, no sudo that works; the plan of the user prefix, nothing installed
        proc = student.make("setup", "PLAN=1")
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0, out[-3000:]
        assert "no system package is installed; what GEMM Lab needs goes into a user prefix instead" in out, out
        assert f"setup: user prefix: {home}/.local/share/gemmlab" in out, out
        assert "plan only (GEMMLAB_SETUP_PLAN): nothing installed." in out, out
        assert not re.search(r"setup: missing: (?!\(optional\))", out), out  # the machine has all the rest
        assert not (home / ".local").exists()

        # the first build: the grader and the stubs
        proc = student.make(step="make (the first build)")
        assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
        assert "stage files: every one compiles and links" in proc.stdout, proc.stdout[-3000:]
        first_build = student.times[-1][1]

        # the student writes the tiled kernel from the stub's comments, and builds again
        tiled = tree / "student" / "tiled.cu"
        written = staff_class.splice("tiled", "tiled_textbook")
        tiled.write_text(written)
        os.chown(tiled, uid, gid)
        proc = student.make(step="make (after writing student/tiled.cu)")
        assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
        assert "student/tiled.cu" in proc.stdout, proc.stdout  # compiled again; the rest up to date

        # the handout's own tests, all of them, pass for this student in this course
        proc = student.make("test")
        last = (proc.stdout.strip().splitlines() or [""])[-1]
        assert proc.returncode == 0, (proc.stdout + proc.stderr)[-6000:]
        counts = re.fullmatch(r"(\d+) passed, (\d+) failed, (\d+) skipped", last)
        assert counts and int(counts.group(1)) > 100 and counts.group(2) == "0", last
        print("make test's pytest, where its time went:", *re.findall(r"(?m)^(?:critical path|worker-seconds|"
                                                                      r"CPU-seconds): .*$", proc.stdout), sep="\n  ")

        # no GPU: make check says so, with the course's own line to run it on a GPU node
        proc = student.make("check")
        assert proc.returncode != 0, proc.stdout + proc.stderr
        assert f"      {SRUN} make check\n" in proc.stderr, proc.stderr
        proc = student.make("-s", "hint")
        assert proc.stdout == SRUN + "\n", proc.stdout + proc.stderr

        # no GPU: make report (typed in report/, beside report.md) writes a draft from the build, never
        # report/report.pdf
        proc = student.make("report", step="make report (in report/)", cwd=tree / "report")
        draft = tree / "report" / "build" / "draft" / "report-draft.pdf"
        assert proc.returncode != 0 and f"wrote the draft {draft}: " in proc.stdout, proc.stdout + proc.stderr
        assert f"      {SRUN} make report\n" in proc.stderr, proc.stderr
        assert draft.read_bytes()[:4] == b"%PDF" and draft.stat().st_uid == uid
        assert not (tree / "report" / "report.pdf").exists()
        text = " ".join(subprocess.run(["pdftotext", "-layout", str(draft), "-"], capture_output=True,
                                       text=True).stdout.split())
        assert "DRAFT" in text and "not measured yet" in text, text[:3000]
        assert f"{SRUN} make report" in text, text[:3000]
        assert "What the build knows of student/tiled.cu" in text and "tiled_kernel<float, 16>" in text, text[:6000]

        # make submit: stored in the course's drop box, with the tiled stage as written (no report yet)
        proc = student.make("submit")
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0, out
        assert "(no report/report.pdf)" in proc.stdout, proc.stdout
        stored = re.search(rf"submit: stored attempt #1 of {STUDENT}, \S+: it is handed in \((\S+),", proc.stdout)
        assert stored, out
        attempt = Path(stored.group(1))
        # in the student's own folder, <login>+<token>, whose name only the student's home keeps
        assert attempt.parent.parent == work / "dropbox" and re.fullmatch(rf"{STUDENT}\+[0-9a-f]{{32}}",
                                                                          attempt.parent.name), attempt
        kept = list((home / ".local" / "state" / "gemmlab").glob("handin-*"))
        assert len(kept) == 1 and kept[0].read_text().strip() == attempt.parent.name.split("+")[1], kept
        assert kept[0].stat().st_uid == uid and kept[0].stat().st_mode & 0o077 == 0, oct(kept[0].stat().st_mode)
        manifest = json.loads((attempt / "manifest.json").read_text())
        assert "tiled.cu" in manifest["files"] and "report.pdf" not in manifest["files"], manifest
        assert (attempt / "files" / "tiled.cu").read_text() == written
        assert attempt.stat().st_uid == uid

        rows = [("make handout (the instructor, as root)", handout_secs), *student.times]
        print(f"\nThe student's path ({'an empty' if cold else 'a warm'} ccache for the first build: "
              f"{STUDENT_CCACHE}):")
        for step, secs in rows:
            print(f"  {secs:7.1f} s  {step}")
        print(f"  {sum(s for _, s in rows):7.1f} s  in all; the first build {first_build:.0f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)
