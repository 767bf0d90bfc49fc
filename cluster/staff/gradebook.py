"""gradebook.py — one row per student from a sweep's plan and its graded results.

Reads only files: <sweep>/plan.json (who, which attempt, late or not) and, for each planned
attempt, <sweep>/grades/<student>/<attempt hash>/outcome.json and results.json
(docs/results-schema.md), read with the drop box's schemas (attempt_records). Writes gradebook.csv and
summary.md atomically. Pure functions of those files, so it can be unit-tested on committed fixtures
and re-run at any time. A student whose row cannot be made from them is that student's case
(needs_review, naming why); the others' rows are made as if nothing happened (fault_boundary.py).

Where each grade ran: the `node` and `gpu` columns (the GPU model the grader measured on, or —
when the grader saw no GPU — the type Slurm allocated, shown as "<type> (gres)"). `gpu_changed`
flags a grade made on another GPU model than the first grade of the same attempt: an earlier
result this sweep kept (<hash>.replaced-*) or the feedback grading of the attempt at hand-in. Only
grades that ran on a GPU (status `graded`) are compared: a no_gpu or error result, which a requeue
or a later sweep grades again wherever Slurm places it, says nothing about the model of a score.
"""
import collections
import csv
import io
import statistics
from pathlib import Path

import fault_boundary
import sweeps
from attempt_records import check_outcome, check_results
from records import escaped, read_json

# The columns before the per-stage points, and after them. `extension` is what the extensions file
# gave the student (e.g. "2 late days (due 2026-12-06T23:59:00Z)"); late and days_late are measured
# from the student's own due date. WHERE_COLUMNS (the node and GPU of the grade) come last, so
# existing imports keep working.
# Statuses that are no score: the grading is unfinished or not real (pending: not graded yet, or the
# student's own deadline has not passed; error; no_gpu; needs_review: a person decides). Their total,
# final and points cells are empty in every file a TA might upload (gradebook.csv, export/), never 0.
NO_SCORE = ("pending", "error", "no_gpu", "needs_review")

HEAD_COLUMNS = ["student", "status", "attempt", "submitted_at", "extension", "late", "days_late", "total", "max",
                "penalty_pct", "final"]
TAIL_COLUMNS = ["dispositions", "message"]
WHERE_COLUMNS = ["node", "gpu", "gpu_changed"]
# Whether the report handed in was made from measurements of the stage files handed in
# (attempt_records.report_check, checked by the sweep on the stored files): ok, mismatch, unstamped, example, none.
# Last, so existing imports keep working.
REPORT_COLUMNS = ["report"]
# The course staff's decisions about the student that the row follows (course_state.py: accept,
# withdraw, override, settle, enter), each with its number in the decision log; after the report.
DECISION_COLUMNS = ["decisions"]
FIXED_COLUMNS = HEAD_COLUMNS + TAIL_COLUMNS


def grade_dir(sweep: Path, student: str, digest: str) -> Path:
    return sweep / "grades" / student / digest[:16]


def gpu_label(outcome: dict) -> str:
    """The GPU model of a grade: what the grader measured on, else Slurm's gres type ("h100 (gres)"),
    else ""."""
    gpu = (outcome or {}).get("gpu") or {}
    if gpu.get("model"):
        return gpu["model"]
    return f"{gpu['type']} (gres)" if gpu.get("type") else ""


def _same_gpu(a: dict, b: dict):
    """True/False when both grades name a model (or both a gres type) to compare; None otherwise."""
    ga, gb = (a or {}).get("gpu") or {}, (b or {}).get("gpu") or {}
    for key in ("model", "type"):
        if ga.get(key) and gb.get(key):
            return ga[key] == gb[key]
    return None


def earlier_grades(sweep: Path, entry: dict, feedback=None) -> list[dict]:
    """Earlier grades of the same attempt, oldest first: results this sweep replaced (regrades),
    and — feedback(entry), read through the drop box's door (attempts.py) — the feedback grading of
    the attempt and what it replaced. Unreadable ones are skipped."""
    found = []
    gdir = grade_dir(sweep, entry["student"], entry["digest"])
    found += [read_json(p / "outcome.json") for p in gdir.parent.glob(f"{gdir.name}.replaced-*")]
    if entry.get("attempt") and feedback is not None:
        found += feedback(entry)
    found = [o for o in found if isinstance(o, dict) and o.get("attempt_sha256", entry["digest"]) == entry["digest"]]
    return sorted(found, key=lambda o: o.get("started") or o.get("finished") or "")


