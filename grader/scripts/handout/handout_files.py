"""What a handout ships (grader/scripts/handout.py): the repository's folders that ship, those that never
do, the course.toml without the staff's sections, and the header libraries copied in with their
licences. docs/handout.md explains each choice."""
import fnmatch
import os
import re
import shutil
import sys
from pathlib import Path

from handout_base import ROOT, say

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # grader/scripts
from header_libs import HEADER_LIBS  # noqa: E402

INSTRUCTOR_ONLY_TAG = "gemmlab: instructor-only"  # a file carrying this text never ships

# What ships, relative to the repository root (directories recursively), before exclusions. Of tests/,
# what a student's `make test` runs: its runner, the unit tests, the tests of what ships (the grader,
# the lab report, the kit as a student meets it, the runner itself) and the data they read. The rest of
# tests/ is the staff's and the kit's developers' (tests/py/cluster, handout, submissions, developer;
# tests/gpu_session, tests/slurm, the galleries, the rest of tests/py/support): it never ships.
SHIP = ["Makefile", "course.toml", ".gitignore", "grader/include", "grader/src", "grader/scripts",
        "student", "cluster", "report",
        "tests/run_tests.py", "tests/machine_guard.py", "tests/host", "tests/gpu", "tests/py/conftest.py",
        "tests/py/grader", "tests/py/report", "tests/py/student", "tests/py/harness",
        # the support modules that the tests above import
        "tests/py/support/__init__.py", "tests/py/support/paths.py", "tests/py/support/gpu.py",
        "tests/py/support/reports.py",
        "tests/fixtures/report", "tests/fixtures/profile"]

# What the kit's commands write (make, make check, make report, make handout...): outputs, never shipped.
OUTPUTS = ["build", "results", "dist", ".deps", "report/build", "report/report.pdf"]

# What never ships, whatever the config says (`handout check` fails a handout that holds one): solutions,
# instructor tools and tests that need them, build outputs. A pattern matches a path or any directory
# above it.
NEVER = [
    "reference",                    # solution sources and the tuning tool (the library is built)
    "grader/scripts/handout.py",    # this script, its parts and templates: instructor tools
    "grader/scripts/handout",
    "docs/instructor-*.md",         # the instructor guide and its parts: setting up, the term, grading
    "docs/security.md",             # what the staff's tools defend against, and what stays open
    "docs/handout.md",
    "docs/developing.md",           # developing the kit itself: its test suite, toolchains, lent GPUs
    # the course staff's tools (gradebook, LMS exports, similarity, leaderboard, their pages and
    # the sweep's job scripts): a student's `make submit`, `status`, `results` need none of them
    "cluster/staff", "cluster/commands/sweep.py", "cluster/commands/grades.py", "cluster/commands/pages.py",
    "cluster/templates/sweep-array.sbatch", "cluster/templates/gradebook.sbatch",
    "grader/scripts/requirements-staff.txt",
    # the staff's and developers' tests: the cluster tools' (a real Slurm cluster as root, which a handout
    # check must not nest), the handout's (reference/*.cu), those that grade the reference, broken or
    # hostile submissions, the developers' (every architecture, the CUDA 12 bundle, the tuning tools)
    # and the lent GPU's sessions
    "tests/py/cluster", "tests/py/handout", "tests/py/submissions", "tests/py/developer", "tests/gpu_session",
    "tests/broken",                 # deliberately broken stages: nearly solutions
    "tests/gallery",                # adversarial probes of the grader's sandbox
    "tests/profile_padding",        # a working tiled kernel (the bank-conflict experiment): a solution
    "tests/fixtures/similarity",    # tiled/unrolled solutions: the similarity tests' class
    *OUTPUTS,
]
# The solutions among what never ships, each named for its stage (<stage>.cu, <stage>.h, <stage>_<what>.cu...):
# the reference's stage files and its tuning kernels (among them the student version of the tiled loop),
# the nearly-solutions of tests/broken, the working tiled kernel of tests/profile_padding and the similarity
# tests' solutions. No shipped file may hold one: `make handout` compares every shipped file with them
# (handout_checks.py, solution_matches).
SOLUTIONS = ["reference/*.cu", "reference/tuning/*.h", "tests/broken/*/*.cu", "tests/profile_padding/*.cu",
             "tests/fixtures/similarity/*.cu", "tests/fixtures/similarity/*.cu.part"]

# Docs split into parts: a doc that ships brings its parts, whatever [handout] docs lists (a course.toml
# written before the split names only the first), so that its links lead inside the handout.
DOC_PARTS = {"student-guide.md": ("student-tools.md",)}

# Names that never ship wherever they are.
NEVER_NAMED = ["__pycache__", "*.pyc", ".pytest_cache", ".git", ".DS_Store", "*~"]

