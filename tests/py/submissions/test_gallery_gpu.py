"""GPU: the whole gallery sweep (tests/gallery/run_gallery.py, also `make test-gallery`): every entry
gets its expected disposition in `check --full` and `grade`, the grader survives all of them in one
sweep, nothing is left behind, and the well-behaved control's results file is unchanged at the end.
`make test` sweeps the quick sample (the entries whose expected.json says "quick": the control and
the defences that only a run shows) at the configuration's smallest scoring shape;
GALLERY=all sweeps every entry (as `make test-gallery` does, about ten minutes), GALLERY=a,b some."""
import subprocess
import sys
from pathlib import Path

from support import gpu_prebuild
from support.gpu import gpu

ROOT = Path(__file__).resolve().parents[3]


@gpu
def test_gallery_sweep():
    gpu_prebuild.result("gallery")  # built in the background while the GPU tests before this one ran
    cmd = [sys.executable, str(ROOT / "tests/gallery/run_gallery.py"), "--build", gpu_prebuild.GALLERY_BUILD,
           *gpu_prebuild.gallery_selection()]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    # what each entry's check and grade took, and the tables, kept beside the sweep's results
    (ROOT / gpu_prebuild.GALLERY_BUILD / "sweep.log").write_text(proc.stdout + proc.stderr)
    assert proc.returncode == 0, proc.stdout[-8000:] + proc.stderr[-2000:]
