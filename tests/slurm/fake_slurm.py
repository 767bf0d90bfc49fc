#!/usr/bin/env python3
"""fake_slurm.py — a stand-in for Slurm on a GPU machine that has none, so the batch scripts the
cluster tools render run unchanged, with the environment Slurm gives a job. Used by
tests/gpu_session/cluster_gpu_jobs.py; no package installs, standard library only.

Commands (state in $FAKE_SLURM_STATE, a directory):
  install BIN                 write BIN/sbatch, BIN/squeue, BIN/scontrol that call this file
  sbatch [--parsable] [--dependency=afterany:ID[:ID]] [-o FILE] SCRIPT
                              record the job (a copy of the script, as Slurm keeps one; working
                              directory, environment, #SBATCH options) and print its id; nothing
                              runs yet
  squeue ... / scontrol show job [-d] ID
                              what the cluster tools ask: jobs still queued or running, a job's
                              state and the GPU it holds
  run --gpus 0,1 [--only ID,...] [--sample-gpus FILE]
                              run the queued jobs: each array task or job asking for a GPU gets one
                              GPU of the list to itself (CUDA_VISIBLE_DEVICES), at most one job per
                              GPU, an array's %N limit and --dependency respected, --time enforced;
                              the script runs as Slurm runs it (its own #! interpreter, the
                              submission directory, output to --output with %j %A %a %x %N %u
                              filled in), bound to cpus-per-task cores of its own, those on its
                              GPU's side of the machine first (as Slurm's task/affinity with
                              gres.conf Cores= does); one JSON line per run in
                              $FAKE_SLURM_STATE/runs.jsonl.
                              --sample-gpus: every 0.5 s, which process uses which GPU
                              (nvidia-smi --query-compute-apps), each attributed to its job.

What it does not do: several nodes, cgroups, requeue, accounting.
"""
import argparse
import getpass
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve()


def user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry and no $USER (some containers)
        return f"uid-{os.getuid()}"


def state_dir() -> Path:
    d = os.environ.get("FAKE_SLURM_STATE")
    if not d:
        sys.exit("fake_slurm: FAKE_SLURM_STATE is not set (the directory that holds the queue)")
    p = Path(d)
    p.mkdir(parents=True, exist_ok=True)
    return p


def next_id(state: Path) -> int:
    counter = state / "next-id"
    n = int(counter.read_text()) if counter.exists() else 1001
    counter.write_text(str(n + 1))
    return n


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def append_line(path: Path, record: dict):
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")


# ---- #SBATCH options ----------------------------------------------------------------------------
def sbatch_options(script: Path, extra: list[str]) -> dict:
    """The options Slurm would read: #SBATCH lines before the first command, then the command line."""
    words = []
    for line in script.read_text().splitlines():
        s = line.strip()
        if not s or (s.startswith("#") and not s.startswith("#SBATCH")):
            continue
        if not s.startswith("#SBATCH"):
            break
        words += shlex.split(s[len("#SBATCH"):])
    words += extra
    opts = {}
    i = 0
    short = {"-o": "output", "-e": "error", "-J": "job-name", "-a": "array", "-c": "cpus-per-task", "-t": "time",
             "-d": "dependency", "-p": "partition", "-C": "constraint"}
    while i < len(words):
        w = words[i]
        if w.startswith("--"):
            key, _, value = w[2:].partition("=")
            if not _ and key not in ("requeue", "parsable", "wait", "no-requeue", "exclusive"):
                i += 1
                value = words[i] if i < len(words) else ""
            opts[key] = value if _ or value else True
        elif w in short:
            i += 1
            opts[short[w]] = words[i] if i < len(words) else ""
        i += 1
    return opts


def parse_time(value) -> float | None:
    """Slurm's time formats: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S -> seconds."""
    if not value or value is True or value in ("UNLIMITED", "INFINITE"):
        return None
    days, _, rest = value.rpartition("-") if "-" in value else ("", "", value)
    parts = [int(p) for p in rest.split(":")]
    if days:
        h, m, s = (parts + [0, 0])[:3]
        return ((int(days) * 24 + h) * 60 + m) * 60 + s
    if len(parts) == 1:
        return parts[0] * 60
    if len(parts) == 2:
        return parts[0] * 60 + parts[1]
    return (parts[0] * 60 + parts[1]) * 60 + parts[2]


