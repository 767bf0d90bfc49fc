"""The checks of `handout.py check` on an unpacked handout: its files against HANDOUT.json and the list of
what never ships, no solution text anywhere, the compiled reference's device code and symbols, grading
the stubs; and whether the lab report's tests there are byte for byte this checkout's."""
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from pathlib import Path

from handout_base import MANIFEST, ROOT, HandoutError, normalize, run
from handout_files import NEVER, SOLUTIONS, THIRD_PARTY_DIR, matches
from handout_library import REF_LIB, REGISTRY_SYMBOL, arch_number, fatbin_entries, global_symbols, library_symbol_names

sys.path.insert(0, str(ROOT / "grader" / "scripts"))
import registry  # noqa: E402  (grader/scripts: the stage registry's reader)
from fingerprint import sha256_file as sha256  # noqa: E402  (the one file hasher of grader/scripts)

sys.path[:0] = [str(ROOT / "cluster"), str(ROOT / "cluster" / "staff")]
import similarity  # noqa: E402  (the staff's similarity measure: make similarity's, never a copy of it)

TODO_TAG = "TODO(student):"              # the one tag of student tasks (docs/student-guide.md)

# Lines of the reference sources that are not solution text: what the registry dictates (includes,
# namespaces, explicit instantiations, template heads) and the declaration and launch plumbing the
# stubs give students on purpose (kernel attributes, launch geometry, the GEMMLAB_ macros).
BOILERPLATE = re.compile(r"^(template\s+Status\s|template\s*<[^>]*>$|#|namespace\s|}\s*//\s*namespace|"
                         r"(static\s+)?__global__\s|(const\s+)?dim3\s|GEMMLAB_\w+\()")
MIN_DISTINCTIVE = 24  # characters (whitespace collapsed) for a line to count as distinctive


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
    names = registry.declared_functions()
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


# ---- build: no shipped file holds a solution -----------------------------------------------------

C_SOURCES = (".cu", ".cuh", ".h", ".hpp", ".cpp", ".c")
FENCE = re.compile(r"^(```|~~~)[^\n]*\n(.*?)^\1", re.S | re.M)


def code_for_the_measure(work, rel, data):
    """`data` as the staff's measure compares a file (similarity.comparable), written to a .cu file of
    `work` named for `rel` (the measure tokenizes by the file's name: CUDA)."""
    path = work / (rel.replace("/", "__").removesuffix(".part").removesuffix(".cu") + ".cu")
    path.write_text(similarity.comparable(data))
    return path


def shipped_code(tree, files, work):
    """{shipped file: its code as compared}: a C or CUDA source as it is, the fenced code blocks of a
    Markdown file (a kernel in Markdown is found only as code). The header libraries of THIRD_PARTY_DIR
    are not ours, and the other files hold no code in these languages (a CUDA loop in a Python string is
    a string to the measure): check_no_solution_text looks for the reference's lines in every file."""
    out = {}
    for rel in sorted(files):
        path = Path(tree) / rel
        if rel.startswith(f"{THIRD_PARTY_DIR}/") or not path.is_file():
            continue
        if path.suffix in C_SOURCES:
            out[rel] = path.read_bytes()
        elif path.suffix == ".md":
            blocks = [m.group(2) for m in FENCE.finditer(path.read_text(errors="replace"))]
            if blocks:
                out[rel] = "\n".join(blocks).encode()
    return out


def solutions_by_stage():
    """{stage: [solution]} of SOLUTIONS (paths relative to the root), each under the stage its name starts
    with; the files of no stage (reference/tuning/candidates.h) are left out."""
    stages = set(registry.stage_names())
    out = {}
    for pattern in SOLUTIONS:
        for path in sorted(ROOT.glob(pattern)):
            stage = re.match(r"[a-z0-9]*", path.name).group(0)
            if stage in stages and path.is_file():
                out.setdefault(stage, []).append(path.relative_to(ROOT).as_posix())
    return out


