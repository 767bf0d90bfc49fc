"""A synthetic class for the staff tools' tests (similarity, extensions, exports, leaderboard): a
throw-away course, hand-ins stored through the real drop-box code, a sweep plan made by the real
planner, and — since no GPU grades anything in CI — results.json files written here in the shape
docs/results-schema.md gives (kind "grade"), with the points and speeds each test needs.

Stage files are the handout's stubs (student/*.cu) with a solution spliced in from
tests/fixtures/similarity/*.cu.part: the helper functions go after the stub's ceil_div line, the
kernel body replaces its "TODO(student): write the kernel body." comment, and the stage's
k...KernelWritten flag is set — what a student's own edit of the stub looks like.

gemmlab: instructor-only (the fixtures hold solutions; make handout leaves this file out)
"""
import datetime as dt
import json
import re
import sys
from pathlib import Path

from .paths import ROOT

sys.path.insert(0, str(ROOT / "cluster"))

import config  # noqa: E402
import dropbox  # noqa: E402
import gemmlab_cluster  # noqa: E402  (puts cluster/ and cluster/staff/ on sys.path)
from commands import sweep as sweep_commands  # noqa: E402
import grading  # noqa: E402
import records  # noqa: E402

PARTS = ROOT / "tests" / "fixtures" / "similarity"
CACHE = ROOT / "build" / "cluster-tests" / "cache"  # the trusted grader build, shared with the cluster tests
STAGE_FILES = sorted(p.name for p in (ROOT / "student").glob("*.cu"))
STAGES = [Path(n).stem for n in STAGE_FILES]
# The stages the synthetic results score by default: the handout's, but the tensor stage (extra
# credit, scored on top of the maximum), so that a class's totals do not move with it; a test that
# ranks or scores the tensor stage names it.
SCORED_STAGES = [s for s in STAGES if s != "tensor"]
DUE = dt.datetime(2026, 12, 4, 23, 59, tzinfo=dt.timezone.utc)
PLANNED = dt.datetime(2026, 12, 31, 9, 0, tzinfo=dt.timezone.utc)  # the sweeps are planned after every deadline
D = dt.timedelta(days=1)


def write_config(base: Path, extra: str = "", roster=None) -> Path:
    """course.toml of a local-scheduler course in `base`, due DUE, 10 %/day late penalty."""
    roster_line = f'roster = "{base}/roster.txt"\nroster_accounts = false\n' if roster is not None else ""
    if roster is not None:
        (base / "roster.txt").write_text("# synthetic class\n" + "\n".join(roster) + "\n")
    path = base / "course.toml"
    path.write_text(f'[course]\nname = "staff-test"\n[cluster]\nscheduler = "local"\ngrader_root = "{ROOT}"\n'
                    f'dropbox = "{base}/dropbox"\nsweeps = "{base}/sweeps"\ntrusted_cache = "{CACHE}"\n{roster_line}'
                    f"[deadline]\ndue = {DUE.isoformat()}\n[late]\npenalty_percent_per_day = 10\n"
                    f"max_penalty_percent = 50\n{extra}\n{rubric()}")
    return path


def rubric() -> str:
    """The repository's [bench] and [scoring] (the rubric lives in course.toml only)."""
    course = (ROOT / "course.toml").read_text()
    return course[course.index("\n[bench]"):]


def splice(stage: str, part: str) -> str:
    """The stub of `stage` with the solution of tests/fixtures/similarity/<part>.cu.part in it."""
    stub = (ROOT / "student" / f"{stage}.cu").read_text()
    helpers, body = (PARTS / f"{part}.cu.part").read_text().split("//@body\n")
    helpers = helpers.replace("//@helpers\n", "")
    out, n1 = re.subn(r"(constexpr bool k\w+KernelWritten = )false", r"\1true", stub)
    out, n2 = re.subn(r"(constexpr int ceil_div[^\n]*\n)", lambda m: m.group(1) + "\n" + helpers, out, count=1)
    out, n3 = re.subn(r"    // TODO\(student\): write the kernel body\.\n(    //[^\n]*\n)*", lambda m: body, out, count=1)
    assert (n1, n2, n3) == (1, 1, 1), f"the stub of {stage} changed shape: update staff_class.splice"
    return out


