"""commands/grades.py — the staff's view of a sweep and its grades: follow a sweep's run (sweep-status),
build the gradebook and its LMS files from what the sweep graded (gradebook), and publish the official
grades to the students (publish-grades). It needs the staff's tools (cluster/staff/), which a handout
leaves out: the entry point loads it only where they are.
"""
import collections
import csv
import json
import time
from pathlib import Path

import course_state
import fault_boundary
import gradebook  # cluster/staff/
import gradebook_version  # cluster/staff/
import grading
import local_grading
import records
import student_standing
import sweeps
from commands import common
from commands.common import Refused
from records import now


def cmd_gradebook(cfg, args):
    """gradebook.csv and summary.md, then the LMS files, as a new version of the sweep's gradebook
    (gradebook_version.write)."""
    return gradebook_version.write(cfg, Path(args.sweep) if args.sweep else common.chosen_sweep(cfg, args), common.ARGV)


def cmd_sweep_status(cfg, args):
    planned = sweeps.planned_sweeps(cfg)
    if not planned:
        raise Refused(f"no sweep in {cfg.sweeps_dir} yet (`make sweep` starts one)")
    if args.name is None:
        sweep = planned[-1]  # the latest
    else:
        sweep = sweeps.sweep_dir(cfg, args.name)
        if sweep not in planned:
            raise Refused(f"no sweep {args.name!r} in {cfg.sweeps_dir}; the sweeps there: "
                          + ", ".join(d.name for d in planned) + " (`make sweep-status SWEEP=<name>`)")
    if len(planned) > 1:
        print("sweeps: " + ", ".join(f"{d.name} ({sweeps.runs_of(d)[-1].name if sweeps.runs_of(d) else 'planned'})" for d in planned)
              + f"; showing {sweep.name}" + (" (the latest)" if args.name is None else ""))
    while True:
        active = _print_sweep_status(cfg, sweep)
        if not args.follow or not active:
            return 0
        time.sleep(args.follow)
        print(f"-- {records.iso(now())}")


def _print_sweep_status(cfg, sweep: Path) -> bool:
    """One status report of a sweep; True while its latest run still has jobs in the queue."""
    plan = records.read_json(sweep / "plan.json")
    runs = sweeps.runs_of(sweep)
    jobs = records.read_json(runs[-1] / "jobs.json") if runs else None
    tasks = json.loads((runs[-1] / "tasks.json").read_text()) if runs else []
    states = sweeps.active_jobs(runs[-1]) if runs else {}
    array = (jobs or {}).get("array")
    in_queue = {}
    for key, state in states.items():
        if array and key.startswith(f"{array}_"):
            idx = key.split("_", 1)[1]
            if idx.isdigit():
                in_queue[int(idx)] = state
            elif idx.startswith("["):  # pending remainder of the array, e.g. 7_[5-9%2]
                spec = idx.strip("[]").split("%")[0]
                for part in spec.split(","):
                    lo, _, hi = part.partition("-")
                    for i in range(int(lo), int(hi or lo) + 1):
                        in_queue[i] = state
    local = local_grading.state(runs[-1]) if runs else None
    if local and local["state"] in ("running", "elsewhere"):  # a local run: its tasks not done yet are its queue
        in_queue.update(sweeps.local_queue(runs[-1], len(tasks)))
    counts = {"done": 0, "running": 0, "queued": 0, "failed": 0}
    failed, no_gpu, cases = [], [], []
    task_of = {(t["student"], t["digest"]): i for i, t in enumerate(tasks)}
    where = collections.Counter()  # (node, GPU) -> grades done there
    for e, standing, fault in fault_boundary.each(
            [e for e in plan["students"] if e.get("digest")], lambda e: _task_standing(sweep, e, task_of.get(
                (e["student"], e["digest"])), in_queue), what="their grade's standing", student=lambda e: e["student"],
            where=lambda e: gradebook.grade_dir(sweep, e["student"], e["digest"])):
        if fault is not None:
            cases.append(fault)
            continue
        state, place = standing
        counts[state] += 1
        if state == "failed":
            failed.append(e["student"])
        elif state == "done" and place[2] in grading.SWEEP_RETRIES:
            no_gpu.append(e["student"])
        if place:
            where[place[0], place[1]] += 1
    total = sum(counts.values())
    print(f"sweep {sweep.name} ({runs[-1].name if runs else 'no run'}): " +
          ", ".join(f"{k} {v}" for k, v in counts.items()) + f" (of {total} graded attempts)")
    if failed:
        print(f"  failed or not graded: {', '.join(failed)}; `make sweep` grades them again")
    if no_gpu:
        print(f"  no GPU on the node: {len(no_gpu)} ({', '.join(no_gpu[:8])}{' ...' if len(no_gpu) > 8 else ''}); "
              "once the node is fixed, `make sweep` grades them again")
    for fault in cases:
        print(f"  {records.escaped(fault)}: not counted above; a case for a person")
    for line in sweeps.restart_lines(runs, {(r.name, int(i)) for r in runs[-1:] for i, st in in_queue.items()
                                      if st == "RUNNING"}):
        print(line)
    if where:
        print("  graded on: " + ", ".join(f"{node} ({gpu}) {n}" for (node, gpu), n in sorted(where.items())))
    gb = (jobs or {}).get("gradebook")
    if gb and gb in states:
        print(f"  gradebook job {gb}: {states[gb].lower()}")
    if local:
        print(f"  local grading: {local_grading.describe(local)}")
    if (sweep / "gradebook.csv").is_file():
        print(f"  gradebook: {sweep / 'gradebook.csv'}")
    return bool(states) or bool(local and local["state"] == "running")


