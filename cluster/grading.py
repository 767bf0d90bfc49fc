"""grading.py — grade one hand-in: build it from the TRUSTED grader tree plus the submitted stage
files only (toolchain.py), run `gemmlab grade`, and publish the results atomically.

How a hand-in is built (the trusted build, the object cache, make): toolchain.py. Where a grading runs
(Slurm's node, its GPU): slurm.py.

Every outcome also says where it was graded: `node` (Slurm's node name, else the host name),
`restarts` (how often Slurm had started this job before: a requeue after a node failure), and `gpu`
(the GPU model, UUID and PCI bus id the grader saw, and the GPU Slurm allocated: its gres type and
CUDA_VISIBLE_DEVICES). The gradebook shows the node and the model and flags a regrade on another
model than the first grade (docs/scoring.md: what % of cuBLAS does and does not make comparable).

Outcome statuses (outcome.json, schema gemmlab.cluster-outcome/1):
  graded       the grader ran on a GPU; results.json holds the score
  no_gpu       the grader found no GPU on the node (results.json, when written, says the same)
  build_failed no grader could be built with the submitted files (a result: score 0, not retried); a
               stage file that does not compile or link is not this: the build leaves it out, its
               stages are `rejected` in results.json and every other stage is graded
  tampered     the attempt's files do not match its manifest (a result: not retried)
  error        the grading itself failed (grader crash, missing results): retried by the next sweep

A sweep grades an attempt again when its result in place is one of SWEEP_RETRIES: the next `make
sweep`, a requeued start of the same task and a requeued submit job all do. `no_gpu` is among them:
it says the node was broken, not what the hand-in is worth, so once the node is fixed a plain sweep
regrades those students (the old result is kept beside the new one, <hash>.replaced-<time>).
"""
import datetime as dt
import errno
import json
import os
import socket
import sys
import time
from pathlib import Path

import scratch as scratch_space
from records import iso, read_json, write_json_atomic
import slurm
import toolchain

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grader" / "scripts"))

import fingerprint  # noqa: E402  (the one definition of a submission's fingerprint)

OUTCOME_SCHEMA = "gemmlab.cluster-outcome/1"
# The statuses a grading job fails with (exit 1; `sweep-status` counts them failed).
FAILED = ("error",)
# The statuses a sweep grades again: every keep-or-replace decision reads this one tuple.
SWEEP_RETRIES = FAILED + ("no_gpu",)
# Test hook: seconds to wait between writing results and publishing them, so a test can kill a
# task at the worst moment and prove that nothing partial is left. Never set it in a course.
HOLD_ENV = "GEMMLAB_CLUSTER_HOLD_BEFORE_PUBLISH"


def grader_gpu(results: dict) -> dict:
    """The GPU the grader measured on (results.json environment.gpu), in outcome terms."""
    g = ((results or {}).get("environment") or {}).get("gpu") or {}
    out = {k: g[k] for k in ("uuid", "pci_bus_id", "compute_capability") if g.get(k)}
    if g.get("name"):
        out["model"] = g["name"]
    return out


