"""The deliberately broken submissions of tests/broken/ and what `gemmlab check` must say of them.

Shared by test_broken_build.py (CI: every one builds) and test_broken_gpu.py (GPU: every stage
gets its expected disposition and message). Each directory's README.md holds the same table for
people; test_broken_build.py checks that the two agree.
"""
import os
import subprocess
from pathlib import Path

from .paths import ROOT

BROKEN = ROOT / "tests" / "broken"

# (stage, variant) -> expected disposition, for both precisions, or {"float": ..., "double": ...} where
# they differ. The tensor stage is the student's stub (a link to student/tensor.cu) where it is not
# broken on purpose.
STUB = "not_implemented"
TENSOR_STUB = {("tensor", "fp16"): STUB, ("tensor", "tf32"): STUB, ("tensor", "3xtf32"): STUB}

EXPECTED = {
    "wrong_values": {
        ("naive", ""): "passed",
        ("tiled", "8"): "failed",
        ("tiled", "16"): "failed",
        ("tiled", "32"): "failed",
        ("unrolled", ""): "failed",
        ("pitched", ""): "failed",
        ("reuse", ""): "failed",
        ("tensor", "fp16"): "passed",
        ("tensor", "tf32"): "passed",
        ("tensor", "3xtf32"): {"float": "failed", "double": "passed"},
    },
    "memory": {
        ("naive", ""): "passed",
        ("tiled", "8"): "failed",
        ("tiled", "16"): "failed",
        ("tiled", "32"): "failed",
        ("unrolled", ""): "out_of_bounds",
        ("pitched", ""): "out_of_bounds",
        ("reuse", ""): "failed",
        **TENSOR_STUB,
    },
    "process": {
        ("naive", ""): "passed",
        ("tiled", "8"): "crashed",
        ("tiled", "16"): "timed_out",
        ("tiled", "32"): "crashed",
        ("unrolled", ""): "crashed",
        ("pitched", ""): "crashed",
        ("reuse", ""): "failed",
        **TENSOR_STUB,
    },
}


def expected_disposition(name, stage, variant, precision):
    want = EXPECTED[name][(stage, variant)]
    return want[precision] if isinstance(want, dict) else want


def build_dir():
    """The build directory: the one `make test` used (so the grader library and the reference are
    built once), else GEMMLAB_BROKEN_BUILD, else build/broken."""
    if os.environ.get("GEMMLAB_BROKEN_BUILD"):
        return Path(os.environ["GEMMLAB_BROKEN_BUILD"])
    grader = os.environ.get("GEMMLAB_GRADER")
    if grader:  # <BUILD>/sub-<name>-<sum>/gemmlab
        return Path(grader).resolve().parent.parent
    return ROOT / "build" / "broken"


def build(name, jobs=None):
    """Builds tests/broken/<name> with the project's Makefile; returns the grader binary's path."""
    jobs = jobs or int(os.environ.get("GEMMLAB_BUILD_JOBS", os.cpu_count() or 2))
    args = ["make", "-s", f"SUBMISSION=tests/broken/{name}", f"BUILD={build_dir()}", f"-j{jobs}", "grader"]
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, f"{' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    # <BUILD>/sub-<name>-<checksum of the directory's absolute path>/gemmlab; the newest if several.
    binaries = sorted(build_dir().glob(f"sub-{name}-*/gemmlab"), key=lambda p: p.stat().st_mtime)
    assert binaries, f"no grader binary for {name} under {build_dir()}"
    return binaries[-1]
