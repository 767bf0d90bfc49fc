"""lms_export.py — the gradebook as files an LMS imports, written beside it in <sweep>/export/:

  canvas.csv   Canvas's gradebook import layout: columns Student, ID, SIS User ID, SIS Login ID,
               Section, then one column per assignment ('<name>: <stage>' for each stage that has
               points, and '<name>: total'); the second row is "    Points Possible" with each
               column's maximum; then one row per student. A stage column holds the stage's points
               (both precisions); the total column holds the final score (after any late penalty).
  grades.csv   the same in a plain table: student, status, points.<stage>..., total, max,
               penalty_pct, final, extension.

Student columns come from [export] canvas_roster — the course's own Canvas gradebook export — matched
on the column [export] canvas_match (the cluster user name); its assignment headers, which carry
Canvas's ids ('gemm-lab: total (4711)'), are reused so a later import updates the same assignments.
Without a Canvas roster, Student and SIS Login ID are the user name.

A student whose grading is not finished or not real (gradebook.NO_SCORE: pending — not graded yet, or
the student's own deadline has not passed —, error, no_gpu, needs_review) gets empty cells, which
Canvas leaves unchanged, and is named in the warnings; missing, not_counted and build_failed are scores (0).
"""
import csv
import io
import re
from pathlib import Path

import fault_boundary
from config import ConfigError
from gradebook import NO_SCORE, number_text

CANVAS_STUDENT_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
POINTS_POSSIBLE = "    Points Possible"  # Canvas's own label, four spaces included


def row_maxima(row: dict) -> tuple[dict[str, float], float | None]:
    """Points possible per stage (both precisions) and in all, as one row's graded results give them."""
    score = (row.get("_results") or {}).get("score") or {}
    if not score.get("stages"):
        return {}, None
    found = {}
    for s in score["stages"]:
        found[s["stage"]] = found.get(s["stage"], 0.0) + float(s.get("correctness_max", 0) or 0) \
            + float(s.get("performance_max", 0) or 0)
    return found, float(score["max"]) if score.get("max") not in (None, "") else None


def stage_maxima(each_row: list[tuple[dict[str, float], float | None]]) -> tuple[dict[str, float], float | None]:
    """Points possible per stage (both precisions) and in all, from each row's (row_maxima)."""
    per_stage, total = {}, None
    for found, top in each_row:
        for stage, value in found.items():
            per_stage[stage] = max(per_stage.get(stage, 0.0), value)
        if top is not None:
            total = max(total or 0.0, top)
    return per_stage, total


def _scored(row) -> bool:
    return row["status"] not in NO_SCORE


def plain_csv(rows, stages, maxima) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["student", "status", *[f"points.{s}" for s in stages], "total", "max", "penalty_pct", "final",
                "extension"])
    per_stage, total_max = maxima
    for r in rows:
        if _scored(r):
            points = [number_text(r["_points"].get(s, 0.0)) for s in stages]
            scores = [number_text(r["total"]), number_text(total_max), number_text(r["penalty_pct"]), number_text(r["final"])]
        else:
            points = [""] * len(stages)
            scores = ["", number_text(total_max), "", ""]
        w.writerow([r["student"], r["status"], *points, *scores, r.get("extension", "")])
    return out.getvalue()


