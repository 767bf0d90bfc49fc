"""The gallery's shared code: entries and their expectations, building them, the symbol scan, and
comparing dispositions. Used by tests/gallery/run_gallery.py (the GPU sweep, `make test-gallery`)
and by tests/py/submissions/test_gallery*.py (what CI can do without a GPU).

An entry is a directory of tests/gallery/ holding expected.json (format in docs/gallery.md). Keys of
its `check`/`grade` tables are "stage", "stage/precision" or "stage/variant/precision"; the most
specific key that matches a result decides; a value is a disposition or a list of allowed ones.
"""
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GALLERY = ROOT / "tests" / "gallery"
sys.path.insert(0, str(ROOT / "grader" / "scripts"))
import registry  # noqa: E402
import scan_symbols  # noqa: E402

PRECISIONS = ("float", "double")


class Entry:
    def __init__(self, path):
        self.path = Path(path)
        self.name = self.path.name
        self.expected = json.loads((self.path / "expected.json").read_text())

    @property
    def builds(self):
        return self.expected.get("build", {}).get("ok", True)

    def __repr__(self):
        return f"Entry({self.name})"


def entries(only=None):
    """Every gallery entry (a directory with expected.json), sorted; `only` limits them by name."""
    found = [Entry(p.parent) for p in sorted(GALLERY.glob("*/expected.json"))]
    if only:
        wanted = set(only)
        unknown = wanted - {e.name for e in found}
        if unknown:
            raise SystemExit(f"no gallery entry named {', '.join(sorted(unknown))}")
        found = [e for e in found if e.name in wanted]
    return found


def sub_build(build, submission):
    """$(SUB_BUILD) of the Makefile for this build directory and submission directory."""
    sub_dir = str(Path(submission).resolve())
    cksum = subprocess.run(["cksum"], input=sub_dir.encode(), capture_output=True, check=True).stdout.split()[0]
    return Path(build) / f"sub-{Path(sub_dir).name}-{cksum.decode()}"


def make(build, submission, targets=(), jobs=2, arch=None, extra=()):
    """Runs make for a submission; returns the CompletedProcess (output merged)."""
    cmd = ["make", "--no-print-directory", f"-j{jobs}", f"BUILD={build}", f"SUBMISSION={submission}"]
    if arch:
        cmd.append(f"ARCH={arch}")
    cmd += list(extra) + [str(t) for t in targets]
    return subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def stage_sources(entry):
    return sorted(entry.path.glob("*.cu"))


def grader_build(build):
    """$(GRADER_BUILD) of the Makefile for this build directory."""
    return Path(build) / "grader"


def scan(build, entry):
    """The symbol check of an entry's built objects (they must exist), as the Makefile runs it."""
    sb = sub_build(build, entry.path)
    objects = [sb / "stages" / f"{src.stem}.o" for src in stage_sources(entry)]
    exports = grader_build(build) / "submission_exports.o"
    owner, math = scan_symbols.load_protected(grader_build(build) / "protected-symbols.json")
    return scan_symbols.scan([o for o in objects if o.exists() or Path(f"{o}.failed").exists()],
                             exports if exports.exists() else None, registry.stage_names(), owner, math,
                             registry.entry_point_runs())


