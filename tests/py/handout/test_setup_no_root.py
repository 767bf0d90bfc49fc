"""make setup without root, end to end, as a university cluster's student meets it: a fresh handout
taken through `make setup`, `make`, `make sass` and `make report-demo` to a PDF by an unprivileged user
with no account (nobody: setpriv --reuid=65534 --regid=65534 --clear-groups) and a private HOME, on a
machine where, in a private mount namespace (unshare -m; nothing propagates back), apt-get and dpkg,
the system's copies of the header libraries (/usr/include), pandoc, TeX (xelatex) and the system
Python's packages (matplotlib, pytest) are hidden under empty files and folders. What remains is what
such a cluster gives: make, g++, a python3 (3.11+) and the CUDA toolkit (/usr/local/cuda, readable by
all). make setup installs the rest into the user prefix (~/.local/share/gemmlab) from PyPI: the venv
with pytest and matplotlib, pandoc (pypandoc_binary) and typst, make report's engine without TeX.

Runs as root (the mount namespace; CI does), downloads from PyPI (about 150 MB). Between runs, nobody's
caches are kept in /var/tmp/gemmlab-no-root-cache: pip's downloads (the packages are still resolved
and installed afresh into a new prefix each run) and ccache's objects (the first run compiles the
grader with the toolkit as nobody, about 15 minutes on 2 busy cores; later runs take a few minutes).
Prints the time of each step and what was installed where.
"""
import os
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from support import gpu_prebuild
from support.paths import ROOT

NOBODY = 65534
NVCC = Path("/usr/local/cuda/bin/nvcc")
HIDDEN_FILES = ["/usr/bin/apt-get", "/usr/bin/apt", "/usr/bin/dpkg", "/usr/bin/sudo", "/usr/bin/pandoc",
                "/usr/bin/xelatex"]
HIDDEN_DIRS = ["/usr/include/doctest", "/usr/include/nlohmann", "/usr/include/CLI", "/usr/include/toml++",
               "/usr/lib/python3/dist-packages", "/usr/local/lib/python3.11/dist-packages"]
CACHE = Path("/var/tmp/gemmlab-no-root-cache")  # pip's downloads and ccache's objects, nobody's, between runs
STEPS = ["make setup", "make", "make sass STAGE=naive", "make report-demo"]


def why_not():
    """'' where this test can run here, else why not."""
    if os.geteuid() != 0:
        return "needs root: a private mount namespace (unshare -m) and setpriv to nobody"
    for tool in ("unshare", "setpriv", "mount"):
        if shutil.which(tool) is None:
            return f"needs {tool} (util-linux)"
    if not list((ROOT / "reference").glob("*.cu")):
        return "needs the instructor repository (reference/*.cu) to build a handout"
    if not NVCC.is_file():
        return f"needs the CUDA toolkit at {NVCC.parent.parent} (readable by all, as on a cluster)"
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
    except OSError as e:
        return f"needs PyPI (make setup installs from it) and pypi.org cannot be reached: {e}"
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"unshare -m does not work here: {probe.stderr.strip()}"
    probe = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", str(NVCC),
                            "--version"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"nobody cannot run {NVCC}: {probe.stderr.strip()}"
    return ""


def build_handout(work):
    """make handout (as root, the instructor) and its tarball unpacked afresh, owned by nobody."""
    config = gpu_prebuild.handout_config(work, first_arch_only=True)
    proc = gpu_prebuild.run(["make", "--no-print-directory", "handout", f"DIST={work / 'dist'}", f"CONFIG={config}"],
                            cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-4000:]
    tarball = next((work / "dist").glob("*.tar.gz"))
    student = work / "student"
    student.mkdir()
    subprocess.run(["tar", "-xzf", str(tarball), "-C", str(student)], check=True)
    tree = next(p for p in student.iterdir() if p.is_dir())
    for path in [student, *student.rglob("*")]:
        os.lchown(path, NOBODY, NOBODY)
    return tree