def ran_on_a_gpu(outcome: dict) -> bool:
    """The grader measured the hand-in on a GPU: a score whose model matters (not no_gpu, error, ...)."""
    return (outcome or {}).get("status") == "graded"


def gpu_change(sweep: Path, entry: dict, outcome: dict, feedback=None) -> str:
    """'' or 'first graded on <model>' when this grade ran on another GPU model than the first grade
    that ran on one; grades that did not (no_gpu, error, build_failed, tampered) are not compared."""
    if not ran_on_a_gpu(outcome):
        return ""
    for first in filter(ran_on_a_gpu, earlier_grades(sweep, entry, feedback)):
        same = _same_gpu(first, outcome)
        if same is None:
            continue  # that grade does not say which GPU: look further
        return "" if same else f"first graded on {gpu_label(first)}"
    return ""


def stage_points(results: dict) -> dict[str, float]:
    """Points per stage (summed over precisions) from score.stages."""
    points = {}
    for row in (results.get("score") or {}).get("stages", []):
        got = float(row.get("correctness", 0) or 0) + float(row.get("performance", 0) or 0)
        points[row["stage"]] = points.get(row["stage"], 0.0) + got
    return points


def disposition_counts(results: dict) -> collections.Counter:
    return collections.Counter(r.get("disposition", "?") for r in results.get("results", []))


def number_text(x) -> str:
    """A number as a gradebook cell: 2.5, 3 (not 3.0), '' for None."""
    if isinstance(x, float):
        return f"{x:.2f}".rstrip("0").rstrip(".") if x != int(x) else str(int(x))
    return "" if x is None else str(x)


def _decision_note(e: dict) -> str:
    what = {"accept": f"accept {e.get('label') or e.get('attempt', '')}",
            "settle": f"settle: {'accept ' + (e.get('label') or e.get('attempt', '')) if e.get('attempt') else 'final ' + number_text(e.get('final'))}",
            "withdraw": f"withdraw {e.get('label') or e.get('attempt', '')}",
            "unwithdraw": f"count again {e.get('label') or e.get('attempt', '')}",
            "override": f"final {number_text(e.get('final'))}", "clear-override": "override cleared",
            "enter": f"entered {e.get('label') or e.get('attempt', '')} ({e.get('submitted_at', '')})"}.get(e["action"], e["action"])
    return f"#{e['seq']} {what} ({e.get('by', '?')}: {e.get('why', '')})"


def build(sweep: Path, stage_order: list[str], decided: dict | None = None, feedback=None,
          cases: list | None = None) -> tuple[list[dict], list[str]]:
    """Rows (one per planned student, in plan order) and the stage columns. decided: the staff's
    standing decisions per student (student_standing.decisions): an override sets the final score.
    feedback: entry -> the outcomes of its attempt's feedback gradings (gpu_change), or None.
    A student whose row cannot be made (their records, or the plan's entry, of a shape the row does not
    expect) gets a needs_review row naming why, and the Fault is added to `cases`: the others' rows are
    made as if nothing happened (fault_boundary)."""
    decided = decided or {}
    plan = read_json(sweep / "plan.json")
    if plan is None:
        raise FileNotFoundError(f"{sweep}/plan.json is missing or unreadable: run the sweep first")
    stages = []  # registry order, as the grader writes score.stages; then any stage no result names
    rows = []
    for entry, row, fault in fault_boundary.each(
            plan["students"], lambda e: row_of(sweep, e, decided, feedback), what="their gradebook row",
            student=lambda e: e["student"], where=lambda e: grade_dir(sweep, e["student"], e["digest"])):
        if fault is not None:
            row = _overridden(_blank_if_no_score(_case_row(fault)), decided.get(fault.student))
            if cases is not None:
                cases.append(fault)
        stages += [s for s in row["_points"] if s not in stages]
        rows.append(row)
    stages += [s for s in stage_order if s not in stages]
    return rows, stages


