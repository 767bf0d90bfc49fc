"""The handout tool's bottom layer (grader/scripts/handout.py): where the repository is, its error, how it
speaks, runs a command and hashes a file. Imports nothing of its neighbours."""
import os
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
MANIFEST = "HANDOUT.json"


class HandoutError(Exception):
    pass


def say(msg):
    print(f"handout: {msg}", flush=True)


def run(cmd, cwd=ROOT, env=None, log=None, check=True):
    """Runs a command; on failure raises HandoutError with its output's tail."""
    proc = subprocess.run(cmd, cwd=cwd, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if log is not None:
        with open(log, "a") as f:
            f.write(f"$ {' '.join(map(str, cmd))}\n{proc.stdout}\n")
    if check and proc.returncode != 0:
        tail = "\n".join(proc.stdout.splitlines()[-40:])
        raise HandoutError(f"`{' '.join(map(str, cmd))}` failed (exit {proc.returncode}):\n{tail}")
    return proc


def cuda_home():
    if os.environ.get("CUDA_HOME"):
        return Path(os.environ["CUDA_HOME"])
    nvcc = shutil.which("nvcc")
    return Path(nvcc).resolve().parent.parent if nvcc else Path("/usr/local/cuda")


def clean_env():
    """The environment for a nested make: nothing inherited from the make that called us, nor the variables
    given on its command line, which make puts in the environment too (make handout-check CONFIG=<the
    instructor's file>: the handout's make reads its own course.toml)."""
    flags = os.environ.get("MAKEFLAGS", "")
    given = set(re.findall(r"(?:^|\s)([A-Za-z_][A-Za-z0-9_]*)=", flags.split(" -- ", 1)[1])) if " -- " in flags else set()
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "GEMMLAB_GRADER", "GEMMLAB_COMMAND",
                        "GEMMLAB_SRUN", *given)}
    env["NO_COLOR"] = "1"
    return env


def normalize(line):
    """A line for comparison: whitespace collapsed, and every `<name>_kernel` called KERNEL (a kernel
    declared like naive.cu's is public whatever its name)."""
    return re.sub(r"\b\w+_kernel\b", "KERNEL", " ".join(line.split()))