def grade_into(cfg, files: dict[str, bytes], out: Path, meta: dict, say=print) -> dict:
    """Grade the stage files given as name -> bytes (what the drop box's door read: attempts.py, never a
    path into the drop box); write outcome.json (+ results.json, gradescope.json, build.log,
    grader.log) into out, which must be a fresh directory. Returns the outcome. Where no private
    scratch can be made (scratch.UnsafeScratch) the outcome is the machine's `error`, with why."""
    started = dt.datetime.now(dt.timezone.utc)
    outcome = dict(meta, schema=OUTCOME_SCHEMA, host=socket.gethostname(), started=iso(started),
                   job_id=os.environ.get("SLURM_JOB_ID", ""), array_task=os.environ.get("SLURM_ARRAY_TASK_ID", ""),
                   **slurm.job_context(), build_confinement=toolchain.confinement_note(cfg))
    log = out / "build.log"
    # What gradings of this user on this node left when they were killed (SIGKILL, a lost node):
    # gone before this one makes its own (scratch.py says what is never touched).
    for stale in scratch_space.reap(cfg.scratch_dir):
        print(f"removed the scratch of an earlier grading whose process is gone: {stale}", file=sys.stderr)
    try:
        scratch = scratch_space.new(cfg.scratch_dir)
    except scratch_space.UnsafeScratch as e:  # the machine's set-up, never the hand-in: an error, graded again
        outcome.update(status="error", message=f"no private scratch for the build on {socket.gethostname()}: {e}")
        return finish_outcome(out, outcome)
    try:
        submission = scratch / "submission"
        submission.mkdir()
        for name, data in sorted(files.items()):
            if name.endswith(".cu") and "/" not in name:  # stage files only: the report is not built
                (submission / name).write_bytes(data)
        try:
            tools = toolchain.Toolchain(cfg, say=say)
            grader = tools.build(submission, scratch / "build", log)
        except toolchain.BuildError as e:
            status = "build_failed" if e.submission_fault else "error"
            outcome.update(status=status, message=str(e), log_tail=e.log_tail)
            return finish_outcome(out, outcome)
        outcome["arch"] = tools.arch
        if outcome.get("grading"):  # the grader tree this grade was really built from (the state names one)
            outcome["grading"]["grader"] = tools.tree[:16]
        glog = out / "grader.log"
        if toolchain._has_grade_command(grader):
            cmd = [grader, "grade", "--config", cfg.path, "--out", out]
            if toolchain._grade_takes_fingerprint(grader):  # results.json names the files it graded
                fp = scratch / "fingerprint.json"
                fp.write_text(json.dumps(fingerprint.of_directory(submission)) + "\n")
                cmd += ["--fingerprint", fp]
        else:  # a grader from before `grade` existed: `check` still tells whether there is a GPU
            cmd = [grader, "check", "--full", "--no-color", "--json", out / "check.json"]
            outcome["note"] = "this grader has no `grade` subcommand; ran `check` instead"
        rc = toolchain.run_logged(cmd, cfg.grader_dir, glog)
        outcome["grader_exit"] = rc
        results = read_json(out / "results.json")
        if results is not None:
            outcome["gpu"].update(grader_gpu(results))
            outcome["status"] = "no_gpu" if results.get("status") == "no_gpu" else "graded"
            score = results.get("score") or {}
            outcome["score"] = {"total": score.get("total", 0), "max": score.get("max", 0)}
            outcome["message"] = ("the grader found no GPU on this node" if outcome["status"] == "no_gpu"
                                  else f"graded: {outcome['score']['total']} / {outcome['score']['max']}")
            if rc not in (0, 1, 3):
                outcome.update(status="error", message=f"the grader exited with {rc} after writing results")
        elif rc == 3:
            outcome.update(status="no_gpu", message="the grader found no GPU on this node: " + toolchain.tail(glog, 3).strip())
        else:
            outcome.update(status="error", message=f"the grader exited with {rc} and wrote no results.json",
                           log_tail=toolchain.tail(glog))
        return finish_outcome(out, outcome)
    finally:
        scratch_space.remove(scratch)


def grade_checked(cfg, attempt, out: Path, meta: dict, student=None, digest=None, waived=False, say=print) -> dict:
    """Grade one attempt into `out` (a fresh directory) if it is still the one to grade, else record why
    not (`tampered`): both a feedback grading and a sweep's task grade this way. attempt: an
    attempts.Attempt the caller read, or its path (read again here through the door: the bytes graded are
    the bytes whose digest is compared). It is not graded where the door names a case, where it lies in
    another student's folder than `student`, where its files no longer match its manifest, or where its
    digest is not `digest` (the one the sweep planned); waived: the staff accepted its files as they are
    (a decision), so only the digest they accepted is held to."""
    import attempts as door  # the drop box's door (it imports nothing of grading's)
    problem = ""
    if isinstance(attempt, (str, Path)):
        try:
            attempt = door.one(cfg, Path(attempt))
        except (door.Case, FileNotFoundError) as e:
            attempt, problem = None, f"the attempt cannot be read: {e}"
    a = attempt
    if problem or a.problem:
        problem = problem or a.problem
    elif student is not None and a.student != student:
        problem = f"the attempt lies in {a.student}'s directory, not {student}'s"
    elif waived:
        problem = "" if a.digest == digest else "the attempt changed since the staff accepted it"
    else:
        problem = a.verify() or ("" if digest is None or a.digest == digest
                                 else "the attempt changed since the sweep planned it")
    if problem:
        return finish_outcome(out, dict(meta, schema=OUTCOME_SCHEMA, status="tampered", message=problem))
    return grade_into(cfg, a.stage_bytes(), out, meta, say=say)


def finish_outcome(out: Path, outcome: dict) -> dict:
    """Stamp `outcome` finished now and write it as <out>/outcome.json."""
    outcome["finished"] = iso(dt.datetime.now(dt.timezone.utc))
    write_json_atomic(out / "outcome.json", outcome)
    return outcome


def publish(tmp: Path, final: Path, replace=True) -> bool:
    """Move a finished result directory into place in one rename. replace: an older result there
    (one that is being retried or regraded) is moved aside first and kept. Without replace, a result
    already there wins: nothing is moved and False is returned (the caller drops its own)."""
    hold = float(os.environ.get(HOLD_ENV) or 0)
    if hold:
        time.sleep(hold)
    with scratch_space.uninterrupted():  # a stop now waits for the renames: never half-published
        if final.exists() and replace:
            old = final.with_name(f"{final.name}.replaced-{dt.datetime.now(dt.timezone.utc):%Y%m%dT%H%M%S%f}")
            os.rename(final, old)
        try:
            os.rename(tmp, final)  # onto an existing result (never an empty directory) it fails
        except OSError as e:
            if replace or e.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.EISDIR):
                raise
            return False
        return True