def compare_scan(entry, result):
    """Mismatches between an entry's expected scan and a scan result, as sentences."""
    problems = []
    expected = entry.expected.get("scan", {})
    # Stages the build leaves out for not compiling or lacking an entry point: the texts their problem says.
    by_build = entry.expected.get("build", {}).get("rejected", {})
    got = result["stages"]
    for stage in sorted(set(expected) | set(got) | set(by_build)):
        if stage in by_build:
            if stage not in got:
                problems.append(f"build: expected stage {stage} to be rejected; it was not")
            else:
                problems += [f"build: the problem of stage {stage} does not say '{text}': {got[stage]['problem']}"
                             for text in by_build[stage] if text not in got[stage]["problem"]]
            continue
        if stage not in got:
            problems.append(f"scan: expected stage {stage} to be rejected (for {', '.join(expected[stage])}); "
                            f"it was not")
        elif stage not in expected:
            problems.append(f"scan: stage {stage} was rejected unexpectedly: {got[stage]['problem']}")
        else:
            missing = [s for s in expected[stage]
                       if not any(x == s or x.startswith(s + "(") for x in got[stage]["symbols"])]
            if missing:
                problems.append(f"scan: stage {stage} rejected without naming {', '.join(missing)} "
                                f"(named: {', '.join(got[stage]['symbols'])})")
            if not all(s.split("(")[0] in got[stage]["problem"] for s in got[stage]["symbols"][:1]):
                problems.append(f"scan: the problem of stage {stage} does not name its symbol")
    if any(src.name not in result["files"] for src in stage_sources(entry)):
        return problems  # a file was not built here: entry points are missing for that reason
    want_missing = entry.expected.get("build", {}).get("scan_missing", [])
    got_missing = [m["symbol"] for m in result["missing"]]
    for sym in want_missing:
        if not any(sym in g for g in got_missing):
            problems.append(f"scan: expected the missing entry point {sym} to be found; found {got_missing}")
    if not want_missing and got_missing:
        problems.append(f"scan: unexpected missing entry points {got_missing}")
    return problems


def allowed(value):
    return set(value) if isinstance(value, list) else {value}


def key_matches(key, r):
    parts = key.split("/")
    if parts[0] != r["stage"]:
        return 0
    if len(parts) == 1:
        return 1
    if len(parts) == 2:
        return 2 if parts[1] in (r["precision"], r.get("variant", "")) else 0
    return 3 if parts[1] == r.get("variant", "") and parts[2] == r["precision"] else 0


def compare_results(table, results, what, xfail=None):
    """Compares a check/grade table with results[]; returns (failures, xfails, rows).

    rows: (stage label, expected, got, verdict) for the report; verdict is OK, FAIL, XFAIL or XPASS.
    """
    xfail = xfail or {}
    failures, xfails, rows = [], [], []
    used = set()
    for r in results:
        label = "/".join(x for x in (r["stage"], r.get("variant", ""), r["precision"]) if x)
        best, key = 0, None
        for k in table:
            m = key_matches(k, r)
            if m > best:
                best, key = m, k
        if key is None:
            failures.append(f"{what}: {label} has no expectation in expected.json")
            rows.append((label, "?", r["disposition"], "FAIL"))
            continue
        used.add(key)
        want = allowed(table[key])
        got = r["disposition"]
        xf = xfail.get(f"{what}:{label}") or xfail.get(f"{what}:{key}")
        ok = got in want
        if xf:
            verdict = "XPASS" if ok else "XFAIL"
            if not ok:
                xfails.append(f"{what}: {label} is {got}, expected {'|'.join(sorted(want))} (known gap: {xf})")
        else:
            verdict = "OK" if ok else "FAIL"
            if not ok:
                failures.append(f"{what}: {label} is {got}, expected {'|'.join(sorted(want))}: "
                                f"{r.get('problem', '')}")
        rows.append((label, "|".join(sorted(want)), got, verdict))
    for k in table:
        if k not in used:
            failures.append(f"{what}: expected.json names {k}, which matched no result")
    return failures, xfails, rows


