"""Failures of the machine are never a student's zero: a compiler or make stopped by a signal, a full
disk, the out-of-memory killer at work or a missing tool make a grading `error` (retried by the next
sweep, blank in every export) with the cause named — not "does not compile" (a stage's zero) nor
`build_failed` (the hand-in's zero). Who failed is decided by what a stage file cannot bring about,
never by what the compiler printed: words a stage file makes the compiler print (an #error or a
static_assert that says "No space left on device") stay theirs (test_cluster_confined_build.py: the
same with the real compiler, and a compile that runs into its limits). Stand-ins on PATH
(cluster_helpers.stand_in_tool) play the failing nvcc and make; compile_stage.py is also driven with
stand-in compilers directly. No GPU needed."""
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.cluster_helpers import ROOT, config, stand_in_tool, wait_for, write_config

import compile_stage  # noqa: E402  (grader/scripts, on sys.path through cluster/)
import confine  # noqa: E402
import grading  # noqa: E402
import toolchain  # noqa: E402

DUE = dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc)
REAL_NVCC = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
needs_nvcc = pytest.mark.skipif(not os.path.exists(REAL_NVCC), reason="needs nvcc (the CUDA toolkit)")
ENOSPC = "<built-in>: fatal error: when writing output to /tmp/tmpxft_1-5_tiled.cpp4.ii: No space left on device"
LIMITS = confine.Limits(cpu_seconds=20, wall_seconds=60, memory_mb=2048, file_mb=64)
# What each failure of the machine looks like to compile_stage.py: the stand-in compiler's shell lines
# (it fails every compile, the one-line kernel a confined compile is set against too: a broken
# machine), and the words of the cause it must name. "$VMSTAT" is the kernel's count of the
# out-of-memory killer's work, as the test gives it (compile_stage.VMSTAT).
MACHINE = {
    "killed": ("kill -KILL $$", "stopped by signal 9 (SIGKILL)"),
    "out of memory": ("echo oom_kill 1 > \"$VMSTAT\"; echo 'g++: fatal error: Killed signal terminated program "
                      "cc1plus' >&2; exit 1", "the out-of-memory killer ended 1 process"),
    "a tool missing": ("echo 'sh: 1: cicc: not found' >&2; exit 1",
                       "cannot compile a one-line kernel here either (exit 1: sh: 1: cicc: not found)"),
    "cicc killed": ("echo \"nvcc error   : 'cicc' died due to signal 9 (Kill signal)\" >&2; exit 255",
                    "cannot compile a one-line kernel here either (exit 255"),
    "disk full": (f"echo '{ENOSPC}' >&2; exit 1", "the disk is full"),
}


def compiler(tmp_path, work) -> str:
    return str(stand_in_tool(tmp_path / "bin", "compiler", "/bin/false", "--never", work))


def stage_file(tmp_path, text="int x;\n") -> Path:
    src = tmp_path / "student" / "tiled.cu"
    src.parent.mkdir(exist_ok=True)
    src.write_text(text)
    return src


def run_compile_stage(tmp_path, command, text="int x;\n"):
    src = stage_file(tmp_path, text)
    obj = tmp_path / "build" / "tiled.o"
    obj.parent.mkdir(exist_ok=True)
    r = subprocess.run([sys.executable, ROOT / "grader/scripts/compile_stage.py", "--source", src, "--object", obj,
                        "--", *command], capture_output=True, text=True, timeout=120)
    return r, obj


@pytest.fixture
def vmstat(tmp_path, monkeypatch):
    """The kernel's count of out-of-memory kills as this test's compiles see it (compile_stage.VMSTAT):
    a file beside the objects, where a confined stand-in compiler may write."""
    path = tmp_path / "build" / "vmstat"
    path.parent.mkdir(exist_ok=True)
    path.write_text("oom_kill 0\n")
    monkeypatch.setattr(compile_stage, "VMSTAT", str(path))
    monkeypatch.setenv("VMSTAT", str(path))
    return path


