"""commands/pages.py — the staff's pages of a sweep: the similarity report and the opt-in
leaderboard. They need the staff's tools (cluster/staff/) and their libraries (copydetect,
matplotlib), which a sweep does not: a module of their own.
"""
import collections
from pathlib import Path

import class_files
import dropbox
import gradebook  # cluster/staff/
import leaderboard  # cluster/staff/; matplotlib
import records
import similarity  # cluster/staff/; copydetect and matplotlib
from commands import common
from commands.common import Refused
from dropbox import SubmissionError


def _stage_files(cfg) -> list[str]:
    """The registry's stage files (the trusted tree's student/*.cu): the one list of stages."""
    return dropbox.stage_files(cfg.grader_dir)


def cmd_similarity(cfg, args):
    sweep = common.chosen_sweep(cfg, args)
    try:
        out = similarity.run(cfg, sweep, _stage_files(cfg))
    except similarity.SimilarityError as e:
        raise Refused(str(e)) from None
    print(f"similarity: report {out / 'index.html'}; groups {out / 'groups.csv'}; pairs {out / 'pairs.csv'}")
    return 0


def cmd_leaderboard(cfg, args):
    sweep = common.chosen_sweep(cfg, args)
    if cfg.file_setting("leaderboard", "aliases") is None:
        raise Refused(f"no leaderboard: {cfg.path} sets no [leaderboard] aliases file (the students who opted "
                      "in, student = \"alias\"; docs/instructor-grading.md shows how)")
    try:
        stage_order = [Path(n).stem for n in _stage_files(cfg)]
    except SubmissionError:
        stage_order = []
    cases = []  # students whose row or place cannot be read: named for the staff here, never on the pages
    rows, _ = gradebook.build(sweep, stage_order, cases=cases)
    if not any(r["status"] == "graded" for r in rows):
        statuses = collections.Counter(r["status"] for r in rows)
        raise Refused(f"no student of sweep {sweep.name} was graded on a GPU ("
                      + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())) + "): there is nothing to rank, "
                      "and a page saying nobody has a correct kernel would be false. No leaderboard was written; "
                      "make one after a sweep on the GPU nodes")
    students = {r["student"] for r in rows}
    aliases = class_files.load_aliases(cfg, students, f"the sweep's plan ({sweep / 'plan.json'}) does not list them")
    out, boards, notes = leaderboard.write(sweep, rows, aliases, cfg.setting("leaderboard", "stages"),
                                           cfg.setting("leaderboard", "size"), f"Leaderboard: {cfg.course}", cases)
    print(f"leaderboard: {len(aliases)} student(s) opted in; {len(boards)} board(s): "
          + (", ".join(f"{b.title} ({len(b.places)})" for b in boards) or "none yet"))
    for n in notes:
        print(f"leaderboard: note: {n}")
    for fault in cases:
        print(f"leaderboard: warning: {records.escaped(fault)}: on no board (the others are ranked); a case for "
              "a person")
    print(f"leaderboard: {out / 'leaderboard.md'}, {out / 'leaderboard.html'} (publish the directory as it is)")
    return 0
