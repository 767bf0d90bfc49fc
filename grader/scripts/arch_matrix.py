#!/usr/bin/env python3
"""The compile matrix (`make arch-matrix`): every .cu file of the kit, for every supported architecture.

  part cuda13  compiles (nvcc -c, no link) every .cu file — the grader's (grader/src: its device code;
               host code that calls CUDA is .cpp), any of its GPU tests (tests/gpu), the probes (tests/probes), the reference (reference/*.cu, and the tuning
               ladder of reference/tuning; with MATRIX_TUNE=1 also every file with its tuning
               candidates, -DGEMMLAB_TUNE, as reference/tuning/run.sh --tune builds them), the stubs
               (student/) — with the Makefile's flags for its kind of file, for every architecture of
               the toolkit's list (ARCHS_CUDA13). These are what ships to students or grades them:
               every one of them, for every architecture.
               The test submissions (tests/broken/*, tests/gallery/*, tests/profile_padding: the
               bank-conflict experiment's kernel) are the tests' own: a file of
               theirs with the same bytes as a stub (and no header beside it) is the stub, compiled
               above; a file that holds architecture-dependent device code (ARCH_DEPENDENT below:
               __CUDA_ARCH__, inline PTX, the headers of per-architecture device features) is
               compiled for every architecture too; every other one for one architecture, the one
               the tests build (--one-arch, the Makefile's ARCH), with the Makefile's own command for
               a stage file and through the stage object cache: the gallery's and the broken
               submissions' builds compile the same file with the same command, so the suite
               compiles it once, whichever comes first.
               A kit file the build of this tree has compiled for ARCH with the same flags (--built:
               its object, up to date with the source and every header its .d file names) is not
               compiled for ARCH again, and for the other architectures only its device code is
               (nvcc -fatbin): its host side, the same for every architecture, is the build's.
               `make test` builds them all before its tests run.
               One nvcc per file holds every architecture (-gencode each: the host side is compiled
               once, about 2.5x faster than one nvcc per architecture); a file that fails is compiled
               again per architecture, each with its own front end, to name each one that breaks and
               its first error. Architectures whose device source is the same text (the file
               preprocessed for each, nvcc -E: what __CUDA_ARCH__ and the headers' per-architecture
               declarations leave of it) share one front end (cicc: parsing and optimizing, three
               quarters of a compile) and each gets its own ptxas: -gencode arch=compute_80,
               code=[sm_80,sm_86,sm_89]. Their PTX is the same but for its .target line, so each
               architecture's machine code is what its own front end would have given ptxas; a file
               whose device code tells sm_86 from sm_80 (#if __CUDA_ARCH__ >= 860) gets a front end
               for each. Arch-specific targets (sm_90a) always keep their own. Compiles run
               through ccache, so a run on unchanged sources takes about 20 s on two cores (the
               preprocessing that finds the shared front ends runs each time). The largest files start
               first (their compiles are the long pole).
  part cuda12  with CUDA 12 installed (`make setup-cuda12`), a real build for each architecture of
               ARCHS_CUDA12: `make CUDA_HOME=<CUDA 12> ARCH=<arch> grader`: the judge, the runners, the
               reference and the student's library, linked, each in its own build directory.
               Without CUDA 12 this part is skipped and says so ("arch-matrix: SKIPPED ...").

The Makefile passes the flags, the architectures and their nvcc targets (never a copy here):
  arch_matrix.py --part cuda13 --nvcc "ccache nvcc" --nvcc-opts "..." --arch "sm_75=-arch=sm_75" ... \
      --one-arch sm_90 --stage-compile "nvcc <the Makefile's STAGE_NVCCFLAGS>" --object-cache build/object-cache \
      --stage-api "grader/include/gemmlab/stage_api.h ..." --built "grader/src/judge/x.cu=build/sm_90/grader/judge/x.cu.o ..."
Exit status 0 when every file compiles for every architecture (a gallery entry that is meant not to
build may fail, with the message its expected.json names), 1 otherwise, with one line per failure:
  FAIL reference/tensor.cu [sm_75]: ptxas error   : ...
"""
import argparse
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "grader" / "scripts"))
import object_cache  # noqa: E402  (grader/scripts, beside this file)

