"""tests/gpu_session/deps_env.sh: on a lent GPU machine, where nothing can be installed, it puts what
.deps carries on the paths, so a make command run there on its own finds the header-only libraries
(tests/gpu_session.sh sources it too)."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "tests/gpu_session/deps_env.sh"


def fake_deps(tmp_path):
    (tmp_path / ".deps/include/probe").mkdir(parents=True)
    (tmp_path / ".deps/include/probe/probe.h").write_text("inline int gemmlab_probe() { return 42; }\n")
    (tmp_path / ".deps/python").mkdir()
    (tmp_path / ".deps/lib").mkdir()
    (tmp_path / ".deps/bin").mkdir()
    ccache = tmp_path / ".deps/bin/ccache"
    ccache.write_text("#!/bin/sh\necho fake ccache\n")
    ccache.chmod(0o755)


def sourced(tmp_path, command):
    env = {k: v for k, v in os.environ.items() if k not in ("CPATH", "PYTHONPATH")}
    return subprocess.run(["bash", "-c", f"source {SCRIPT}; {command}"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)


def test_it_puts_the_carried_headers_python_and_ccache_on_the_paths(tmp_path):
    fake_deps(tmp_path)
    p = sourced(tmp_path, 'echo "$CPATH"; echo "$PYTHONPATH"; ccache')
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [f"{tmp_path}/.deps/include", f"{tmp_path}/.deps/python", "fake ccache"]
    assert p.stderr == ""


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_a_compiler_finds_a_carried_header_with_no_include_option(tmp_path):
    fake_deps(tmp_path)
    (tmp_path / "use.cpp").write_text("#include <probe/probe.h>\nint main() { return gemmlab_probe() - 42; }\n")
    p = sourced(tmp_path, "g++ -fsyntax-only use.cpp")
    assert p.returncode == 0, p.stderr
    bare = subprocess.run(["g++", "-fsyntax-only", "use.cpp"], cwd=tmp_path, capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if k != "CPATH"})
    assert bare.returncode != 0 and "probe/probe.h" in bare.stderr


def test_outside_the_repository_root_it_says_where_it_looked(tmp_path):
    p = sourced(tmp_path, 'echo "CPATH=${CPATH:-}"')
    assert p.returncode == 0
    assert "CPATH=" == p.stdout.strip()
    assert f"no .deps/include under {tmp_path}" in p.stderr and "repository root" in p.stderr
