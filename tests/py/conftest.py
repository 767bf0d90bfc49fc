"""pytest's hooks and shared fixtures of the script and integration tests; what the tests import
lives in support/.

GEMMLAB_GRADER is set by tests/run_tests.py to the grader binary `make test` built.
Tests that need a GPU are marked `gpu` and skipped, with the reason shown, without one.
tests/run_tests.py spreads the tests over the cores (pytest-xdist, one group per file, see
SHARED_BUILDS); the `gpu` tests are one group: one worker runs them one after the other.
"""
import os
import resource
import time
from pathlib import Path

import pytest

from support.gpu import HAS_GPU, NO_GPU_REASON, wait_for_the_gpu_unit_tests
from support.paths import ROOT

try:
    from support import gpu_prebuild  # the instructor repository's GPU tests; the handout ships neither
except ImportError:
    gpu_prebuild = None

# `make test` passes the command typed (make test) to what it runs, for the no-GPU hints: the tests run
# the grader and make themselves, and each of those must name its own command.
os.environ.pop("GEMMLAB_COMMAND", None)
# Likewise the variables of the outer make (make PYTHON=... test passes them on in MAKEFLAGS): a test's
# own `make ...` runs as a student types it, with only the variables the test gives.
for var in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):
    os.environ.pop(var, None)

# Test files that write into the same build directory run in one pytest-xdist worker, one after the
# other; every other file is a group of its own (its module fixtures are set up once), and a test
# marked @pytest.mark.xdist_group("<name>") one of its own (a long test its file need not wait for).
SHARED_BUILDS = {
    "test_gallery.py": "build/gallery-ci",
    "test_gallery_sandbox.py": "build/gallery-ci",
    "test_broken_build.py": "gpu",  # builds the submissions test_broken_gpu.py runs
}


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs an NVIDIA GPU (skipped without one, run serially)")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config, items):
    no_gpu = pytest.mark.skip(reason=NO_GPU_REASON)
    for item in items:
        if not HAS_GPU and item.get_closest_marker("gpu"):
            item.add_marker(no_gpu)
        name = item.path.name
        own = item.get_closest_marker("xdist_group")  # a test that names its group runs apart from its file
        group = "gpu" if item.get_closest_marker("gpu") else own.args[0] if own else SHARED_BUILDS.get(name, name)
        item.add_marker(pytest.mark.xdist_group(group))


# The background builds of the GPU tests this run will take (support/gpu_prebuild.py), found once the
# selection (-k, -m, file arguments) is final.
_prebuilds = set()


def pytest_collection_finish(session):
    if HAS_GPU and gpu_prebuild:
        _prebuilds.update(gpu_prebuild.NEEDED_BY[item.path.name] for item in session.items
                          if item.get_closest_marker("gpu") and item.path.name in gpu_prebuild.NEEDED_BY)


def pytest_runtest_setup(item):
    # The first test of the `gpu` group starts the builds its later tests need, in the background.
    if _prebuilds and _in_the_gpu_group(item):
        gpu_prebuild.start(_prebuilds)
    if HAS_GPU and item.get_closest_marker("gpu"):
        wait_for_the_gpu_unit_tests()


# On a GPU machine the `gpu` group is the suite's long pole: one runner process, and so one CUDA
# context, for each stage run it checks or times, whose start is mostly the kernel's work on the CPU,
# and builds of what it grades. Every other test (the cluster's classes and Slurm, the handout check,
# the gallery's builds) yields the cores to it, at nice 10 (the priority goes back after each test
# where the account may raise it), and does not see the GPU (CUDA_VISIBLE_DEVICES=, for the test and
# all it starts): a grade there would share the GPU with the ones the GPU tests time.
def _in_the_gpu_group(item):
    return bool(item.get_closest_marker("gpu")) or SHARED_BUILDS.get(item.path.name) == "gpu"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """The test's setup (its module's fixtures too), call and teardown at nice 10 and without the GPU
    where the GPU tests run beside it."""
    if not HAS_GPU or _in_the_gpu_group(item):
        yield
        return
    before = os.getpriority(os.PRIO_PROCESS, 0)
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    os.setpriority(os.PRIO_PROCESS, 0, max(before, 10))
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    try:
        yield
    finally:
        if visible is None:
            os.environ.pop("CUDA_VISIBLE_DEVICES", None)
        else:
            os.environ["CUDA_VISIBLE_DEVICES"] = visible
        try:
            os.setpriority(os.PRIO_PROCESS, 0, before)
        except PermissionError:  # an account may not raise its priority again: the worker stays nice
            pass


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def grader():
    path = os.environ.get("GEMMLAB_GRADER")
    if not path:
        pytest.skip("GEMMLAB_GRADER is not set: run the tests with `make test`")
    return Path(path)


