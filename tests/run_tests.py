#!/usr/bin/env python3
"""Runs every GEMM Lab test suite and ends with one line: `N passed, N failed, N skipped`.

Suites: the host unit tests (doctest), the GPU unit tests (doctest; each test is skipped, and
counted, when there is no GPU), and the script and integration tests (pytest, under tests/py, on every
core at once; the GPU ones one at a time, in one of the workers). The two doctest binaries run beside
pytest, their output shown after it: the GPU unit tests hold the GPU lock (GPU_LOCK) while they run,
and pytest's GPU tests wait for it (tests/py/conftest.py), so that no two GPU suites share the GPU
while either times a kernel. One more test, counted in the last line: the machine's accounts and Slurm
and munge configuration (tests/machine_guard.py: /etc/passwd, /etc/group, /etc/slurm, ...) are byte
for byte what they were before the run.
Called by `make test`, which builds the binaries first.
"""
import argparse
import fcntl
import os
import re
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import machine_guard

ROOT = Path(__file__).resolve().parent.parent
DOCTEST_SUMMARY = re.compile(
    r"test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed\s*\|\s*(\d+) skipped")


# Held by the GPU unit tests while they run; each GPU test of pytest takes it before it starts.
GPU_LOCK = ROOT / "build" / "gpu-tests.lock"


class Doctest:
    """A doctest binary started in the background; result() waits and gives (passed, failed, skipped).
    lock: a file descriptor holding an exclusive lock, released as soon as the binary has exited."""

    def __init__(self, name, binary, lock=None):
        self.name, self.binary, self.lock = name, binary, lock
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen([binary, "--no-intro=true"], cwd=ROOT, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.out = ""
        self.waiter = threading.Thread(target=self._wait, daemon=True)
        self.waiter.start()

    def _wait(self):
        self.out = self.proc.communicate()[0]
        self.secs = time.monotonic() - self.t0
        if self.lock is not None:
            os.close(self.lock)  # the GPU is pytest's from here

    def result(self):
        self.waiter.join()
        print(f"== {self.name}: {self.binary} (beside pytest, {self.secs:.0f} s)", flush=True)
        print(self.out, end="", flush=True)
        match = DOCTEST_SUMMARY.search(self.out)
        if not match:
            print(f"{self.name}: no doctest summary (exit code {self.proc.returncode}): counted as one failure")
            return 0, 1, 0
        _, passed, failed, skipped = map(int, match.groups())
        if self.proc.returncode != 0 and failed == 0:
            failed = 1  # it crashed after its last test
        return passed, failed, skipped


def gpu_lock():
    """GPU_LOCK, held exclusively: a file descriptor to close when the GPU is free again."""
    GPU_LOCK.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(GPU_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def has_xdist(python):
    return subprocess.run([python, "-c", "import xdist"], capture_output=True).returncode == 0


def run_pytest(python, env_extra, workers):
    """Runs tests/py spread over `workers` processes (pytest-xdist; the files that share a build
    directory stay together, and the `gpu` tests are one group that one worker runs one after the
    other, since several of them time kernels; see conftest.py). On a machine without a GPU each
    `gpu` test is skipped and counted. Returns (passed, failed, skipped)."""
    env = dict(os.environ, **env_extra)
    parallel = []
    if workers > 1 and has_xdist(python):
        parallel = ["-n", str(workers), "--dist", "loadgroup"]
    elif workers > 1:
        print("note: pytest-xdist is not installed (make setup installs it): the tests run one at a time")
    where = f", {workers} workers" if parallel else ""
    print(f"== script and integration tests: pytest tests/py{where}", flush=True)
    junit = ROOT / "build" / "pytest-junit.xml"
    junit.parent.mkdir(parents=True, exist_ok=True)
    junit.unlink(missing_ok=True)
    proc = subprocess.run([python, "-m", "pytest", "-q", "-rs", "--durations=25", *parallel, "tests/py",
                           f"--junitxml={junit}"], cwd=ROOT, env=env)
    return junit_counts(junit, proc.returncode)


def junit_counts(junit, returncode):
    """(passed, failed, skipped) of one pytest run from its JUnit XML report."""
    if not junit.exists():
        print(f"pytest wrote no report (exit code {returncode}): counted as one failure")
        return 0, 1, 0
    root = ET.parse(junit).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    tests = failed = skipped = 0
    for s in suites:
        tests += int(s.get("tests", 0))
        failed += int(s.get("failures", 0)) + int(s.get("errors", 0))
        skipped += int(s.get("skipped", 0))
    if returncode not in (0, 1, 5) and failed == 0:
        failed = 1  # interrupted, internal error or usage error
    return tests - failed - skipped, failed, skipped


def check_machine(before):
    """The guarded files of the machine, compared with `before`: one test, passed or failed."""
    changed = machine_guard.changes(before, machine_guard.snapshot())
    print(f"== the machine's accounts and Slurm configuration ({', '.join(machine_guard.GUARDED)}): "
          + ("unchanged" if not changed else "CHANGED by the tests (no test may write there):"), flush=True)
    for line in changed:
        print(f"  {line}")
    return (0, 1, 0) if changed else (1, 0, 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", required=True, help="host doctest binary")
    ap.add_argument("--gpu", required=True, help="GPU doctest binary")
    ap.add_argument("--grader", required=True, help="the grader binary, for integration tests")
    ap.add_argument("--python", default=sys.executable)
    # One worker more than cores: the arch matrix's worker compiles at a low priority
    # (tests/py/developer/test_arch_matrix.py), on the cores the other tests leave idle while they wait.
    ap.add_argument("--workers", type=int, default=(os.cpu_count() or 1) + 1,
                    help="pytest processes (default: one per core, plus one for the arch matrix)")
    args = ap.parse_args()

    totals = [0, 0, 0]
    machine = machine_guard.snapshot()
    host = Doctest("host unit tests", args.host)
    gpu = Doctest("GPU unit tests", args.gpu, lock=gpu_lock())
    # PYTHON: the tests' own make calls (builds of the gallery, of test submissions, the handout) take the
    # Python this make chose instead of searching again (the Makefile imports matplotlib to choose, a
    # quarter of a second each time)
    scripts = run_pytest(args.python, {"GEMMLAB_GRADER": str(Path(args.grader).resolve()), "PYTHON": args.python,
                                       "GEMMLAB_GPU_LOCK": str(GPU_LOCK)}, args.workers)
    for result in (host.result(), gpu.result(), scripts, check_machine(machine)):
        totals = [a + b for a, b in zip(totals, result)]
    passed, failed, skipped = totals
    if skipped:
        print(f"note: {skipped} test(s) skipped; see the reasons above (GPU tests skip without a GPU)")
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
