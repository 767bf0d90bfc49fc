#!/usr/bin/env python3
"""The gallery sweep (`make test-gallery`, on a GPU machine): builds every tests/gallery entry, runs
`gemmlab check --full` and `gemmlab grade` on it, and compares every disposition with the entry's
expected.json. Then checks what no disposition shows: the grader survived every entry, no entry left
files or processes behind, and the well-behaved control graded first has a results file that is
byte-for-byte unchanged at the end (and grades the same again).

  tests/gallery/run_gallery.py [--only a,b | --quick] [--phase build|run|all] [--skip-grade] [--jobs N]

Writes build/gallery/results/<entry>/ (check.json, results.json) and summary.md / summary.json
beside them; exits 1 when anything is not as expected (an `xfail` in expected.json is reported, not
counted). docs/gallery.md explains the entries and the expectations.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gallery_lib as g  # noqa: E402

CONTROL = "well_behaved"
NO_GPU_EXIT = 3  # gemmlab's exit status when the machine has no usable GPU


def log(*args):
    print(*args, flush=True)


def run(cmd, timeout):
    """Runs a grader command; returns (returncode or None when it had to be killed, output, seconds)."""
    t0 = time.time()
    try:
        p = subprocess.run(cmd, cwd=g.ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=timeout, errors="replace")
        return p.returncode, p.stdout, time.time() - t0
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return None, out, time.time() - t0


def survived(rc):
    """A grader that finished on its own: 0 (all passed) or 1 (a stage did not); not a signal."""
    return rc in (0, 1)


class Sweep:
    def __init__(self, args):
        self.args = args
        self.build = args.build
        self.out = Path(args.build) / "results"
        self.failures, self.xfails, self.rows, self.notes = [], [], [], []
        self.grade_help = None

    def fail(self, entry, text):
        self.failures.append(f"{entry}: {text}")
        log(f"  FAIL {text}")

    # ---- building ------------------------------------------------------------------------------------
    def build_entry(self, entry, jobs):
        targets = ["grader", "scan"] if entry.builds else ["grader"]
        return g.make(self.build, entry.path, targets, jobs=jobs, arch=self.args.arch)

    def build_all(self, entries):
        log(f"== building {len(entries)} entries into {self.build}")
        results = {}
        control = [e for e in entries if e.name == CONTROL]
        first = control[0] if control else entries[0]
        results[first.name] = self.build_entry(first, self.args.jobs)  # the shared libraries, once
        rest = [e for e in entries if e is not first]
        workers = max(1, self.args.jobs // 4)
        with ThreadPoolExecutor(workers) as pool:
            for e, p in zip(rest, pool.map(lambda e: self.build_entry(e, 4), rest)):
                results[e.name] = p
        for e in entries:
            p = results[e.name]
            (self.out / e.name).mkdir(parents=True, exist_ok=True)
            (self.out / e.name / "build.log").write_text(p.stdout)
            state = "built" if p.returncode == 0 else "build FAILED"
            log(f"  {e.name:24s} {state}")
        return results

    def saved_build(self, entry):
        """The build of an earlier `--phase build` (its log), when this run did not build."""
        log_file = self.out / entry.name / "build.log"
        if not log_file.exists():
            return None
        rc = 0 if (g.sub_build(self.build, entry.path) / "gemmlab").exists() else 2
        return subprocess.CompletedProcess([], rc, stdout=log_file.read_text())

    # ---- one entry -----------------------------------------------------------------------------------
    def grader_supports_grade(self, grader):
        if self.grade_help is None:
            rc, out, _ = run([str(grader), "grade", "--help"], 60)
            self.grade_help = out if rc == 0 else ""
            if not self.grade_help:
                self.notes.append("`gemmlab grade` is not available in this grader: grade tables not compared")
        return bool(self.grade_help)

    def check_entry(self, entry, build_proc):
        name = entry.name
        log(f"== {name}: {entry.expected.get('summary', '')}")
        sb = g.sub_build(self.build, entry.path)
        grader = sb / "gemmlab"
        out = self.out / name
        out.mkdir(parents=True, exist_ok=True)

        # Build and scan.
        scan = g.scan(self.build, entry)
        for problem in g.compare_scan(entry, scan):
            self.fail(name, problem)
        if not entry.builds:
            if build_proc is not None and build_proc.returncode == 0:
                self.fail(name, "the build was expected to fail and succeeded")
            else:
                text = build_proc.stdout if build_proc is not None else ""
                for missing in g.build_message_ok(entry, text, scan):
                    self.fail(name, f"the build failure does not say '{missing}'")
                self.rows.append((name, "build", "fails", "fails", "OK"))
            return
        if build_proc is not None and build_proc.returncode != 0:
            self.fail(name, "build failed:\n" + build_proc.stdout[-2000:])
            return

        # gemmlab check --full (the quick sample checks the control only: its other entries are there
        # for what `grade` shows, and `grade` runs the full check itself)
        if getattr(self.args, "quick", False) and name != CONTROL and "grade" in entry.expected:
            self.grade_entry(entry, sb, grader, out, scan)
            return
        cmd = [str(grader), "check", "--full", "--no-color", "--seed", str(self.args.seed),
               "--timeout", str(self.args.check_timeout), "--json", str(out / "check.json")]
        rc, text, secs = run(cmd, self.args.command_timeout)
        (out / "check.log").write_text(text)
        log(f"  check: exit {rc} after {secs:.0f} s")
        if rc == NO_GPU_EXIT:
            raise SystemExit(f"gemmlab check found no usable GPU here (exit {rc}): run the gallery on a GPU "
                             f"machine (`make test-gallery`); the CI part is `make test`.\n{text[-500:]}")
        if not survived(rc) or not (out / "check.json").exists():
            self.fail(name, f"the grader did not survive `check` (exit {rc}); see {out / 'check.log'}")
        elif "check" in entry.expected:
            results = json.loads((out / "check.json").read_text())["results"]
            self.compare(entry, "check", results)
        self.leftovers(entry)
        self.unsandboxed(entry)
        self.grade_entry(entry, sb, grader, out, scan)

    def grade_entry(self, entry, sb, grader, out, scan):
        """gemmlab grade of a built entry (scan: its symbol scan), compared with its expected.json."""
        name = entry.name
        if self.args.skip_grade or "grade" not in entry.expected or not self.grader_supports_grade(grader):
            return
        cmd = [str(grader), "grade", "--config", self.args.config, "--out", str(out)]
        if "--seed" in self.grade_help:
            cmd += ["--seed", str(self.args.seed)]
        if "--no-reference" in self.grade_help:
            cmd += ["--no-reference"]
        symbols = sb / "symbols.json"
        if "--symbols" in self.grade_help:
            cmd += ["--symbols", str(symbols)]
        rc, text, secs = run(cmd, self.args.command_timeout)
        (out / "grade.log").write_text(text)
        log(f"  grade: exit {rc} after {secs:.0f} s")
        if not survived(rc) or not (out / "results.json").exists():
            self.fail(name, f"the grader did not survive `grade` (exit {rc}); see {out / 'grade.log'}")
            return
        results = json.loads((out / "results.json").read_text())["results"]
        if not any(r.get("disposition") == "rejected" for r in results) and scan["stages"]:
            self.notes.append(f"{name}: gemmlab grade did not apply the symbol scan ({symbols}); "
                              f"the gallery applied it to compare (change request in docs/gallery.md)")
            for r in results:
                if r["stage"] in scan["stages"]:
                    r["disposition"] = "rejected"
                    r["problem"] = scan["stages"][r["stage"]]["problem"]
        self.compare(entry, "grade", results)
        self.leftovers(entry)

    def compare(self, entry, what, results):
        failures, xfails, rows = g.compare_results(entry.expected[what], results, what, entry.expected.get("xfail"))
        failures += g.check_problem_and_output(entry, results, what)
        for f in failures:
            self.fail(entry.name, f)
        for x in xfails:
            self.xfails.append(f"{entry.name}: {x}")
            log(f"  XFAIL {x}")
        for label, want, got, verdict in rows:
            self.rows.append((entry.name, f"{what} {label}", want, got, verdict))

    def leftovers(self, entry):
        name = entry.expected.get("no_processes_named")
        if name:
            pids = g.processes_named(name)
            if pids:
                self.fail(entry.name, f"processes named {name} are still running: {pids} (killed now)")
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass

    def unsandboxed(self, entry):
        """Marker files a static constructor left from a process nothing confined (the grader's parent, or a child without its sandbox)."""
        pattern = entry.expected.get("unsandboxed_marker")
        if not pattern:
            return
        found = sorted(Path("/").glob(pattern.lstrip("/")))
        for f in found:
            f.unlink(missing_ok=True)
        known = entry.expected.get("xfail", {}).get("marker")
        if found and known:
            self.xfails.append(f"{entry.name}: code ran unsandboxed in the grader's parent ({known})")
            self.rows.append((entry.name, "parent process untouched", "untouched", "marker file", "XFAIL"))
        elif found:
            self.fail(entry.name, f"code ran unconfined (grader parent or unsandboxed child): {[str(f) for f in found]}")
        else:
            self.rows.append((entry.name, "parent process untouched", "untouched", "untouched",
                              "XPASS" if known else "OK"))

    # ---- the sweep -------------------------------------------------------------------------------------
    def control_digest(self):
        d = self.out / CONTROL
        return {f.name: g.sha256(f) for f in sorted(d.glob("*.json"))} if d.is_dir() else {}

    def sweep(self, entries):
        builds = self.build_all(entries) if self.args.phase in ("build", "all") else {}
        if self.args.phase == "build":
            return
        order = sorted(entries, key=lambda e: e.name != CONTROL)  # the control first
        digest_before = None
        for i, e in enumerate(order, 1):
            rows, failures = len(self.rows), len(self.failures)
            self.check_entry(e, builds[e.name] if e.name in builds else self.saved_build(e))
            # Each entry's verdict as soon as it is known, and the tables so far on disk: a run cut
            # short (a machine lost mid-sweep) still says what it saw.
            ok = sum(1 for r in self.rows[rows:] if r[4] in ("OK", "XPASS"))
            log(f"  -> {e.name}: {ok} as expected, {len(self.failures) - failures} failed ({i} of {len(order)} entries)")
            self.write_tables(complete=False, entries_done=i, entries=len(order))
            if e.name == CONTROL:
                digest_before = self.control_digest()
        if digest_before is not None and len(order) > 1:
            log(f"== {CONTROL} again: its results must be untouched and the same when graded again")
            after = self.control_digest()
            if after != digest_before:
                changed = [k for k in digest_before if after.get(k) != digest_before[k]]
                self.fail(CONTROL, f"its results files changed during the sweep: {changed}")
            else:
                self.rows.append((CONTROL, "results files unchanged", "unchanged", "unchanged", "OK"))
        if digest_before is not None and len(order) > 1 and not getattr(self.args, "quick", False):
            # the full sweep also grades the control again: the same dispositions after every entry ran
            again = g.Entry(g.GALLERY / CONTROL)
            saved = self.out
            self.out = self.out / "again"
            self.check_entry(again, None)
            self.out = saved
            for kind in ("check.json", "results.json"):
                a, b = self.out / CONTROL / kind, self.out / "again" / CONTROL / kind
                if a.exists() and b.exists():
                    da = [(r["stage"], r["variant"], r["precision"], r["disposition"])
                          for r in json.loads(a.read_text())["results"]]
                    db = [(r["stage"], r["variant"], r["precision"], r["disposition"])
                          for r in json.loads(b.read_text())["results"]]
                    if da != db:
                        self.fail(CONTROL, f"{kind}: dispositions differ when graded again")
        home = Path(os.path.expanduser("~"))
        stray = g.stray_files(["/tmp", "/var/tmp", "/dev/shm", home, g.ROOT])
        if stray:
            self.fail("sweep", f"files a stage should not have been able to create: {stray}")
        else:
            self.rows.append(("sweep", "no gemmlab-gallery-pwned files anywhere", "none", "none", "OK"))

    def write_tables(self, complete, entries_done=None, entries=None):
        """summary.md and summary.json as they stand; `complete` false while the sweep still runs."""
        lines = ["| entry | what | expected | got | verdict |", "|---|---|---|---|---|"]
        lines += [f"| {a} | {b} | {c} | {d} | {v} |" for a, b, c, d, v in self.rows]
        summary = "\n".join(lines)
        if not complete:
            summary = f"(a sweep still running: {entries_done} of {entries} entries done)\n\n" + summary
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / "summary.md").write_text(summary + "\n")
        doc = {"complete": complete, "failures": self.failures, "xfails": self.xfails, "notes": self.notes,
               "rows": [dict(zip(("entry", "what", "expected", "got", "verdict"), r)) for r in self.rows]}
        if not complete:
            doc["entries_done"], doc["entries"] = entries_done, entries
        (self.out / "summary.json").write_text(json.dumps(doc, indent=2) + "\n")
        return summary

    def report(self):
        summary = self.write_tables(complete=True)
        log("\n" + summary)
        for n in self.notes:
            log(f"note: {n}")
        for x in self.xfails:
            log(f"xfail: {x}")
        for f in self.failures:
            log(f"FAILED: {f}")
        ok = sum(1 for r in self.rows if r[4] in ("OK", "XPASS"))
        log(f"gallery: {ok} as expected, {len(self.failures)} failed, {len(self.xfails)} expected failures "
            f"(tables: {self.out / 'summary.md'})")
        return 1 if self.failures else 0


