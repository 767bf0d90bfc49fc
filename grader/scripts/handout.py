#!/usr/bin/env python3
"""Builds and checks the student handout of a GEMM Lab course (instructors only).

    handout.py build --config course.toml    dist/<course>-handout/ and dist/<course>-handout.tar.gz
    handout.py check --config course.toml    unpack that tarball afresh and prove it is fit to hand out

`make handout` and `make handout-check` call these. What ships, what never ships and how the
reference solutions are compiled into reference/lib/libgemmlab_reference.a is explained in
docs/handout.md; course.toml [handout] holds the course's choices (GPU archs, docs, exclusions).
Standard library only (Python 3.11+: tomllib), plus the toolchain: nvcc, g++, ld, objcopy, ar, nm,
c++filt, strings, readelf, make.
"""
import argparse
import difflib
import fnmatch
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from string import Template

sys.path.insert(0, str(Path(__file__).resolve().parent))
import object_cache  # noqa: E402  (grader/scripts, beside this file)

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "cluster"))
import shared_dropbox  # noqa: E402  (what a drop box the staff can read is)
import config as course_config  # noqa: E402  (how the course shows a moment: UTC and the course's time)
TEMPLATES = Path(__file__).resolve().parent / "handout"

TODO_TAG = "TODO(student):"              # the one tag of student tasks (docs/student-guide.md)
INSTRUCTOR_ONLY_TAG = "gemmlab: instructor-only"  # a file carrying this text never ships
REF_LIB = "reference/lib/libgemmlab_reference.a"
REGISTRY_SYMBOL = "gemmlab::reference::registry()"  # the one global symbol the library keeps
MANIFEST = "HANDOUT.json"
# A copy of the stubs as handed out, which the handout's `make test` builds and its tests break (the
# Makefile's TEST_STUBS; tests/py/conftest.py's STUBS): student/ becomes the student's own work, and
# the grader's tests must pass whatever it holds.
STUBS_COPY = "tests/stubs/student"
# The stage a student has written, as `handout check` writes it into the unpacked handout's student/
# before running its tests: a working kernel must not turn the grader's tests red.
WRITTEN_STAGE = "tiled.cu"
MANIFEST_SCHEMA = "gemmlab.handout/1"

# What ships, relative to the repository root (directories recursively), before exclusions.
SHIP = ["Makefile", "course.toml", ".gitignore", "grader/include", "grader/src", "grader/scripts",
        "student", "cluster", "report", "tests"]

# What never ships, whatever the config says: solutions, instructor tools and tests that need
# them, build outputs. A pattern matches a path or any directory above it.
NEVER = [
    "reference",                    # solution sources and the tuning tool (the library is built)
    "grader/scripts/handout.py",    # this script and its templates: instructor tools
    "grader/scripts/handout",
    "tests/py/test_handout*.py",    # needs reference/*.cu
    "tests/broken",                 # deliberately broken stages: nearly solutions
    "tests/profile_padding",        # a working tiled kernel (the bank-conflict experiment): a solution
    "tests/gpu_session/gpu_profile_padding.sh",  #   and the script that profiles it beside the reference
    "tests/gallery",                # adversarial probes of the grader's sandbox
    "tests/py/test_cluster*.py",    # course staff's tests of the cluster tools: they start a real
    "tests/slurm",                  #   Slurm cluster as root, which a handout check must not nest,
    "tests/py/private_accounts.py", #   with its test accounts
    "tests/dropbox_gallery",        # hostile drop boxes, and the staff's tests of the drop box's door
    "tests/py/test_dropbox_*.py",
    "tests/fixtures/similarity",    # tiled/unrolled solutions: the similarity tests' class
    "docs/instructor-guide.md",
    "docs/handout.md",
    "docs/developing.md",           # developing the kit itself: its test suite, toolchains, lent GPUs
    # the course staff's tools (gradebook, LMS exports, similarity, leaderboard, their pages and
    # the sweep's job scripts): a student's `make submit`, `status`, `results` need none of them
    "cluster/staff", "cluster/templates/sweep-array.sbatch", "cluster/templates/gradebook.sbatch",
    "grader/scripts/requirements-staff.txt",
    # developer tools of this repository, which need the reference sources or the staff's tests
    "tests/gpu_session/cluster_gpu_demo.sh", "tests/gpu_session/cluster_gpu_jobs.sh", "tests/gpu_session/judge_agreement.py", "tests/probes",
    "tests/gpu_session/gpu_host_noise.py", "tests/pack_gpu_tools.sh", "tests/py/cluster_helpers.py", "tests/fixtures/cluster",
    "tests/py/developer/test_arch_matrix.py",  # every architecture of every file: the course's CI, not a student's check
    "tests/semester_rehearsal.py",  # the staff's dry run of a term (it hands in the reference)
    "build", "results", "dist", ".deps",
    "report/build", "report/report.pdf",
]
# Names that never ship wherever they are.
NEVER_NAMED = ["__pycache__", "*.pyc", ".pytest_cache", ".git", ".DS_Store", "*~"]

# A test file that names instructor-only material cannot run in a handout: it stays out (logged).
INSTRUCTOR_ONLY_TEXT = re.compile(
    r"tests/broken|tests/gallery|reference/tuning|reference/\w+\.cu\b|SUBMISSION=reference|"
    + re.escape(INSTRUCTOR_ONLY_TAG))

# The header-only C++ libraries the grader builds with, shipped in the handout as this machine has them,
# each with its licence, so that a student's machine needs no package of them (nvcc, g++ and python3
# build the grader): (the folder under an include directory, the Debian package whose copyright file
# holds the licence). The Makefile puts THIRD_PARTY/include on the include path where it exists.
THIRD_PARTY = (("doctest", "doctest-dev"), ("nlohmann", "nlohmann-json3-dev"), ("CLI", "libcli11-dev"),
               ("toml++", "libtomlplusplus-dev"))
THIRD_PARTY_DIR = "grader/third_party"