def row_of(sweep: Path, entry: dict, decided: dict, feedback=None) -> dict:
    """One planned student's row (build): from their plan entry and their grade's records, which
    are read with the drop box's schemas (attempt_records: a record of another shape is a case)."""
    row = {"student": entry["student"], "attempt": entry.get("attempt_name", ""),
           "submitted_at": entry.get("effective_time", ""), "extension": entry.get("extension", ""),
           "late": "yes" if entry.get("late") else "no",
           "days_late": entry.get("days_late", 0), "penalty_pct": entry.get("penalty_pct", 0.0),
           "total": 0.0, "max": "", "final": 0.0, "dispositions": "", "message": entry.get("note", ""),
           "node": "", "gpu": "", "gpu_changed": "", "report": entry.get("report", ""),
           "decisions": "; ".join(_decision_note(e) for e in getattr(decided.get(entry["student"]), "history", [])),
           "_points": {}, "_results": None}
    open_until = entry.get("open_until")
    if not entry.get("digest"):
        row["status"] = "pending" if open_until else entry.get("status", "missing")
        if open_until:
            row["message"] = f"due {open_until}: can still hand in (no attempt yet)"
        row["late"] = ""
        if entry.get("review"):  # nothing of it can be graded (attempts.py): a person decides
            row["status"] = "needs_review"
            row["message"] = f"{entry['review']}: a person decides. " + _intact_note(sweep, entry)
        return _overridden(_blank_if_no_score(row), decided.get(entry["student"]))
    gdir = grade_dir(sweep, entry["student"], entry["digest"])
    outcome = read_json(gdir / "outcome.json")
    if outcome is None:
        row.update(status="pending", message="not graded yet (task still queued, or it did not finish)")
        return _overridden(_blank_if_no_score(row), decided.get(entry["student"]))
    outcome = check_outcome(outcome, str(gdir / "outcome.json"))
    row["status"] = outcome.get("status", "error")
    row["message"] = outcome.get("message", "")
    row["node"] = outcome.get("node") or outcome.get("host") or ""
    row["gpu"] = gpu_label(outcome)
    row["gpu_changed"] = gpu_change(sweep, entry, outcome, feedback)
    results = read_json(gdir / "results.json")
    if results is not None:
        results = check_results(results, str(gdir / "results.json"))
        row["_results"] = results
        score = results.get("score") or {}
        row["total"] = float(score.get("total", 0) or 0)
        row["max"] = score.get("max", "")
        row["_points"] = stage_points(results)
        counts = disposition_counts(results)
        row["dispositions"] = " ".join(f"{d}:{n}" for d, n in sorted(counts.items()))
    elif row["status"] != "graded":
        row["dispositions"] = row["status"]
    row["final"] = round(row["total"] * (1 - float(row["penalty_pct"]) / 100), 2)
    if entry.get("review") or row["status"] == "tampered":  # an integrity case: a person decides
        row["status"] = "needs_review"
        row["message"] = f"{entry.get('review') or row['message']}: a person decides. " + _intact_note(sweep, entry)
    elif open_until:  # graded as it stands, but the student may still hand in: not a score yet
        got = f"{number_text(row['final'])} point(s)" if row["status"] == "graded" else row["status"]
        row["status"], row["message"] = "pending", f"due {open_until}: can still hand in (as it stands: {got})"
    return _overridden(_blank_if_no_score(row), decided.get(entry["student"]))


def _case_row(fault) -> dict:
    """The row of a student whose row could not be made (build): needs_review, every other cell empty."""
    columns = HEAD_COLUMNS + TAIL_COLUMNS + WHERE_COLUMNS + REPORT_COLUMNS + DECISION_COLUMNS
    return dict(dict.fromkeys(columns, ""), student=fault.student, status="needs_review", _points={}, _results=None,
                message=f"{fault}: a person decides")