SCORING_SHAPE = re.compile(r'\[\[scoring\.shapes\]\][ \t]*(?:#[^\n]*)?\nshape = "(\d+)x(\d+)x(\d+)"[^\n]*\nweight = \d+[^\n]*\n')
BENCH_SHAPES = re.compile(r'^shapes = \[[^\]]*\]', re.MULTILINE)


def smallest_shape_only(text: str) -> str:
    """The configuration graded at its smallest scoring shape only (the bench shapes too): the quick
    sample's entries cheat or defend the same way at every size, and a call at 2048³ is an eighth of
    one at 4096³ (the naive stages' double-precision calls are most of a grade's time)."""
    shapes = [(int(m[1]) * int(m[2]) * int(m[3]), m) for m in SCORING_SHAPE.finditer(text)]
    if len(shapes) < 2:
        return text
    keep = min(shapes, key=lambda s: s[0])[1]
    for _, m in shapes:
        if m is not keep:
            text = text.replace(m.group(0), "")
    return BENCH_SHAPES.sub(f'shapes = ["{keep[1]}x{keep[2]}x{keep[3]}"]', text)


def with_rubric(config: Path, build: Path, quick: bool = False) -> str:
    """The gallery's timing settings with the course's rubric (course.toml's [scoring.stages.*]: the
    rubric lives there only), as one file in the build directory; quick: at the smallest shape only."""
    text = (config if config.is_absolute() else g.ROOT / config).read_text()
    if "[scoring.stages." in text and not quick:
        return str(config)
    if "[scoring.stages." not in text:
        course = (g.ROOT / "course.toml").read_text()
        text += course[course.index("\n[scoring.stages.naive]"):]
    out = (build if build.is_absolute() else g.ROOT / build) / ("gallery-course-quick.toml" if quick else "gallery-course.toml")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(smallest_shape_only(text) if quick else text)
    return str(out.resolve())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build/gallery", help="the BUILD directory of the gallery")
    ap.add_argument("--only", default="", help="comma-separated entries (default: all)")
    ap.add_argument("--quick", action="store_true",
                    help="only the entries whose expected.json says \"quick\": true, the control checked "
                         "and graded once, the others graded only, at the configuration's smallest scoring "
                         "shape (what `make test` runs)")
    ap.add_argument("--phase", choices=("build", "run", "all"), default="all")
    ap.add_argument("--skip-grade", action="store_true", help="compare `check` only")
    ap.add_argument("--config", default="tests/gallery/gallery.toml",
                    help="course configuration for grade (default: course.toml's shapes, short timing)")
    ap.add_argument("--seed", type=int, default=20261121)
    ap.add_argument("--check-timeout", type=float, default=20, help="`check --timeout`: idle seconds per case")
    ap.add_argument("--command-timeout", type=float, default=1800, help="seconds one grader command may take")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--arch", default=None, help="ARCH= for make (default: the Makefile's)")
    args = ap.parse_args()
    args.config = with_rubric(Path(args.config), Path(args.build), quick=args.quick)
    entries = g.entries([s for s in args.only.split(",") if s] or None)
    if args.quick:
        entries = [e for e in entries if e.expected.get("quick")]
    sweep = Sweep(args)
    sweep.sweep(entries)
    return sweep.report() if args.phase != "build" else 0


if __name__ == "__main__":
    sys.exit(main())
