"""Shared fixtures of the script and integration tests (pytest).

GEMMLAB_GRADER is set by tests/run_tests.py to the grader binary `make test` built.
Tests that need a GPU are marked `gpu` and skipped, with the reason shown, without one.
"""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _has_gpu():
    if not shutil.which("nvidia-smi"):
        return False
    return subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0


HAS_GPU = _has_gpu()
gpu = pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU (none on this machine)")


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def grader():
    path = os.environ.get("GEMMLAB_GRADER")
    if not path:
        pytest.skip("GEMMLAB_GRADER is not set: run the tests with `make test`")
    return Path(path)