DEFAULT_DOCS = ["student-guide.md", "correctness.md", "timing.md", "scoring.md", "results-schema.md"]

# Lines of the reference sources that are not solution text: what the registry dictates (includes,
# namespaces, explicit instantiations, template heads) and the declaration and launch plumbing the
# stubs give students on purpose (kernel attributes, launch geometry, the GEMMLAB_ macros).
BOILERPLATE = re.compile(r"^(template\s+Status\s|template\s*<[^>]*>$|#|namespace\s|}\s*//\s*namespace|"
                         r"(static\s+)?__global__\s|(const\s+)?dim3\s|GEMMLAB_\w+\()")
MIN_DISTINCTIVE = 24  # characters (whitespace collapsed) for a line to count as distinctive


class HandoutError(Exception):
    pass


def say(msg):
    print(f"handout: {msg}", flush=True)


# ---- configuration ---------------------------------------------------------------------------------

HANDOUT_KEYS = ("archs", "ptx", "dist", "docs", "exclude")


def load_config(path):
    path = Path(path)
    try:
        with open(path, "rb") as f:
            cfg = tomllib.load(f)
    except FileNotFoundError:
        raise HandoutError(f"{path}: no such file (pass --config)")
    except tomllib.TOMLDecodeError as e:
        raise HandoutError(f"{path}: not valid TOML: {e}")
    course = cfg.get("course", {})
    h = cfg.get("handout", {})
    for unknown in [k for k in h if k not in HANDOUT_KEYS]:
        close = difflib.get_close_matches(unknown, HANDOUT_KEYS, n=1)
        raise HandoutError(f"{path}: [handout] {unknown}: unknown key"
                           + (f" (did you mean {close[0]!r}?)" if close else f"; the keys are: {', '.join(HANDOUT_KEYS)}"))

    def key(table, name, default, kind):
        value = table.get(name, default)
        if not isinstance(value, kind):
            raise HandoutError(f"{path}: [{'handout' if table is h else 'course'}] {name} = {value!r}: "
                               f"expected {kind.__name__ if isinstance(kind, type) else 'list'}")
        return value

    name = key(course, "name", "gemm-lab", str)
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise HandoutError(f"{path}: [course] name = {name!r}: use letters, digits, '.', '_' or '-' "
                           "(it names the handout directory)")
    archs = key(h, "archs", ["sm_90", "sm_80"], list)
    if not archs or not all(isinstance(a, str) and re.fullmatch(r"sm_\d{2,3}[af]?", a) for a in archs):
        raise HandoutError(f"{path}: [handout] archs = {archs!r}: expected a list like [\"sm_90\", \"sm_80\"]")
    docs = key(h, "docs", DEFAULT_DOCS, list)
    exclude = key(h, "exclude", [], list)
    for listed, what in ((docs, "docs"), (exclude, "exclude")):
        if not all(isinstance(x, str) for x in listed):
            raise HandoutError(f"{path}: [handout] {what}: expected a list of strings")
    dist = Path(key(h, "dist", "dist", str))
    return {
        "path": path.resolve(),
        "name": name,
        "title": course.get("title", name),
        "archs": archs,
        "ptx": bool(h.get("ptx", False)),
        "docs": docs,
        "exclude": exclude,
        "dist": dist if dist.is_absolute() else ROOT / dist,
        "deadline": cfg.get("deadline", {}).get("due", ""),
        "cluster": cfg.get("cluster", {}),
    }


def handout_paths(cfg, dist_override=None):
    dist = Path(dist_override).resolve() if dist_override else cfg["dist"]
    base = f"{cfg['name']}-handout"
    return dist, dist / base, dist / f"{base}.tar.gz"


# ---- helpers -------------------------------------------------------------------------------------

def run(cmd, cwd=ROOT, env=None, log=None, check=True):
    """Runs a command; on failure raises HandoutError with its output's tail."""
    proc = subprocess.run(cmd, cwd=cwd, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if log is not None:
        with open(log, "a") as f:
            f.write(f"$ {' '.join(map(str, cmd))}\n{proc.stdout}\n")
    if check and proc.returncode != 0:
        tail = "\n".join(proc.stdout.splitlines()[-40:])
        raise HandoutError(f"`{' '.join(map(str, cmd))}` failed (exit {proc.returncode}):\n{tail}")
    return proc


def cuda_home():
    if os.environ.get("CUDA_HOME"):
        return Path(os.environ["CUDA_HOME"])
    nvcc = shutil.which("nvcc")
    return Path(nvcc).resolve().parent.parent if nvcc else Path("/usr/local/cuda")


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def matches(rel, patterns):
    """True when `rel` or a directory above it matches one of the path globs (from the root), or
    one of its parts matches a name of NEVER_NAMED."""
    parts = rel.split("/")
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    return (any(fnmatch.fnmatchcase(p, pat) for p in prefixes for pat in patterns)
            or any(fnmatch.fnmatchcase(part, pat) for part in parts for pat in NEVER_NAMED))


def clean_env():
    """The environment for a nested make: nothing inherited from the make that called us, nor the variables
    given on its command line, which make puts in the environment too (make handout-check CONFIG=<the
    instructor's file>: the handout's make reads its own course.toml)."""
    flags = os.environ.get("MAKEFLAGS", "")
    given = set(re.findall(r"(?:^|\s)([A-Za-z_][A-Za-z0-9_]*)=", flags.split(" -- ", 1)[1])) if " -- " in flags else set()
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "GEMMLAB_GRADER", "GEMMLAB_COMMAND",
                        "GEMMLAB_SRUN", *given)}
    env["NO_COLOR"] = "1"
    return env


def normalize(line):
    """A line for comparison: whitespace collapsed, and every `<name>_kernel` called KERNEL (a kernel
    declared like naive.cu's is public whatever its name)."""
    return re.sub(r"\b\w+_kernel\b", "KERNEL", " ".join(line.split()))


# ---- build: the course's configuration, less the staff's sections ---------------------------------

