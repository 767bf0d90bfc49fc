"""Whether the GPU tests run on this machine, their marker, and the lock of tests/run_tests.py's GPU
unit tests that the first of them waits for (conftest.py's hooks use these)."""
import fcntl
import os
import shutil
import subprocess
import time

import pytest


def _has_gpu():
    if not shutil.which("nvidia-smi"):
        return False
    return subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0


# GEMMLAB_TESTS_NO_GPU=1 runs the suite as on a machine without a GPU (the handout check does, inside
# the handout, where the suite's own GPU tests already grade).
NO_GPU_REASON = ("GPU tests turned off (GEMMLAB_TESTS_NO_GPU)" if os.environ.get("GEMMLAB_TESTS_NO_GPU")
                 else "needs an NVIDIA GPU (none on this machine)")
HAS_GPU = _has_gpu() and not os.environ.get("GEMMLAB_TESTS_NO_GPU")
# The marker of tests that need a GPU: skipped, with the reason shown, on a machine without one, and
# run one after the other in one pytest-xdist worker (several of them time kernels), beside the others.
gpu = pytest.mark.gpu

_gpu_free = False


def wait_for_the_gpu_unit_tests():
    """tests/run_tests.py runs the GPU unit tests beside pytest, holding GEMMLAB_GPU_LOCK until they
    end: the first GPU test waits for that (the background builds go on meanwhile), so that no two suites
    time kernels on the GPU at once. Without the variable (pytest run by hand) there is nothing to wait for."""
    global _gpu_free
    path = os.environ.get("GEMMLAB_GPU_LOCK")
    if _gpu_free or not path:
        return
    t0 = time.monotonic()
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_SH)
    _gpu_free = True
    waited = time.monotonic() - t0
    if waited >= 1:
        print(f"waited {waited:.0f} s for the GPU unit tests to end")
