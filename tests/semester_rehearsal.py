#!/usr/bin/env python3
"""semester_rehearsal.py — a term of GEMM Lab on one machine, as the course staff live it, ending in a
comparison with the gradebook the course's rules say it must produce. The dry run before a term
(docs/instructor-term.md, "The dry run before a term").

    python3 tests/semester_rehearsal.py [--scheduler slurm|local] [--work DIR] [--keep]

A course of seven students is set up and published; they hand in around a deadline on the drop box's
clock; then the staff's term happens, through the real commands (gemmlab_cluster.py):

    ada   the reference solution, on time                        -> graded
    ben   the stubs, on time; a regrade request settled by hand  -> override (decision)
    cam   the reference with a tiled.cu that does not compile   -> graded, tiled rejected
    dot   the reference, after the deadline                      -> late, 10 % penalty
    eli   the reference after the deadline, before her extension's -> on time for her
    fay   stubs (#1), then the reference (#2), on time; #2 edited in the drop box after the deadline
                                                                 -> needs_review, then settled: #1 counts
    gus   e-mailed the reference before the deadline (the drop box was down); entered with its time
                                                                 -> E1, on time

and: a sweep; a node failure mid-sweep (slurm: the node set DOWN, its jobs requeued; local: the sweep's
process killed mid-task) and the sweep resumed; a rubric change mid-term (reuse's points), published and
rescored without a GPU; cam's regrade; the exports as versions; the grades published to the students.
With --scheduler slurm the private test cluster runs it (tests/slurm/start-slurm.sh: root, Slurm
installed); with local, this machine grades (a GPU here gives real grades; none gives no_gpu, and the
expected gradebook says so). Ends with "rehearsal: PASSED" or the differences, and the gradebook and
the decision log printed; exit 0 or 1.
"""
import argparse
import csv
import datetime as dt
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "cluster"))
sys.path.insert(0, str(ROOT / "tests" / "py"))

import config  # noqa: E402
import dropbox  # noqa: E402
import attempt_records  # noqa: E402
import records  # noqa: E402
from support.cluster_helpers import CACHE, folder, hand_in_dir, hold_lock  # noqa: E402

STUDENTS = ("ada", "ben", "cam", "dot", "eli", "fay", "gus")
PYTHON = sys.executable
TOOL = ROOT / "cluster" / "gemmlab_cluster.py"
SLURM = ROOT / "tests" / "slurm"
DEADLINE_AHEAD = 10  # seconds from the first hand-in to the deadline (the drop box's clock decides)
EXTENSION = 20  # seconds eli's extension adds: she hands in after the course's deadline, before her own


def say(text):
    print(f"rehearsal: {text}", flush=True)


