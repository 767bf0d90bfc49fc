"""local_grading.py — grading on the machine the tool runs on, only when chosen, and said first.

Grading compiles and runs students' code under the account that runs it. On a cluster that must
happen in batch jobs on the GPU nodes, never on a shared login node under the staff's account, so:

  * [cluster] scheduler = "auto" (the default) or "slurm" grades through Slurm. Where Slurm cannot be
    found (sbatch not on PATH: a login node whose Slurm is a module not loaded yet) nothing is graded
    here: `make sweep` stops and says so (slurm_not_found), and `make submit` stores the hand-in —
    its time counts for the deadline — and leaves its grading for later (not_queued_message).
  * Grading here is a choice: scheduler = "local" in course.toml, or `make sweep LOCAL=1`
    (`sweep --local`). Every such grading first says where it runs (here(): host, GPU or none).
  * A local sweep runs detached from the terminal (a session of its own, stdin closed): closing the
    terminal, or Ctrl-C, stops only the following of its log. Its run directory records it:
    local.json (host, pid, when, where) when it starts, local-end.json (exit status, how it ended)
    when it ends, local.log its output. state() reads them for `make sweep-status` and for the
    refusal of a second sweep while one runs.
"""
import datetime as dt
import os
import pwd
import shutil
import subprocess
import sys
import time
from pathlib import Path

import scratch as scratch_space
from records import read_json, write_json_atomic

RECORD, END_RECORD, LOG = "local.json", "local-end.json", "local.log"


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def gpus() -> str:
    """The GPUs a grading here would see, in words: their models, or why there is none."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() in ("", "-1"):
        return "no GPU (CUDA_VISIBLE_DEVICES hides them): every grade will be no_gpu"
    smi = shutil.which("nvidia-smi")
    if not smi:
        return "no GPU found (no nvidia-smi): every grade will be no_gpu"
    try:
        r = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"no GPU found (nvidia-smi -L: {e}): every grade will be no_gpu"
    names = [line.split(": ", 1)[1].split(" (UUID")[0] for line in r.stdout.splitlines()
             if line.startswith("GPU ") and ": " in line]
    if r.returncode != 0 or not names:
        return "no GPU found (nvidia-smi -L lists none): every grade will be no_gpu"
    counts = {n: names.count(n) for n in dict.fromkeys(names)}
    return "GPU: " + ", ".join(f"{k} x{v}" if v > 1 else k for k, v in counts.items()) + \
        (f" (CUDA_VISIBLE_DEVICES={visible})" if visible else "")


def here() -> str:
    """Where a grading started now would run: host, GPU or none, account."""
    try:
        user = pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        user = f"uid {os.getuid()}"
    return f"{scratch_space.host()}, {gpus()}, as {user}"


def why(cfg, local_flag: bool) -> str:
    return "--local" if local_flag else f"[cluster] scheduler = \"local\" in {cfg.source}"


def slurm_not_found(cfg) -> str:
    """Why a sweep stops where Slurm is the course's scheduler but cannot be found, and what to do."""
    return (f"Slurm was not found here (sbatch is not on PATH), and this course grades on Slurm ([cluster] "
            f"scheduler = \"{cfg.values['scheduler']}\" in {cfg.source}): nothing was planned, graded or queued.\n"
            "  Load Slurm (e.g. `module load slurm`, or your site's equivalent) and run `make sweep` again.\n"
            f"  To grade the whole class on this machine instead ({here()}) — which compiles and runs every "
            "student's code here, under this account — choose it on purpose: `make sweep LOCAL=1` "
            "(sweep --local), or scheduler = \"local\" in course.toml")


def not_queued_message(cfg, attempt: int) -> tuple[str, str]:
    """(a few words for `make status`, the message) for a hand-in stored where Slurm is the course's
    scheduler but cannot be found: stored, never graded on this machine."""
    short = "Slurm not found where it was handed in: no sbatch on PATH"
    return short, (f"Slurm was not found here (sbatch is not on PATH; the course grades on Slurm: [cluster] scheduler "
                   f"= \"{cfg.values['scheduler']}\"), so its grading was not queued, and it is not graded on this "
                   "machine either. Your hand-in is stored and its time counts for the deadline; the course's sweep "
                   "grades the attempt that counts. For feedback now, load Slurm (e.g. `module load slurm`) and queue "
                   f"its grading:  make requeue ATTEMPT={attempt}")