def hand_in(cfg, base: Path, student: str, solutions: dict[str, str], when=None, texts=None):
    """Store an attempt of `student`: the stubs, with solutions {stage: part} spliced in; texts:
    {stage: the whole file} instead, for a stage handed in as it is (e.g. the reference's)."""
    n = len(list((base / "hand-ins").glob(f"{student}-*"))) if (base / "hand-ins").is_dir() else 0
    src = base / "hand-ins" / f"{student}-{n + 1}"
    src.mkdir(parents=True)
    for name in STAGE_FILES:
        stage = Path(name).stem
        text = (texts or {}).get(stage) or (splice(stage, solutions[stage]) if stage in solutions
                                            else (ROOT / "student" / name).read_text())
        (src / name).write_text(text)
    return dropbox.store_attempt(cfg, student, dropbox.collect(cfg, src, None), submitted_at=when)


def plan(cfg, name="final") -> Path:
    """Plan a sweep with the real planner (no grading); returns the sweep directory."""
    sweep = cfg.sweeps_dir / name
    sweep.mkdir(parents=True, exist_ok=True)
    records.write_json_atomic(sweep / "plan.json", {
        "schema": "gemmlab.sweep-plan/1", "sweep": name, "course": cfg.course, "created": "2026-12-05T09:00:00Z",
        "due": records.iso(cfg.deadline.due) if cfg.deadline.due else None, "policy": cfg.deadline.policy,
        "students": sweep_commands.plan_sweep(cfg, when=PLANNED)})
    return sweep


def stage_row(stage, precision, disposition="passed", correctness=5.0, correctness_max=5.0, performance=0.0,
              performance_max=5.0, gflops=0.0, pct_cublas=0.0, variant=""):
    return {"stage": stage, "precision": precision, "variant_used": variant, "disposition": disposition,
            "correctness": correctness, "correctness_max": correctness_max, "performance": performance,
            "performance_max": performance_max, "gflops": gflops, "x_naive": 0.0, "pct_cublas": pct_cublas,
            "note": "synthetic"}


def write_grade(sweep: Path, student: str, rows: list[dict], status="graded"):
    """Publish a synthetic grading of the student's planned attempt: outcome.json + results.json."""
    entry = next(e for e in json.loads((sweep / "plan.json").read_text())["students"] if e["student"] == student)
    d = sweep / "grades" / student / entry["digest"][:16]
    d.mkdir(parents=True, exist_ok=True)
    total = round(sum(r["correctness"] + r["performance"] for r in rows), 2)
    top = round(sum(r["correctness_max"] + r["performance_max"] for r in rows), 2)
    results = {"schema": "gemmlab.results/1", "kind": "grade", "created": "2026-12-05T10:00:00Z", "status": status,
               "submission": {"name": "files", "path": entry["attempt"], "files": {}}, "seed": 1,
               "environment": {"host": "synthetic", "gpu_available": True, "gpu": {"name": "SYNTHETIC GPU"}},
               "results": [{"stage": r["stage"], "variant": r["variant_used"], "precision": r["precision"],
                            "disposition": r["disposition"], "problem": "", "cases": []} for r in rows],
               "score": {"total": total, "max": top, "stages": rows},
               "config": {"source": "synthetic", "shapes": [{"shape": "4096x4096x4096", "weight": 2}]}}
    (d / "results.json").write_text(json.dumps(results, indent=1))
    (d / "outcome.json").write_text(json.dumps({"schema": grading.OUTCOME_SCHEMA, "student": student,
                                                "status": status, "message": f"{status}: {total} / {top}"}))
    return d


def full_rows(stages=SCORED_STAGES, points=None, speeds=None):
    """score.stages for each stage (default SCORED_STAGES) in both precisions: `points` {stage: points per precision}
    (default all correctness, no performance), `speeds` {(stage, precision): gflops} (passed)."""
    rows = []
    for stage in stages:
        for prec in ("float", "double"):
            got = (points or {}).get(stage, 5.0)
            gf = (speeds or {}).get((stage, prec), 100.0)
            rows.append(stage_row(stage, prec, correctness=min(got, 5.0), performance=max(0.0, got - 5.0),
                                  performance_max=max(5.0, got - 5.0), gflops=gf, pct_cublas=round(gf / 200.0, 2)))
    return rows


def load(path: Path):
    return config.load(path)
