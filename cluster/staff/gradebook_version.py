"""gradebook_version.py — a sweep's gradebook made: gradebook.csv and summary.md (gradebook.py), then
the LMS files (lms_export.py), kept as a new version of the sweep's gradebook (versions/NNN/; never
overwritten) with the staff's decisions applied. The staff's `gradebook` command, a local sweep's run
and the sweep's gradebook job all write it here.
"""
import collections
import os
from pathlib import Path

import attempts as door  # the one way into the drop box
import dropbox
import gradebook
import lms_export
import records
import student_standing
import sweeps
from dropbox import SubmissionError

def write(cfg, sweep: Path, argv=()) -> int:
    """gradebook.csv and summary.md, then the LMS files (export/canvas.csv, export/grades.csv), kept as a
    new version of the sweep's gradebook (versions/NNN/; never overwritten) with the staff's decisions
    applied; the sweep's gradebook.csv, summary.md and export/* point at the newest. argv: the command
    line that asked for it (a version records who made it)."""
    try:
        stage_order = [Path(n).stem for n in dropbox.stage_files(cfg.grader_dir)]
    except SubmissionError:
        stage_order = []
    decided = student_standing.decisions(cfg)
    cases = []  # students whose row could not be made: each a case for a person, the others exported
    book, rows, stages = gradebook.texts(sweep, stage_order, f"{cfg.course} / {sweep.name}", decided,
                                         feedback=lambda entry: _feedback_outcomes(cfg, entry), cases=cases)
    plan = records.read_json(sweep / "plan.json") or {}
    stale = sorted({e["student"] for d in decided.values() for e in d.history
                    if e["seq"] > plan.get("decisions", 0) and e["action"] in ("accept", "withdraw", "unwithdraw", "enter")
                    or e["seq"] > plan.get("decisions", 0) and e["action"] == "settle" and e.get("attempt")})
    skipped = [line for d in decided.values() for line in d.skipped]
    if skipped:
        book["summary.md"] += "\n## Decisions not applied\n\n" + "".join(f"- {line}\n" for line in skipped)
        for line in skipped:
            print(f"gradebook: warning: {line}")
    if stale:
        note = (f"Decisions made since this sweep was planned change which attempt counts for: {', '.join(stale)}. "
                f"`make sweep SWEEP={sweep.name}` plans and grades them.")
        book["summary.md"] += f"\n## Not in this gradebook yet\n\n{note}\n"
        print(f"gradebook: warning: {note}")
    exports, columns, warnings = lms_export.texts(cfg, rows, stages)
    runs = sweeps.runs_of(sweep)
    gpus = collections.Counter(r["gpu"] for r in rows if r["gpu"])
    meta = {"schema": sweeps.VERSION_SCHEMA, "sweep": sweep.name, "state": plan.get("state"),
            "plan_created": plan.get("created"), "run": runs[-1].name if runs else None,
            "decisions": student_standing.last_seq(cfg), "students": len(rows),
            "statuses": dict(collections.Counter(r["status"] for r in rows)), "gpu_models": dict(gpus),
            "made_by": "the sweep's gradebook job" if os.environ.get("SLURM_JOB_ID") else " ".join(["gemmlab_cluster.py", *argv])}
    version, new = sweeps.write_version(sweep, {**book, **exports}, meta)
    if runs:
        sweeps.complete_run_manifest(runs[-1], version.name, dict(gpus), cfg)
    print(f"gradebook: {len(rows)} student(s) -> {sweep / 'gradebook.csv'} (version {version.name}"
          + (")" if new else ", the same as the version before)"))
    print(book["summary.md"])
    print("export: " + ", ".join(str(sweep / n) for n in exports) + f" (version {version.name})")
    print(f"export: {columns}")
    for w in warnings:
        print(f"export: warning: {records.escaped(w)}")
    for fault in cases:
        print(f"gradebook: warning: {records.escaped(fault)}: needs_review, blank in every export (the others are in "
              f"it). Look at their records in {sweep / 'grades'}, then grade them again (`make sweep SWEEP={sweep.name} "
              "STUDENT=...`) or settle it (`make settle STUDENT=... ZERO=1|FINAL=... WHY=...`)")
    return 0


def _feedback_outcomes(cfg, entry: dict) -> list[dict]:
    """The feedback gradings of a planned attempt (gradebook.gpu_change), read through the door."""
    try:
        return door.one(cfg, Path(entry["attempt"])).feedback_outcomes()
    except (door.Case, OSError):
        return []