@pytest.mark.parametrize("what", sorted(MACHINE))
def test_a_compile_the_machine_stopped_is_not_the_students(tmp_path, monkeypatch, vmstat, what):
    """A grading's compile (confined, limited), the machine failing it in each of its ways."""
    work, cause = MACHINE[what]
    if what == "disk full":  # every file system counts as full: less free than the margin
        monkeypatch.setattr(compile_stage, "DISK_MARGIN_MB", 1 << 40)
    src, obj = stage_file(tmp_path), tmp_path / "build" / "tiled.o"
    with pytest.raises(compile_stage.MachineError) as e:
        compile_stage.compile_stage([compiler(tmp_path, work), "-c", str(src), "-o", str(obj)], src, obj,
                                    confine=[str(tmp_path)], limits=LIMITS)
    assert cause in str(e.value), e.value
    assert not Path(f"{obj}.failed").exists(), "recorded as the student's: does not compile"
    record = json.loads(Path(f"{obj}.error").read_text())
    assert cause in record["cause"], record


def test_a_compile_the_machine_stopped_stops_the_build_with_the_cause(tmp_path):
    r, obj = run_compile_stage(tmp_path, [compiler(tmp_path, MACHINE["killed"][0]), "-c"])
    assert r.returncode == 1, r.stdout + r.stderr  # the build stops: nothing is judged of the file
    assert not Path(f"{obj}.failed").exists()
    assert "not because of the file" in r.stderr and "stopped by signal 9" in r.stderr, r.stderr


def test_a_missing_compiler_is_not_the_students(tmp_path):
    r, obj = run_compile_stage(tmp_path, [str(tmp_path / "no-such-nvcc"), "-c"])
    assert r.returncode == 1 and not Path(f"{obj}.failed").exists()
    assert "could not be started" in json.loads(Path(f"{obj}.error").read_text())["cause"]


@pytest.mark.parametrize("said", [
    "{src}:3:2: error: #error No space left on device\n    3 | #error No space left on device\n",
    '{src}:5:1: error: static assertion failed: No space left on device\n',   # "No space " "left on device"
    "{src}:7:10: fatal error: /elsewhere/x.h: Permission denied\n",          # a read the sandbox refused
    "/usr/include/stdio.h:1:1: error: expected ';' before No space left on device\n",  # STR(No   space ...)
    # a string with newlines in it: lines of their own, no file named, nothing of it in the file as written
    "{src}(2): error: static assertion failed with \"\nnvcc error   : 'cicc' died due to signal 9 (Kill signal)\n"
    "g++: fatal error: Killed signal terminated program cc1plus\nsh: 1: cicc: not found\n\"\n",
])
def test_what_a_stage_file_makes_the_compiler_say_stays_the_students(tmp_path, vmstat, said):
    source = ('#error No space left on device\nstatic_assert(0, "No space " "left on device");\n'
              '#define STR(x) #x\nconst char* s = STR(No   space left   on device);\n')
    src = stage_file(tmp_path, source)
    text = said.format(src=src)
    cause = compile_stage.machine_cause(compile_stage.Run(1, text), [tmp_path])
    assert cause is None, cause
    work = f"cat >&2 <<'EOF'\n{text}EOF\nexit 1"
    r, obj = run_compile_stage(tmp_path, [compiler(tmp_path, work), "-c"], source)
    assert r.returncode == 0 and Path(f"{obj}.failed").is_file() and not Path(f"{obj}.error").exists(), r.stderr


class ClockFromTheChildsStart:
    """compile_stage's clock, standing still until the compile has started its child (written its pid
    to `started`): a loaded machine slow to start the stand-in compiler cannot run out its wall-time
    limit before the child it is to stop exists."""
    sleep = staticmethod(time.sleep)
    time = staticmethod(time.time)  # (after sleep: from here `time` in this class body is this one)

    def __init__(self, started: Path):
        self.started, self.since = started, None

    def monotonic(self) -> float:
        if self.since is None:
            if not (self.started.exists() and self.started.read_text().strip()):
                return 0.0
            self.since = time.monotonic()
        return time.monotonic() - self.since


def gone(pid: str) -> bool:
    """The process has exited (reaped, or a zombie)."""
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().split(") ")[1].startswith("Z")
    except (FileNotFoundError, ProcessLookupError):
        return True