# Sections of course.toml that are the course staff's alone: the similarity check's thresholds (which
# would tell a student how much to change a copied kernel), the LMS export, the leaderboard and the
# extensions file. The handout's course.toml keeps the rest: the rubric, the cluster and the deadline.
STAFF_SECTIONS = ("similarity", "export", "leaderboard", "extensions")


def without_staff_sections(text: str) -> str:
    """course.toml's text without STAFF_SECTIONS: each from its [header] (and the comments right above
    it) to the next header."""
    out, skipping, pending = [], False, []
    for line in text.splitlines(keepends=True):
        header = re.match(r"\s*\[+\s*([A-Za-z0-9_-]+)", line)
        if header:
            skipping = header.group(1) in STAFF_SECTIONS
            if not skipping:
                out += pending
            pending = []
            if not skipping:
                out.append(line)
            continue
        if skipping:
            continue
        if line.lstrip().startswith("#") or not line.strip():
            pending.append(line)  # comments above a header belong to the section that follows
        else:
            out += pending + [line]
            pending = []
    return "".join(out + pending)


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
    for doc in cfg["docs"]:
        rel = f"docs/{doc}"
        if (ROOT / rel).is_file() and not matches(rel, never):
            chosen.append(rel)
        elif not (ROOT / rel).is_file():
            left_out.append((rel, "listed in [handout] docs but missing: write it, or take it off the list"))
    return chosen, left_out


# ---- build: the compiled reference -----------------------------------------------------------------

def arch_number(arch):
    return int(re.fullmatch(r"sm_(\d+)[af]?", arch).group(1))


def gencode_flags(archs, ptx):
    flags = []
    for a in archs:
        suffix = a[len("sm_"):]
        # Hopper's machine code is built for sm_90a, as the Makefile does: it runs on the same GPUs
        # as sm_90 and holds the tensor stage's wgmma kernel (the PTX below stays portable).
        if suffix == "90":
            suffix = "90a"
        flags += ["-gencode", f"arch=compute_{suffix},code=sm_{suffix}"]
    if ptx:
        top = max(arch_number(a) for a in archs)
        flags += ["-gencode", f"arch=compute_{top},code=compute_{top}"]
    return flags


def demangle(names):
    if not names:
        return []
    proc = subprocess.run(["c++filt"], input="\n".join(names) + "\n", text=True, capture_output=True, check=True)
    return proc.stdout.splitlines()


def global_symbols(obj):
    """Defined global symbols of an object or archive: [(type letter, mangled, demangled)]."""
    out = run(["nm", "--defined-only", "-g", str(obj)]).stdout
    rows = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            rows.append((parts[1], parts[2]))
    return [(t, m, d) for (t, m), d in zip(rows, demangle([m for _, m in rows]))]


