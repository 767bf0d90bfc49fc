"""GPU: the whole gallery sweep (tests/gallery/run_gallery.py, also `make test-gallery`): every entry
gets its expected disposition in `check --full` and `grade`, the grader survives all of them in one
sweep, nothing is left behind, and the well-behaved control's results file is unchanged at the end.
Takes a while (every entry is built and graded); GALLERY=a,b limits it to some entries."""
import os
import subprocess
import sys
from pathlib import Path

from conftest import gpu

ROOT = Path(__file__).resolve().parents[2]


@gpu
def test_gallery_sweep():
    cmd = [sys.executable, str(ROOT / "tests/gallery/run_gallery.py"), "--build", "build/gallery"]
    if os.environ.get("GALLERY"):
        cmd += ["--only", os.environ["GALLERY"]]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-8000:] + proc.stderr[-2000:]