def test_a_compile_past_its_wall_time_is_the_students_and_leaves_nothing_running(tmp_path, monkeypatch):
    """A compile that never ends is stopped at its wall-time limit, all of its processes with it (its
    process group), and the file does not compile, the limit named: the student's, not a hang."""
    pid_file = tmp_path / "build" / "sleeper.pid"
    work = f"sleep 3600 & echo $! > {pid_file}; wait"
    src, obj = stage_file(tmp_path), tmp_path / "build" / "tiled.o"
    obj.parent.mkdir(exist_ok=True)
    monkeypatch.setattr(compile_stage, "time", ClockFromTheChildsStart(pid_file))
    verdict = compile_stage.compile_stage([compiler(tmp_path, work), "-c"], src, obj, confine=[str(tmp_path)],
                                          limits=confine.Limits(cpu_seconds=20, wall_seconds=2, memory_mb=2048, file_mb=64))
    assert verdict and "ran past its limit of 2 s" in verdict["first_error"], verdict
    assert json.loads(Path(f"{obj}.failed").read_text())["first_error"] == verdict["first_error"]
    assert not Path(f"{obj}.error").exists()
    # killed with its group (SIGKILL is delivered when the child next runs): it exits; left running, an
    # hour's sleep would outlast the wait
    sleeper = pid_file.read_text().strip()
    wait_for(lambda: gone(sleeper), 60, f"the compile's child {sleeper} to exit", poll=0.05)


def course(tmp_path):
    """A course whose trusted build cache is the test's own (grade() puts an empty one there) and whose
    scratch is apart from the stand-in toolkit (a confined compile may read the toolkit, never scratch)."""
    path = write_config(tmp_path, "local", DUE, scratch=str(tmp_path / "scratch"))
    path.write_text(re.sub(r'(?m)^trusted_cache = .*$', f'trusted_cache = "{tmp_path / "trusted"}"', path.read_text()))
    return config.load(path)


def hand_in(tmp_path) -> dict[str, bytes]:
    """What the drop box's door hands a grading: each stage file's checked bytes."""
    return {name: (ROOT / "student" / name).read_bytes() for name in ("naive.cu", "tiled.cu")}


def grade(cfg, tmp_path, monkeypatch, bin_dir=None) -> dict:
    """grade_into with a trusted build in place (its files empty: the build never reaches them), PATH
    starting with the stand-ins in bin_dir."""
    if bin_dir is not None:
        monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    tools = toolchain.Toolchain(cfg)
    trusted = cfg.trusted_cache_dir / tools.name
    v = toolchain.make_vars(cfg.grader_dir, trusted, Path("/nonexistent-submission"), tools.arch)
    for f in [*v["GRADER_TRUSTED"].split(), v["REF_LIB"], trusted / "COMPLETE"]:
        Path(f).parent.mkdir(parents=True, exist_ok=True)
        Path(f).touch()
    out = tmp_path / "out"
    out.mkdir()
    return grading.grade_into(cfg, hand_in(tmp_path), out, {"student": "s01"}, say=lambda *_: None)


@needs_nvcc
@pytest.mark.parametrize("what", ["killed", "a tool missing"])
def test_a_grading_whose_nvcc_the_machine_stopped_is_an_error(tmp_path, monkeypatch, what):
    work, cause = MACHINE[what]
    bin_dir = tmp_path / "cuda" / "bin"  # the Makefile's CUDA_HOME: where nvcc is found on PATH
    stand_in_tool(bin_dir, "nvcc", REAL_NVCC, "--version", work)
    monkeypatch.setenv("CUDA_HOME", str(bin_dir.parent))
    outcome = grade(course(tmp_path), tmp_path, monkeypatch, bin_dir)
    assert outcome["status"] == "error", outcome  # retried by the next sweep, blank in every export
    assert "not because of the hand-in" in outcome["message"] and cause in outcome["message"], outcome
    assert "error" in grading.SWEEP_RETRIES