GRADER_INCLUDES = ["-Igrader/include", "-Igrader/src"]
STAGE_INCLUDES = ["-Igrader/include"]

# What makes a test submission's file architecture-dependent, so that it is compiled for every
# architecture like the kit's own files: code that differs per architecture by construction
# (__CUDA_ARCH__ and its kin), inline PTX (an asm statement whose text opens with an instruction and its
# qualifiers, "mma.sync...", "cp.async...", or a { block }: PTX instructions exist from some
# architecture on; host assembly such as "syscall" and the asm("name") of a symbol are not), and the
# headers whose device functions exist per architecture (half, bfloat16 and FP8 arithmetic, the tensor
# cores' WMMA, asynchronous copies and barriers, libcu++'s and cooperative groups' device features, the
# per-architecture intrinsics). Anything else in a stage file (kernels in plain CUDA C++, host code)
# compiles the same way for every architecture.
ARCH_DEPENDENT = re.compile(
    r"__CUDA_ARCH\w*__|"
    r"(?:\basm\b|__asm__)\s*(?:volatile\b|__volatile__)?\s*\(\s*\"\s*(?:\{|[a-z][a-z0-9_]*\.)|"
    r"#\s*include\s*[<\"](?:mma\.h|cuda_fp16|cuda_bf16|cuda_fp8|cuda_fp6|cuda_fp4|cuda_pipeline|cuda_awbarrier|"
    r"cuda/|cooperative_groups|sm_\d+_intrinsics|crt/sm_)")
HEADER_SUFFIXES = object_cache.HEADER_SUFFIXES
# The preprocessor's line markers (# 12 "file" 1 3, #line 12): where the text came from, not what it is
# (a #pragma stays: two architectures that unroll differently are not the same source).
LINE_MARKER = re.compile(rb"^#\s*(?:line\s+)?\d+(?:\s|$)")


class Unit:
    """One compile: a source file with the flags of its kind (as the Makefile or run.sh builds it).
    archs: "all" (every architecture of the list) or "one" (the tests' architecture, as a stage file)."""

    def __init__(self, source, kind, flags, expect_failure=(), archs="all", why=""):
        self.source = source          # path relative to ROOT, as the user knows it
        self.kind = kind              # a short label for the report
        self.flags = flags
        self.expect_failure = list(expect_failure)  # messages that make a failure the expected one
        self.archs = archs
        self.why = why                # why a test submission's file is compiled for every architecture

    @property
    def label(self):
        return f"{self.source}" + (f" ({self.kind})" if self.kind else "")


def rel(path):
    return str(Path(path).relative_to(ROOT))


def gallery_expected_failures():
    """{file: [messages]} of gallery stage files meant not to compile, with the messages their entry's
    expected.json names: "build": {"rejected": {"<stage>": ["<stage>.cu does not compile", "<message>"]}}
    (the build goes on without that file), or the older "build": {"ok": false, "stage", "message"}."""
    out = {}
    for exp in sorted((ROOT / "tests/gallery").glob("*/expected.json")):
        build = json.loads(exp.read_text()).get("build", {})
        for stage, messages in (build.get("rejected") or {}).items():
            if any("does not compile" in m for m in messages):
                out[rel(exp.parent / f"{stage}.cu")] = [m for m in messages if "does not compile" not in m]
        if not build.get("ok", True) and build.get("stage"):
            out[rel(exp.parent / f"{build['stage']}.cu")] = build.get("message", [])
    return out


