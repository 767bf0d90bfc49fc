"""The builds of the GPU tests, started in the background as soon as the GPU tests' worker begins.

The `gpu` tests run one after the other in one pytest-xdist worker (conftest.py): on a GPU machine
they are the long pole of `make test`, while the other workers finish early and leave the cores idle.
What those tests build is CPU work that no GPU test has to wait for in turn: the broken submissions
(beside each other), the gallery's sample, the handout's two trees and the reference's grader start
building in threads when the first test of the `gpu` group starts
(conftest.py, pytest_runtest_setup), and each test waits for its own build; its `make` then finds
everything up to date. Without a GPU nothing starts and each test builds for itself, as before.
"""
import importlib.util
import os
import re
import tempfile
import shutil
import subprocess
import sys
import tarfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from .paths import ROOT

GALLERY_BUILD = "build/gallery"
# One per pytest process: two workers that each build the handout (a run that spreads one file's tests over
# workers) never remove and rebuild the same directory under each other.
HANDOUT_BASE = ROOT / "build" / "gpu-tests" / f"handout-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"

_lock = threading.Lock()
_pool = None
_builds: dict[str, Future] = {}


def clean_env():
    """No make state from a `make test` that runs us: a nested make must start afresh."""
    drop = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "GEMMLAB_GRADER")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["NO_COLOR"] = "1"
    return env


def run(cmd, cwd, timeout=3600, env=None):
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=dict(clean_env(), **(env or {})), text=True,
                          timeout=timeout, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    print(f"$ {' '.join(map(str, cmd))}\n{proc.stdout[-6000:]}")
    return proc


def jobs():
    return str(max(2, os.cpu_count() or 2))


def gallery_selection():
    """The gallery entries the GPU sweep takes (tests/py/submissions/test_gallery_gpu.py): GALLERY=a,b, =all, or
    by default the quick sample."""
    wanted = os.environ.get("GALLERY", "")
    if wanted and wanted != "all":
        return ["--only", wanted]
    return [] if wanted else ["--quick"]


def build_gallery():
    """run_gallery.py's build phase for the entries the sweep will take."""
    proc = run([sys.executable, ROOT / "tests/gallery/run_gallery.py", "--build", GALLERY_BUILD, "--phase", "build",
                *gallery_selection()], cwd=ROOT)
    return proc.returncode, proc.stdout[-8000:]


