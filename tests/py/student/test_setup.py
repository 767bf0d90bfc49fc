"""make setup (grader/scripts/setup.sh) as a student meets it, with nothing installed for real: a handout's
asks apt for what a student's commands use only (no Slurm daemons, no munge); where it cannot install
packages (no apt-get, not root), it plans a user prefix from PyPI (setup-user.sh; GEMMLAB_SETUP_PLAN=1
prints the plan and installs nothing) and names what is missing and what for. The install itself, end
to end as nobody: test_setup_no_root.py."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.paths import ROOT

SETUP = ROOT / "grader" / "scripts" / "setup.sh"


def fake_tools(bin_dir, names, log):
    """Stand-ins for the package tools: each records its arguments; dpkg-query finds nothing installed."""
    bin_dir.mkdir(exist_ok=True)
    for name in names:
        tool = bin_dir / name
        status = "exit 1" if name == "dpkg-query" else "exit 0"
        tool.write_text(f'#!/bin/sh\necho "{name} $*" >> {log}\n{status}\n')
        tool.chmod(0o755)


def test_a_handouts_setup_asks_for_what_students_use_only(tmp_path):
    scripts = tmp_path / "grader" / "scripts"
    scripts.mkdir(parents=True)
    shutil.copy2(SETUP, scripts / "setup.sh")  # no handout.py beside it: a handout
    (tmp_path / "grader" / "third_party" / "include").mkdir(parents=True)  # with the header libraries
    log = tmp_path / "calls.log"
    fake_tools(tmp_path / "bin", ["apt-get", "dpkg", "dpkg-query", "sudo"], log)
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["bash", str(scripts / "setup.sh")], capture_output=True, text=True, env=env, timeout=120)
    # as whoever runs the tests: root calls apt-get itself, anyone else through sudo (which the stand-in
    # logs with its arguments, and does not run)
    command = "apt-get install" if os.geteuid() == 0 else "sudo apt-get install"
    calls = log.read_text().splitlines()
    install = next((line for line in calls if line.startswith(command)), None)
    assert install, (command, calls, proc.stdout + proc.stderr)
    asked = set(install.split()[len(command.split()):])
    assert {"pandoc", "python3-pytest", "g++"} <= asked, install
    # the header-only libraries come with the handout (grader/third_party) where make handout found them
    assert not {"doctest-dev", "libtomlplusplus-dev"} & asked, install
    for daemon in ("slurmctld", "slurmd", "slurm-client", "munge", "iproute2", "chromium"):
        assert daemon not in asked, (daemon, install)
    assert "a handout: the staff tools' packages" in proc.stdout, proc.stdout + proc.stderr


def bare_path(tmp_path, tools=("bash", "python3", "make", "g++", "sed", "cat", "dirname", "id", "env", "grep",
                                 "head", "tail", "basename", "readlink")):
    """A PATH of these tools only: no apt-get, no pandoc, no xelatex, no nvcc."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in tools:
        found = "/usr/bin/python3" if tool == "python3" and os.path.exists("/usr/bin/python3") else shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    return bin_dir


def plan(tmp_path, **env):
    """setup.sh without apt-get, in plan mode: (exit status, its output)."""
    bin_dir = bare_path(tmp_path)
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path / "home"), "CPATH": "", "GEMMLAB_SETUP_PLAN": "1", **env}
    proc = subprocess.run([str(bin_dir / "bash"), str(SETUP)], capture_output=True, text=True, env=env, timeout=120)
    return proc.returncode, proc.stdout + proc.stderr


def test_without_apt_it_plans_a_user_prefix_from_pypi_and_names_what_is_missing(tmp_path):
    """A machine without apt-get (RHEL, say): the user prefix, a venv with what a student's commands use,
    pandoc and typst where there is neither pandoc nor TeX; the tools it finds are named nowhere; only
    what the build needs makes it fail."""
    if not (Path("/usr/local/cuda/bin/nvcc")).exists():
        pytest.skip("the plan with a CUDA toolkit found needs one in /usr/local/cuda")
    rc, text = plan(tmp_path)
    assert "this system has no apt-get: no system package is installed" in text, text
    assert f"user prefix: {tmp_path}/home/.local/share/gemmlab" in text, text
    assert "with: pytest pytest-xdist matplotlib pypandoc_binary typst" in text, text
    assert "make report's PDF through Typst (no xelatex here" in text, text
    assert "CUDA toolkit: /usr/local/cuda/bin/nvcc" in text and "nvidia-cuda-nvcc" not in text, text
    # a toolkit without cuobjdump (the bare PATH has none either): NVIDIA's disassembler wheels, for make sass
    lacks = not Path("/usr/local/cuda/bin/cuobjdump").exists()
    assert ("plan:   cuobjdump and nvdisasm, NVIDIA's wheels pinned by hash" in text) == lacks, text
    assert "plan only (GEMMLAB_SETUP_PLAN): nothing installed." in text, text
    assert not (tmp_path / "home").exists()  # nothing written
    assert "missing: make" not in text and "missing: g++" not in text, text
    # what the build needs: the header libraries, the system's or the handout's own copies
    headers_here = all((Path("/usr/include") / h).is_file() or (ROOT / "grader/third_party/include" / h).is_file()
                       for h in ("doctest/doctest.h", "nlohmann/json.hpp", "CLI/CLI.hpp", "toml++/toml.h"))
    assert (rc == 0) == headers_here, text


