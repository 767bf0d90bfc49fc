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
import tomllib
from pathlib import Path

from handout_base import MANIFEST, ROOT, HandoutError, normalize, run
from handout_files import NEVER, matches
from handout_library import REF_LIB, REGISTRY_SYMBOL, arch_number, fatbin_entries, global_symbols, library_symbol_names

sys.path.insert(0, str(ROOT / "grader" / "scripts"))
import registry  # noqa: E402  (grader/scripts: the stage registry's reader)
from fingerprint import sha256_file as sha256  # noqa: E402  (the one file hasher of grader/scripts)

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
# fingerprints), the grader scripts the report imports, the Makefile, the tests' shared fixtures and
# course.toml's [report] table. Where the handout has all of these as this checkout has them, byte for
# byte, the tests' outcome is the same in both; `handout check --tested-here` (the repository's own
# suite, which runs them on this checkout) leaves them out of the handout's `make test` then, and runs
# them there as soon as any of them differs.
TESTED_HERE = ["tests/py/report/test_report.py", "tests/py/report/test_report_provenance.py", "tests/py/report/test_report_reading.py"]
TESTED_HERE_READS = ["report", "tests/fixtures/report", "student", "grader/scripts/fingerprint.py",
                     "grader/scripts/bench_history.py", "grader/scripts/gpu_peaks.py",
                     "grader/scripts/ncu_profile.py", "grader/scripts/registry.py", "grader/scripts/kernel_names.py", "Makefile", "tests/py/conftest.py"]


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