def parse_array(spec: str) -> tuple[list[int], int | None]:
    """'0-9%2' -> ([0..9], 2); '1,3,5' -> ([1,3,5], None)."""
    spec, _, limit = spec.partition("%")
    ids = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        step = 1
        if ":" in hi:
            hi, step = hi.split(":")
        ids += list(range(int(lo), int(hi or lo) + 1, int(step)))
    return ids, (int(limit) if limit else None)


def gpus_asked(opts: dict) -> int:
    gres = opts.get("gres") or ""
    m = re.match(r"^gpu(?::[^:,]+)?:(\d+)$", gres) if isinstance(gres, str) else None
    if m:
        return int(m.group(1))
    return int(opts.get("gpus", 0) or 0) if str(opts.get("gpus", "0")).isdigit() else 0


# ---- the client commands ------------------------------------------------------------------------------
def cmd_sbatch(argv):
    state = state_dir()
    extra, script, parsable = [], None, False
    for w in argv:
        if script is None and w == "--parsable":
            parsable = True
        elif script is None and w.startswith("-"):
            extra.append(w)
        elif script is None:
            script = Path(w)
        else:
            sys.exit("fake_slurm sbatch: arguments after the script are not supported")
    if script is None or not script.is_file():
        sys.exit(f"fake_slurm sbatch: no such script: {script}")
    opts = sbatch_options(script, extra)
    job = next_id(state)
    # Slurm keeps its own copy of the script: the file queued may be gone (or changed) when the job runs.
    kept = state / "scripts" / str(job) / script.name
    kept.parent.mkdir(parents=True)
    shutil.copy2(script, kept)
    append_line(state / "queue.jsonl", {"id": job, "script": str(kept), "cwd": os.getcwd(),
                                        "options": opts, "env": dict(os.environ), "submitted": time.time()})
    print(f"{job}" if parsable else f"Submitted batch job {job}")


def _runs(state) -> list[dict]:
    return read_lines(state / "runs.jsonl")


def _running(state) -> dict:
    p = state / "running.json"
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError):
        return {}


def _finished(state) -> set:
    runs = _runs(state)
    return {r["job_id"] for r in runs if r.get("array_job_id") is None} | \
        {r["array_job_id"] for r in runs if r.get("array_job_id") is not None and r.get("all_done")}


def cmd_squeue(argv):
    """Queued and running jobs, as `squeue -h -o "%i %T"` prints them (the only format asked)."""
    state = state_dir()
    running = _running(state).values()
    for rec in running:
        print(f"{rec['name_id']} RUNNING")
    busy = {r.get("array_job_id") or r["job_id"] for r in running}
    for j in read_lines(state / "queue.jsonl"):
        if j["id"] not in _finished(state) and j["id"] not in busy:
            print(f"{j['id']} PENDING")


def cmd_scontrol(argv):
    if argv[:2] != ["show", "job"]:
        sys.exit("fake_slurm scontrol: only `scontrol show job [-d] ID` is supported")
    want = [w for w in argv[2:] if not w.startswith("-")]
    if not want:
        return
    state = state_dir()
    job_id = int(want[0].split("_")[0])
    running = {int(k): v for k, v in _running(state).items()}
    rec = running.get(job_id) or next((r for r in reversed(_runs(state)) if r["job_id"] == job_id), None)
    if rec is None:
        queued = next((j for j in read_lines(state / "queue.jsonl") if j["id"] == job_id), None)
        if queued is None:
            print("slurm_load_jobs error: Invalid job id specified", file=sys.stderr)
            sys.exit(1)
        print(f"JobId={job_id} JobName={queued['options'].get('job-name', 'sbatch')}\n   JobState=PENDING Reason=None")
        return
    state_word = "RUNNING" if job_id in running else rec.get("state", "COMPLETED")
    lines = [f"JobId={rec['job_id']} JobName={rec['name']}"
             + (f" ArrayJobId={rec['array_job_id']} ArrayTaskId={rec['task']}" if rec.get("array_job_id") else ""),
             f"   JobState={state_word} Reason=None Restarts=0"]
    if rec.get("gres"):
        lines.append(f"   JOB_GRES={rec['gres']}")
        if "-d" in argv and rec.get("gpu") is not None:
            cpu_ids = _cpulist_text(rec["cpu_ids"]) if rec.get("cpu_ids") else f"0-{rec['cpus'] - 1}"
            lines.append(f"     Nodes={rec['node']} CPU_IDs={cpu_ids} Mem=0 GRES={rec['gres']}(IDX:{rec['gpu']})")
    print("\n".join(lines))


