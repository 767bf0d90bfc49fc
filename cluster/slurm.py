"""slurm.py — job scripts from cluster/templates/ (string.Template) and the few Slurm commands the
cluster tools use: sbatch --parsable, squeue. Every script is written to disk before it is queued,
so staff can read it and queue it again by hand with plain `sbatch <script>`.
"""
import functools
import os
import re
import shlex
import shutil
import socket
import subprocess
import time
from pathlib import Path
from string import Template

TEMPLATES = Path(__file__).resolve().parent / "templates"
TOOL = Path(__file__).resolve().parent / "gemmlab_cluster.py"


class SlurmError(Exception):
    """A Slurm command failed; .output is what the command said (sbatch's own message)."""

    def __init__(self, message, output=""):
        super().__init__(message)
        self.output = output


def job_name(course: str, kind: str) -> str:
    """A job's name as everyone on the cluster sees it (`squeue` lists every account's jobs): the course
    and the kind of job ("grade", "sweep", "gradebook"), never a student's name or an attempt's number,
    which would tell the class who hands in when. The staff find whose a job is by its id, in their own
    records: an attempt's job.json, what `regrade` printed, a sweep run's jobs.json."""
    return f"gemmlab-{course}-{kind}"


def render(template: str, out: Path, sbatch_options: list[str], **values) -> Path:
    """Fill templates/<template> and write it to out (mode 0750; group: the directory's)."""
    text = (TEMPLATES / template).read_text()
    quoted = {k: shlex.quote(str(v)) if k in ("python", "tool", "config", "attempt", "into", "sweep_dir", "script")
              else str(v) for k, v in values.items()}
    quoted["sbatch_options"] = "\n".join(f"#SBATCH {o}" for o in sbatch_options)
    quoted.setdefault("tool", shlex.quote(str(TOOL)))
    quoted.setdefault("script", shlex.quote(str(out)))
    body = Template(text).substitute(quoted)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(body)
    os.chmod(tmp, 0o750)
    os.replace(tmp, out)
    return out


# What sbatch's message means, and what to do: the controller not answering is nobody's setting;
# a refused option names the course.toml key it came from. A client that finds no controller at all
# (no slurm.conf here and none to fetch: "sbatch: fatal: Could not establish a configuration source")
# is the same: the scheduler cannot be reached from this node.
_CONTROLLER_DOWN = re.compile(r"unable to contact slurm controller|connect(ion)? (failure|refused)|socket timed out|"
                              r"zero bytes were transmitted|communication connection failure|"
                              r"could not establish a configuration source|failed to fetch config|"
                              r"DNS SRV lookup failed", re.I)
_OPTION_KEYS = [(re.compile(r"partition", re.I), "partition"), (re.compile(r"account", re.I), "account"),
                (re.compile(r"\bqos\b|quality of service", re.I), "qos"),
                (re.compile(r"gres|generic resource", re.I), "gres"),
                (re.compile(r"time limit", re.I), "time_limit"), (re.compile(r"constraint|feature", re.I), "constraint"),
                (re.compile(r"memory", re.I), "mem")]


def controller_down(message: str) -> bool:
    """sbatch's `message` says the scheduler could not be reached (no setting of the course's)."""
    return bool(_CONTROLLER_DOWN.search(message))


def refused_keys(message: str) -> list[str]:
    """The course.toml [cluster] keys of the options sbatch's `message` refuses."""
    return [key for pattern, key in _OPTION_KEYS if pattern.search(message)]


def hint(message: str) -> str:
    """What the course staff do about sbatch's `message` (the student's words: gemmlab_cluster.py)."""
    if controller_down(message):
        return ("the Slurm controller did not answer: the scheduler is down or unreachable from here, not a "
                "setting of the course. Try again in a while (`sinfo` answers when it is back), or tell the "
                "cluster's administrators")
    keys = refused_keys(message)
    if keys:
        return f"Slurm refused an option: check [cluster] {', '.join(keys)} in course.toml"
    return "check [cluster] partition, account, qos, gres and time_limit in course.toml"


def sbatch(script: Path, *extra: str, cwd=None) -> str:
    cmd = ["sbatch", "--parsable", *extra, str(script)]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if r.returncode != 0:
        message = r.stderr.strip() or r.stdout.strip()
        raise SlurmError(f"sbatch refused {script}: {message}\n"
                         f"  ({hint(message)}; command: {' '.join(map(shlex.quote, cmd))})", output=message)
    return r.stdout.strip().split(";")[0]