def solution_matches(tree, files, settings):
    """[(shipped file, solution, similarity)], most similar first, each file once, of `files` (relative to
    `tree`) whose code the staff's similarity measure (cluster/staff/similarity.py: compare_stage, with the
    course's [similarity] settings) finds in a solution of SOLUTIONS at or above settings["report_threshold"]:
    what make similarity would flag in a student's hand-in. As there, the handout's stubs (student/) are
    boilerplate, never counted as shared: a stub passes. The solutions of a stage given complete (naive)
    are not compared. One comparison for all stages (each file is tokenized once), every stub left out."""
    stubs = {p.name: p.read_bytes() for p in sorted((ROOT / "student").glob("*.cu"))}
    run = settings["noise_threshold"]
    with tempfile.TemporaryDirectory(prefix="gemmlab-handout-similarity-") as work:
        work = Path(work)
        for sub in ("stubs", "shipped", "solutions"):
            (work / sub).mkdir()
        boilerplate = []  # each stub as make similarity leaves it out: between two seams
        for name, stub in stubs.items():
            boilerplate.append(work / "stubs" / name)
            boilerplate[-1].write_text(similarity.seam(name, run) + similarity.comparable(stub) + similarity.seam(name, run))
        # The solutions take the students' place and the shipped files the archive's: every solution is
        # compared with every shipped file, the shipped files not with each other.
        entries = [similarity.Entry(rel, "student", code_for_the_measure(work / "solutions", rel, (ROOT / rel).read_bytes()))
                   for stage, solutions in solutions_by_stage().items()
                   if not similarity.given_complete(stubs.get(f"{stage}.cu", b"")) for rel in solutions]
        entries += [similarity.Entry(rel, "archive", code_for_the_measure(work / "shipped", rel, data),
                                     as_handed_out=data in stubs.values())
                    for rel, data in shipped_code(tree, files, work).items()]
        try:
            result = similarity.compare_stage("solutions.cu", boilerplate, entries, settings)
        except similarity.SimilarityError as e:
            raise HandoutError(f"comparing the shipped files with the solutions: {e}") from None
    best = {}
    for p in result.pairs:  # most similar first
        if p.b.kind == "archive" and p.similarity >= settings["report_threshold"]:
            best.setdefault(p.b.label, (p.b.label, p.a.label, p.similarity))
    return list(best.values())


def solution_error(matches, threshold):
    """The HandoutError of solution_matches' matches: each file, the solution it matches and how much."""
    lines = [f"{f} holds solution code: {100 * s:.0f}% of its code is also in {sol}" for f, sol, s in matches]
    return HandoutError(
        "\n  ".join(lines) + f"\n  (the staff's similarity measure, cluster/staff/similarity.py, as make similarity "
        f"compares hand-ins; a match is {100 * threshold:.0f}% or more, course.toml [similarity] report_threshold). "
        "A handout shows where a student's code goes, never the code: take it out of "
        f"{'these files' if len(matches) > 1 else matches[0][0]}, then make handout again.")


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
# fingerprints), the grader scripts the report imports, the Makefile, the tests' conftest.py and the
# support modules they import, and course.toml's [report] table. Where the handout has all of these as
# this checkout has them, byte for byte, the tests' outcome is the same in both; `handout check
# --tested-here` (the repository's own suite, which runs them on this checkout) leaves them out of the
# handout's `make test` then, and runs them there as soon as any of them differs.
TESTED_HERE = ["tests/py/report/test_report.py", "tests/py/report/test_report_provenance.py", "tests/py/report/test_report_reading.py"]
TESTED_HERE_READS = ["report", "tests/fixtures/report", "student", "grader/scripts/fingerprint.py",
                     "grader/scripts/bench_history.py", "grader/scripts/gpu_peaks.py",
                     "grader/scripts/ncu_profile.py", "grader/scripts/registry.py", "grader/scripts/kernel_names.py",
                     "grader/scripts/stage_sass.py", "Makefile", "tests/py/conftest.py",
                     "tests/py/support/__init__.py", "tests/py/support/paths.py", "tests/py/support/gpu.py",
                     "tests/py/support/reports.py"]


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