def arch_dependent(path):
    """What makes a stage file (or a header beside it) architecture-dependent, or "" (ARCH_DEPENDENT)."""
    for p in [path, *(q for q in sorted(path.parent.iterdir()) if q.suffix in HEADER_SUFFIXES and q.is_file())]:
        m = ARCH_DEPENDENT.search(p.read_text(errors="replace"))
        if m:
            return f"{' '.join(m.group(0).split())} in {p.name}"
    return ""


def has_neighbours(directory):
    """A header or a directory beside a stage file: what an #include "..." could find there first."""
    return any(p.is_dir() or p.suffix in HEADER_SUFFIXES for p in directory.iterdir())


TUNE = os.environ.get("MATRIX_TUNE", "") not in ("", "0")


def units():
    """Every .cu file of the kit, each with the flags its build uses, for every architecture; and the
    test submissions' files (module docstring): a symbolic link to a file already listed with the same
    flags (the stubs the gallery and the broken submissions share), or a copy of a stub with nothing
    beside it, is left out; an architecture-dependent one for every architecture; the others for one."""
    stage = ["-Xcompiler", "-fPIC", *STAGE_INCLUDES]
    found, seen, stubs = [], set(), {}

    def add(path, kind, flags, expect=(), archs="all", why=""):
        key = (Path(path).resolve(), tuple(flags))
        if key in seen:
            return
        seen.add(key)
        found.append(Unit(rel(path), kind, flags, expect, archs, why))

    for p in sorted((ROOT / "grader/src").rglob("*.cu")):
        add(p, "", GRADER_INCLUDES)
    for p in sorted((ROOT / "tests/gpu").glob("*.cu")) + sorted((ROOT / "tests/probes").glob("*.cu")):
        add(p, "", GRADER_INCLUDES)
    for p in sorted((ROOT / "reference").glob("*.cu")):
        add(p, "", [*stage, "-DGEMMLAB_NS=reference"])
    # reference/tuning/run.sh: the ladder and the reference's stage files, plain and with the tuning
    # candidates (-DGEMMLAB_TUNE); a stage file without GEMMLAB_TUNE is the same with either.
    # The candidates (-DGEMMLAB_TUNE) are an instructor's tool, compiled on request only
    # (MATRIX_TUNE=1): every one of them for every arch would double the matrix's cost.
    tune = ["-DGEMMLAB_TUNE"]
    for p in sorted((ROOT / "reference/tuning").glob("*.cu")):
        add(p, "", GRADER_INCLUDES)
        if TUNE:
            add(p, "tune", [*GRADER_INCLUDES, *tune])
    for p in sorted((ROOT / "reference").glob("*.cu")):
        if TUNE and "GEMMLAB_TUNE" in p.read_text(errors="replace"):
            add(p, "tune", [*GRADER_INCLUDES, *tune])
    submission = [*stage, "-DGEMMLAB_NS=submission"]
    for p in sorted((ROOT / "student").glob("*.cu")):
        add(p, "", submission)
        stubs[p.read_bytes()] = rel(p)
    stub_dir_clean = not has_neighbours(ROOT / "student")
    expected = gallery_expected_failures()
    tests = [*sorted((ROOT / "tests/broken").glob("*/")),
             *sorted(p.parent for p in (ROOT / "tests/gallery").glob("*/expected.json")),
             ROOT / "tests/profile_padding"]  # tests/gpu_session/gpu_profile_padding.sh's tiled kernel
    for d in tests:
        clean = stub_dir_clean and not has_neighbours(d)
        for p in sorted(d.glob("*.cu")):
            if (p.resolve(), tuple(submission)) in seen:
                continue  # a link to a file listed above
            if clean and stubs.get(p.read_bytes()):
                continue  # the same bytes as a stub, with nothing beside it to include instead
            why = arch_dependent(p)
            add(p, "", submission, expected.get(rel(p), ()), "all" if why else "one", why)
    return found


