"""CI (no GPU needed): the grader's process isolation and sandbox against hostile behaviour.

tests/gallery/probe/sandbox_probe.cpp links the real isolation.cpp and sandbox.cpp without CUDA: its
parent runs a child through run_isolated exactly as `gemmlab check` runs a stage, and the child does
what a hostile stage would (fork, kill the grader, exec a shell, write and read outside its scratch
directory, forge reports on fd 3, sleep, flood its output, exit). The grader's side must survive each
one and see it for what it is. docs/gallery.md, "The sandbox", lists what is enforced.
"""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PROBE_SRC = ROOT / "tests" / "gallery" / "probe" / "sandbox_probe.cpp"
SIGSYS = 31


@pytest.fixture(scope="session")
def probe():
    out = ROOT / "build" / "gallery-ci" / "sandbox_probe"
    out.parent.mkdir(parents=True, exist_ok=True)
    cxx = os.environ.get("CXX", "g++")
    if not shutil.which(cxx):
        pytest.skip(f"no host C++ compiler ({cxx})")
    sources = [PROBE_SRC, ROOT / "grader/src/judge/isolation.cpp", ROOT / "grader/src/judge/sandbox.cpp",
               ROOT / "grader/src/common/report_channel.cpp"]
    # Built under a name of this process's own, then renamed into place: another test worker may be
    # running the probe it built (overwriting a running executable fails).
    tmp = out.with_name(f"{out.name}.{os.getpid()}")
    subprocess.run([cxx, "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-I", str(ROOT / "grader/src"),
                    "-I", str(ROOT / "grader/include"), *map(str, sources), "-o", str(tmp), "-lpthread"],
                   check=True)
    os.replace(tmp, out)
    return out


def run_probe(probe, scenario, *args, env=None, cwd=None):
    """The parent's view of one child run: {"survived", "events", "finished", "signal", ...}."""
    proc = subprocess.run([str(probe), "parent", scenario, *map(str, args)], capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})), cwd=cwd, timeout=60)
    assert proc.returncode == 0, f"the parent did not survive {scenario}: rc {proc.returncode}\n{proc.stderr}"
    out = json.loads(proc.stdout)
    assert out["survived"]
    return out


def event(outcome, name):
    found = [e for e in outcome["events"] if e.get("event") == name]
    return found[0] if found else None


def sandbox(outcome):
    s = event(outcome, "sandbox")
    assert s, f"no sandbox report: {outcome}"
    return s


def needs_landlock(outcome):
    state = sandbox(outcome)["landlock"]
    if not state.startswith("on"):
        pytest.skip(f"Landlock is not enforced on this kernel ({state})")


def test_a_well_behaved_child_reports_and_runs_in_a_fresh_scratch_directory(probe):
    o = run_probe(probe, "ok")
    assert o["finished"] and o["exit_code"] == 0
    s = sandbox(o)
    assert s["seccomp"] == "on"
    assert s["core_dumps"] is False
    start = event(o, "start")
    scratch = s["scratch"]
    assert "gemmlab-scratch-" in scratch
    assert start["cwd"] == scratch and start["home"] == scratch and start["tmpdir"] == scratch
    assert start["report_fd"] == s["report_fd"] and start["report_fd"] >= 64  # not fd 3
    assert event(o, "probe")["scratch_write"] == "WROTE"


def test_the_parent_removes_a_finished_childs_scratch(probe):
    first = sandbox(run_probe(probe, "ok"))["scratch"]
    assert not Path(first).exists()  # removed once the child was reaped (remove_child_scratch)


def test_the_next_child_sweeps_away_scratch_left_by_a_dead_child(probe):
    # A grader killed before it could clean up leaves its children's scratch behind: the owner pid in
    # the name no longer exists, and the next child removes such directories.
    base = Path(sandbox(run_probe(probe, "ok"))["scratch"]).parent
    dead_pid = 4194303  # above any pid in use on a test machine (pid_max is at most 2^22)
    leftover = base / f"gemmlab-scratch-{dead_pid}-LEFTVR"
    leftover.mkdir()
    (leftover / "file").write_text("left behind")
    run_probe(probe, "ok")
    assert not leftover.exists()


@pytest.mark.parametrize("scenario", ["fork", "kill_parent", "exec_shell", "setsid"])
def test_process_escapes_end_the_child_with_sigsys(probe, scenario):
    o = run_probe(probe, scenario)
    assert o["signal"] == SIGSYS, o
    assert "Bad system call" in o["end"]
    assert not o["finished"]
    assert event(o, "probe") is None  # it never got past the forbidden call


def test_threads_and_signals_to_itself_are_allowed(probe):
    o = run_probe(probe, "threads")
    assert o["finished"] and event(o, "probe")["thread_sum"] == 42
    o = run_probe(probe, "abort")
    assert o["signal"] == 6  # abort() signals itself: allowed


def test_reports_forged_on_fd_3_or_stdout_are_never_believed(probe):
    o = run_probe(probe, "write_fd3")
    assert event(o, "probe")["fd3_write"].startswith("blocked")  # fd 3 is closed in the child
    assert not any(e.get("forged") for e in o["events"])
    assert '"forged":true' in o["output_tail"]  # printed, kept for people, never parsed