# ---- a local sweep, detached from the terminal --------------------------------------------------
def _proc_start(pid: int):
    """The start time of process pid (clock ticks since boot, /proc/<pid>/stat), so that a pid used
    again by another process is not taken for the sweep's; None where /proc cannot say."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def start(cmd: list[str], run: Path, tasks: int, where: str) -> subprocess.Popen:
    """Start cmd (the run's grader: `sweep-local`) in a session of its own, its output in run/local.log,
    and record it in run/local.json."""
    with open(run / LOG, "ab") as log:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    write_json_atomic(run / RECORD, {"host": scratch_space.host(), "pid": proc.pid, "proc_start": _proc_start(proc.pid),
                          "started": _now(), "where": where, "tasks": tasks, "log": str(run / LOG)})
    return proc


def finish(run: Path, exit_code: int, how: str):
    """What the run's grader writes when it ends (exit status; "finished" or "stopped by SIGTERM")."""
    write_json_atomic(run / END_RECORD, {"ended": _now(), "exit": exit_code, "how": how, "pid": os.getpid()})


def state(run: Path) -> dict | None:
    """A local run's state: None (not a local run), else its record with "state": "running",
    "finished" (or "stopped ..." as it recorded), "gone" (no end recorded and its process is gone:
    killed with SIGKILL, or the machine restarted) or "elsewhere" (started on another host: this
    machine cannot tell)."""
    rec = read_json(run / RECORD)
    if rec is None:
        return None
    end = read_json(run / END_RECORD)
    if end is not None:
        return dict(rec, **end, state=end.get("how", "finished"))
    if rec.get("host") != scratch_space.host():
        return dict(rec, state="elsewhere")
    pid = rec.get("pid")
    alive = isinstance(pid, int) and scratch_space.process_alive(pid) and _proc_start(pid) == rec.get("proc_start")
    return dict(rec, state="running" if alive else "gone")


def busy(run: Path) -> str:
    """'' when no local grading of this run may still be running, else why a second sweep must wait."""
    st = state(run)
    if st is None or st["state"] not in ("running", "elsewhere"):
        return ""
    where = (f"on this machine, pid {st['pid']}: stop it with `kill {st['pid']}`" if st["state"] == "running" else
             f"on {st['host']}, pid {st['pid']} (this machine cannot tell whether it still runs: look there)")
    return f"it is grading since {st['started']} {where}"


def describe(st: dict) -> str:
    """One line for `make sweep-status`."""
    if st["state"] == "running":
        return f"grading since {st['started']} on {st['where']}; pid {st['pid']}; log {st['log']}"
    if st["state"] == "elsewhere":
        return f"started on {st['host']} at {st['started']} (pid {st['pid']}): ask there; log {st['log']}"
    if st["state"] == "gone":
        return (f"its grader (pid {st['pid']}, started {st['started']}) is gone without finishing (killed, or the "
                f"machine restarted): `make sweep` grades what is missing; log {st['log']}")
    return f"{st['state']} at {st['ended']} (exit {st['exit']}); log {st['log']}"


def follow(proc: subprocess.Popen, run: Path, out=None, poll=0.2) -> int:
    """Echo the run's log until its grader ends; its exit status. Stopping this (Ctrl-C, a closed
    terminal: scratch.Stopped) leaves the grader running."""
    out = out or sys.stdout
    with open(run / LOG, errors="replace") as log:
        while True:
            line = log.readline()
            if line:
                out.write(line)
                out.flush()
                continue
            if proc.poll() is not None:
                rest = log.read()
                if rest:
                    out.write(rest)
                    out.flush()
                break
            time.sleep(poll)
    end = read_json(run / END_RECORD)
    return end["exit"] if end else (proc.returncode or 1)