def _overridden(row: dict, decided) -> dict:
    """A final score the course staff set (course_state: override, or settle with a score) replaces the
    computed one: status `override`, a score in every export; the message keeps what it replaced."""
    e = getattr(decided, "override", None)
    if not e:
        return row
    was = f"{row['status']}: {number_text(row['final'])} point(s)" if row.get("final") is not None else row["status"]
    row.update(status="override", final=float(e["final"]), penalty_pct=None,
               message=f"final set by the course staff (decision #{e['seq']}, {e.get('by', '?')}, {e.get('at', '')}): "
                       f"{e.get('why', '')} [it was {was}]")
    row.pop("_no_score", None)
    if row.get("total") is None:
        row["total"] = None
    return row


def _intact_note(sweep: Path, entry: dict) -> str:
    intact = entry.get("intact")
    if not intact:
        return "The student has no intact attempt that counts under the policy."
    o = read_json(grade_dir(sweep, entry["student"], intact["digest"]) / "outcome.json") or {}
    r = read_json(grade_dir(sweep, entry["student"], intact["digest"]) / "results.json") or {}
    total = (r.get("score") or {}).get("total")
    got = (f"graded {number_text(round(float(total) * (1 - float(intact['penalty_pct']) / 100), 2))} point(s) after a "
           f"{number_text(intact['penalty_pct'])} % penalty" if o.get("status") == "graded" and total is not None
           else o.get("status", "not graded yet"))
    return f"The intact attempt that would count otherwise: #{intact['number']} ({intact['attempt_name']}, {got})."


def _blank_if_no_score(row: dict) -> dict:
    if row["status"] in NO_SCORE:
        row.update(total=None, final=None, penalty_pct=None, max="")
        row["_no_score"] = True
    return row


def csv_text(rows, stages) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    header = HEAD_COLUMNS + [f"points.{s}" for s in stages] + TAIL_COLUMNS + WHERE_COLUMNS + REPORT_COLUMNS + DECISION_COLUMNS
    w.writerow(header)
    for r in rows:
        fixed = [number_text(r.get(c)) for c in HEAD_COLUMNS]
        per_stage = [number_text(r["_points"].get(s, 0.0)) if r["_points"] and not r.get("_no_score") else "" for s in stages]
        # Its cells carry what students wrote (a case names their files; a report's verdict is their manifest's): escaped.
        w.writerow(list(map(escaped, fixed + per_stage + [number_text(r.get(c)) for c in TAIL_COLUMNS + WHERE_COLUMNS
                                                          + REPORT_COLUMNS + DECISION_COLUMNS])))
    return out.getvalue()


