"""make setup (grader/scripts/setup.sh) as a student meets it, with nothing installed for real: a handout's
asks apt for what a student's commands use only (no Slurm daemons, no munge); where it cannot install
(no apt-get), it installs nothing and names what is missing and what for."""
import os
import shutil
import subprocess
from pathlib import Path

from conftest import ROOT

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
    install = next(line for line in log.read_text().splitlines() if line.startswith("apt-get install"))
    asked = set(install.split()[2:])
    assert {"pandoc", "python3-pytest", "g++"} <= asked, install
    # the header-only libraries come with the handout (grader/third_party) where make handout found them
    assert not {"doctest-dev", "libtomlplusplus-dev"} & asked, install
    for daemon in ("slurmctld", "slurmd", "slurm-client", "munge", "iproute2", "chromium"):
        assert daemon not in asked, (daemon, install)
    assert "a handout: the staff tools' packages" in proc.stdout, proc.stdout + proc.stderr


def test_without_apt_nothing_is_installed_and_what_is_missing_is_named(tmp_path):
    """A machine without apt-get (RHEL, say): the tools it finds are named nowhere, the missing ones each
    with what it is for; only what the build needs makes it fail."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "python3", "make", "g++", "sed", "cat", "dirname", "id", "env", "grep"):
        found = "/usr/bin/python3" if tool == "python3" and os.path.exists("/usr/bin/python3") else shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path), "CPATH": ""}
    proc = subprocess.run([str(bin_dir / "bash"), str(SETUP)], capture_output=True, text=True, env=env, timeout=120)
    text = proc.stdout + proc.stderr
    assert "this system has no apt-get: nothing is installed" in text, text
    assert "setup: missing (optional): pandoc (make report)" in text, text
    assert "missing: make" not in text and "missing: g++" not in text, text
    # what the build needs: the header libraries, the system's or the handout's own copies
    headers_here = all((Path("/usr/include") / h).is_file() or (ROOT / "grader/third_party/include" / h).is_file()
                       for h in ("doctest/doctest.h", "nlohmann/json.hpp", "CLI/CLI.hpp", "toml++/toml.h"))
    assert (proc.returncode == 0) == headers_here, text