def cmd_install(argv):
    ap = argparse.ArgumentParser(prog="fake_slurm.py install")
    ap.add_argument("bin")
    args = ap.parse_args(argv)
    b = Path(args.bin)
    b.mkdir(parents=True, exist_ok=True)
    for name in ("sbatch", "squeue", "scontrol"):
        p = b / name
        p.write_text(f"#!/bin/sh\n# stand-in for Slurm's {name} (tests/slurm/fake_slurm.py)\n"
                     f"exec {shlex.quote(sys.executable)} {shlex.quote(str(HERE))} {name} \"$@\"\n")
        p.chmod(0o755)
    print(f"fake_slurm: sbatch, squeue, scontrol in {b}")


# ---- the executor ----------------------------------------------------------------------------------------
class Task:
    def __init__(self, job: dict, index):
        self.job, self.index = job, index
        self.opts = job["options"]
        self.gpus = gpus_asked(self.opts)

    @property
    def name(self):
        return self.opts.get("job-name") or Path(self.job["script"]).name

    def label(self, job_id=None):
        return f"{self.job['id']}_{self.index}" if self.index is not None else str(job_id or self.job["id"])


def _fill(pattern: str, job_id, task: Task, node: str) -> str:
    out = pattern.replace("%%", "\0")
    for k, v in (("%j", job_id), ("%A", task.job["id"]), ("%a", task.index if task.index is not None else 4294967294),
                 ("%x", task.name), ("%N", node), ("%u", user())):
        out = out.replace(k, str(v))
    return out.replace("\0", "%")


def _environment(task: Task, job_id: int, gpu, node: str, cpus: int, count: int) -> dict:
    env = dict(task.job["env"])  # sbatch --export=ALL: the submitter's environment
    for k in [k for k in env if k.startswith("SLURM_") or k in ("CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL")]:
        del env[k]
    env.update({
        "SLURM_JOB_ID": str(job_id), "SLURM_JOBID": str(job_id), "SLURM_JOB_NAME": task.name,
        "SLURM_JOB_NODELIST": node, "SLURM_NODELIST": node, "SLURMD_NODENAME": node, "SLURM_TOPOLOGY_ADDR": node,
        "SLURM_JOB_NUM_NODES": "1", "SLURM_NNODES": "1", "SLURM_NODEID": "0", "SLURM_PROCID": "0",
        "SLURM_LOCALID": "0", "SLURM_GTIDS": "0", "SLURM_TASKS_PER_NODE": "1", "SLURM_NTASKS": "1",
        "SLURM_CPUS_PER_TASK": str(cpus), "SLURM_CPUS_ON_NODE": str(cpus), "SLURM_JOB_CPUS_PER_NODE": str(cpus),
        "SLURM_SUBMIT_DIR": task.job["cwd"], "SLURM_SUBMIT_HOST": node,
        "SLURM_JOB_PARTITION": str(task.opts.get("partition") or "fake"), "SLURM_CLUSTER_NAME": "fake",
        "SLURM_JOB_USER": user(), "SLURM_JOB_UID": str(os.getuid()), "SLURM_JOB_GID": str(os.getgid()),
        "ENVIRONMENT": "BATCH", "SLURM_CONF": "/dev/null",
    })
    if task.opts.get("time"):
        env["SLURM_JOB_TIME_LIMIT"] = str(task.opts["time"])  # informational (not a Slurm variable)
    if task.index is not None:
        ids, _ = parse_array(task.opts["array"])
        env.update({"SLURM_ARRAY_JOB_ID": str(task.job["id"]), "SLURM_ARRAY_TASK_ID": str(task.index),
                    "SLURM_ARRAY_TASK_COUNT": str(count), "SLURM_ARRAY_TASK_MIN": str(min(ids)),
                    "SLURM_ARRAY_TASK_MAX": str(max(ids)), "SLURM_ARRAY_TASK_STEP": "1"})
    if gpu is not None:
        # CUDA numbers GPUs by PCI bus id, as nvidia-smi and Slurm's gres do (sites set this too),
        # so GPU i here is nvidia-smi's GPU i.
        env.update({"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": str(gpu),
                    "GPU_DEVICE_ORDINAL": str(gpu), "SLURM_JOB_GPUS": str(gpu), "SLURM_STEP_GPUS": str(gpu),
                    "SLURM_GPUS_ON_NODE": "1"})
    else:
        env.pop("CUDA_VISIBLE_DEVICES", None)
    return env


