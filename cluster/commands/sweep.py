"""commands/sweep.py — the staff's sweeps: plan every student's attempt that counts, grade (or
rescore) it in a sweep's run on Slurm or on this machine, follow the run, build the gradebook and
its LMS files, and publish the official grades. It needs the staff's tools (cluster/staff/), which a
handout leaves out: the entry point loads it only where they are.
"""
import argparse
import collections
import csv
import dataclasses
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

import attempts as door  # the one way into the drop box
import class_files
import course_state
import dropbox
import fault_boundary
import gradebook  # cluster/staff/
import grading
import lms_export  # cluster/staff/
import local_grading
import records
import scratch as scratch_space
import slurm
import student_standing
import which_counts
import sweeps
from commands import common
import course_check
from commands.common import Refused
from config import ConfigError
from dropbox import SubmissionError
from records import now


def plan_sweep(cfg, when=None, students=None) -> list[dict]:
    """Every student's attempt that counts now (`when`) — their own and those the staff entered, with
    the staff's decisions applied — and whether the student can still hand in: `open_until`, set while
    the student's own deadline (extension and late cutoff included) has not passed — such a student is
    pending, and no file a TA uploads gets a score for them. students: plan these only."""
    when = when or now()
    entries = []
    everyone = door.students(cfg)
    extensions = class_files.load_extensions(cfg, set(everyone), class_files.class_source(cfg))
    folded = student_standing.decisions(cfg)
    # The fault boundary: one student's oddity is their case, the others are planned.
    for student, entry, fault in fault_boundary.each(
            students if students is not None else everyone, what="reading their hand-ins",
            step=lambda s: _plan_student(cfg, s, when, folded.get(s), extensions.get(s))):
        entries.append(entry if fault is None else unreadable_entry(fault))
    return entries


def unreadable_entry(fault: "fault_boundary.Fault") -> dict:
    """The plan's entry for a student whose hand-ins the staff's tools could not read: a case for a
    person (needs_review: no score, blank in every export), naming the student and what stopped."""
    return {"student": fault.student, "attempts": 0, "status": "not_counted",
            "review": f"{fault.student}'s hand-ins could not be read ({fault.why})"}


def _plan_student(cfg, student, when, decided, ext) -> dict:
    """plan_sweep's entry for one student."""
    deadline = ext.deadline(cfg.deadline) if ext else cfg.deadline
    st = which_counts.standing(cfg, student, decided or student_standing.StudentDecisions(), deadline=deadline)
    attempts, accepted, pick, info = st.attempts, st.accepted, st.pick, st.info
    unbound = st.cases  # the staff's decisions whose attempt is gone, renamed or changed: each a case for a person
    entry = {"student": student, "attempts": len(attempts), **info}
    open_until = deadline.open_until()
    if open_until is not None and when < open_until:
        entry["open_until"] = records.iso(open_until)
    if ext:
        entry["extension"] = ext.describe()
    if decided and decided.history:
        entry["decisions"] = [e["seq"] for e in decided.history]
    if pick is None:
        entry["status"] = "missing" if not attempts else "not_counted"
    else:
        # Filed under the digest of the files as the door read them (never the manifest's word).
        entry.update(status="selected", attempt=str(pick.path), attempt_name=pick.path.name, label=pick.label,
                     digest=pick.digest)
        entry["report"] = pick.report_verdict()  # checked again on the stored files
    # An attempt changed after it was stored, whose files no longer match its manifest, or that
    # holds what a hand-in does not (a link, a FIFO, another's file: attempts.py), is an integrity
    # case for a person, whichever attempt it is (a late edit would otherwise only make it "after
    # the cutoff, ignored"); the intact attempt that would count is kept in view. So is a student
    # directory that is not the student's own (nothing in it is read). The staff settle it by
    # accepting an attempt (its files as they are now) or setting the score.
    case = door.student_case(cfg, student)
    problems = [(a, a.integrity_problem()) for a in attempts if not a.withdrawn]
    problems = [(a, why) for a, why in problems if why]
    if accepted is not None and pick is not None:
        waived = decided.accepted.get("digest") or decided.accepted.get("files")  # (`files`: older lines)
        problem = pick.integrity_problem()
        if problem and waived and waived == pick.digest:
            entry.update(waived=problem, digest=waived)  # graded as it is now: the decision says why
        elif problem:
            entry["review"] = (f"attempt {pick.label} {problem}, and it changed again after the staff accepted it "
                               f"(decision #{decided.accepted['seq']})")
        problems = []
    if case and not (decided and decided.override):
        entry["review"] = case
    elif (problems or unbound) and not (decided and decided.override):
        entry["review"] = "; ".join(unbound + [why if why.startswith(a.where) else f"attempt {a.label} {why}"
                                               for a, why in problems])
        intact, intact_info = which_counts.choose([a for a in attempts if not a.integrity_problem()], deadline, accepted)
        if intact is not None:
            entry["intact"] = {"attempt": str(intact.path), "attempt_name": intact.path.name, "label": intact.label,
                               "number": intact.number, "digest": intact.digest,
                               "penalty_pct": intact_info["penalty_pct"]}
    return entry