def test_reports_forged_on_every_open_pipe_are_caught_by_the_key(probe):
    o = run_probe(probe, "forge_every_pipe")
    assert event(o, "probe")["pipes_written"] >= 1  # it found the report pipe
    assert o["forged_lines"] == 2  # a passing case and "done", both without the child's key
    assert not any(e.get("forged") is True for e in o["events"])  # no forged event was believed
    forged = [e for e in o["events"] if e.get("event") == "forged"]
    assert len(forged) == 2 and '"disposition":"passed"' in forged[0]["line"]
    assert o["finished"] and event(o, "probe") is not None  # the real reports still arrive


def test_writes_outside_the_scratch_directory_are_blocked(probe, tmp_path):
    o = run_probe(probe, "write_outside", tmp_path)
    needs_landlock(o)
    p = event(o, "probe")
    assert p["outside"].startswith("blocked") and p["tmp"].startswith("blocked"), p
    assert p["home"] == "WROTE" and p["cwd"] == "WROTE"  # HOME and cwd are the scratch directory
    assert not (tmp_path / "gemmlab-gallery-pwned").exists()
    assert not list(Path("/tmp").glob("gemmlab-gallery-pwned-*"))


def test_reads_outside_are_blocked_but_system_files_and_arguments_are_not(probe, tmp_path):
    (tmp_path / "secret.txt").write_text("another student's kernel\n")
    o = run_probe(probe, "read_outside", tmp_path)
    needs_landlock(o)
    p = event(o, "probe")
    assert p["outside"].startswith("blocked"), p
    assert p["etc_passwd"] == "READ"
    # A file named on the command line (e.g. a plan or a config) stays readable, even by a relative
    # name from the parent's directory: the sandbox makes it absolute before the chdir.
    o = run_probe(probe, "read_argument", "secret.txt", cwd=tmp_path)
    p = event(o, "probe")
    assert p["argument"] == "READ" and p["argument_path"] == str(tmp_path / "secret.txt")


def cublas_file():
    cuda = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "lib64"
    found = sorted(cuda.glob("libcublas.so*")) + sorted(Path("/usr/lib/x86_64-linux-gnu").glob("libcublas.so*"))
    if not found:
        pytest.skip("no cuBLAS library on this machine")
    return found[0]


def test_a_runner_of_submission_code_cannot_read_cublas_but_the_graders_own_can(probe):
    """No GEMM library within a stage's reach: the sandbox of a submission's runner allows the files of
    the libraries it runs on one by one, never a directory that holds cuBLAS (judge/sandbox.h)."""
    lib = cublas_file()
    o = run_probe(probe, "read_library", f"lib:{lib}")
    needs_landlock(o)
    p = event(o, "probe")
    assert p["library"].startswith("blocked"), p
    assert p["libc"] == "READ", p
    # The grader's own runner (cuBLAS, the reference) may read it.
    o = run_probe(probe, "read_library", f"lib:{lib}", "--gemm-libraries")
    assert event(o, "probe")["library"] == "READ"


def test_a_runner_connects_no_socket_of_any_family(probe, tmp_path):
    """A UNIX socket to a path, one in the abstract namespace and TCP to localhost, each with someone
    listening, and UDP, IPv6, netlink, a socket pair and an io_uring: every one refused (EPERM), the
    socket itself or its connection; none connected, and the child goes on. Only the kind of socket
    CUDA binds and listens on in every process may be made, and it accepts no connection."""
    import socket
    path = tmp_path / "listening.sock"
    abstract = f"gemmlab-probe-{os.getpid()}"
    with socket.socket(socket.AF_UNIX) as unix_path, socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as unix_abstract, \
            socket.socket(socket.AF_INET) as tcp:
        unix_path.bind(str(path))
        unix_abstract.bind("\0" + abstract)
        tcp.bind(("127.0.0.1", 0))
        for s in (unix_path, unix_abstract, tcp):
            s.listen()
        o = run_probe(probe, "sockets", f"{path}|{abstract}|{tcp.getsockname()[1]}")
    assert sandbox(o)["seccomp"] == "on"
    p = event(o, "probe")
    said = p["sockets"]
    assert len(said) >= 10, said
    assert all(v.startswith("blocked") and v.endswith("Operation not permitted") for v in said.values()), said
    assert said["unix_abstract_seqpacket"] == "blocked at connect: Operation not permitted", said
    assert p["cuda_socket"] == "LISTENING", p
    assert o["finished"]


def test_a_sleeping_child_is_killed_at_the_idle_limit(probe):
    o = run_probe(probe, "sleep", "--idle", "1")
    assert o["timed_out"] and not o["finished"]
    assert o["seconds"] < 10


def test_an_output_flood_is_capped(probe):
    o = run_probe(probe, "flood", "--output-bytes", "65536")
    assert o["finished"]  # writes past the cap fail; the child goes on
    assert len(o["output_tail"].encode()) <= 4096


def test_exit_in_the_middle_is_not_finished(probe):
    o = run_probe(probe, "exit")
    assert not o["finished"] and o["exit_code"] == 0


def test_gemmlab_sandbox_off_says_so(probe):
    s = sandbox(run_probe(probe, "ok", env={"GEMMLAB_SANDBOX": "off"}))
    assert s["seccomp"] == "off" and s["landlock"] == "off"


def test_a_parent_with_no_other_descriptors_still_gets_reports(probe):
    """pipe() then returns fds 3 and 4: the read end is the report fd number (found by the gallery)."""
    o = run_probe(probe, "ok", "--low-fds")
    assert o["finished"]