def check_problem_and_output(entry, results, what):
    """The entry's problem_contains / output rules against results[]."""
    problems = []
    e = entry.expected
    for key, text in e.get("problem_contains", {}).items():
        for r in results:
            # A stage the symbol check refused never ran: its problem names the symbols, not what
            # running it would have done.
            if r["disposition"] == "rejected" and "symbol check" in r.get("problem", ""):
                continue
            if key_matches(key, r) and r["disposition"] != "passed" and text not in r.get("problem", ""):
                problems.append(f"{what}: the problem of {r['stage']} {r['precision']} does not say "
                                f"'{text}': {r.get('problem', '')!r}")
    # A cheat the judge times honestly passes at its real speed: the naive kernel's, near x_naive 1.
    for key, limit in e.get("max_x_naive", {}).items():
        for r in results:
            if what != "grade" or not key_matches(key, r) or r["disposition"] != "passed":
                continue
            for b in r.get("bench", []):
                if b.get("disposition") == "passed" and b.get("x_naive", 0) > limit:
                    problems.append(f"{what}: {r['stage']} {r['precision']} ran at {b['x_naive']:.2f}x naive at "
                                    f"{b['shape']['M']}x{b['shape']['N']}x{b['shape']['K']} (at most {limit} for "
                                    f"work that is the naive kernel's, timed honestly)")
    for r in results:
        tail = r.get("process", {}).get("output_tail", "") or ""
        for bad in e.get("output_must_not_contain", []):
            if bad in tail:
                lines = [line for line in tail.splitlines() if bad in line]
                problems.append(f"{what}: {r['stage']} {r['precision']} printed {bad}: {lines[:3]}")
        if r["stage"] == "unrolled" and r["disposition"] == "passed":
            for good in e.get("output_must_contain", []):
                if good not in tail:
                    problems.append(f"{what}: {r['stage']} {r['precision']} did not print {good} "
                                    f"(its probes did not run?)")
        limit = e.get("output_tail_max_bytes")
        if limit and len(tail.encode()) > limit:
            problems.append(f"{what}: output_tail of {r['stage']} is {len(tail.encode())} bytes (> {limit})")
    return problems


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def stray_files(roots, pattern="gemmlab-gallery-pwned"):
    """Files whose name contains `pattern` under the given directories (no descent into .git)."""
    found = []
    for root in roots:
        root = Path(root)
        if not root.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d != ".git"]
            found += [str(Path(dirpath) / f) for f in filenames if pattern in f]
    return found


def processes_named(name):
    """pids of processes whose comm is `name` (as prctl(PR_SET_NAME) sets it; 15 characters kept)."""
    pids = []
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            if comm.read_text().strip() == name[:15]:
                pids.append(int(comm.parent.name))
        except OSError:
            pass
    return pids


def build_message_ok(entry, output, scan_result=None):
    """Whether a failed build's output (plus the scan's messages) says what the entry expects."""
    text = output + "\n" + "\n".join(m["problem"] for m in (scan_result or {}).get("missing", []))
    return [m for m in entry.expected.get("build", {}).get("message", []) if m not in text]


def ci_sources(entry):
    """The stage files CI compiles for an entry: every file when the build is expected to fail (the
    scan then needs them all), else the gallery-written ones, less the standard well-behaved reuse.cu
    (the naive kernel again) unless the scan is expected to flag it, and the files as handed out whose
    entry points they call (`gemm_naive<T>(p)`: the symbol check needs the file that defines it)."""
    if not entry.builds:
        return stage_sources(entry)
    chosen, handed_out = [], []
    for src in stage_sources(entry):
        head = " ".join(src.read_text().split("\n", 2)[:2])
        if "gallery entry" not in head:
            handed_out.append(src)  # a stub or naive.cu as handed out
            continue
        if "well-behaved (the naive kernel), run after" in head and src.stem not in entry.expected.get("scan", {}):
            continue
        chosen.append(src)
    texts = [src.read_text() for src in chosen]
    called = [src for src in handed_out if any(f"gemm_{src.stem}<" in text for text in texts)]
    return sorted(chosen + called)


def build_ci(build, entry, jobs=2):
    """Compiles what CI needs of an entry (ci_sources, and the symbol check's inputs); returns
    (make's CompletedProcess, the scan of whatever objects exist afterwards)."""
    sb = sub_build(build, entry.path)
    targets = [sb / "stages" / f"{src.stem}.o" for src in ci_sources(entry)]
    targets += [grader_build(build) / "submission_exports.o", grader_build(build) / "protected-symbols.json"]
    proc = make(build, entry.path, targets, jobs=jobs, extra=["-k"])
    return proc, scan(build, entry)