def plan_record(cfg, name: str, entries: list[dict], state_id=None) -> dict:
    """A sweep's plan.json: its students' entries (plan_sweep), and the drop box's directories for names
    the roster does not list (never students: the gradebook's summary names them for the staff)."""
    return {"schema": "gemmlab.sweep-plan/1", "sweep": name, "course": cfg.course, "created": records.iso(now()),
            "due": records.iso(cfg.deadline.due) if cfg.deadline.due else None, "policy": cfg.deadline.policy,
            "state": state_id, "decisions": student_standing.last_seq(cfg), "students": entries,
            "off_roster": door.off_roster(cfg)}


@dataclasses.dataclass
class SweepWork:
    """What a sweep does with each planned attempt: grade it on a GPU (todo), rescore its grade from the
    stored speeds (rescore), or keep it (current); with the reasons, for the TA to read."""
    todo: list = dataclasses.field(default_factory=list)
    rescore: list = dataclasses.field(default_factory=list)
    current: int = 0
    why: collections.Counter = dataclasses.field(default_factory=collections.Counter)


def sweep_todo(sweep: Path, entries: list[dict], students=None, force=False, state=None) -> SweepWork:
    """The work of a sweep run: each planned attempt (of `students`, if given) — and for an integrity
    case the intact one a person may choose — is graded when it has no result in place, or one of
    grading.SWEEP_RETRIES (error, no_gpu), or with force; otherwise its grade is weighed against the
    published course state (course_state.grade_standing): still current, rescored (points, targets
    or weights changed: no GPU needed) or graded again (the grader or what it measures changed)."""
    work = SweepWork()
    for e in entries:
        if students and e["student"] not in students:
            continue
        intact = e.get("intact") if e.get("intact") and e["intact"]["digest"] != e.get("digest") else None
        for g in ([e] if e.get("digest") else []) + ([intact] if intact else []):
            task = dict({k: g[k] for k in ("attempt", "attempt_name", "digest")}, student=e["student"])
            if g is e and e.get("waived"):
                task["waived"] = e["waived"]
            outcome = records.read_json(gradebook.grade_dir(sweep, e["student"], g["digest"]) / "outcome.json")
            if force:
                work.todo.append(dict(task, force=bool(outcome)))
                work.why["forced (--force)"] += 1
            elif not outcome:
                work.todo.append(dict(task, force=False))
                work.why["not graded in this sweep yet"] += 1
            elif outcome.get("status") in grading.SWEEP_RETRIES:
                work.todo.append(dict(task, force=False))
                work.why[f"graded again, their earlier result: {outcome.get('status')}"] += 1
            elif state is None:
                work.current += 1
            else:
                standing, why = course_state.grade_standing(outcome, state)
                if standing == "current" or (standing == "rescore" and not (
                        gradebook.grade_dir(sweep, e["student"], g["digest"]) / "results.json").is_file()):
                    work.current += 1  # nothing to rescore: a result with no score (build_failed, tampered)
                elif standing == "rescore":
                    work.rescore.append(dict(task, why=why))
                else:
                    work.todo.append(dict(task, force=True))
                    work.why[why] += 1
    return work


