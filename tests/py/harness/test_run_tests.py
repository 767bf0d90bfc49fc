"""tests/run_tests.py: the doctest binaries run beside pytest, and the GPU unit tests hold the GPU lock
until they end, which pytest's first GPU test waits for (conftest.py)."""
import fcntl
import os
import sys
import threading
import time

import conftest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "tests"))
import run_tests  # noqa: E402

SUMMARY = "[doctest] test cases: 3 | 2 passed | 0 failed | 1 skipped\n"


def fake_doctest(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


def shared_lock_free(path):
    with open(path, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False


def test_the_gpu_unit_tests_hold_the_lock_until_they_end(tmp_path, monkeypatch):
    monkeypatch.setattr(run_tests, "GPU_LOCK", tmp_path / "gpu.lock")
    stamp = tmp_path / "may-end"
    binary = fake_doctest(tmp_path, "gpu_tests", f"while [ ! -e {stamp} ]; do sleep 0.05; done\nprintf '{SUMMARY}'")
    t = run_tests.Doctest("GPU unit tests", binary, lock=run_tests.gpu_lock())
    time.sleep(0.3)
    assert not shared_lock_free(run_tests.GPU_LOCK), "the GPU's lock is free while the GPU unit tests run"
    stamp.touch()
    assert t.result() == (2, 0, 1)
    assert shared_lock_free(run_tests.GPU_LOCK), "the GPU's lock is still held after the GPU unit tests ended"


def test_a_doctest_binary_that_crashes_or_says_nothing_counts_as_a_failure(tmp_path):
    crashed = run_tests.Doctest("host unit tests", fake_doctest(tmp_path, "a", f"printf '{SUMMARY}'; exit 3"))
    silent = run_tests.Doctest("host unit tests", fake_doctest(tmp_path, "b", "exit 0"))
    assert crashed.result() == (2, 1, 1)
    assert silent.result() == (0, 1, 0)


def test_the_first_gpu_test_waits_for_the_gpu_unit_tests(tmp_path, monkeypatch):
    lock = tmp_path / "gpu.lock"
    monkeypatch.setenv("GEMMLAB_GPU_LOCK", str(lock))
    monkeypatch.setattr(conftest, "_gpu_free", False)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    threading.Timer(1.0, os.close, (fd,)).start()
    t0 = time.monotonic()
    conftest._wait_for_the_gpu_unit_tests()
    assert time.monotonic() - t0 >= 0.9
    t0 = time.monotonic()
    conftest._wait_for_the_gpu_unit_tests()  # once free, the later GPU tests do not look again
    assert time.monotonic() - t0 < 0.1