def build_reference_library(cfg, dest, work, object_cache_dir=None, ccache=""):
    """Compiles reference/*.cu (not reference/tuning/) for the configured archs into one object
    whose only global symbol is gemmlab::reference::registry(), without debug or line info. Each
    file's compile goes through the object cache (grader/scripts/object_cache.py) when one is given:
    a test suite that builds the handout twice, side by side, compiles the reference once; and
    through `ccache` (the Makefile's CCACHE) when given, so another checkout compiles it once too."""
    sources = sorted((ROOT / "reference").glob("*.cu"))
    if not sources:
        raise HandoutError("no reference/*.cu here: `make handout` runs in the instructor repository "
                           "(a handout has only the compiled library)")
    cuda = cuda_home()
    nvcc = cuda / "bin" / "nvcc"
    common = ["-std=c++17", "-DNDEBUG", "-DGEMMLAB_NS=reference", "-Igrader/include", "-Igrader/src"]
    # No -g, -G or -lineinfo: no debug sections and no source lines, host or device.
    # -fno-gnu-unique: function-local statics of templates become weak symbols, which objcopy can
    # make local, instead of STB_GNU_UNIQUE ones, which it cannot.
    nvcc_flags = common + ["-O3", "-Xcompiler", "-Wall,-Wextra,-fno-gnu-unique"] + gencode_flags(cfg["archs"], cfg["ptx"])
    cxx = os.environ.get("CXX", "g++")
    cxx_flags = common + ["-O2", "-Wall", "-Wextra", "-fno-gnu-unique", "-isystem", str(cuda / "include")]
    launcher = [ccache] if ccache else []
    jobs = [([*launcher, str(nvcc), *nvcc_flags, "-c", s.relative_to(ROOT).as_posix(), "-o", str(work / f"{s.stem}.o")],
             s.name) for s in sources]
    jobs.append(([cxx, *cxx_flags, "-c", "grader/src/runner/registry.cpp", "-o", str(work / "registry.o")],
                 "registry.cpp"))
    say(f"compiling the reference ({', '.join(n for _, n in jobs)}) for {', '.join(cfg['archs'])}"
        + (f" + PTX compute_{max(arch_number(a) for a in cfg['archs'])}" if cfg["ptx"] else ""))
    # What a reference object depends on besides its source: every header it could include.
    depends = sorted(str(p) for d in ("grader/include", "grader/src", "reference") for p in (ROOT / d).rglob("*")
                     if p.is_file() and p.suffix in object_cache.HEADER_SUFFIXES)

    def compile_one(cmd):
        source = ROOT / cmd[cmd.index("-c") + 1]
        if not object_cache_dir or source.suffix != ".cu":
            return run(cmd)
        return object_cache.run_cached(object_cache_dir, cmd, source, cmd[cmd.index("-o") + 1], depends,
                                       say=lambda _: None, compile_=lambda c: run(c).returncode)

    with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
        for f in [pool.submit(compile_one, cmd) for cmd, _ in jobs]:
            f.result()
    objects = [str(work / f"{s.stem}.o") for s in sources] + [str(work / "registry.o")]

    combined = work / "gemmlab_reference_all.o"
    run(["ld", "-r", "-o", str(combined), *objects])
    registry = [m for _, m, d in global_symbols(combined) if d == REGISTRY_SYMBOL]
    if len(registry) != 1:
        raise HandoutError(f"{REGISTRY_SYMBOL} is not defined exactly once in the reference objects")
    final = work / "gemmlab_reference.o"
    # Every global symbol but registry() becomes local: the grader reaches the reference only
    # through its registry, and nothing else of it can clash with or be called from student code.
    # The COMDAT groups go first (-R .group): otherwise the final link would keep the grader's copy
    # of a shared template (std::vector<StageInfo>, ...) and discard the library's, to which the
    # library's now-local references still point ("defined in discarded section").
    # --strip-unneeded then drops every local symbol no relocation needs (and the debug sections).
    run(["objcopy", "-R", ".group", f"--keep-global-symbol={registry[0]}", "--strip-debug",
         "--strip-unneeded", f"--keep-symbol={registry[0]}", str(combined), str(final)])
    leftover = [d for _, _, d in global_symbols(final) if d != REGISTRY_SYMBOL]
    if leftover:
        raise HandoutError(f"the reference library still exports {len(leftover)} other symbol(s), e.g. {leftover[0]}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists():
        dest.unlink()
    run(["ar", "rcsD", str(dest), str(final)])
    return run([str(nvcc), "--version"]).stdout.strip().splitlines()[-1]


# ---- build ---------------------------------------------------------------------------------------

def render_readme(cfg, created, archs_text):
    # the course's [cluster] over the defaults, as every tool of the course reads it
    cluster = {k: default for (section, k), (default, _) in course_config.DEFAULTS.items() if section == "cluster"}
    srun = course_config.srun_line({**cluster, **cfg["cluster"]})
    extra = []
    if cfg["deadline"]:
        due = course_config.parse_when(cfg["deadline"])
        shown = course_config.course_time(due, course_config.course_zone({"deadline": {"due": cfg["deadline"]}}))
        extra.append(f"- Deadline: **{shown}** (hand in with `make submit`; `make status` shows yours).")
    template = Template((TEMPLATES / "README.md.in").read_text())
    return template.substitute(
        title=cfg["title"], name=cfg["name"],
        gpu_hint=f" (on the cluster: {srun} make check)",
        extra_lines="\n".join(extra) + ("\n" if extra else ""),
        created=created, archs=archs_text)


# ---- build: where the students' hand-ins go ---------------------------------------------------------

def dropbox_check(cfg):
    """The course's drop box, as the handout's `make submit` will find it: a HandoutError where it can
    never be a shared location (relative, or inside this repository: every student's `make submit`
    would refuse to hand in), else the loud warning to print when the staff have not set it up yet
    ('' when they have). cluster/shared_dropbox.py says what a shared location is."""
    raw = cfg["cluster"].get("dropbox") or "results/dropbox"
    where = shared_dropbox.where_problem(raw, cfg["path"], ROOT)
    if where:
        raise HandoutError(
            f"{cfg['path']}: {where}. A handout with it could hand nothing in: every student's `make submit` "
            "would refuse, since the course staff could never read what it stored. Set [cluster] dropbox to an "
            "absolute path on the cluster's shared file system (e.g. /srv/gemmlab/2026-dropbox), create it with\n"
            f"      python3 cluster/gemmlab_cluster.py --config {cfg['path']} setup\n"
            "  and run make handout again (docs/handout.md, \"Where hand-ins go\").")
    box = shared_dropbox.configured(raw, cfg["path"])
    problem = shared_dropbox.setup_problem(box)
    if not problem:
        return ""
    return (f"{problem}. Until the course staff run, on the cluster,\n"
            f"      python3 cluster/gemmlab_cluster.py --config {cfg['path']} setup\n"
            f"  every student's `make submit` refuses to hand in (it stores only in a drop box set up by the staff).")


def loud(warning):
    bar = "!" * 100
    for line in [bar, *f"WARNING: {warning}".splitlines(), bar]:
        say(line)


def include_dirs():
    """Where the compiler finds the header libraries: CPATH's folders, then the system's."""
    return [Path(d) for d in os.environ.get("CPATH", "").split(os.pathsep) if d] + \
        [Path("/usr/local/include"), Path("/usr/include")]


def copy_third_party(out):
    """THIRD_PARTY's headers and licences into out/THIRD_PARTY_DIR; returns the files written (relative
    to out). A library whose headers or licence this machine lacks is left out, and said so."""
    written = []
    for name, package in THIRD_PARTY:
        src = next((d / name for d in include_dirs() if (d / name).is_dir()), None)
        licence = Path("/usr/share/doc") / package / "copyright"
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


def write_tree(cfg, out):
    """The handout's files in `out` (which must not exist): what ships from the repository, the
    course's course.toml without the staff's sections, and the README. The compiled reference
    library and HANDOUT.json are build()'s. Returns the files written, relative to `out`."""
    files, left_out = select_files(cfg)
    for rel, why in left_out:
        say(f"left out {rel}: {why}")
    out.mkdir(parents=True)
    for rel in files:
        dst = out / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dst)
    # The course.toml the handout was made with (--config; make handout CONFIG=...), less the staff's sections.
    (out / "course.toml").write_text(without_staff_sections(cfg["path"].read_text()))
    created = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    archs_text = ", ".join(cfg["archs"]) + (f" (+ PTX for newer GPUs)" if cfg["ptx"] else "")
    (out / "README.md").write_text(render_readme(cfg, created, archs_text))
    stubs = [f"{STUBS_COPY}/{Path(rel).name}" for rel in files if rel.startswith("student/") and rel.endswith(".cu")]
    for rel in stubs:
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(out / "student" / Path(rel).name, out / rel)
    return sorted({*files, *stubs, *copy_third_party(out), "course.toml", "README.md"}), created