def rescore(cfg, state, sweep: Path, items: list[dict], checker: Path, say=print) -> list[dict]:
    """Score each grade again under the published rubric from its stored speeds (gemmlab-config
    --rescore: the grader's own arithmetic, no GPU), published like a grade: the earlier result is kept
    beside it. Returns the items that cannot be rescored (the rubric needs other shapes): they are graded."""
    again = []
    for item in items:
        final = gradebook.grade_dir(sweep, item["student"], item["digest"])
        tmp = final.parent / f".tmp-rescore-{secrets.token_hex(3)}"
        shutil.copytree(final, tmp)
        try:
            r = subprocess.run([str(checker), "--config", str(cfg.path), "--rescore", str(final / "results.json"),
                                "--out", str(tmp)], capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                shutil.rmtree(tmp, ignore_errors=True)
                say(f"  {item['student']}: cannot be rescored ({(r.stderr or r.stdout).strip()}): graded again")
                again.append(dict({k: item[k] for k in ("attempt", "attempt_name", "digest", "student")}, force=True))
                continue
            outcome = records.read_json(tmp / "outcome.json") or {}
            results = records.read_json(tmp / "results.json") or {}
            score = results.get("score") or {}
            before = outcome.get("score") or {}
            outcome.setdefault("rescored", []).append({"at": records.iso(now()), "by": course_state.who(),
                                                       "from_state": outcome.get("course_state"), "why": item["why"],
                                                       "total_before": before.get("total"), "max_before": before.get("max")})
            outcome.update(course_state=state.id, grading=dict(outcome.get("grading") or {}, **state.info["grading"]),
                           score={"total": score.get("total", 0), "max": score.get("max", 0)},
                           message=f"graded: {score.get('total', 0)} / {score.get('max', 0)} (rescored under course "
                                   f"state {state.id}: {item['why']})")
            records.write_json_atomic(tmp / "outcome.json", outcome)
            grading.publish(tmp, final, replace=True)
            say(f"  {item['student']}: {before.get('total')} / {before.get('max')} -> {score.get('total')} / "
                f"{score.get('max')} (rescored)")
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return again


def published_state(cfg, name: str) -> tuple["course_state.CourseState", course_check.Validated]:
    """The course state a sweep grades under: every file validated first; the published state, or —
    when none was published yet — this one, published now. Files that differ from the published state
    stop the sweep: a grade must say which rubric made it."""
    live = cfg.live or cfg
    try:  # every mistake of the course's files stops the sweep here, before anything is planned or queued
        v = course_check.validate_course(live, live.trusted_cache_dir / "trusted-build.log")
    except ConfigError as e:
        raise ConfigError(f"{e}\nThe sweep queued nothing: fix the file, check it with `make validate`, then sweep again") from None
    state = course_state.current(live)
    if state is None:
        state, _ = course_state.publish(live, v.rubric, note=f"published by the first sweep ({name})")
        print(f"sweep {name}: no course state was published: published {state.id} now (students' commands and "
              "grading jobs read it from now on)")
        return state, v
    changed = course_state.unpublished(live, state)
    if changed:
        raise Refused(f"the course's files differ from the published course state {state.describe()}: "
                      f"{', '.join(changed)}. A sweep grades under a published state only, so that every grade says "
                      "which rubric made it: publish the files (`make publish-course`, which validates them first) "
                      "or undo the edit, then sweep again. Nothing was queued")
    return state, v


def cmd_sweep(cfg, args):
    mode = cfg.grading_mode(local=args.local)
    if mode == "no-slurm":  # the class's code never runs on this machine unless that was chosen
        raise Refused(local_grading.slurm_not_found(cfg))
    if mode == "local":
        print(f"sweep {args.name}: grading on this machine ({local_grading.why(cfg, args.local)}): "
              f"{local_grading.here()}", flush=True)
    sweep = sweeps.sweep_dir(cfg, args.name)
    runs = sweeps.runs_of(sweep)
    if runs and sweeps.active_jobs(runs[-1]):
        raise Refused(f"sweep {args.name!r} is still running ({runs[-1].name}): wait for it "
                      "(`make sweep-status`) or cancel its jobs (scancel) before sweeping again")
    busy = local_grading.busy(runs[-1]) if runs else ""
    if busy:
        raise Refused(f"sweep {args.name!r} is still running ({runs[-1].name}): {busy}. Wait for it "
                      "(`make sweep-status`) before sweeping again")
    state, v = published_state(cfg, args.name)
    cfg = state.config()
    known = set(door.students(cfg))
    missing = [s for s in (args.student or []) if s not in known]
    if missing:
        raise Refused(f"no such student: {', '.join(missing)} ({class_files.class_source(cfg)}); nothing was queued")
    course_open = cfg.deadline.open_until()
    if course_open is not None and now() < course_open and not args.before_deadline:
        raise Refused(f"the course's deadline has not passed (hand-ins can still count until {records.iso(course_open)}): "
                      "a sweep now grades attempts that may still change. Sweep after it, or sweep anyway with "
                      "FORCE=1 (make sweep FORCE=1; --before-deadline): every student who can still hand in is "
                      "then pending, and left blank in every export")
    previous = records.read_json(sweep / "plan.json")
    if args.student:  # one student regraded: the others keep their planned attempts
        planned = plan_sweep(cfg, students=args.student)
        others = [e for e in (previous or {}).get("students", []) if e["student"] not in args.student]
        order = {s: i for i, s in enumerate(sorted(known))}
        entries = sorted(others + planned, key=lambda e: order.get(e["student"], len(order)))
    else:
        entries = plan_sweep(cfg)
    selected = [e for e in entries if not args.student or e["student"] in args.student]
    plan = plan_record(cfg, args.name, entries, state.id)
    off_roster = plan["off_roster"]
    # Only now, with everything checked, does the sweep leave anything on disk.
    sweep.mkdir(parents=True, exist_ok=True)
    for stale in (sweep / "grades").glob("*/.tmp-*"):  # left by tasks that were killed
        shutil.rmtree(stale, ignore_errors=True)
    records.write_json_atomic(sweep / "plan.json", plan)
    work = sweep_todo(sweep, entries, args.student, args.force, state)
    counts = {s: sum(1 for e in selected if e["status"] == s) for s in ("selected", "missing", "not_counted")}
    who = f"{len(selected)} of {len(entries)} student(s)" if args.student else f"{len(entries)} student(s)"
    print(f"sweep {args.name}: {who}: {counts['selected']} with an attempt that counts, "
          f"{counts['missing']} without any, {counts['not_counted']} with none that counts; under course state {state.id}")
    print(f"sweep {args.name}: to grade: {len(work.todo)}"
          + (f" ({'; '.join(f'{why}: {n}' for why, n in sorted(work.why.items()))})" if work.why else "")
          + f"; to rescore without a GPU: {len(work.rescore)}"
          + (f" ({work.rescore[0]['why']})" if work.rescore else "")
          + f"; current (graded under this rubric and grader): {work.current}")
    if work.rescore:
        work.todo += rescore(cfg, state, sweep, work.rescore, v.checker)
    if off_roster:
        print(f"sweep {args.name}: directories in the drop box for names not on the roster (never graded, never in "
              f"an export; look at them in {cfg.dropbox_dir}): {', '.join(map(records.escaped, off_roster))}")
    still_open = [e for e in selected if e.get("open_until")]
    if still_open:
        last = max(e["open_until"] for e in still_open)
        print(f"sweep {args.name}: warning: {len(still_open)} student(s) can still hand in (their own deadline, "
              f"extensions and late cutoff included, has not passed): they are pending and left blank in the "
              f"gradebook and every export. Sweep again after {last}: "
              + ", ".join(f"{e['student']} (until {e['open_until']})" for e in still_open[:8])
              + (" ..." if len(still_open) > 8 else ""))
    review = [e for e in selected if e.get("review")]
    if review:
        print(f"sweep {args.name}: {len(review)} integrity case(s) need a person (needs_review, blank in every export): "
              + "; ".join(f"{e['student']}: {records.escaped(e['review'])}" for e in review[:5])
              + ". Settle each with `make settle STUDENT=... ATTEMPT=...|ZERO=1 WHY=...` (docs/instructor-term.md, \"Decisions\")")
    todo = work.todo
    run = sweep / "runs" / f"run-{len(runs) + 1:03d}"
    (run / "logs").mkdir(parents=True)
    records.write_json_atomic(run / "tasks.json", todo)
    sweeps.write_run_manifest(run, cfg, state, common.ARGV, {"grade": len(todo), "rescored": len(work.rescore),
                                                            "current": work.current, "why": dict(work.why), **counts},
                                    students=args.student)
    if mode == "slurm":
        jobs = {}
        job_values = dict(course=cfg.course, sweep=args.name, sweep_dir=sweep, run=run.name, python=cfg.python_exe,
                      config=cfg.path, logs=run / "logs", tool=common.trusted_tool(cfg))
        if todo:
            concurrency = min(cfg.sweep_concurrency, len(todo))
            script = slurm.render("sweep-array.sbatch", run / "sweep-array.sbatch", cfg.sbatch_options(),
                                  job_name=slurm.job_name(cfg.course, "sweep"), count=len(todo), last=len(todo) - 1,
                                  concurrency=concurrency, tasks=run / "tasks.json", **job_values)
            jobs["array"] = slurm.sbatch(script, cwd=run)
        light = [o for o in cfg.sbatch_options() if o.split("=")[0] in ("--partition", "--account", "--qos")]
        script = slurm.render("gradebook.sbatch", run / "gradebook.sbatch", light,
                              job_name=slurm.job_name(cfg.course, "gradebook"), **job_values)
        dep = [f"--dependency=afterany:{jobs['array']}"] if "array" in jobs else []
        jobs["gradebook"] = slurm.sbatch(script, *dep, cwd=run)
        jobs["queued"] = records.iso(now())
        records.write_json_atomic(run / "jobs.json", jobs)
        print(f"sweep {args.name}: " + (f"array job {jobs['array']} ({len(todo)} task(s), at most "
              f"{min(cfg.sweep_concurrency, len(todo))} at once), " if "array" in jobs else "")
              + f"gradebook job {jobs['gradebook']}. `make sweep-status` follows it; the gradebook will be "
              f"{sweep / 'gradebook.csv'}")
        return 0
    return sweep_here(cfg, sweep, run, len(todo))


def sweep_here(cfg, sweep: Path, run: Path, count: int) -> int:
    """A sweep on this machine: its grader (`sweep-local`) runs detached from the terminal, and this
    follows its log; stopping the following (Ctrl-C, a closed terminal) leaves it grading."""
    cmd = [sys.executable, str(common.trusted_tool(cfg)), "--config", str(cfg.path), "sweep-local", "--sweep", str(sweep),
           "--run", run.name]
    proc = local_grading.start(cmd, run, count, local_grading.here())
    print(f"sweep {sweep.name}: {count} attempt(s) graded here in the background (pid {proc.pid}, log "
          f"{run / local_grading.LOG}). Following it: Ctrl-C or closing the terminal stops only the following; "
          "`make sweep-status` shows where it is", flush=True)
    try:
        with scratch_space.stop_cleanly():
            return local_grading.follow(proc, run)
    except scratch_space.Stopped as e:
        try:
            print(f"sweep {sweep.name}: {e}: no longer following; the sweep goes on (pid {proc.pid}; "
                  "`make sweep-status`)", file=sys.stderr)
        except OSError:  # the terminal is gone
            pass
        return 0


def cmd_sweep_local(cfg, args):
    """(internal) The grader of a local sweep's run, started detached by sweep_here: every task, then
    the gradebook; its end (exit status, how) is recorded for `make sweep-status`."""
    sweep = Path(args.sweep)
    run = sweep / "runs" / args.run
    tasks = json.loads((run / "tasks.json").read_text())
    code, how = 1, "ended by an error (see the log)"
    try:
        failed = 0
        for i in range(len(tasks)):
            outcome = run_task(cfg, sweep, args.run, i)
            print(f"  [{i + 1}/{len(tasks)}] {tasks[i]['student']}: {outcome['status']}", flush=True)
            failed += outcome["status"] in grading.FAILED
        code = cmd_gradebook(cfg, argparse.Namespace(sweep=str(sweep))) or (1 if failed else 0)
        how = "finished"
        return code
    except scratch_space.Stopped as e:
        code, how = 128 + e.signum, str(e)
        raise
    finally:
        local_grading.finish(run, code, how)


def run_task(cfg, sweep: Path, run: str, index: int) -> dict:
    """Grade task `index` of a sweep run, exactly once. A task can start more than once: Slurm
    requeues it when its node fails, staff queue a run's script again, a later run meets an attempt
    an earlier run graded. Each start is recorded (runs/<run>/starts/), then: a result already in
    place for the same attempt is kept (for a --force regrade: one this very task published);
    otherwise the task grades into a hidden temporary directory and renames it into place, and if
    another start published first, that result wins and this one is dropped."""
    tasks = json.loads((sweep / "runs" / run / "tasks.json").read_text())
    if not 0 <= index < len(tasks):
        raise Refused(f"task {index} is not in {run}/tasks.json ({len(tasks)} tasks)")
    t = tasks[index]
    final = gradebook.grade_dir(sweep, t["student"], t["digest"])
    start = sweeps.record_start(sweep / "runs" / run, index, t)
    done = records.read_json(final / "outcome.json")
    if done and done.get("status") not in grading.SWEEP_RETRIES and (
            not t.get("force") or (done.get("run") == run and done.get("task") == index)):
        sweeps.record_end(start, "kept the result already in place", done)
        return done  # graded already (by an earlier run, or an earlier start of this task): never twice
    final.parent.mkdir(parents=True, exist_ok=True)
    tag = f"{os.environ.get('SLURM_ARRAY_JOB_ID', 'local')}_{os.environ.get('SLURM_ARRAY_TASK_ID', index)}"
    for stale in final.parent.glob(f".tmp-{tag}-*"):  # left by an earlier start of this very task
        shutil.rmtree(stale, ignore_errors=True)
    tmp = final.parent / f".tmp-{tag}-{secrets.token_hex(3)}"
    tmp.mkdir()
    try:
        meta = dict(common.state_record(cfg), student=t["student"], attempt=t["attempt_name"], attempt_sha256=t["digest"],
                    run=run, task=index)
        try:  # read again through the door: the bytes graded are the bytes whose digest is compared
            a = door.one(cfg, Path(t["attempt"]))
            problem = a.problem
        except (door.Case, FileNotFoundError) as e:
            a, problem = None, f"the attempt cannot be read: {e}"
        if problem:
            pass
        elif a.student != t["student"]:
            problem = f"the attempt lies in {a.student}'s directory, not {t['student']}'s"
        elif t.get("waived"):  # the staff accepted this attempt's files as they are: graded while they stay so
            problem = "" if a.digest == t["digest"] else "the attempt changed since the staff accepted it"
            meta["waived"] = t["waived"]
        else:
            problem = a.verify() or ("" if a.digest == t["digest"] else "the attempt changed since the sweep planned it")
        if problem:
            outcome = grading.finish_outcome(tmp, dict(meta, schema=grading.OUTCOME_SCHEMA, status="tampered", message=problem))
        else:
            outcome = grading.grade_into(cfg, a.stage_bytes(), tmp, meta, say=lambda *_: None)
        with scratch_space.uninterrupted():  # a stop waits until the result and its record are in place
            now_there = records.read_json(final / "outcome.json")
            if now_there and now_there.get("run") == run and now_there.get("task") == index \
                    and now_there.get("status") not in grading.SWEEP_RETRIES:
                published = False  # another start of this task (a requeue) got there first
            else:
                replace = bool(t.get("force")) or bool(now_there and now_there.get("status") in grading.SWEEP_RETRIES)
                published = grading.publish(tmp, final, replace=replace)
            if not published:
                shutil.rmtree(tmp, ignore_errors=True)
                outcome = records.read_json(final / "outcome.json") or outcome
                sweeps.record_end(start, "kept the result another start published first", outcome)
            else:
                sweeps.record_end(start, "published", outcome)
        return outcome
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def cmd_sweep_task(cfg, args):
    outcome = run_task(cfg, Path(args.sweep), args.run, args.task)
    print(f"sweep-task {args.task}: {outcome['student']}: {outcome['status']}: {records.escaped(outcome.get('message', ''))}")
    return 1 if outcome["status"] in grading.FAILED else 0


def cmd_gradebook(cfg, args):
    """gradebook.csv and summary.md, then the LMS files (export/canvas.csv, export/grades.csv), kept as a
    new version of the sweep's gradebook (versions/NNN/; never overwritten) with the staff's decisions
    applied; the sweep's gradebook.csv, summary.md and export/* point at the newest."""
    sweep = Path(args.sweep) if args.sweep else common.chosen_sweep(cfg, args)
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
            "made_by": "the sweep's gradebook job" if os.environ.get("SLURM_JOB_ID") else " ".join(["gemmlab_cluster.py", *common.ARGV])}
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