def gencode(flags):
    """The Makefile's nvcc target of one architecture as -gencode words (several go in one nvcc; -arch
    cannot be given twice)."""
    words = shlex.split(flags)
    m = re.fullmatch(r"-arch=sm_(\w+)", words[0]) if len(words) == 1 else None
    return ["-gencode", f"arch=compute_{m.group(1)},code=sm_{m.group(1)}"] if m else words


ERROR = re.compile(r"\berror\b", re.IGNORECASE)
NOT_AN_ERROR = re.compile(r"errors? detected in the compilation", re.IGNORECASE)


def first_error(output):
    for line in output.splitlines():
        if ERROR.search(line) and not NOT_AN_ERROR.search(line):
            return line.strip()
    lines = [l.strip() for l in output.splitlines() if l.strip()]
    return lines[-1] if lines else "(no output)"


def dependencies(obj):
    """The files the dependency file of `obj` (.d, written by the compile: nvcc -MMD, or the object
    cache) names for it, its source among them; None where there is none to read."""
    deps = Path(obj).with_suffix(".d")
    if not deps.is_file():
        return None
    # The first rule, "<obj> : <source> <headers>" (its lines joined); the rules after it are -MP's
    # empty ones for the headers.
    rule = deps.read_text(errors="replace").replace("\\\n", " ").split("\n", 1)[0]
    target, colon, names = rule.partition(":")
    if not colon or not target.strip():
        return None
    return names.split()


def up_to_date(obj, source):
    """Whether `obj` is newer than `source` and than every file its dependency file names, as make
    would judge it."""
    obj = Path(obj)
    names = dependencies(obj)
    if not obj.is_file() or names is None:
        return False
    names = set(names) | {str(source)}
    mtime = obj.stat().st_mtime
    try:
        return all(Path(n).stat().st_mtime <= mtime for n in names)
    except OSError:  # a header named there is gone: make would rebuild
        return False


def capturing(output):
    """A compile function for object_cache.run_cached: runs the command in the tree, keeps what it
    printed in output[0], returns its exit status."""
    def compile_(command):
        p = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace")
        output[0] = p.stdout
        return p.returncode
    return compile_


