"""commands/sweep.py — the staff's sweeps: plan every student's attempt that counts, grade (or
rescore) it in a sweep's run on Slurm or on this machine, follow the run, build the gradebook and
its LMS files, and publish the official grades. It needs the staff's tools (cluster/staff/), which a
handout leaves out: the entry point loads it only where they are.
"""
import json
import os
import secrets
import shutil
import sys
from pathlib import Path

import attempts as door  # the one way into the drop box
import class_files
import course_state
import gradebook  # cluster/staff/
import gradebook_version  # cluster/staff/
import grading
import local_grading
import records
import scratch as scratch_space
import slurm
from sweep_plan import plan_record, plan_sweep
import sweeps
import sweep_work  # cluster/staff/
from commands import common
import course_check
from commands.common import Refused
from config import ConfigError
from records import now


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
    work = sweep_work.sweep_todo(sweep, entries, args.student, args.force, state)
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
        work.todo += sweep_work.rescore(cfg, state, sweep, work.rescore, v.checker)
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
        code = gradebook_version.write(cfg, sweep, common.ARGV) or (1 if failed else 0)
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
        if t.get("waived"):  # the staff accepted this attempt's files as they are: graded while they stay so
            meta["waived"] = t["waived"]
        outcome = grading.grade_checked(cfg, Path(t["attempt"]), tmp, meta, student=t["student"], digest=t["digest"],
                                        waived=bool(t.get("waived")), say=lambda *_: None)
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


