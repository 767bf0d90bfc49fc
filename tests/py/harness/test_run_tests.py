"""tests/run_tests.py: the doctest binaries run beside pytest, and the GPU unit tests hold the GPU lock
until they end, which pytest's first GPU test waits for (support/gpu.py)."""
import fcntl
import os
import sys
import threading
import time

import support.gpu
from support.paths import ROOT

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
    started, stamp = tmp_path / "running", tmp_path / "may-end"
    binary = fake_doctest(tmp_path, "gpu_tests", f": > {started}\nwhile [ ! -e {stamp} ]; do sleep 0.05; done\nprintf '{SUMMARY}'")
    t = run_tests.Doctest("GPU unit tests", binary, lock=run_tests.gpu_lock())
    give_up = time.monotonic() + 60  # (only bounds a hang)
    while not started.exists() and time.monotonic() < give_up:
        time.sleep(0.01)
    assert started.exists(), "the fake GPU unit tests never ran"
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
    monkeypatch.setattr(support.gpu, "_gpu_free", False)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    released = threading.Event()

    def release():
        released.set()
        os.close(fd)
    threading.Timer(0.5, release).start()
    support.gpu.wait_for_the_gpu_unit_tests()
    assert released.is_set(), "the first GPU test went on while the GPU unit tests held the lock"
    # once free, the later GPU tests do not look again: they go on while the lock is held once more
    again = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(again, fcntl.LOCK_EX)
    try:
        later = threading.Thread(target=support.gpu.wait_for_the_gpu_unit_tests, daemon=True)
        later.start()
        later.join(60)  # (only bounds a hang)
        assert not later.is_alive(), "a later GPU test waited for the lock again"
    finally:
        os.close(again)