def _task_standing(sweep: Path, e: dict, task: int | None, in_queue: dict) -> tuple[str, tuple | None]:
    """Where one planned attempt's grading stands (sweep-status): running, queued, done or failed; and
    for a grade in place that did not fail, (node, GPU, status)."""
    outcome = records.read_json(gradebook.grade_dir(sweep, e["student"], e["digest"]) / "outcome.json")
    place = None
    if outcome and outcome.get("status") not in grading.FAILED:
        place = (outcome.get("node") or outcome.get("host") or "?", gradebook.gpu_label(outcome) or "GPU unknown",
                 outcome.get("status"))
    state = in_queue.get(task) if task is not None else None
    if state == "RUNNING":
        return "running", place
    if state:
        return "queued", place
    return ("done" if place else "failed"), place


def cmd_publish_grades(cfg, args):
    """(staff) Show each student their official grade of a sweep (its newest gradebook version) with
    `make results`; recorded in the decision log."""
    common.staff_only(cfg, "publish-grades")
    sweep = common.chosen_sweep(cfg, args)
    version_dir = (sweep / "gradebook.csv").resolve().parent
    if not (sweep / "gradebook.csv").is_symlink() or not (version_dir / "version.json").is_file():
        raise Refused(f"{sweep} has no gradebook version yet: `make gradebook-export SWEEP={sweep.name}` first")
    version = version_dir.name
    built_after = (records.read_json(version_dir / "version.json") or {}).get("decisions", 0)
    later = [e for e in course_state.log(cfg).entries()
             if e["seq"] > built_after and e["action"] not in ("publish", "publish-grades")]
    if later:
        raise Refused(f"the newest gradebook of sweep {sweep.name} (version {version}) was built before decision(s) "
                      + ", ".join(f"#{e['seq']} {e['action']} {e.get('student', '')}".rstrip() for e in later[:5])
                      + ": it is not the grade they decide. Rebuild it (`make gradebook-export SWEEP="
                      f"{sweep.name}`; a decision that changes which attempt counts needs `make sweep` first), then "
                      "publish. Nothing was published")
    official = {}
    with open(sweep / "gradebook.csv") as f:
        for row in csv.DictReader(f):
            official[row["student"]] = {
                "sweep": sweep.name, "version": version, "published": records.iso(now()), "status": row["status"],
                "attempt": row["attempt"], "total": row["total"], "max": row["max"], "penalty_pct": row["penalty_pct"],
                "final": row["final"], "late": row["late"], "extension": row["extension"].split(";")[0],
                "scored": row["status"] not in gradebook.NO_SCORE}
    e = course_state.log(cfg).append("publish-grades", why=args.why or "", sweep=sweep.name, version=version,
                                     students=len(official))
    n = student_standing.write_views(cfg, official=official)
    missing = [s for s in official if student_standing.token(cfg, s, create=False) is None]
    print(f"publish-grades: sweep {sweep.name}, gradebook version {version}: {n} student(s) see their official grade "
          f"with `make results` (decision #{e['seq']})")
    if missing:
        print(f"publish-grades: {len(missing)} student(s) have not run a course command since the drop box was set up, "
              f"so there is nowhere to leave theirs yet: {', '.join(missing[:10])}{' ...' if len(missing) > 10 else ''}. "
              "Their next `make status` or `make submit` makes a place; publish again then")
    return 0
