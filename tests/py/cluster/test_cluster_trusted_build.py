"""What every student can read of the cluster's trusted build (cluster/grading.py, Toolchain.trusted):
its reference library carries the reference's machine code for the course's GPU only, never its PTX
(the reference's code nearly as written). The trusted build's own make call, as Toolchain.trusted runs
it, compiles the smallest reference file for sm_80 (an arch whose plain -arch build would embed PTX),
and cuobjdump reads the object; every other reference file is compiled with the same command. No GPU
needed; ccache keeps the compile to once per content."""
import datetime as dt
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.cluster_helpers import ROOT, config, write_config

import toolchain  # noqa: E402
import stage_sass  # noqa: E402  (grader/scripts, on sys.path through cluster/)

ARCH = "sm_80"
NVCC = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
CUOBJDUMP = stage_sass.find_cuobjdump(None, str(Path(NVCC).resolve().parents[1]))
pytestmark = [
    pytest.mark.skipif(not os.path.exists(NVCC), reason="needs nvcc (the CUDA toolkit)"),
    pytest.mark.skipif(not CUOBJDUMP, reason="needs cuobjdump (make setup installs it)"),
    pytest.mark.skipif(not (ROOT / "reference" / "naive.cu").is_file(), reason="a handout has no reference sources"),
]


def trusted_make_call(tmp_path, monkeypatch) -> list[str]:
    """The make command Toolchain.trusted runs for a course whose GPU is ARCH (caught, not run)."""
    path = write_config(tmp_path, "local", dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc), arch=ARCH)
    path.write_text(re.sub(r'(?m)^trusted_cache = .*$', f'trusted_cache = "{tmp_path / "trusted"}"', path.read_text()))
    tools = toolchain.Toolchain(config.load(path), say=lambda *_: None)
    assert tools.arch == ARCH
    calls = []
    monkeypatch.setattr(toolchain, "run_logged", lambda cmd, cwd, log, env=None: calls.append([str(c) for c in cmd]) or 2)
    with pytest.raises(toolchain.BuildError):
        tools.trusted(tmp_path / "trusted.log")
    assert len(calls) == 1, calls
    return calls[0]


def test_the_trusted_build_carries_no_ptx_of_the_reference(tmp_path, monkeypatch):
    cmd = trusted_make_call(tmp_path, monkeypatch)
    build = tmp_path / "build"
    # The same call (its variables), for one reference object into a build of the test's own.
    settings = [a for a in cmd[1:] if "=" in a and not a.startswith(("-", "BUILD="))]
    make = [cmd[0], f"BUILD={build}", *settings]
    obj = build / "reference" / "naive.o"
    r = subprocess.run([*make, str(obj)], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr

    elves = subprocess.run([CUOBJDUMP, "--list-elf", str(obj)], capture_output=True, text=True)
    assert elves.returncode == 0 and f".{ARCH}." in elves.stdout, elves.stdout + elves.stderr
    ptx = subprocess.run([CUOBJDUMP, "--list-ptx", str(obj)], capture_output=True, text=True)
    assert ".ptx" not in ptx.stdout, f"the trusted build's {obj.name} embeds PTX:\n{ptx.stdout}"
    dumped = subprocess.run([CUOBJDUMP, "--dump-ptx", str(obj)], capture_output=True, text=True)
    assert ".entry" not in dumped.stdout and ".version" not in dumped.stdout, dumped.stdout[:2000]

    # Every reference file of the library is compiled by the same command (make's dry run of it, in a
    # build directory of its own where nothing is built yet).
    fresh = tmp_path / "dry-run"
    lib = toolchain.make_vars(ROOT, fresh, Path("/nonexistent-submission"), ARCH, settings)["REF_LIB"]
    dry = subprocess.run([cmd[0], f"BUILD={fresh}", *settings, "-n", lib], cwd=ROOT, capture_output=True, text=True)
    assert dry.returncode == 0, dry.stderr
    compiles = {m.group(1): line.replace(m.group(1), "FILE").replace(f"{Path(m.group(1)).stem}.o", "FILE.o")
                for line in dry.stdout.splitlines() if (m := re.search(r"-c (reference/\w+\.cu) ", line))}
    assert set(compiles) == {f"reference/{p.name}" for p in (ROOT / "reference").glob("*.cu")}, compiles
    assert len(set(compiles.values())) == 1, compiles
