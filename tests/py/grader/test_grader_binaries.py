"""The judge and its two runners hold no submission code: a grader build links them once (into
build/<arch>/grader/bin) and every submission's build gets copies of them beside its own libraries; only
the libraries, one per stage, are linked per submission."""
import filecmp
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.paths import ROOT, STUBS

sys.path.insert(0, str(ROOT / "cluster"))
from toolchain import make_vars  # noqa: E402  (the cluster's reading of the Makefile's variables)
sys.path.insert(0, str(ROOT / "grader" / "scripts"))
import registry  # noqa: E402  (the registry's stage names)

pytestmark = pytest.mark.skipif(not (shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc")),
                                reason="needs nvcc (the CUDA toolkit) to build a submission")
BINARIES = ("gemmlab", "gemmlab-stages", "gemmlab-baselines")
STAGES = registry.stage_names()


def test_a_submission_build_links_its_libraries_only(tmp_path):
    submissions = []
    for name in ("one", "two"):
        d = tmp_path / name / "student"
        shutil.copytree(STUBS, d)
        submissions.append(d)
    outputs = []
    for d in submissions:
        r = subprocess.run(["make", "--no-print-directory", f"PYTHON={sys.executable}", f"SUBMISSION={d}", "grader"],
                           cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        outputs.append(r.stdout)
    # the second submission's build links its libraries, one per stage, and nothing else
    links = [line.split()[-1] for line in outputs[1].splitlines() if line.strip().startswith("LINK")]
    assert sorted(Path(p).name for p in links) == sorted(f"libgemmlab-submission-{s}.so" for s in STAGES), outputs[1]
    for d in submissions:
        v = make_vars(ROOT, None, d, "")
        sub_build = Path(v["GRADER"]).parent
        bin_dir = Path(v["GRADER_BUILD"]) / "bin"
        assert str(bin_dir / "gemmlab") in v["GRADER_TRUSTED"].split(), "the cluster's trusted build must hold them"
        for name in BINARIES:
            copy, linked = ROOT / sub_build / name, ROOT / bin_dir / name
            assert os.access(copy, os.X_OK), copy
            assert filecmp.cmp(copy, linked, shallow=False), f"{copy} is not the grader build's {linked}"
        shutil.rmtree(ROOT / sub_build, ignore_errors=True)