def read_canvas_roster(path: Path, match: str, setting: str) -> tuple[dict[str, dict], list[str]]:
    """user name -> the student's Canvas columns, and the roster's header (for assignment ids)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(f"{setting} = {str(path)!r}: no such file. Export the gradebook from Canvas "
                          "(Grades > Export > Export Entire Gradebook) and save it there, or set it to \"\"") from None
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    missing = [c for c in CANVAS_STUDENT_COLUMNS if c not in header]
    if missing or match not in header:
        raise ConfigError(f"{path}, line 1: not a Canvas gradebook export: no column {', '.join(missing or [match])} "
                          f"(found: {', '.join(header) or 'nothing'}). Export it again from Canvas")
    out = {}
    for line, row in enumerate(reader, 2):
        name = (row.get("Student") or "").strip()
        if name == POINTS_POSSIBLE.strip() or name == "Student, Test" or not name:
            continue
        key = (row.get(match) or "").strip()
        if not key:
            continue
        if key in out:
            raise ConfigError(f"{path}, line {line}: {match} {key!r} appears twice "
                              f"({out[key]['Student']!r} and {name!r}); fix the Canvas export")
        out[key] = {c: row.get(c, "") for c in CANVAS_STUDENT_COLUMNS}
    return out, header


def canvas_csv(rows, stages, maxima, assignment: str, roster: dict[str, dict] | None,
               roster_header: list[str]) -> tuple[str, list[str]]:
    """Canvas's import file and warnings (students it leaves out or leaves blank)."""
    per_stage, total_max = maxima
    columns = [(s, f"{assignment}: {s}") for s in stages] + [("total", f"{assignment}: total")]
    headers = []
    for _, name in columns:  # reuse Canvas's "<name> (<id>)" when its export has the assignment
        known = [h for h in roster_header if re.fullmatch(rf"{re.escape(name)} \(\d+\)", h)]
        headers.append(known[0] if known else name)
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CANVAS_STUDENT_COLUMNS + headers)
    possible = [number_text(per_stage.get(s)) for s in stages] + [number_text(total_max)]
    w.writerow([POINTS_POSSIBLE, "", "", "", ""] + possible)
    warnings, unknown, blank = [], [], []
    for r in rows:
        if roster is not None:
            ident = roster.get(r["student"])
            if ident is None:
                unknown.append(r["student"])
                continue
            who = [ident[c] for c in CANVAS_STUDENT_COLUMNS]
        else:
            who = [r["student"], "", "", r["student"], ""]
        if _scored(r):
            cells = [number_text(r["_points"].get(s, 0.0)) for s in stages] + [number_text(r["final"])]
        else:
            cells = [""] * (len(stages) + 1)
            blank.append(f"{r['student']} ({r['status']})")
        w.writerow(who + cells)
    if unknown:
        warnings.append(f"not in the Canvas roster, so not in canvas.csv: {', '.join(unknown)} "
                        "(their scores are in grades.csv)")
    if blank:
        warnings.append(f"left blank (Canvas keeps what it has): {', '.join(blank)}")
    if total_max is None:
        warnings.append("no graded results: the Points Possible row is empty")
    return out.getvalue(), warnings


def texts(cfg, rows: list[dict], stages: list[str]) -> tuple[dict[str, str], str, list[str]]:
    """export/canvas.csv and export/grades.csv as texts (sweeps.write_version keeps them as a
    version of the gradebook), the Canvas columns they fill, and the warnings. A row whose results
    cannot be read for its cells is that student's case: left blank (needs_review) in both, named in
    the warnings; the others are exported as if nothing happened (fault_boundary)."""
    exported, each_row, warnings = [], [], []
    for r, found, fault in fault_boundary.each(rows, row_maxima, what="their LMS cells",
                                               student=lambda r: r["student"]):
        if fault is not None:
            r, found = dict(r, status="needs_review", _results=None, _points={}), ({}, None)
            warnings.append(f"{fault}: left blank (needs_review) in canvas.csv and grades.csv; a person looks at "
                            "their results")
        exported.append(r)
        each_row.append(found)
    rows = exported
    maxima = stage_maxima(each_row)
    per_stage = maxima[0]
    # Stages worth no points (the naive baseline) are no LMS column; unknown maxima keep the stage.
    scored = [s for s in stages if per_stage.get(s, 1.0) > 0] if cfg.setting("export", "stage_columns") else []
    assignment = cfg.setting("export", "assignment") or cfg.course
    roster_path = cfg.file_setting("export", "canvas_roster")
    roster, header = (None, [])
    if roster_path is not None:
        roster, header = read_canvas_roster(roster_path, cfg.setting("export", "canvas_match"),
                                            f"{cfg.path}: [export] canvas_roster")
    canvas, canvas_warnings = canvas_csv(rows, scored, maxima, assignment, roster, header)
    warnings += canvas_warnings
    plain_stages = [s for s in stages if per_stage.get(s, 1.0) > 0]
    written = next(csv.reader(io.StringIO(canvas)))[len(CANVAS_STUDENT_COLUMNS):]  # with Canvas's ids where reused
    columns = (f"Canvas columns {', '.join(map(repr, written))} ([export] assignment"
               + (" is not set: [course] name" if not cfg.setting("export", "assignment") else "")
               + "); Canvas adds a new assignment for a column name it does not have")
    return {"export/canvas.csv": canvas, "export/grades.csv": plain_csv(rows, plain_stages, maxima)}, columns, warnings