def build(cfg, dist_override=None, object_cache_dir=None, ccache=""):
    t0 = time.monotonic()
    dist, out, tarball = handout_paths(cfg, dist_override)
    not_set_up = dropbox_check(cfg)  # before anything is written: a drop box that can never work stops here
    if not_set_up:
        loud(not_set_up)
    if out.exists():
        if not (out / MANIFEST).exists() and any(out.iterdir()):
            raise HandoutError(f"{out} exists and is not a handout (no {MANIFEST}): move it away first")
        shutil.rmtree(out)
    files, created = write_tree(cfg, out)
    with tempfile.TemporaryDirectory(prefix="gemmlab-handout-ref-") as work:
        nvcc_version = build_reference_library(cfg, out / REF_LIB, Path(work), object_cache_dir, ccache)

    listed = sorted([*files, REF_LIB])
    manifest = {
        "schema": MANIFEST_SCHEMA,
        "course": cfg["name"],
        "created": created,
        "nvcc": nvcc_version,
        "archs": cfg["archs"],
        "ptx": cfg["ptx"],
        "files": {rel: sha256(out / rel) for rel in listed},
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")

    stamp = int(time.time())
    tmp = tarball.with_suffix(".tmp")
    with tarfile.open(tmp, "w:gz") as tar:
        for rel in sorted([*listed, MANIFEST]):
            info = tar.gettarinfo(str(out / rel), arcname=f"{out.name}/{rel}")
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = stamp
            info.mode = 0o755 if os.access(out / rel, os.X_OK) else 0o644
            with open(out / rel, "rb") as f:
                tar.addfile(info, f)
    os.replace(tmp, tarball)
    size_kb = tarball.stat().st_size // 1024
    say(f"wrote {out}/ ({len(listed) + 1} files) and {tarball} ({size_kb} KiB) in {time.monotonic() - t0:.0f} s")
    if not_set_up:
        loud(not_set_up)  # again, where the instructor looks last
    else:
        say(f"hand-ins go to the drop box {shared_dropbox.configured(cfg['cluster'].get('dropbox'), cfg['path'])}, "
            "set up by the course staff")
    return out, tarball


# ---- check ---------------------------------------------------------------------------------------

class Report:
    def __init__(self):
        self.rows = []

    def add(self, status, what, detail=""):
        self.rows.append((status, what, detail))
        print(f"  {status:<5} {what}" + (f": {detail}" if detail else ""), flush=True)

    def ok(self, what, detail=""):
        self.add("ok", what, detail)

    def fail(self, what, detail=""):
        self.add("FAIL", what, detail)

    def warn(self, what, detail=""):
        self.add("warn", what, detail)

    def skip(self, what, detail=""):
        self.add("skip", what, detail)

    @property
    def failed(self):
        return [r for r in self.rows if r[0] == "FAIL"]


def distinctive_reference_lines():
    """{normalized line: 'reference/x.cu:N'} for lines of the instructor's reference sources that
    are solution text: long enough, not boilerplate, and not in the public grader or naive code."""
    public = set()
    for p in [*(ROOT / "grader").rglob("*"), ROOT / "student" / "naive.cu"]:
        if p.is_file() and p.suffix in (".h", ".cpp", ".cu", ".cuh"):
            public.update(normalize(l) for l in p.read_text(errors="replace").splitlines())
    # The entry points' signature lines are dictated by the registry, like the instantiations.
    names = set(re.findall(r"Status\s+(\w+)\s*\(", (ROOT / "grader/include/gemmlab/stages.h").read_text()))
    signature = re.compile(r"^(template\s*<[^>]*>\s*)?Status\s+(" + "|".join(sorted(names)) + r")\s*\(")
    lines = {}
    for src in sorted((ROOT / "reference").rglob("*")):
        if not src.is_file() or src.suffix not in (".cu", ".cuh", ".h", ".hpp", ".cpp"):
            continue
        for n, raw in enumerate(src.read_text(errors="replace").splitlines(), 1):
            line = normalize(raw)
            if len(line) < MIN_DISTINCTIVE or line in public or BOILERPLATE.match(line) or signature.match(line):
                continue
            lines.setdefault(line, f"{src.relative_to(ROOT).as_posix()}:{n}")
    return lines


def comment_texts(lines):
    """The text of the comments among `lines` (for the strings scan of the library)."""
    out = set()
    for line in lines:
        for m in re.finditer(r"//\s*(.+)$|/\*\s*(.+?)\s*\*/", line):
            text = (m.group(1) or m.group(2) or "").strip()
            if len(text) >= 16:
                out.add(text)
    return out


def fatbin_entries(blob):
    """(kind, arch, flags) of every device-code entry in the fatbinaries inside `blob`:
    kind 'sass' or 'ptx', arch like 90. Layout: a 16-byte header (magic 0xBA55ED50, version,
    header size, payload size), then entries that each start with kind (u16), a u16, header size
    (u32), payload size (u64), compressed size (u32), a u32, minor/major (u16 each), arch (u32),
    name offset and length (u32 each), flags (u64)."""
    entries, pos = [], 0
    magic = struct.pack("<I", 0xBA55ED50)
    while (pos := blob.find(magic, pos)) >= 0:
        if pos + 16 > len(blob):
            break
        _, _, hsize, fat_size = struct.unpack_from("<IHHQ", blob, pos)
        cursor, end = pos + hsize, pos + hsize + fat_size
        while cursor + 64 <= min(end, len(blob)):
            kind, _, ehsize, payload = struct.unpack_from("<HHIQ", blob, cursor)
            if kind not in (1, 2) or ehsize < 64:
                break
            arch = struct.unpack_from("<I", blob, cursor + 28)[0]
            flags = struct.unpack_from("<Q", blob, cursor + 40)[0]
            entries.append(("ptx" if kind == 1 else "sass", arch, flags))
            cursor += ehsize + payload
        pos = max(end, pos + 4)
    return entries


def safe_extract(tar, dest):
    """extractall, refusing absolute paths, '..' and links (Python < 3.11.4 has no filter='data')."""
    for m in tar.getmembers():
        if m.name.startswith("/") or ".." in m.name.split("/") or not (m.isfile() or m.isdir()):
            raise HandoutError(f"the tarball holds an unsafe member: {m.name}")
    if hasattr(tarfile, "data_filter"):
        tar.extractall(dest, filter="data")
    else:
        tar.extractall(dest)


def find_grader(tree):
    """The grader `make` built for the handout's student/ (not the one of the tests' stubs)."""
    for grader in sorted(tree.glob("build/*/sub-student-*/gemmlab")):
        symbols = grader.parent / "symbols.json"
        if symbols.is_file() and Path(json.loads(symbols.read_text()).get("source_dir", "")).resolve() == (tree / "student").resolve():
            return grader
    return None


def broken_links(tree):
    """["<file> -> <target>"] of the shipped Markdown files' links that lead nowhere inside the handout:
    a relative link ([text](target), from the file's folder) or a doc named by its path (docs/<name>.md,
    from the top), which would send a student to a doc the handout does not ship."""
    broken = set()
    for md in sorted(tree.rglob("*.md")):
        rel = md.relative_to(tree).as_posix()
        text = md.read_text(errors="replace")
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if not re.match(r"^[a-z]+:", target) and not md.parent.joinpath(target).resolve().exists():
                broken.add(f"{rel} -> {target}")
        for named in re.findall(r"(?<![\w/.-])(docs/[\w.-]+\.md)\b", text):
            if not (tree / named).exists():
                broken.add(f"{rel} -> {named}")
    return sorted(broken)


def check_contents(rep, tree, cfg, manifest):
    listed = set(manifest.get("files", {}))
    present = {p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file()} - {MANIFEST}
    bad = [rel for rel in listed if rel not in present or sha256(tree / rel) != manifest["files"][rel]]
    extra = sorted(present - listed)
    if bad or extra:
        rep.fail("files match HANDOUT.json", f"changed or missing: {sorted(bad)[:5]}, unlisted: {extra[:5]}")
    else:
        rep.ok("files match HANDOUT.json", f"{len(listed)} files")

    forbidden = sorted(rel for rel in present if matches(rel, NEVER + cfg["exclude"])
                       and rel != REF_LIB)
    ref_files = sorted(rel for rel in present if rel.startswith("reference/") and rel != REF_LIB)
    if forbidden or ref_files:
        rep.fail("no reference source, tuning tool or instructor file", ", ".join((forbidden + ref_files)[:8]))
    else:
        rep.ok("no reference source, tuning tool or instructor file", f"reference/ holds only {REF_LIB}")

    required = ["Makefile", "course.toml", "README.md", "docs/student-guide.md", REF_LIB, "student/naive.cu"]
    missing = [r for r in required if r not in present]
    if missing:
        rep.fail("required files present", ", ".join(missing))
    else:
        rep.ok("required files present", ", ".join(required))

    broken = broken_links(tree)
    if broken:
        rep.fail("links in the shipped docs resolve", "; ".join(broken[:6]) + (" ..." if len(broken) > 6 else ""))
    else:
        rep.ok("links in the shipped docs resolve")

    # Stubs: the tag is there and a non-baseline stub still says not_implemented.
    stubs = sorted(p for p in (tree / "student").glob("*.cu") if p.name != "naive.cu")
    untagged = [p.name for p in stubs if TODO_TAG not in p.read_text() or "Status::not_implemented" not in p.read_text()]
    if untagged or not stubs:
        rep.fail(f"stubs carry {TODO_TAG} and return Status::not_implemented", ", ".join(untagged) or "no stubs")
    else:
        rep.ok(f"stubs carry {TODO_TAG} and return Status::not_implemented",
               ", ".join(f"{p.name} ({p.read_text().count(TODO_TAG)})" for p in stubs))


def check_no_solution_text(rep, tree):
    distinctive = distinctive_reference_lines()
    hits = []
    for p in sorted(tree.rglob("*")):
        if not p.is_file() or p.suffix in (".a", ".o", ".gz", ".pdf", ".png"):
            continue
        try:
            text = p.read_text()
        except UnicodeDecodeError:
            continue
        for n, raw in enumerate(text.splitlines(), 1):
            where = distinctive.get(normalize(raw))
            if where:
                hits.append(f"{p.relative_to(tree).as_posix()}:{n} is {where}")
    if hits:
        rep.fail("no line of the reference sources in any shipped file", "; ".join(hits[:6]))
    else:
        rep.ok("no line of the reference sources in any shipped file",
               f"{len(distinctive)} distinctive reference lines looked for")

    lib = tree / REF_LIB
    strings = run(["strings", "-a", "-n", "8", str(lib)]).stdout
    found_lines = [w for line, w in distinctive.items() if line in strings]
    found_comments = [c for c in comment_texts(distinctive) if c in strings]
    if found_lines or found_comments:
        rep.fail("`strings` of the library shows no reference source or comment",
                 "; ".join((found_lines + found_comments)[:5]))
    else:
        rep.ok("`strings` of the library shows no reference source or comment")

    sections = run(["readelf", "-S", "-W", str(lib)]).stdout
    debug = sorted(set(re.findall(r"\.(?:debug_\w+|nv_debug\w*|zdebug\w*)", sections)))
    if debug:
        rep.fail("library has no debug sections", ", ".join(debug))
    else:
        rep.ok("library has no debug sections")

    exported = [d for _, _, d in global_symbols(lib)]
    if exported != [REGISTRY_SYMBOL]:
        rep.fail("library exports only the registry", f"{len(exported)} global symbols: {exported[:4]}")
    else:
        rep.ok("library exports only the registry", REGISTRY_SYMBOL)


def check_archs(rep, tree, manifest):
    entries = fatbin_entries((tree / REF_LIB).read_bytes())
    sass = sorted({a for k, a, _ in entries if k == "sass"})
    ptx = sorted({a for k, a, _ in entries if k == "ptx"})
    want = sorted({arch_number(a) for a in manifest["archs"]})
    want_ptx = [max(want)] if manifest.get("ptx") else []
    debug = [e for e in entries if e[2] & 0x2]  # the fatbinary's debug flag (-G)
    detail = f"SASS sm_{', sm_'.join(map(str, sass))}" + (f"; PTX compute_{', compute_'.join(map(str, ptx))}" if ptx else "")
    if sass != want or ptx != want_ptx or debug:
        rep.fail("device code for the configured archs, no debug", f"{detail} (want sm {want}, ptx {want_ptx})"
                 + ("; debug device code" if debug else ""))
    else:
        rep.ok("device code for the configured archs, no debug", detail)


def library_symbol_names(lib):
    """Every symbol name the shipped library holds: its objects' symbol tables (host, nm -C), the
    function names of the cubins in their fatbinaries (device), and any mangled name spelled out in
    their bytes (the names the CUDA runtime registers kernels by, which also stand for the device
    names of a compressed fatbinary)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import tuning_names  # noqa: E402 (grader/scripts/tuning_names.py)
    names = set()
    with tempfile.TemporaryDirectory() as tmp:
        run(["ar", "x", str(lib.resolve())], cwd=tmp)
        for obj in sorted(Path(tmp).iterdir()):
            names.update(tuning_names.host_symbols(str(obj)))
            device, _ = tuning_names.device_symbols(str(obj))
            raw = {m.decode() for m in re.findall(rb"_Z[A-Za-z0-9_]{4,}", obj.read_bytes())}
            names.update(tuning_names.demangle(sorted(set(device) | raw)))
    return names, tuning_names.refused


def check_tuning_names(rep, tree):
    """No shipped symbol spells the reference's tuning (tile shapes, pipeline depths): a student
    reading `nm -C` or `cuobjdump` of the library learns the API, not the solution's parameters."""
    names, refused = library_symbol_names(tree / REF_LIB)
    bad = sorted(set(refused(names)))
    what = "no symbol of the compiled reference spells its tuning"
    if bad:
        rep.fail(what, f"{len(bad)} symbol(s), e.g. {bad[0]}")
    else:
        rep.ok(what, f"{len(names)} names read (host, device, registered kernels)")


def has_gpu():
    if not shutil.which("nvidia-smi"):
        return False
    return subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0


def check_grading(rep, tree, env, log, no_gpu=False):
    grader = find_grader(tree)
    if not grader:
        rep.fail("the grader was built", "no build/*/sub-student-*/gemmlab")
        return
    listing = json.loads(run([str(grader), "list", "--json"], cwd=tree, env=env).stdout)["stages"]
    missing = [s["name"] for s in listing if not (tree / "student" / f"{s['name']}.cu").is_file()]
    if missing:
        rep.fail("every registered stage has its student/<stage>.cu", ", ".join(missing))
    else:
        rep.ok("every registered stage has its student/<stage>.cu", ", ".join(s["name"] for s in listing))
    if no_gpu:
        rep.skip("grading the stubs gives not_implemented",
                 "--no-gpu; on a GPU: python3 -m pytest -v tests/py/handout/test_handout.py")
        return
    if not has_gpu():
        rep.skip("grading the stubs gives not_implemented",
                 "no GPU here; on a GPU: python3 -m pytest -v tests/py/handout/test_handout.py")
        return
    out = tree / "handout-check.json"
    proc = run([str(grader), "check", "--no-color", "--json", str(out)], cwd=tree, env=env, log=log, check=False)
    if not out.exists():
        rep.fail("grading the stubs gives not_implemented", f"gemmlab check wrote no results (exit {proc.returncode})")
        return
    baseline = {s["name"] for s in listing if s["baseline"]}
    wrong = []
    for r in json.loads(out.read_text())["results"]:
        want = "passed" if r["stage"] in baseline else "not_implemented"
        if r["disposition"] != want:
            wrong.append(f"{r['stage']}/{r['variant']}/{r['precision']}: {r['disposition']}")
    if wrong:
        rep.fail("grading the stubs gives not_implemented", "; ".join(wrong[:6]))
    else:
        rep.ok("grading the stubs gives not_implemented", "naive passed, every other stage not implemented")


# The lab report's tests, and what they read: the report's scripts, its fixtures, the stubs (their
# fingerprints), the grader scripts the report imports, the Makefile, the tests' shared fixtures and
# course.toml's [report] table. Where the handout has all of these as this checkout has them, byte for
# byte, the tests' outcome is the same in both; `handout check --tested-here` (the repository's own
# suite, which runs them on this checkout) leaves them out of the handout's `make test` then, and runs
# them there as soon as any of them differs.
TESTED_HERE = ["tests/py/report/test_report.py", "tests/py/report/test_report_provenance.py", "tests/py/report/test_report_reading.py"]
TESTED_HERE_READS = ["report", "tests/fixtures/report", "student", "grader/scripts/fingerprint.py",
                     "grader/scripts/bench_history.py", "grader/scripts/gpu_peaks.py", "Makefile", "tests/py/conftest.py"]


def tree_digest(top, rel):
    """sha256 of the file `rel` of `top`, or of every file under it (path and bytes), the report's
    build outputs and caches left out; "" where there is none."""
    base = top / rel
    files = [base] if base.is_file() else sorted(f for f in base.rglob("*") if f.is_file()) if base.is_dir() else []
    h = hashlib.sha256()
    for f in files:
        r = f.relative_to(top).as_posix()
        if not matches(r, ["report/build", "report/report.pdf"]):
            h.update(r.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest() if files else ""


def same_report_tests(tree):
    """The report tests and everything they read, the same in the unpacked handout as here: "" or what differs."""
    for rel in TESTED_HERE + TESTED_HERE_READS:
        if tree_digest(tree, rel) != tree_digest(ROOT, rel):
            return rel
    report = lambda path: tomllib.loads(path.read_text()).get("report")
    if report(tree / "course.toml") != report(ROOT / "course.toml"):
        return "course.toml [report]"
    return ""


def check(cfg, dist_override=None, keep=False, no_gpu=False, object_cache_dir=None, tested_here=False):
    t0 = time.monotonic()
    _, _, tarball = handout_paths(cfg, dist_override)
    if not tarball.exists():
        raise HandoutError(f"{tarball} does not exist: run `make handout` first")
    scratch = Path(tempfile.mkdtemp(prefix=f"{cfg['name']}-handout-check-"))
    log = scratch / "handout-check.log"
    say(f"unpacking {tarball.name} into {scratch}")
    with tarfile.open(tarball) as tar:
        tops = {m.name.split("/", 1)[0] for m in tar.getmembers()}
        safe_extract(tar, scratch)
    rep = Report()
    if len(tops) != 1:
        rep.fail("one top-level directory", ", ".join(sorted(tops)))
        tree = scratch
    else:
        tree = scratch / tops.pop()
        rep.ok("one top-level directory", tree.name)
    manifest = json.loads((tree / MANIFEST).read_text()) if (tree / MANIFEST).exists() else {"files": {}, "archs": cfg["archs"]}

    check_contents(rep, tree, cfg, manifest)
    check_no_solution_text(rep, tree)
    check_archs(rep, tree, manifest)
    check_tuning_names(rep, tree)

    env = clean_env()
    if object_cache_dir is not None:
        # The handout's builds share this tree's stage object cache: an object is reused only for the
        # same source, headers and command (the handout's stage API headers are byte for byte this
        # tree's), so what the check proves is unchanged; its stubs and its tests' submissions are
        # compiled once, here or there. Empty: none (every stage file compiled afresh).
        env["OBJECT_CACHE"] = str(Path(object_cache_dir).resolve()) if object_cache_dir else ""
    if no_gpu:  # the CUDA runtime sees no device; the tests skip (and count) their GPU tests
        env.update(CUDA_VISIBLE_DEVICES="", GEMMLAB_TESTS_NO_GPU="1")
    left_out = ""
    if tested_here:
        differs = same_report_tests(tree)
        if differs:
            rep.ok("the report's tests run in the handout too", f"its {differs} differs from this checkout's")
        else:
            env["PYTEST_ADDOPTS"] = " ".join([env.get("PYTEST_ADDOPTS", ""), *(f"--ignore={t}" for t in TESTED_HERE)]).strip()
            left_out = (f"; left out: {', '.join(Path(t).name for t in TESTED_HERE)} (the same files, and the same "
                        f"files they read, as this checkout's, whose suite runs them)")
    jobs = os.environ.get("HANDOUT_JOBS", str(os.cpu_count() or 2))
    written = tree / "student" / WRITTEN_STAGE
    stub = written.read_bytes() if written.is_file() else None
    for target, what in ((["-j", jobs], "it builds (make)"),
                         (["-j", jobs, "test"], f"its tests pass once a student has written a stage (make test, "
                                                f"with reference/{WRITTEN_STAGE} in student/)")):
        t = time.monotonic()
        if target[-1] == "test" and stub is not None:
            shutil.copy2(ROOT / "reference" / WRITTEN_STAGE, written)
        try:
            proc = run(["make", *target], cwd=tree, env=env, log=log, check=False)
        finally:
            if stub is not None:
                written.write_bytes(stub)
        secs = time.monotonic() - t
        if proc.returncode == 0:
            summary = proc.stdout.strip().splitlines()[-1] if target[-1] == "test" else ""
            rep.ok(what, f"{summary} ({secs:.0f} s){left_out if target[-1] == 'test' else ''}".strip())
        else:
            tail = "\n        ".join(proc.stdout.splitlines()[-15:])
            rep.fail(what, f"exit {proc.returncode} after {secs:.0f} s; last lines:\n        {tail}")
            break
    else:
        check_grading(rep, tree, env, log, no_gpu)

    total = time.monotonic() - t0
    if rep.failed:
        say(f"FAILED: {len(rep.failed)} check(s) ({total:.0f} s); the unpacked handout and its log stay in {scratch}")
        return 1
    warns = sum(1 for r in rep.rows if r[0] == "warn")
    say(f"ok: the handout is fit to hand out ({total:.0f} s" + (f", {warns} warning(s)" if warns else "") + ")")
    if keep:
        say(f"kept {scratch}")
    else:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    for name, help_ in (("build", "build the handout directory and tarball"),
                        ("check", "unpack the tarball afresh and check it")):
        p = sub.add_parser(name, help=help_)
        p.add_argument("--config", default="course.toml", help="the course configuration (course.toml)")
        p.add_argument("--dist", help="output directory (default: course.toml [handout] dist)")
        if name == "build":
            p.add_argument("--object-cache", default=str(ROOT / "build" / "object-cache"),
                           help="where compiled reference objects are kept and reused (the Makefile's "
                                "OBJECT_CACHE; empty: compile every one afresh)")
            p.add_argument("--ccache", default=shutil.which("ccache") or "",
                           help="compiler cache to run nvcc through (the Makefile's CCACHE; empty: none)")
        if name == "check":
            p.add_argument("--object-cache", default=None,
                           help="the stage object cache the unpacked handout's builds share (the Makefile's "
                                "OBJECT_CACHE; empty: none; not given: the handout's own, build/object-cache)")
            p.add_argument("--keep", action="store_true", help="keep the unpacked handout")
            p.add_argument("--tested-here", action="store_true",
                           help="leave the lab report's tests out of the handout's `make test` where they and "
                                "everything they read are byte for byte this checkout's: what the repository's "
                                "own suite does, which runs them here")
            p.add_argument("--no-gpu", action="store_true",
                           help="check as on a machine without a GPU (the GPU is hidden from the handout's "
                                "build, tests and grading): what the test suite does, whose own GPU tests "
                                "grade inside an unpacked handout")
    args = ap.parse_args()
    try:
        cfg = load_config(args.config)
        if args.command == "build":
            build(cfg, args.dist, args.object_cache, args.ccache)
            return 0
        return check(cfg, args.dist, args.keep, args.no_gpu, args.object_cache, args.tested_here)
    except HandoutError as e:
        print(f"handout: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