# A test file that names instructor-only material cannot run in a handout: it stays out (logged).
INSTRUCTOR_ONLY_TEXT = re.compile(
    r"tests/broken|tests/gallery|reference/tuning|reference/\w+\.cu\b|SUBMISSION=reference|"
    + re.escape(INSTRUCTOR_ONLY_TAG))

# The header-only C++ libraries the grader builds with (grader/scripts/header_libs.py), shipped in the
# handout as this machine has them, each with its licence, so that a student's machine needs no package
# of them (nvcc, g++ and python3 build the grader): (the folder under an include directory, the Debian
# package whose copyright file holds the licence). The Makefile puts THIRD_PARTY_DIR/include on the
# include path where the system lacks them.
THIRD_PARTY = tuple((lib.folder, lib.package) for lib in HEADER_LIBS)
THIRD_PARTY_DIR = "grader/third_party"


def matches(rel, patterns):
    """True when `rel` or a directory above it matches one of the path globs (from the root), or
    one of its parts matches a name of NEVER_NAMED."""
    parts = rel.split("/")
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    return (any(fnmatch.fnmatchcase(p, pat) for p in prefixes for pat in patterns)
            or any(fnmatch.fnmatchcase(part, pat) for part in parts for pat in NEVER_NAMED))



# ---- build: the course's configuration, less the staff's sections ---------------------------------

# The staff's sections of course.toml (STAFF_SECTIONS) and the handout's course.toml without them are
# the course configuration's to say (cluster/config.py): the published course state strips them alike.
sys.path.insert(0, str(ROOT / "cluster"))
from config import STAFF_SECTIONS, without_staff_sections  # noqa: E402,F401


# ---- build: the file list ------------------------------------------------------------------------

def select_files(cfg):
    """The repository files that ship: [(rel path, why it is left out or None)]."""
    chosen, left_out = [], []
    never = NEVER + cfg["exclude"]
    for top in SHIP:
        src = ROOT / top
        if not src.exists():
            continue
        candidates = [src] if src.is_file() else sorted(p for p in src.rglob("*") if p.is_file())
        for p in candidates:
            rel = p.relative_to(ROOT).as_posix()
            if matches(rel, never):
                continue
            if rel.startswith("tests/") and p.suffix in (".py", ".sh", ".cpp", ".cu", ".h"):
                hit = INSTRUCTOR_ONLY_TEXT.search(p.read_text(errors="replace"))
                if hit:
                    left_out.append((rel, f"it names instructor-only material ({hit.group(0)})"))
                    continue
            chosen.append(rel)
    listed = list(dict.fromkeys(part for doc in cfg["docs"] for part in (doc, *DOC_PARTS.get(doc, ()))))
    for doc in listed:
        rel = f"docs/{doc}"
        if (ROOT / rel).is_file() and not matches(rel, never):
            chosen.append(rel)
        elif not (ROOT / rel).is_file():
            left_out.append((rel, "listed in [handout] docs but missing: write it, or take it off the list"))
    return chosen, left_out



def prefixes():
    """Where the header libraries and their licences are: the system's /usr, then the user prefix that
    make setup without root fetches them into (GEMMLAB_PREFIX, which the Makefile exports)."""
    user = os.environ.get("GEMMLAB_PREFIX")
    return [Path("/usr"), *([Path(user)] if user else [])]


def include_dirs():
    """Where the compiler finds the header libraries: CPATH's folders, the system's, then the user
    prefix's."""
    return [Path(d) for d in os.environ.get("CPATH", "").split(os.pathsep) if d] + \
        [Path("/usr/local/include"), *(p / "include" for p in prefixes())]


def copy_third_party(out):
    """THIRD_PARTY's headers and licences into out/THIRD_PARTY_DIR; returns the files written (relative
    to out). A library whose headers or licence this machine lacks is left out, and said so."""
    written = []
    for name, package in THIRD_PARTY:
        src = next((d / name for d in include_dirs() if (d / name).is_dir()), None)
        licences = [p / "share/doc" / package / "copyright" for p in prefixes()]
        licence = next((f for f in licences if f.is_file()), licences[0])
        if src is None or not licence.is_file():
            say(f"left out the header library {name}: " + (f"no {name}/ in {', '.join(map(str, include_dirs()))}"
                if src is None else f"its licence {licence} is missing") + "; students need it installed")
            continue
        for f in sorted(p for p in src.rglob("*") if p.is_file()):
            rel = f"{THIRD_PARTY_DIR}/include/{name}/{f.relative_to(src).as_posix()}"
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, out / rel)
            written.append(rel)
        rel = f"{THIRD_PARTY_DIR}/licences/{name}.txt"
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(licence, out / rel)
        written.append(rel)
    return written