class Sampler(threading.Thread):
    """Which processes use which GPU, every `period` s, each attributed to a running job through
    its parent chain (/proc/<pid>/stat)."""

    def __init__(self, out: Path, roots: dict, period=0.5):
        super().__init__(daemon=True)
        self.out, self.roots, self.period = out, roots, period
        self.stop = threading.Event()

    @staticmethod
    def _parent(pid: int) -> int:
        try:
            text = Path(f"/proc/{pid}/stat").read_text()
            return int(text[text.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            return 0

    def owner(self, pid: int):
        seen = 0
        while pid > 1 and seen < 64:
            if pid in self.roots:
                return self.roots[pid]
            pid, seen = self._parent(pid), seen + 1
        return None

    def run(self):
        while not self.stop.is_set():
            try:
                r = subprocess.run(["nvidia-smi", "--query-compute-apps=gpu_uuid,pid,used_memory",
                                    "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=10)
                rows = [[c.strip() for c in line.split(",")] for line in r.stdout.splitlines() if line.count(",") >= 2]
            except (OSError, subprocess.TimeoutExpired):
                rows = []
            t = time.time()
            with open(self.out, "a") as f:
                for uuid, pid, mem in rows:
                    if pid.isdigit():
                        f.write(json.dumps({"t": t, "gpu_uuid": uuid, "pid": int(pid), "mem_mib": mem,
                                            "job": self.owner(int(pid))}) + "\n")
            self.stop.wait(self.period)


def _parse_cpulist(text: str) -> list[int]:
    """'0-3,8,10-11' -> [0, 1, 2, 3, 8, 10, 11]"""
    out = []
    for part in text.strip().split(","):
        if "-" in part:
            a, b = part.split("-")
            out += range(int(a), int(b) + 1)
        elif part:
            out.append(int(part))
    return out


def _cpulist_text(cpus) -> str:
    """[0, 1, 2, 5] -> '0-2,5' ('-' for none)"""
    cpus, parts = sorted(cpus), []
    for c in cpus:
        if parts and c == parts[-1][1] + 1:
            parts[-1][1] = c
        else:
            parts.append([c, c])
    return ",".join(f"{a}-{b}" if a != b else f"{a}" for a, b in parts) or "-"


def _gpu_local_cpus(gpus: list[str]) -> dict[str, list[int]]:
    """GPU index -> the CPUs on its side of the machine (sysfs local_cpulist of its PCI device), the
    cores Slurm binds a job to when gres.conf names them (Cores=); {} where that cannot be read."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=index,pci.bus_id", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    local = {}
    for line in out.splitlines():
        index, _, bus = (x.strip() for x in line.partition(","))
        if index not in gpus or not bus:
            continue
        domain, _, rest = bus.lower().partition(":")
        try:  # nvidia-smi: 00000000:19:00.0; sysfs: 0000:19:00.0
            text = Path(f"/sys/bus/pci/devices/{domain[-4:]}:{rest}/local_cpulist").read_text()
        except OSError:
            continue
        local[index] = [c for c in _parse_cpulist(text) if c in os.sched_getaffinity(0)]
    return local


def _bind(gpu, want: int, local: dict[str, list[int]], used: set[int]) -> list[int]:
    """`want` free CPUs for a job on `gpu`: its GPU's own first, then any; [] when none are free.
    Like Slurm's task/affinity: a running job's processes stay on the cores it was given."""
    mine = [c for c in local.get(gpu, []) if c not in used]
    rest = [c for c in sorted(os.sched_getaffinity(0)) if c not in used and c not in mine]
    return (mine + rest)[:want]


def cmd_run(argv):
    ap = argparse.ArgumentParser(prog="fake_slurm.py run")
    ap.add_argument("--gpus", default="", help="GPU indices to hand out, e.g. 0,1 ('' = jobs get none)")
    ap.add_argument("--only", default="", help="run only these job ids (and leave the rest queued)")
    ap.add_argument("--cpus", type=int, default=0, help="cores per job when it asks none (default: all / GPUs)")
    ap.add_argument("--sample-gpus", default="", help="write nvidia-smi process samples here (JSON lines)")
    args = ap.parse_args(argv)
    state = state_dir()
    node = socket.gethostname().split(".")[0]
    gpus = [g for g in args.gpus.split(",") if g != ""]
    default_cpus = args.cpus or max(1, (os.cpu_count() or 1) // max(1, len(gpus)))
    done_ids = _finished(state)
    only = {int(x) for x in args.only.split(",") if x}
    jobs = [j for j in read_lines(state / "queue.jsonl") if j["id"] not in done_ids and (not only or j["id"] in only)]
    pending, limits, counts = [], {}, {}
    for j in jobs:
        if "array" in j["options"]:
            ids, limit = parse_array(j["options"]["array"])
            pending += [Task(j, i) for i in ids]
            limits[j["id"]], counts[j["id"]] = limit, len(ids)
        else:
            pending.append(Task(j, None))
    free = list(gpus)
    local_cpus = _gpu_local_cpus(gpus)
    bound = {}     # job id -> the CPUs its processes are bound to
    running = {}   # Popen -> (task, job id, gpu, start, log file, deadline)
    ended = {}     # job id -> list of exit codes (array: one per task)
    remaining = {j["id"]: sum(1 for t in pending if t.job["id"] == j["id"]) for j in jobs}
    roots = {}
    sampler = Sampler(Path(args.sample_gpus), roots) if args.sample_gpus else None
    if sampler:
        sampler.start()

    def deps_state(task):
        dep = task.opts.get("dependency")
        if not dep:
            return "ok"
        for clause in str(dep).split(","):
            kind, _, ids = clause.partition(":")
            for d in ids.split(":"):
                d = int(d.split("_")[0])
                if d in remaining and remaining[d] > 0:
                    return "wait"
                if kind == "afterok" and any(rc != 0 for rc in ended.get(d, [])):
                    return "never"
        return "ok"

    def save_running():
        (state / "running.json").write_text(json.dumps({str(v[1]): {
            "job_id": v[1], "name_id": v[0].label(v[1]), "array_job_id": v[0].job["id"] if v[0].index is not None else None,
            "task": v[0].index, "name": v[0].name, "gpu": v[2], "node": node, "cpus": v[6],
            "cpu_ids": sorted(bound.get(v[1], ())), "gres": v[0].opts.get("gres") or ""} for v in running.values()}))

    try:
        while pending or running:
            for task in list(pending):
                st = deps_state(task)
                if st == "never":
                    pending.remove(task)
                    remaining[task.job["id"]] -= 1
                    append_line(state / "runs.jsonl", {"job_id": task.job["id"], "name": task.name,
                                                       "state": "CANCELLED", "reason": "DependencyNeverSatisfied"})
                    continue
                if st == "wait":
                    continue
                limit = limits.get(task.job["id"])
                if limit and sum(1 for v in running.values() if v[0].job["id"] == task.job["id"]) >= limit:
                    continue
                if task.gpus > 1:
                    sys.exit("fake_slurm run: a job asks for more than one GPU (not supported)")
                if task.gpus and not free:
                    continue
                gpu = free.pop(0) if task.gpus else None
                job_id = next_id(state) if task.index is not None else task.job["id"]
                cpus = int(task.opts.get("cpus-per-task") or default_cpus)
                out = _fill(str(task.opts.get("output") or ("slurm-%A_%a.out" if task.index is not None
                                                            else "slurm-%j.out")), job_id, task, node)
                out_path = Path(out) if os.path.isabs(out) else Path(task.job["cwd"]) / out
                out_path.parent.mkdir(parents=True, exist_ok=True)
                log = open(out_path, "a" if task.opts.get("open-mode") == "append" else "w")
                env = _environment(task, job_id, gpu, node, cpus, counts.get(task.job["id"], 1))
                cpu_set = _bind(gpu, cpus, local_cpus, set().union(*bound.values()))
                bound[job_id] = set(cpu_set)
                p = subprocess.Popen([task.job["script"]], cwd=task.job["cwd"], env=env, stdout=log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                                     preexec_fn=(lambda cs=cpu_set: os.sched_setaffinity(0, cs)) if cpu_set else None)
                roots[p.pid] = task.label(job_id)
                limit_s = parse_time(task.opts.get("time"))
                running[p] = (task, job_id, gpu, time.time(), log, time.time() + limit_s if limit_s else None, cpus)
                pending.remove(task)
                save_running()
                print(f"fake_slurm: started {task.label(job_id)} (job {job_id}) on GPU {gpu}, CPUs "
                      f"{_cpulist_text(cpu_set)}", flush=True)
            for p, (task, job_id, gpu, t0, log, deadline, cpus) in list(running.items()):
                rc = p.poll()
                timed_out = rc is None and deadline is not None and time.time() > deadline
                if timed_out:
                    os.killpg(p.pid, signal.SIGTERM)
                    try:
                        rc = p.wait(10)
                    except subprocess.TimeoutExpired:
                        os.killpg(p.pid, signal.SIGKILL)
                        rc = p.wait()
                if rc is None:
                    continue
                log.close()
                del running[p]
                cpu_ids = sorted(bound.pop(job_id, ()))
                if gpu is not None:
                    free.append(gpu)
                    free.sort(key=gpus.index)
                remaining[task.job["id"]] -= 1
                ended.setdefault(task.job["id"], []).append(rc)
                state_word = "TIMEOUT" if timed_out else ("COMPLETED" if rc == 0 else "FAILED")
                append_line(state / "runs.jsonl", {
                    "job_id": job_id, "array_job_id": task.job["id"] if task.index is not None else None,
                    "task": task.index, "name": task.name, "gpu": gpu, "node": node, "cpus": cpus,
                    "gres": task.opts.get("gres") or "", "cpu_ids": cpu_ids, "start": t0, "end": time.time(), "rc": rc,
                    "state": state_word, "all_done": remaining[task.job["id"]] == 0})
                save_running()
                print(f"fake_slurm: {task.label(job_id)} {state_word} (exit {rc}) after {time.time() - t0:.1f} s",
                      flush=True)
            time.sleep(0.2)
    finally:
        for p, v in running.items():  # interrupted: stop what we started
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        (state / "running.json").unlink(missing_ok=True)
        if sampler:
            sampler.stop.set()
            sampler.join(15)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cmd, argv = sys.argv[1], sys.argv[2:]
    fn = {"sbatch": cmd_sbatch, "squeue": cmd_squeue, "scontrol": cmd_scontrol, "install": cmd_install,
          "run": cmd_run}.get(cmd)
    if fn is None:
        sys.exit(f"fake_slurm: unknown command {cmd!r}\n{__doc__}")
    fn(argv)


if __name__ == "__main__":
    main()