def summary_text(rows, stages, title) -> str:
    n = len(rows)
    status = collections.Counter(r["status"] for r in rows)
    lines = [f"# Gradebook summary: {title}", "", f"{n} student(s): " +
             ", ".join(f"{k} {v}" for k, v in sorted(status.items())), ""]
    review = [r for r in rows if r["status"] == "needs_review"]
    if review:
        lines += [f"## Needs review: {len(review)} (no score, blank in every export)", ""]
        lines += [f"- {r['student']}: {r['message']}" for r in review] + [""]
    pending = [r for r in rows if r["status"] == "pending"]
    if pending:
        lines += [f"Pending (no score yet, blank in every export): {len(pending)} — "
                  + "; ".join(f"{r['student']} ({r['message']})" for r in pending), ""]
    graded = [r for r in rows if r["status"] == "graded"]
    if graded:
        totals = sorted(r["final"] for r in graded)
        top = max((float(r["max"] or 0) for r in graded), default=0) or max(totals) or 1
        lines += ["## Totals (graded, after late penalties)", "",
                  f"min {number_text(totals[0])}, median {number_text(float(statistics.median(totals)))}, "
                  f"mean {number_text(round(statistics.mean(totals), 2))}, max {number_text(totals[-1])} (out of {number_text(top)})", ""]
        bins = collections.Counter(min(9, int(10 * t / top)) for t in totals)
        for b in range(10):
            lines.append(f"    {b * 10:3d}-{b * 10 + 9 if b < 9 else 100:3d}%  {'#' * bins.get(b, 0)} {bins.get(b, 0) or ''}".rstrip())
        lines.append("")
    else:
        lines += ["No student was graded with a GPU (see the statuses above).", ""]
    fails = collections.defaultdict(set)  # what failed -> the students it failed for (each counted once)
    for r in rows:
        if r["_results"]:
            for res in r["_results"].get("results", []):
                d = res.get("disposition")
                if d not in ("passed", "no_gpu", "not_implemented", "unsupported", None):
                    fails[f"{res.get('stage')}/{res.get('precision')}: {d}"].add(r["student"])
        elif r["status"] in ("build_failed", "error"):
            fails[f"{r['status']}"].add(r["student"])
    lines += ["## Most common failures (students)", ""]
    ranked = sorted(fails.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:10]
    lines += [f"- {what}: {len(who)} student(s) ({', '.join(sorted(who)[:6])}{' ...' if len(who) > 6 else ''})"
              for what, who in ranked] or ["- none"]
    decided = [r for r in rows if r.get("decisions")]
    if decided:
        lines += ["", f"## Decisions of the course staff applied: {len(decided)} student(s)", ""]
        lines += [f"- {r['student']}: {r['decisions']}" for r in decided]
    doubtful = [r for r in rows if r.get("report") in ("mismatch", "unstamped", "example")]
    if doubtful:
        lines += ["", f"## Reports not made from the stage files handed in: {len(doubtful)}", ""]
        lines += [f"- {r['student']}: report: {r['report']}" for r in doubtful]
    late = [r["student"] for r in rows if r["late"] == "yes"]
    lines += ["", f"Late: {len(late)}" + (f" ({', '.join(late)})" if late else ""), ""]
    extended = [r for r in rows if r.get("extension")]
    if extended:
        lines += [f"Extensions applied: {len(extended)}", ""]
        lines += [f"- {r['student']}: {r['extension']}" for r in extended] + [""]
    models = collections.Counter(r["gpu"] for r in rows if r["gpu"])
    nodes = collections.Counter(r["node"] for r in rows if r["node"])
    if models or nodes:
        lines += ["## Where it was graded", ""]
        if models:
            lines.append("GPU models: " + ", ".join(f"{m} {n}" for m, n in sorted(models.items())))
            if len(models) > 1:
                lines.append("(more than one model: % of cuBLAS makes them comparable only in part, "
                             "docs/scoring.md; pin one with [cluster] gres or constraint)")
        if nodes:
            lines.append("Nodes: " + ", ".join(f"{m} {n}" for m, n in sorted(nodes.items())))
        changed = [f"{r['student']} ({r['gpu_changed']}, now {r['gpu']})" for r in rows if r["gpu_changed"]]
        lines.append(f"Graded on another GPU model than first: {len(changed)}"
                     + (" — " + "; ".join(changed) if changed else ""))
        lines.append("")
    return "\n".join(map(escaped, lines))  # each line: what students wrote in it (messages, names) escaped


def texts(sweep: Path, stage_order: list[str], title: str, decided: dict | None = None,
          feedback=None, cases: list | None = None) -> tuple[dict, list[dict], list[str]]:
    """gradebook.csv and summary.md of a sweep as texts (sweeps.write_version keeps them), with
    the rows and stage columns they were made from (cases: as build's). The drop box's directories for
    names the roster does not list (the plan's off_roster) are named in the summary: never a row."""
    rows, stages = build(sweep, stage_order, decided, feedback, cases)
    summary = summary_text(rows, stages, title)
    off = (read_json(sweep / "plan.json") or {}).get("off_roster") or []
    if off:
        summary += ("\n## Directories in the drop box for names not on the roster\n\n"
                    f"{', '.join(map(escaped, off))}: never graded and in no export (a typo, a classmate's squat, or a "
                    "student to add to the roster and sweep again).\n")
    return {"gradebook.csv": csv_text(rows, stages), "summary.md": summary}, rows, stages


def write(sweep: Path, stage_order: list[str], title: str, decided: dict | None = None) -> tuple[Path, Path, list[dict]]:
    """texts(), kept as a new version of the sweep's gradebook (sweeps.write_version) without the
    LMS files; the `gradebook` command writes both."""
    files, rows, _ = texts(sweep, stage_order, title, decided)
    sweeps.write_version(sweep, files, {"made_by": "gradebook.write"})
    return sweep / "gradebook.csv", sweep / "summary.md", rows