def queue_states(job_ids) -> dict[str, str]:
    """'<job>' or '<job>_<task>' -> state (PENDING, RUNNING, ...) for jobs still in the queue."""
    ids = [str(j) for j in job_ids if j]
    if not ids:
        return {}
    r = subprocess.run(["squeue", "-h", "-r", "-j", ",".join(ids), "-o", "%i %T"], capture_output=True, text=True)
    states = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2:
            states[parts[0]] = parts[1]
    return states


def job_state(job_id: str) -> str:
    """The state of a job, also shortly after it ended (scontrol keeps finished jobs a few minutes);
    '' when Slurm no longer knows it."""
    r = subprocess.run(["scontrol", "show", "job", "-o", str(job_id)], capture_output=True, text=True)
    for field in r.stdout.split():
        if field.startswith("JobState="):
            return field.split("=", 1)[1]
    return ""


# One node's line of `scontrol show job -d`: "Nodes=gpu07 CPU_IDs=0-1 Mem=0 GRES=gpu:h100:1(IDX:0)";
# older lines and job-wide fields: "JOB_GRES=gpu:h100:1", "TresPerNode=gres:gpu:h100:1".
_GRES_FIELD = re.compile(r"\b(?:JOB_GRES|GRES|TresPerNode)=(?:gres[:/])?(gpu[^\s(]*)")


SCONTROL_RETRY_WAITS = (1, 2, 4, 8)  # seconds between the asks of slurm_gpu (15 s in all)


@functools.lru_cache(maxsize=None)
def slurm_gpu(job_id: str) -> dict:
    """The GPU Slurm allocated to this job: {"gres": "gpu:h100:1", "type": "h100"} ({} outside
    Slurm, or when scontrol cannot say). Asked of the controller, which every node can reach."""
    if not job_id or not shutil.which("scontrol"):
        return {}
    # A busy controller can miss an answer (scontrol fails, or says nothing of the job): asked again a
    # few times, so that a grade does not lose the GPU model it ran on to one slow moment.
    answered = re.compile(rf"\bJobId={re.escape(str(job_id))}\b")
    for wait in (*SCONTROL_RETRY_WAITS, None):
        try:
            r = subprocess.run(["scontrol", "show", "job", "-d", str(job_id)], capture_output=True, text=True,
                               timeout=20)
            if r.returncode == 0 and answered.search(r.stdout):
                return gpu_from_scontrol(r.stdout)
        except (OSError, subprocess.TimeoutExpired):
            pass
        if wait is not None:
            time.sleep(wait)
    return {}


def gpu_from_scontrol(text: str) -> dict:
    """{"gres": ..., "type": ...} from the text of `scontrol show job -d` ({} when it names no GPU)."""
    found = [m.group(1) for m in _GRES_FIELD.finditer(text)]
    if not found:
        return {}
    gres = found[0]
    parts = gres.split(":")  # gpu:N or gpu:type:N
    return {"gres": gres, "type": parts[1] if len(parts) == 3 else ""}


def node_gpu_types(text: str) -> set:
    """The GPU types a node has, from `scontrol show node` ("Gres=gpu:h100:2(S:0-1),gpu:a100:1")."""
    m = re.search(r"\bGres=(\S+)", text)
    if not m:
        return set()
    parts = [re.sub(r"\(.*?\)", "", g).split(":") for g in m.group(1).split(",")]
    return {p[1] for p in parts if p[0] == "gpu" and len(p) == 3}


def node_gpu_type(node: str) -> str:
    """The one GPU type of a node ("" where it has none, several, or scontrol cannot say)."""
    if not node or not shutil.which("scontrol"):
        return ""
    try:
        r = subprocess.run(["scontrol", "show", "node", node], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    types = node_gpu_types(r.stdout) if r.returncode == 0 else set()
    return next(iter(types)) if len(types) == 1 else ""


def job_context() -> dict:
    """Where this grading runs, from the environment Slurm gives a job (node, restarts, GPUs)."""
    env = os.environ
    gpu = {"visible_devices": env.get("CUDA_VISIBLE_DEVICES", "")}
    gpu.update(slurm_gpu(env.get("SLURM_JOB_ID", "")))  # cached: asked once per process
    if gpu.get("gres") and not gpu.get("type"):
        # A job Slurm requeued as it started can lose the per-node line of its GRES (slurmctld: "gres/gpu:
        # job N dealloc ... bad node_offset"): the node's own GPU type, where it has one, is the job's.
        kind = node_gpu_type(env.get("SLURMD_NODENAME", ""))
        if kind:
            gpu["type"] = kind
    return {"node": env.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0],
            "restarts": int(env.get("SLURM_RESTART_COUNT") or 0), "gpu": gpu}