def load_handout_module():
    """grader/scripts/handout.py as a module (an instructor script, not a package)."""
    spec = importlib.util.spec_from_file_location("handout", ROOT / "grader" / "scripts" / "handout.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def handout_config(where: Path, first_arch_only=False) -> Path:
    """The repository's course.toml with the course's drop box an absolute path under `where`: make
    handout refuses the repository's own (results/dropbox, relative: in a handout it would name a
    folder inside each student's checkout). The drop box is not set up, so make handout warns.
    first_arch_only: [handout] archs keeps its first entry only (the reference library compiled for
    one GPU instead of each of the course's: a third of the compile; the arch matrix compiles the
    reference for every architecture, test_handout.py packs and checks a library of several)."""
    text = (ROOT / "course.toml").read_text()
    if first_arch_only:
        one = re.sub(r'(?m)^archs = \[\s*("[^"]+")[^\]]*\]', r"archs = [\1]", text, count=1)
        assert one != text, "course.toml has no [handout] archs line of several archs to cut"
        text = one
    box = Path(where).resolve() / "dropbox"
    try:  # a drop box inside the checkout is refused too (make handout): such a one goes to the temp dir
        box.relative_to(ROOT.resolve())
        box = Path(tempfile.gettempdir()) / f"gemmlab-handout-dropbox-{os.getuid()}"
    except ValueError:
        pass
    config = re.sub(r'(?m)^dropbox = "[^"]*"', f'dropbox = "{box}"', text, count=1)
    assert config != text, "course.toml has no [cluster] dropbox line to set"
    path = Path(where) / "course.toml"
    path.write_text(config)
    return path


def smallest_scoring_shape(config: Path, where: Path) -> Path:
    """`config` graded at its smallest scoring shape only (the gallery's quick configuration,
    tests/gallery/run_gallery.py), as a file in `where`: for the GPU tests whose claim holds at any
    size (the reference's full marks are a % of its own speed in the same run; naive earns nothing),
    a call at 2048³ is an eighth of one at 4096³."""
    sys.path.insert(0, str(ROOT / "tests" / "gallery"))
    import run_gallery  # noqa: E402
    out = Path(where) / "course-smallest-shape.toml"
    quick = run_gallery.smallest_shape_only(Path(config).read_text())
    assert quick != Path(config).read_text(), f"{config} has one scoring shape: nothing to make quicker"
    out.write_text(quick)
    return out


def build_handout():
    """The handout built and unpacked afresh and compiled as a student compiles it, then a copy of it
    with the reference sources in student/ (only the stage files compile again).
    Returns (unpacked tree, tree with the reference sources)."""
    handout = load_handout_module()
    shutil.rmtree(HANDOUT_BASE, ignore_errors=True)
    HANDOUT_BASE.mkdir(parents=True)
    proc = run([sys.executable, ROOT / "grader" / "scripts" / "handout.py", "build", "--config",
                handout_config(HANDOUT_BASE), "--dist", HANDOUT_BASE / "dist"], cwd=ROOT)
    assert proc.returncode == 0, "handout.py build failed:\n" + proc.stdout[-4000:]
    tarball = next((HANDOUT_BASE / "dist").glob("*-handout.tar.gz"))
    with tarfile.open(tarball) as tar:
        handout.safe_extract(tar, HANDOUT_BASE / "unpacked")
    unpacked = next((HANDOUT_BASE / "unpacked").iterdir())
    # The stage object cache of this tree (as make handout-check shares it): the reference's stage files
    # compiled as a submission are the ones the reference's grader build compiles (build_reference).
    cache = os.environ.get("OBJECT_CACHE", "build/object-cache")  # the Makefile's default, or OBJECT_CACHE=
    shared = {"OBJECT_CACHE": str((ROOT / cache).resolve()) if cache else ""}
    proc = run(["make", "-j", jobs()], cwd=unpacked, env=shared)
    assert proc.returncode == 0, "make in the unpacked handout failed:\n" + proc.stdout[-4000:]
    with_reference = HANDOUT_BASE / "with-reference"
    shutil.copytree(unpacked, with_reference, symlinks=True, ignore=shutil.ignore_patterns("results"))
    # The stage files (not reference/tuning/).
    for src in (ROOT / "reference").glob("*.cu"):
        shutil.copy2(src, with_reference / "student" / src.name)
    proc = run(["make", "-j", jobs()], cwd=with_reference, env=shared)
    assert proc.returncode == 0, "make of the handout with the reference sources failed:\n" + proc.stdout[-4000:]
    return unpacked, with_reference


def build_reference():
    """The grader with the reference solutions as the submission, in the build directory of the
    grader `make test` built (tests/py/submissions/test_grade_gpu.py grades it)."""
    grader = os.environ.get("GEMMLAB_GRADER")
    if not grader:
        return None
    build = Path(grader).resolve().parent.parent
    proc = run(["make", "--no-print-directory", "-j", jobs(), f"BUILD={build}", f"SUBMISSION={ROOT / 'reference'}",
                "grader"], cwd=ROOT)
    return proc.returncode


def build_broken():
    """Every deliberately broken submission (tests/broken/), built beside each other into the build
    directory `make test` used (its shared objects are up to date, so the builds touch only their
    own directories). Returns {name: grader binary}."""
    from . import broken_submissions as b

    names = sorted(b.EXPECTED)
    share = max(1, int(jobs()) // len(names))
    with ThreadPoolExecutor(max_workers=len(names)) as pool:
        return dict(zip(names, pool.map(lambda n: b.build(n, jobs=share), names)))


BUILDS = {"gallery": build_gallery, "handout": build_handout, "reference": build_reference,
          "broken": build_broken}


# Which test file's GPU tests wait for which build.
NEEDED_BY = {"test_gallery_gpu.py": "gallery", "test_handout.py": "handout", "test_grade_gpu.py": "reference",
             "test_broken_gpu.py": "broken"}


def start(names):
    """Starts the builds `names` (of BUILDS) in the background, once per process."""
    global _pool
    with _lock:
        if _pool is not None or not names:
            return
        _pool = ThreadPoolExecutor(max_workers=len(names), thread_name_prefix="gpu-prebuild")
        for name in sorted(names):
            _builds[name] = _pool.submit(BUILDS[name])


def result(name):
    """The result of build `name`: waits for the background build when one was started, else
    builds now, once (its exceptions are the test's)."""
    with _lock:
        future = _builds.get(name)
        mine = future is None
        if mine:
            future = _builds[name] = Future()
    if mine:
        try:
            future.set_result(BUILDS[name]())
        except Exception as e:  # noqa: BLE001 (handed to every caller)
            future.set_exception(e)
    return future.result()