class Matrix:
    def __init__(self, args):
        self.nvcc = shlex.split(args.nvcc)
        self.opts = shlex.split(args.nvcc_opts)
        self.archs = [(a, gencode(f)) for a, f in (spec.split("=", 1) for spec in args.arch)]
        self.out = ROOT / args.out
        self.jobs = args.jobs
        self.only = args.only
        # The one architecture of a test submission's file that is not architecture-dependent, and the
        # Makefile's command for a stage file (its $(NVCC) $(STAGE_NVCCFLAGS)), its object cache and
        # the stage API headers its key holds: the same compile as the tests' builds of that file.
        self.one_arch = args.one_arch
        self.stage_compile = shlex.split(args.stage_compile)
        self.object_cache = args.object_cache
        # The device code of a file the build compiled (nvcc -fatbin, which ccache does not keep): kept
        # by content in the user's cache, as ccache keeps the rest, so that a fresh clone with a warm
        # ccache compiles none of it again (what is not stored again in DEVICE_CACHE_DAYS is removed).
        self.device_cache = args.device_cache or args.object_cache
        self.stage_api = args.stage_api.split()
        # {source: object} of the kit files the build of this tree compiles for ARCH with the flags
        # the matrix uses (the Makefile's MATRIX_BUILT)
        self.built = dict(w.split("=", 1) for w in args.built.split())

    def device_source(self, unit, arch):
        """A digest of the unit's device source for one architecture (nvcc -E with that architecture:
        the text __CUDA_ARCH__ and the headers leave, line markers dropped), or None where it does not
        preprocess (the compile will say why)."""
        p = subprocess.run([*self.nvcc, *self.opts, f"-arch={arch}", *unit.flags, "-E", unit.source], cwd=ROOT,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        if p.returncode != 0:
            return None
        text = b"\n".join(line for line in p.stdout.splitlines() if not LINE_MARKER.match(line))
        return hashlib.sha256(text).hexdigest()

    def front_ends(self, unit, archs):
        """The -gencode words for the architectures, those with the same device source sharing one
        front end (module docstring); and [(architecture, the one whose front end it shares)]."""
        groups, words = {}, []
        for name, g in archs:
            plain = g == gencode(f"-arch={name}")  # -gencode arch=compute_N,code=sm_N (not sm_90a)
            key = self.device_source(unit, name) if plain else None
            if key is None:
                words += g
                continue
            groups.setdefault(key, []).append(name)
        shared = []
        for names in groups.values():
            first = names[0].split("_", 1)[1]
            words += ["-gencode", f"arch=compute_{first},code=[{','.join(names)}]"]
            shared += [(n, names[0]) for n in names[1:]]
        return words, shared

    def compile(self, unit, archs, share=False, device_only=False):
        """nvcc -c of one unit for the given architectures (with share, those of the same device source
        through one front end); device_only: nvcc -fatbin, the device code alone (where the build has
        compiled the host side with the same flags); returns (ok, output, [(architecture, whose front
        end it shared)])."""
        tag = "-".join(a for a, _ in archs) if len(archs) == 1 else "all"
        obj = self.out / f"{unit.source}{'.' + unit.kind if unit.kind else ''}.{tag}.{'fatbin' if device_only else 'o'}"
        obj.parent.mkdir(parents=True, exist_ok=True)
        targets, shared = self.front_ends(unit, archs) if share and len(archs) > 1 else ([w for _, g in archs for w in g], [])
        cmd = [*self.nvcc, *self.opts, *targets, *unit.flags, "-fatbin" if device_only else "-c", unit.source, "-o", str(obj)]
        output = [""]
        compile_ = capturing(output)
        headers = dependencies(self.built[unit.source]) if device_only and self.device_cache else None
        if headers is not None:
            # ccache keeps no -fatbin: the device cache does, under the headers the build's .d names
            rc = object_cache.run_cached(self.device_cache, cmd, unit.source, str(obj),
                                         sorted(set(headers) - {unit.source}), say=lambda _: None, compile_=compile_)
        else:
            rc = compile_(cmd)
        return rc == 0, output[0], shared

    def compile_as_stage(self, unit):
        """A test submission's file for the one architecture, as the Makefile compiles a stage file of
        the submission it is in ($(NVCC) $(STAGE_NVCCFLAGS) -DGEMMLAB_NS=submission -c $< -o $@, through
        the object cache with the same key: the stage API headers and the headers beside it); returns
        (ok, output, whether the object cache held it)."""
        source = ROOT / unit.source  # $< is $(SUB_DIR)/<file>.cu, an absolute path
        obj = self.out / f"{unit.source}.{self.one_arch}.o"
        obj.parent.mkdir(parents=True, exist_ok=True)
        cmd = [*self.stage_compile, "-DGEMMLAB_NS=submission", "-c", str(source), "-o", str(obj)]
        depends = [*self.stage_api, *sorted(str(h) for h in source.parent.glob("*.h"))]  # $(wildcard $(SUB_DIR)/*.h)
        output, hit = [""], [False]
        compile_ = capturing(output)
        if self.object_cache:
            rc = object_cache.run_cached(self.object_cache, cmd, str(source), str(obj), depends,
                                         say=lambda _: hit.__setitem__(0, True), compile_=compile_)
        else:
            rc = compile_(cmd)
        return rc == 0 and obj.is_file(), output[0], hit[0]

    def check(self, unit):
        """Compiles a unit for its architectures; returns [(arch, first error)] of the ones that broke,
        and a note (the failure its gallery entry expects; where a one-architecture object came from)."""
        note = None
        if unit.archs == "one":
            ok, out, hit = self.compile_as_stage(unit)
            note = (f"{self.one_arch} only (no architecture-dependent device code)"
                    + ("; the object cache had it from the tests' build of the same file" if hit else ""))
        else:
            archs = self.archs
            obj = self.built.get(unit.source) if not unit.kind else None
            device_only = False
            if obj and self.one_arch in [a for a, _ in archs] and up_to_date(obj, unit.source):
                archs = [a for a in archs if a[0] != self.one_arch]
                note = f"{self.one_arch}: compiled by the build, {obj}; the others' device code"
                device_only = True  # the host side is the same for every architecture: the build compiled it
            ok, out, shared = self.compile(unit, archs, share=True, device_only=device_only)
            if unit.why:
                note = f"a test submission's file, every architecture: {unit.why}"
            if shared:
                fronts = {}
                for name, first in shared:
                    fronts.setdefault(first, []).append(name)
                note = "; ".join(filter(None, [note, ", ".join(f"{'+'.join(ns)} through {f}'s front end"
                                                               for f, ns in fronts.items()) + " (the same device source)"]))
        if ok:
            return [], note
        if unit.expect_failure and any(m in out for m in unit.expect_failure):
            return [], f"fails to build, as its gallery entry expects ({first_error(out)})"
        if unit.archs == "one":
            return [(self.one_arch, first_error(out))], note
        per_arch = [(a[0], *self.compile(unit, [a], device_only=device_only)) for a in archs]  # within the jobs already running
        broken = [(arch, first_error(o)) for arch, ok1, o, _ in per_arch if not ok1]
        return broken or [("all", first_error(out))], note

    def run(self):
        todo = [u for u in units() if not self.only or any(o in u.source for o in self.only.split(","))]
        if not self.one_arch:  # no stage compile given: every file for every architecture
            for u in todo:
                u.archs = "all"
        # Largest first: the longest compiles start at once instead of last, behind the small ones.
        todo.sort(key=lambda u: (u.archs != "all", -(ROOT / u.source).stat().st_size))
        every = [u for u in todo if u.archs == "all"]
        names = " ".join(a for a, _ in self.archs)
        single = len(todo) - len(every)
        print(f"arch-matrix: {len(every)} files x {len(self.archs)} architectures ({names})"
              + (f", {single} test submissions' files x {self.one_arch} (no architecture-dependent device code)"
                 if single else "") + f", {self.jobs} at a time, compile only", flush=True)
        t0 = time.time()
        failures = []

        def one(unit):
            t = time.time()
            broken, note = self.check(unit)
            state = "FAIL " + ",".join(a for a, _ in broken) if broken else "ok"
            print(f"  {state:14s} {time.time() - t:6.1f} s  {unit.label}" + (f": {note}" if note else ""), flush=True)
            return unit, broken

        with ThreadPoolExecutor(self.jobs) as pool:
            for unit, broken in pool.map(one, todo):
                failures += [(unit, arch, err) for arch, err in broken]
        prune(self.device_cache, DEVICE_CACHE_DAYS)
        secs = time.time() - t0
        for unit, arch, err in failures:
            print(f"FAIL {unit.label} [{arch}]: {err}")
        files = len({u.label for u, _, _ in failures})
        print(f"arch-matrix: {len(every)} files x {len(self.archs)} architectures"
              + (f" and {single} x {self.one_arch}" if single else "") + f" in {secs:.0f} s: "
              + (f"{files} file(s) fail, {len(failures)} file x architecture pair(s) (listed above)" if failures
                 else "every file compiles for every architecture it is built for"), flush=True)
        return 1 if failures else 0


DEVICE_CACHE_DAYS = 30


def prune(cache, days):
    """Removes what `cache` has stored (and not used again: a hit does not touch it) more than `days` ago."""
    if not cache or not Path(cache).is_dir():
        return
    limit = time.time() - days * 86400
    for f in sorted(Path(cache).rglob("*"), reverse=True):  # a key's folder after what it holds
        try:
            if f.is_file() and f.stat().st_mtime < limit:
                f.unlink()
            elif f.is_dir() and not any(f.iterdir()):
                f.rmdir()
        except OSError:
            pass


def cuda12_builds(args):
    """make CUDA_HOME=<CUDA 12> ARCH=<arch> grader for each CUDA 12 architecture: the judge, the runners,
    the reference and the student library, linked (the test binaries are the CUDA 13 build's)."""
    home = Path(args.cuda12_home)
    if not (home / "bin/nvcc").exists():
        print(f"arch-matrix: SKIPPED the CUDA 12 builds ({' '.join(args.cuda12_archs.split())}): CUDA 12 is not "
              f"installed in {home} (`make setup-cuda12` installs it)", flush=True)
        return 0
    status = 0
    for arch in args.cuda12_archs.split():
        cmd = ["make", "--no-print-directory", f"-j{args.jobs}", f"CUDA_HOME={home}", f"ARCH={arch}", "SUBMISSION=student", "grader"]
        print(f"arch-matrix: {' '.join(cmd)}", flush=True)
        t0 = time.time()
        p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
        if p.returncode == 0:
            print(f"  ok   {time.time() - t0:6.1f} s  CUDA 12 build for {arch} (the grader, the reference, the student library) linked",
                  flush=True)
        else:
            status = 1
            print(p.stdout[-4000:])
            print(f"FAIL CUDA 12 build for {arch}: {first_error(p.stdout)}", flush=True)
    return status


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=["cuda13", "cuda12", "all"], default="all")
    ap.add_argument("--nvcc", required=True, help="the compile command's head, e.g. 'ccache /usr/local/cuda/bin/nvcc'")
    ap.add_argument("--nvcc-opts", default="", help="the Makefile's NVCC_OPTS")
    ap.add_argument("--arch", action="append", default=[], metavar="ARCH=FLAGS",
                    help="an architecture and the Makefile's nvcc flags for it, e.g. sm_80=-arch=sm_80 (repeated)")
    ap.add_argument("--out", default="build/arch-matrix", help="where the objects go (relative to the tree)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--only", default="", help="only the files whose path holds one of these (comma-separated)")
    ap.add_argument("--one-arch", default="",
                    help="the architecture a test submission's file without architecture-dependent device code is "
                         "compiled for (the Makefile's ARCH, the one the tests build); empty: every file for every one")
    ap.add_argument("--stage-compile", default="",
                    help="the Makefile's command for a stage file, $(NVCC) $(STAGE_NVCCFLAGS), for --one-arch")
    ap.add_argument("--object-cache", default="", help="the Makefile's OBJECT_CACHE (empty: none)")
    ap.add_argument("--device-cache", default="",
                    help="where the device code of a file the build compiled is kept (the Makefile's MATRIX_CACHE, "
                         "in the user's cache; empty: the object cache)")
    ap.add_argument("--stage-api", default="", help="the Makefile's STAGE_API: the headers in an object's key")
    ap.add_argument("--built", default="",
                    help="SOURCE=OBJECT pairs: the kit files the build compiles for --one-arch with the same flags "
                         "(the Makefile's MATRIX_BUILT); up to date, that architecture is not compiled again")
    ap.add_argument("--cuda12-home", default="", help="the CUDA 12 toolkit (make setup-cuda12)")
    ap.add_argument("--cuda12-archs", default="", help="the architectures to build with CUDA 12")
    args = ap.parse_args()
    if args.one_arch and not args.stage_compile:
        ap.error("--one-arch needs --stage-compile")
    os.chdir(ROOT)  # the commands' and the object cache's paths are relative to the tree

    status = 0
    if args.part in ("cuda13", "all"):
        if not args.arch:
            ap.error("no --arch given")
        status |= Matrix(args).run()
    if args.part in ("cuda12", "all"):
        status |= cuda12_builds(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