class Term:
    def __init__(self, work: Path, scheduler: str, gpu: bool):
        self.work, self.scheduler, self.gpu = work, scheduler, gpu
        self.cfg_path = work / "course.toml"
        self.env = dict(os.environ) if gpu else dict(os.environ, CUDA_VISIBLE_DEVICES="")

    def tool(self, *args, check=True, timeout=1800):
        r = subprocess.run([PYTHON, str(TOOL), "--config", str(self.cfg_path), *map(str, args)], cwd=ROOT,
                           env=self.env, capture_output=True, text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise SystemExit(f"rehearsal: `{' '.join(map(str, args))}` failed (exit {r.returncode}):\n{r.stdout}\n{r.stderr}")
        return r

    @property
    def cfg(self):
        return config.load(self.cfg_path)

    # ---- the course -----------------------------------------------------------------------------
    def write_course(self):
        w = self.work
        (w / "roster.txt").write_text("# the rehearsal's class\n" + "\n".join(STUDENTS) + "\n")
        (w / "extensions.toml").write_text("")  # eli's is written with the deadline (hand_ins)
        course = (ROOT / "course.toml").read_text()
        rubric = course[course.index("\n[scoring.stages.naive]"):]
        self.cfg_path.write_text("\n".join([
            "[course]", 'name = "rehearsal"', "[cluster]", f'scheduler = "{self.scheduler}"',
            f'dropbox = "{w}/dropbox"', f'sweeps = "{w}/sweeps"', f'grader_root = "{ROOT}"',
            f'trusted_cache = "{CACHE}"', f'roster = "{w}/roster.txt"', "roster_accounts = false",
            'gres = "gpu:1"', "cpus_per_task = 1", 'time_limit = "00:20:00"', "sweep_concurrency = 2",
            "[deadline]", "due = 2099-01-01T00:00:00Z", "[late]", 'policy = "latest"', "penalty_percent_per_day = 10",
            "max_penalty_percent = 50", "[extensions]", 'file = "extensions.toml"',
            # grades in seconds: a short timing budget at one shape (the flow is rehearsed, not the speeds)
            "[bench]", "min_repetitions = 3", "max_repetitions = 5", "max_seconds = 0.2",
            "[scoring]", "[[scoring.shapes]]", 'shape = "1024x1024x1024"', "weight = 1", rubric]) + "\n")
        os.chmod(w, 0o755)
        self.tool("setup")
        say(f"course set up and published ({self.scheduler}; {'a GPU grades' if self.gpu else 'no GPU: every grade is no_gpu'})")

    # ---- the students ---------------------------------------------------------------------------
    def hand_ins(self):
        src = self.work / "src"
        kinds = {k: hand_in_dir(src / k, k) for k in ("stub", "reference", "broken")}
        broken_ref = hand_in_dir(src / "broken-reference", "reference")
        (broken_ref / "tiled.cu").write_text(kinds["broken"].joinpath("tiled.cu").read_text())
        due = dt.datetime.now(dt.timezone.utc).replace(microsecond=0) + dt.timedelta(seconds=DEADLINE_AHEAD)
        text = self.cfg_path.read_text()
        self.cfg_path.write_text(text.replace("due = 2099-01-01T00:00:00Z", f"due = {records.iso(due)}"))
        self.eli_due = due + dt.timedelta(seconds=EXTENSION)
        (self.work / "extensions.toml").write_text(f'[eli]\ndue = {records.iso(self.eli_due)}\n'
                                                   'reason = "rehearsal: a documented illness"\n')
        self.tool("publish", "--why", "the deadline of the rehearsal")
        cfg = self.cfg

        def store(student, d):
            return dropbox.store_attempt(cfg, student, dropbox.collect(cfg, d, None))
        store("ada", kinds["reference"])
        store("ben", kinds["stub"])
        store("cam", broken_ref)
        store("fay", kinds["stub"])
        self.fay_edited = store("fay", kinds["reference"])
        self.mailed = kinds["reference"]
        self.due = due
        assert dt.datetime.now(dt.timezone.utc) < due, "the on-time hand-ins took longer than the deadline allows"
        time.sleep(max(0.0, (due - dt.datetime.now(dt.timezone.utc)).total_seconds()) + 1.5)
        store("dot", kinds["reference"])
        store("eli", kinds["reference"])
        say(f"hand-ins: 5 before the deadline {records.iso(due)}, dot and eli after it")

    def tamper(self):
        """fay edits her attempt #2 after the deadline and rewrites its manifest to match."""
        f = self.fay_edited / "files" / "naive.cu"
        f.write_text(f.read_text() + "\n// changed in the drop box after the deadline\n")
        manifest = json.loads((self.fay_edited / "manifest.json").read_text())
        manifest["files"]["naive.cu"] = {"sha256": records.sha256_file(f), "bytes": f.stat().st_size}
        manifest["attempt_sha256"] = attempt_records.attempt_digest(manifest["files"])
        stored = records.parse_iso(manifest["stored_at"]) - dt.timedelta(minutes=5)  # as if stored 5 min before
        manifest["stored_at"] = manifest["submitted_at"] = records.iso(stored)
        (self.fay_edited / "manifest.json").write_text(json.dumps(manifest, indent=2))

    # ---- the staff's term -----------------------------------------------------------------------
    def sweep(self, *extra, expect_ok=True):
        r = self.tool("sweep", *extra, check=expect_ok)
        if self.scheduler == "slurm":
            self.wait_for_sweep()
        return r

    def runs(self):
        d = self.cfg.sweeps_dir / "final" / "runs"
        return sorted(d.iterdir()) if d.is_dir() else []

    def wait_for_sweep(self, timeout=1800):
        run = self.runs()[-1]
        t0 = time.time()
        while time.time() - t0 < timeout:
            manifest = json.loads((run / "manifest.json").read_text())
            if manifest.get("gradebook"):
                return
            time.sleep(2)
        raise SystemExit(f"rehearsal: {run.name}'s gradebook job did not finish in {timeout} s")

    def node_failure(self):
        """A node fails mid-sweep; the sweep is resumed. Slurm: the node is set DOWN while a task runs (its
        job is requeued) and back; local: the sweep's process is killed in the middle of a task."""
        grades = self.cfg.sweeps_dir / "final" / "grades"
        if self.scheduler == "slurm":
            self.tool("sweep", "--student", "ada", "--force")
            jobs = json.loads((self.runs()[-1] / "jobs.json").read_text())
            t0 = time.time()
            while not list(grades.glob("ada/.tmp-*")) and time.time() - t0 < 600:
                time.sleep(0.5)
            # What slurmctld does to the jobs of a node that fails: kill them and queue them again (the
            # grading scripts ask --requeue); tests/slurm/multinode.sh kills a real node's daemons.
            subprocess.run(["scontrol", "requeue", f"{jobs['array']}_0"], check=True)
            self.wait_for_sweep()
            starts = sorted(p.name for p in (self.runs()[-1] / "starts").glob("*.json"))
            assert len(starts) >= 2, f"ada's task did not start again after the requeue: {starts}"
            say("ada's grading task was killed and requeued mid-grade, as after a node failure; its next start graded it")
        else:
            p = subprocess.Popen([PYTHON, str(TOOL), "--config", str(self.cfg_path), "sweep", "--student", "ada",
                                  "--force"], cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, start_new_session=True)
            t0 = time.time()
            while not list(grades.glob("ada/.tmp-*")) and time.time() - t0 < 600 and p.poll() is None:
                time.sleep(0.2)
            grader = json.loads((self.runs()[-1] / "local.json").read_text())["pid"]  # the detached grader
            os.killpg(grader, signal.SIGKILL)  # the machine is gone mid-task: nothing runs on
            p.wait(timeout=120)
            assert not [x for x in grades.glob("ada/*") if ".replaced-" in x.name], "a killed task published"
            self.sweep("--student", "ada", "--force")
            say("the sweep's process died in the middle of ada's task; the next sweep graded it")

    def term(self):
        time.sleep(max(0.0, (self.eli_due - dt.datetime.now(dt.timezone.utc)).total_seconds()) + 1)
        self.tool("enter", "--user", "gus", "--student-dir", self.mailed, "--submitted-at",
                  records.iso(self.due - dt.timedelta(minutes=3)), "--why", "drop box unreachable; e-mailed at the deadline")
        self.tamper()
        r = self.sweep()
        assert "integrity case(s) need a person" in r.stdout and "fay" in r.stdout, r.stdout
        self.tool("settle", "--user", "fay", "--attempt", "1", "--why", "fay says #2 was edited by mistake; #1 counts")
        self.node_failure()
        self.sweep()  # fay's #1 is graded now that it counts
        text = self.cfg_path.read_text()
        start = text.index("[scoring.stages.reuse]")
        self.cfg_path.write_text(text[:start] + text[start:].replace("performance_points = 10", "performance_points = 12", 1))
        self.tool("publish", "--why", "reuse is worth 2 points more per precision (announced in week 9)")
        r = self.sweep()
        self.rescore_line = next(line for line in r.stdout.splitlines() if "to rescore" in line)
        self.tool("override", "--user", "ben", "--final", "7.5", "--why", "regrade request: partial credit for the "
                  "tiled kernel's design (office hours)")
        self.sweep("--student", "cam", "--force")  # cam asked for a regrade
        self.tool("gradebook", "--name", "final")
        self.tool("publish-grades", "--name", "final", "--why", "end of term")
        say("term done: entered gus, settled fay, node failure, rubric change rescored, override, regrade, exports")

    # ---- what it must be ------------------------------------------------------------------------
    def check(self) -> list[str]:
        sweep = self.cfg.sweeps_dir / "final"
        with open(sweep / "gradebook.csv") as f:
            rows = {r["student"]: r for r in csv.DictReader(f)}
        problems = []

        def expect(student, key, want):
            got = rows[student][key]
            if got != want:
                problems.append(f"{student}: {key} is {got!r}, the rules say {want!r}")
        graded = "graded" if self.gpu else "no_gpu"
        for s in ("ada", "cam", "dot", "eli", "fay", "gus"):
            expect(s, "status", graded)
        expect("ben", "status", "override")
        expect("ben", "final", "7.5")
        for s in ("ada", "ben", "cam", "eli", "fay", "gus"):
            expect(s, "late", "no")
        expect("dot", "late", "yes")
        expect("eli", "extension", f"due {records.iso(self.eli_due)}; rehearsal: a documented illness")
        expect("gus", "attempt", next((self.cfg.sweeps_dir / ".course" / "entered" / "gus").glob("entered-*")).name)
        expect("fay", "attempt", sorted((folder(self.cfg, "fay")).glob("attempt-0001-*"))[0].name)
        if not rows["fay"]["decisions"].startswith("#"):
            problems.append(f"fay: decisions {rows['fay']['decisions']!r} does not show the settlement")
        if "to rescore without a GPU: 0" in self.rescore_line and self.gpu:
            problems.append(f"the rubric change rescored nothing: {self.rescore_line}")
        if self.gpu:
            top = float(rows["ada"]["max"])
            expect("dot", "penalty_pct", "10")
            if float(rows["ada"]["total"]) < 0.9 * top:
                problems.append(f"ada (the reference) has {rows['ada']['total']} of {top}")
            if float(rows["dot"]["final"]) != round(float(rows["dot"]["total"]) * 0.9, 2):
                problems.append(f"dot: final {rows['dot']['final']} is not 90 % of {rows['dot']['total']}")
            if not float(rows["cam"]["total"]) < float(rows["ada"]["total"]):
                problems.append("cam's tiled.cu does not compile, yet cam has as much as ada")
            if float(rows["fay"]["total"]) != 0:
                problems.append(f"fay's #1 is the stubs, yet fay has {rows['fay']['total']}")
            if rows["gus"]["total"] != rows["gus"]["total"] or float(rows["gus"]["total"]) < 0.9 * top:
                problems.append(f"gus handed in the reference by e-mail, yet has {rows['gus']['total']}")
            if float(rows["ada"]["max"]) != 104:  # 100, reuse 2 + 2 more after the rubric change
                problems.append(f"the maximum is {rows['ada']['max']}, the rubric after the change says 104")
        versions = sorted(p.name for p in (sweep / "versions").iterdir() if p.is_dir())
        if len(versions) < 3:
            problems.append(f"gradebook versions: {versions}: every build must be kept")
        for f in ("canvas.csv", "grades.csv"):
            if not (sweep / "export" / f).resolve().is_file():
                problems.append(f"export/{f} is missing")
        manifests = [json.loads((r / "manifest.json").read_text()) for r in self.runs()]
        if len({m["state"] for m in manifests}) < 2:
            problems.append("the sweeps' manifests name one course state, but the rubric changed")
        self.rows = rows
        return problems

    def report(self):
        print()
        print((self.cfg.sweeps_dir / "final" / "gradebook.csv").read_text())
        print(self.tool("decisions").stdout)
        print(self.rescore_line)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scheduler", choices=("slurm", "local"), default="slurm" if os.geteuid() == 0 and shutil.which("slurmctld") else "local")
    ap.add_argument("--work", help="the course's directory (default: a new temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the course's directory")
    args = ap.parse_args(argv)
    hidden = os.environ.get("CUDA_VISIBLE_DEVICES", "x").strip() in ("", "-1")  # the flow only, as make test runs it
    gpu = not hidden and shutil.which("nvidia-smi") is not None and \
        subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0
    work = Path(args.work or tempfile.mkdtemp(prefix="gemmlab-rehearsal-", dir="/tmp"))
    work.mkdir(parents=True, exist_ok=True)
    CACHE.mkdir(parents=True, exist_ok=True)
    cluster_env = None
    if args.scheduler == "slurm":
        # One rehearsal cluster at a time on a machine (fixed ports and directory): a second session waits.
        lock = hold_lock("/tmp/gemmlab-slurm-rehearsal.lock", 900)  # noqa: F841  (held until the end)
        if lock is None:
            raise SystemExit("rehearsal: another session holds the rehearsal's test cluster "
                             "(/tmp/gemmlab-slurm-rehearsal.lock); run again when it is done")
        cluster_env = dict(os.environ, SLURM_CI_DIR="/tmp/gemmlab-slurm-rehearsal", SLURM_CI_PORT="17017", SLURM_CI_GPUS="2")
        r = subprocess.run(["bash", str(SLURM / "start-slurm.sh")], env=cluster_env, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"rehearsal: the private test cluster did not start:\n{r.stdout}\n{r.stderr}")
        os.environ["SLURM_CONF"] = "/tmp/gemmlab-slurm-rehearsal/etc/slurm.conf"
    t0 = time.time()
    term = Term(work, args.scheduler, gpu)
    try:
        term.write_course()
        term.hand_ins()
        term.term()
        problems = term.check()
        term.report()
    finally:
        if cluster_env:
            subprocess.run(["bash", str(SLURM / "stop-slurm.sh")], env=cluster_env, capture_output=True)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    for p in problems:
        say(f"DIFFERS: {p}")
    say(("PASSED" if not problems else "FAILED") + f" in {time.time() - t0:.0f} s: the gradebook is "
        + ("what the course's rules say" if not problems else "not what the course's rules say"))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