def test_without_a_cuda_toolkit_it_plans_nvidias_wheels_or_names_the_module(tmp_path):
    """No nvcc anywhere: NVIDIA's CUDA 13 wheels into the prefix; where environment modules are offered,
    `module load cuda` instead (CUDA_WHEELS=1 installs the wheels all the same). setup-user.sh's choice, with /usr/local/cuda out of the way: a copy of the script whose fallback
    path names a folder that does not exist."""
    script = tmp_path / "setup-user.sh"
    script.write_text((SETUP.parent / "setup-user.sh").read_text().replace("/usr/local/cuda/", f"{tmp_path}/no-cuda/"))
    (tmp_path / "home").mkdir()
    bin_dir = bare_path(tmp_path)
    base = {"PATH": str(bin_dir), "HOME": str(tmp_path / "home"), "CPATH": "", "GEMMLAB_SETUP_PLAN": "1"}

    def run(**env):
        proc = subprocess.run([str(bin_dir / "bash"), str(script)], capture_output=True, text=True,
                              env={**base, **env}, timeout=120)
        return proc.returncode, proc.stdout + proc.stderr
    rc, text = run()
    assert "nvidia-cuda-nvcc==13.* nvidia-cublas==13.*" in text, text
    assert f"NVIDIA's CUDA 13 wheels (about 1 GB): the toolkit linked as {tmp_path}/home/.local/share/gemmlab/cuda" in text
    rc, text = run(MODULESHOME="/usr/share/modules")
    assert "nvidia-cuda-nvcc" not in text, text
    assert "this machine has environment modules: 'module avail cuda'" in text and "CUDA_WHEELS=1" in text, text
    assert rc == 1
    rc, text = run(MODULESHOME="/usr/share/modules", GEMMLAB_CUDA_WHEELS="1")
    assert "nvidia-cuda-nvcc==13.*" in text, text
    rc, text = run(GEMMLAB_PREFIX=str(tmp_path / "p"), XDG_DATA_HOME=str(tmp_path / "x"))
    assert f"user prefix: {tmp_path}/p " in text, text
    # a CUDA_HOME with a toolkit is one found: no wheels
    fake = tmp_path / "toolkit" / "bin"
    fake.mkdir(parents=True)
    (fake / "nvcc").write_text("#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n")
    (fake / "nvcc").chmod(0o755)
    rc, text = run(CUDA_HOME=str(fake.parent))
    assert "nvidia-cuda-nvcc" not in text and f"CUDA toolkit: {fake}/nvcc" in text, text


def test_make_takes_the_user_prefixs_tools(tmp_path):
    """After make setup without root, make looks in GEMMLAB_PREFIX by itself: its bin/ first on PATH, its
    venv's Python, its cuda where there is no other toolkit, and that toolkit's lib/ (wheels have no lib64)."""
    prefix = tmp_path / "prefix"
    (prefix / "venv" / "bin").mkdir(parents=True)
    # the venv's Python: one that has what make asks of it (tomllib, matplotlib), this machine's or the suite's
    venv_python = prefix / "venv" / "bin" / "python"
    for candidate in ("/usr/bin/python3", sys.executable):
        venv_python.unlink(missing_ok=True)
        venv_python.symlink_to(candidate)
        if subprocess.run([str(venv_python), "-c", "import tomllib, matplotlib"], capture_output=True).returncode == 0:
            break
    else:
        pytest.skip("no Python here has tomllib and matplotlib, which make asks of the venv's")
    (prefix / "bin").mkdir()
    (prefix / "cuda" / "bin").mkdir(parents=True)
    (prefix / "cuda" / "lib").mkdir()
    (prefix / "cuda" / "bin" / "nvcc").write_text("#!/bin/sh\necho 'Cuda compilation tools, release 13.5, V13.5.37'\n")
    (prefix / "cuda" / "bin" / "nvcc").chmod(0o755)
    show = tmp_path / "show.mk"
    show.write_text("show:\n\t@echo PYTHON=$(PYTHON); echo CUDA_HOME=$(CUDA_HOME); echo CUDA_LIB=$(CUDA_LIB); "
                    "echo PATH=$$PATH\n")
    # Neither the make that runs the suite (MAKE*, PYTHON it exports) nor a chosen toolkit may choose for it.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("MAKE") and k not in ("PYTHON", "CUDA_HOME", "CUDA_LIB", "NVCC")}
    env.update(PATH="/usr/bin:/bin", GEMMLAB_PREFIX=str(prefix))
    proc = subprocess.run(["make", "--no-print-directory", "-f", "Makefile", "-f", str(show), "show"], cwd=ROOT,
                          capture_output=True, text=True, env=env, timeout=120)
    values = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
    assert values["PYTHON"] == f"{prefix}/venv/bin/python", proc.stdout + proc.stderr
    assert values["PATH"].startswith(f"{prefix}/bin:"), values
    if Path("/usr/local/cuda/bin/nvcc").exists():  # a toolkit of the machine's wins
        assert values["CUDA_HOME"] == "/usr/local/cuda", values
    else:
        assert values["CUDA_HOME"] == f"{prefix}/cuda" and values["CUDA_LIB"] == f"{prefix}/cuda/lib", values
