"""Making lab reports in the tests: report/make_report.py run as a student runs it, the tools a rendered
report needs (the tests that need them are skipped without them), a fake grader that measures from the
fixture results (tests/fixtures/report), and a submission with the results make report leaves after
measuring it. The report's tests and the cluster's report check use these."""
import json
import re
import shutil
import subprocess
import sys

import pytest

from .paths import ROOT, STUBS

sys.path.insert(0, str(ROOT / "grader" / "scripts"))
import fingerprint  # noqa: E402

REPORT = ROOT / "report"
FIXTURES = ROOT / "tests" / "fixtures" / "report"
MAKE_REPORT = REPORT / "make_report.py"
TOOLS = ["pandoc", "xelatex", "pdftotext", "pdfinfo"]
missing_tools = [t for t in TOOLS if shutil.which(t) is None]
try:
    import matplotlib  # noqa: F401
    HAS_MPL = True
except ImportError:
    HAS_MPL = False
needs_render = pytest.mark.skipif(bool(missing_tools) or not HAS_MPL,
                                  reason=f"needs {', '.join(missing_tools) or ''}"
                                         f"{'' if HAS_MPL else ' matplotlib'} (make setup)")
needs_mpl = pytest.mark.skipif(not HAS_MPL, reason="needs matplotlib (make setup)")


def make_report(*args, env=None):
    return subprocess.run([sys.executable, str(MAKE_REPORT), *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, env=env)


def pdf_text(pdf):
    return subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout


def squeeze(text):
    return re.sub(r"\s+", "", text)


FAKE_GRADER = r'''#!{python}
"""A stand-in for gemmlab: list and bench from the fixture, counting its bench runs."""
import json, sys
from pathlib import Path
fixtures, log = Path({fixtures!r}), Path({log!r})
args = sys.argv[1:]
if args[:2] == ["list", "--json"]:
    print((fixtures / "registry.json").read_text()); sys.exit(0)
if args[:1] == ["gpu"]:
    sys.exit(3 if {no_gpu} else 0)
if args[:1] == ["bench"] and "--help" in args:
    print("Usage: gemmlab bench [--stage S] [--prec P] [--shapes L] [--max-seconds X] --json F"); sys.exit(0)
if args[:1] == ["bench"]:
    if {no_gpu}:
        print("gemmlab bench: no usable NVIDIA GPU", file=sys.stderr); sys.exit(3)
    prec, shapes, out = (args[args.index(k) + 1] for k in ("--prec", "--shapes", "--json"))
    doc = json.loads((fixtures / f"bench-{{prec}}.json").read_text())
    have = {{"{{M}}x{{N}}x{{K}}".format(**b["shape"]) for b in doc["results"][0]["bench"]}}
    if set(shapes.split(",")) != have:
        sys.exit(f"unexpected shapes {{shapes}}")
    Path(out).write_text(json.dumps(doc))
    with log.open("a") as f:
        f.write(" ".join(args) + "\n")
    sys.exit(0)
sys.exit(2)
'''


def fake_grader(tmp_path, no_gpu=False):
    path = tmp_path / "gemmlab"
    log = tmp_path / "bench-calls.log"
    path.write_text(FAKE_GRADER.format(python=sys.executable, fixtures=str(FIXTURES), log=str(log),
                                       no_gpu=no_gpu))
    path.chmod(0o755)
    return path, log


def stage_dir(path, edit=None):
    """A submission laid out like student/ (the stubs), with edit(name, text) -> text applied."""
    path.mkdir(parents=True, exist_ok=True)
    for src in sorted(STUBS.glob("*.cu")):
        text = src.read_text()
        (path / src.name).write_text(edit(src.name, text) if edit else text)
    return path


def measured_results(build, submission):
    """build/results as make report leaves it after measuring `submission` (fixture numbers)."""
    results = build / "results"
    shutil.copytree(FIXTURES, results, ignore=shutil.ignore_patterns("*.md"))
    run = json.loads((results / "report-run.json").read_text())
    run["submission"] = fingerprint.of_directory(submission)
    (results / "report-run.json").write_text(json.dumps(run, indent=2))
    return results