@pytest.mark.parametrize("what, work, cause", [
    ("killed", "kill -KILL $$", "make was stopped by signal 9"),
    ("disk full", "echo 'make: write error: stdout: No space left on device' >&2; exit 2", "the disk is full"),
    ("a tool missing", "echo 'make: nvcc: No such file or directory'; echo 'sh: 1: nvcc: not found'; exit 127",
     "make exited 127"),
])
def test_a_grading_whose_make_the_machine_stopped_is_an_error(tmp_path, monkeypatch, what, work, cause):
    if what == "disk full":  # the build directory's file system counts as full: less free than the margin
        monkeypatch.setattr(compile_stage, "DISK_MARGIN_MB", 1 << 40)
    stand_in_tool(tmp_path / "bin", "make", shutil.which("make"), "print-cluster-vars", work)
    outcome = grade(course(tmp_path), tmp_path, monkeypatch, tmp_path / "bin")
    assert outcome["status"] == "error" and cause in outcome["message"], outcome


def test_what_make_prints_of_the_disk_is_no_machine_error_when_the_disk_has_room(tmp_path, monkeypatch):
    """make's words are no fact: a stage file can make a tool print them. With room on the disk, a make
    that fails saying "No space left on device" is the hand-in's build failure."""
    stand_in_tool(tmp_path / "bin", "make", shutil.which("make"), "print-cluster-vars",
                  "echo 'make: write error: stdout: No space left on device' >&2; exit 2")
    outcome = grade(course(tmp_path), tmp_path, monkeypatch, tmp_path / "bin")
    assert outcome["status"] == "build_failed", outcome


def test_a_grading_without_make_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setattr(toolchain, "MAKE", [str(tmp_path / "no-make"), *toolchain.MAKE[1:]])
    out = tmp_path / "out"
    out.mkdir()
    outcome = grading.grade_into(course(tmp_path), hand_in(tmp_path), out, {"student": "s01"}, say=lambda *_: None)
    assert outcome["status"] == "error" and "could not be started" in outcome["message"], outcome


def test_a_grading_whose_trusted_build_vanished_is_an_error(tmp_path, monkeypatch):
    """A newer trusted build pruned the one this grading links (toolchain._prune_trusted)."""
    cfg = course(tmp_path)
    stand_in_tool(tmp_path / "bin", "make", shutil.which("make"), "print-cluster-vars",
                  f"rm -rf {cfg.trusted_cache_dir}/trusted-*/grader; echo 'cp: cannot stat ...'; exit 2")
    outcome = grade(cfg, tmp_path, monkeypatch, tmp_path / "bin")
    assert outcome["status"] == "error" and "lost" in outcome["message"], outcome


def test_a_build_that_fails_for_the_hand_in_is_still_build_failed(tmp_path, monkeypatch):
    stand_in_tool(tmp_path / "bin", "make", shutil.which("make"), "print-cluster-vars",
                  "echo 'ld: undefined reference to gemm_tiled'; exit 2")
    outcome = grade(course(tmp_path), tmp_path, monkeypatch, tmp_path / "bin")
    assert outcome["status"] == "build_failed", outcome


def test_the_trusted_build_is_readable_and_runnable_by_everyone_whatever_the_builders_umask(tmp_path, monkeypatch):
    """A TA builds the trusted grader with the staff's umask (007); a student's feedback grading then runs
    its programs (gemmlab-config) and reads its libraries: everyone may, nobody may write them."""
    cfg = course(tmp_path)
    tools = toolchain.Toolchain(cfg, say=lambda *_: None)

    def built_by_staff(cmd, cwd, log, env=None):  # what make leaves under umask 007: nothing for others
        build = Path(next(a for a in cmd if a.startswith("BUILD=")).split("=", 1)[1])
        for target in (a for a in cmd if a.startswith(str(build))):
            Path(target).parent.mkdir(parents=True, exist_ok=True, mode=0o770)
            Path(target).write_bytes(b"")
            os.chmod(target, 0o770 if "config" in Path(target).name else 0o660)
        return 0
    monkeypatch.setattr(toolchain, "run_logged", built_by_staff)
    trusted = tools.trusted(tmp_path / "trusted.log")
    for p in [trusted, *trusted.rglob("*")]:
        mode = p.stat().st_mode & 0o777
        assert mode & 0o444 == 0o444 and not mode & 0o222, (p, oct(mode))
        if p.is_dir() or "config" in p.name:
            assert mode & 0o111 == 0o111, (p, oct(mode))
