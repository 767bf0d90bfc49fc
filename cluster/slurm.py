"""slurm.py — job scripts from cluster/templates/ (string.Template) and the few Slurm commands the
cluster tools use: sbatch --parsable, squeue. Every script is written to disk before it is queued,
so staff can read it and queue it again by hand with plain `sbatch <script>`.
"""
import os
import re
import shlex
import subprocess
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