# ---- where the wall time goes: build/pytest-timeline.tsv ------------------------------------------
# Each test's worker, start (seconds after the session began) and duration, from the reports the
# controller receives (with pytest-xdist, one process per worker; without it, "main"). At the end the
# worker that finished last and its longest groups are printed: the critical path of a parallel run;
# then the seconds of every worker summed per file, the longest files first, and the CPU-seconds of
# each file (its worker's and the children it waited for; Slurm daemons and their jobs are not in it).
_timeline = []
_session_start = None


def pytest_sessionstart(session):
    global _session_start
    _session_start = time.time()


def _cpu_seconds():
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


_cpu_mark = [_cpu_seconds()]  # the worker's CPU at the end of its last test phase


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    # Runs in the worker: the CPU since the phase before is this phase's, sent with its report.
    outcome = yield
    now = _cpu_seconds()
    outcome.get_result().user_properties.append(("cpu_s", round(now - _cpu_mark[0], 2)))
    _cpu_mark[0] = now


def pytest_runtest_logreport(report):
    if _session_start is None or report.when not in ("setup", "call", "teardown"):
        return
    worker = getattr(report, "node", None)
    worker = getattr(worker, "gateway", None)
    worker = worker.id if worker is not None else "main"
    end = time.time() - _session_start
    cpu = dict(report.user_properties).get("cpu_s", 0.0)
    _timeline.append((worker, end - report.duration, report.duration, report.when, report.nodeid, cpu))


def pytest_sessionfinish(session):
    if not _timeline or hasattr(session.config, "workerinput"):
        return  # nothing ran, or this is a worker (the controller writes the file)
    path = ROOT / "build" / "pytest-timeline.tsv"
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = sorted(_timeline, key=lambda r: r[1])
    path.write_text("worker\tstart_s\tseconds\tphase\ttest\tcpu_s\n"
                    + "".join(f"{w}\t{s:.1f}\t{d:.1f}\t{p}\t{n}\t{c:.1f}\n" for w, s, d, p, n, c in rows))
    ends = {}
    for w, s, d, _, _, _ in rows:
        ends[w] = max(ends.get(w, 0.0), s + d)
    last = max(ends, key=ends.get)
    per_file = {}
    for w, _, d, _, n, _ in rows:
        if w == last:
            f = n.split("::")[0]
            per_file[f] = per_file.get(f, 0.0) + d
    top = sorted(per_file.items(), key=lambda kv: -kv[1])[:4]
    # Every worker's seconds summed per file: what a file costs, less sensitive than the critical path
    # to how the files fell on the workers and to other work on the machine.
    summed, cpu = {}, {}
    for _, _, d, _, n, c in rows:
        f = n.split("::")[0].rsplit("/", 1)[-1]
        summed[f] = summed.get(f, 0.0) + d
        cpu[f] = cpu.get(f, 0.0) + c
    longest = sorted(summed.items(), key=lambda kv: -kv[1])[:6]
    busiest = sorted(cpu.items(), key=lambda kv: -kv[1])[:6]
    session.config._gemmlab_timeline_note = (
        f"critical path: worker {last} ended at {ends[last]:.0f} s ("
        + ", ".join(f"{f.rsplit('/', 1)[-1]} {d:.0f} s" for f, d in top) + f"); every test's start: {path}\n"
        + f"worker-seconds: {sum(summed.values()):.0f} in all; "
        + ", ".join(f"{f} {d:.0f}" for f, d in longest) + "\n"
        + f"CPU-seconds: {sum(cpu.values()):.0f} in all; "
        + ", ".join(f"{f} {c:.0f}" for f, c in busiest))


def pytest_terminal_summary(terminalreporter, config):
    note = getattr(config, "_gemmlab_timeline_note", "")
    if note:
        terminalreporter.write_line(note)
