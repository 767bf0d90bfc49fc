"""Every architecture builds: `make arch-matrix` (grader/scripts/arch_matrix.py).

The CUDA 13 part compiles every .cu file of the kit for every architecture of ARCHS_CUDA13 (no GPU
needed; ccache makes a run on unchanged sources quick); a failure names the file, the architecture
and the first compiler error. The CUDA 12 part builds and links the grader and the test binaries for
each architecture of ARCHS_CUDA12 with the toolkit `make setup-cuda12` installs, and is skipped, with
the reason shown, where that toolkit is not installed.
"""
import subprocess

import pytest

from conftest import ROOT

def arch_matrix(part):
    proc = subprocess.run(["make", "--no-print-directory", "arch-matrix", f"MATRIX_PART={part}"], cwd=ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    print(proc.stdout)
    return proc


def failures(output):
    return "\n".join(line for line in output.splitlines() if line.startswith("FAIL")) or output[-3000:]


def test_every_file_compiles_for_every_cuda13_arch():
    proc = arch_matrix("cuda13")
    assert proc.returncode == 0, f"some file does not compile for some architecture:\n{failures(proc.stdout)}"


def test_cuda12_builds_and_links_for_its_archs():
    proc = arch_matrix("cuda12")
    skipped = [line for line in proc.stdout.splitlines() if line.startswith("arch-matrix: SKIPPED ")]
    if proc.returncode == 0 and skipped:
        pytest.skip(skipped[0].split("SKIPPED ", 1)[1])
    assert proc.returncode == 0, f"a CUDA 12 build failed:\n{failures(proc.stdout)}"