def script(tree, home):
    """The shell of the test: the mounts (as root, in the namespace), then the steps as nobody."""
    empty_dir, empty_file = home.parent / "empty-dir", home.parent / "empty-file"
    empty_dir.mkdir()
    empty_file.write_text("")
    empty_file.chmod(0o644)  # not executable: `command -v` finds nothing there
    mounts = [f"[ ! -e {f} ] || mount --bind {empty_file} {f}" for f in HIDDEN_FILES]
    mounts += [f"[ ! -d {d} ] || mount --bind {empty_dir} {d}" for d in HIDDEN_DIRS]
    steps = "\n".join(f'  s=$SECONDS; echo "@@ {s}"; {s} </dev/null || exit $?; echo "@@ {s}: $((SECONDS - s)) s"'
                      for s in STEPS)
    as_nobody = f"""set -u
cd {tree}
{steps}
prefix=$HOME/.local/share/gemmlab
echo "@@ installed"
du -sh "$prefix"/venv "$prefix"/bin 2>/dev/null
ls -l "$prefix"/bin
"$prefix"/venv/bin/python -m pip list --disable-pip-version-check --format=freeze 2>/dev/null | tr '\\n' ' '
echo
"""
    env = {"HOME": str(home), "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
           "PIP_CACHE_DIR": str(CACHE / "pip"), "CCACHE_DIR": str(CACHE / "ccache"), "TMPDIR": str(home.parent / "tmp")}
    env_args = " ".join(f"{k}={v}" for k, v in env.items())
    return "\n".join(["set -eu", *mounts,
                      f"exec setpriv --reuid={NOBODY} --regid={NOBODY} --clear-groups env -i {env_args} "
                      f"bash -c {shlex.quote(as_nobody)}"])


def test_a_handout_sets_up_builds_and_renders_its_report_without_root():
    why = why_not()
    if why:
        pytest.skip(why)
    work = Path(tempfile.mkdtemp(prefix="gemmlab-no-root-"))
    try:
        work.chmod(0o755)  # nobody passes through to its home and the handout
        t0 = time.monotonic()
        tree = build_handout(work)
        home = work / "home"
        for d in (home, work / "tmp"):
            d.mkdir()
            os.chown(d, NOBODY, NOBODY)
            d.chmod(0o700)
        CACHE.mkdir(mode=0o700, exist_ok=True)
        os.chown(CACHE, NOBODY, NOBODY)
        t1 = time.monotonic()
        proc = subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c", script(tree, home)],
                              capture_output=True, text=True, timeout=3600)
        t2 = time.monotonic()
        out = proc.stdout + proc.stderr
        print(out[-8000:])
        print(f"no-root test: handout built in {t1 - t0:.0f} s; setup, make, make sass, make report-demo as "
              f"nobody in {t2 - t1:.0f} s")
        assert proc.returncode == 0, out[-6000:]
        for step in STEPS:
            assert f"@@ {step}: " in out, (step, out[-3000:])
        # make setup found no apt and no root, and installed into the user prefix from PyPI
        assert "this system has no apt-get" in out, out[:3000]
        assert "pypandoc_binary typst" in out and "make report's PDF through Typst" in out, out[:3000]
        prefix = home / ".local/share/gemmlab"
        assert "pandoc" in os.listdir(prefix / "bin") and (prefix / "venv/bin/python").exists(), out[:3000]
        assert "typst" in out and "everything make, make test and make report use is here" in out, out[:3000]
        pdf = tree / "report/build/demo/example-report.pdf"
        assert pdf.is_file(), out[-3000:]
        assert pdf.read_bytes()[:4] == b"%PDF"
        assert (tree / "report/build/demo/latex/report.typ").is_file()  # through Typst: there is no TeX
    finally:
        shutil.rmtree(work, ignore_errors=True)
