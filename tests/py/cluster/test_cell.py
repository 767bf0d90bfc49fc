"""cluster/cell.py: a per-student step in a child process with fixed limits — every limit really
stops what runs into it, as the case it is, and nothing of the cell reaches the caller but its value."""
import os
import socket
import time
from dataclasses import replace

import pytest

from support import staff_class  # noqa: F401  (puts cluster/ on sys.path)
import cell  # noqa: E402

# Small limits, but wall time: a cell's wall-time limit only bounds a hang here, so that on a loaded machine
# no other limit's case (CPU seconds above all: a busy core spends them slowly) ends as the wall time's.
SMALL = cell.Limits(cpu_seconds=1, wall_seconds=300, memory_mb=128, file_size_mb=1, open_files=32, output_mb=1)


def test_a_cell_hands_back_the_value_of_its_step():
    assert cell.run(lambda a, b: {"sum": a + b, "list": [a, b]}, 40, 2, limits=SMALL) == {"sum": 42, "list": [40, 2]}


def test_a_cell_opens_no_socket_of_any_family():
    def try_sockets():
        out = {}
        for name, fam, kind in (("unix", socket.AF_UNIX, socket.SOCK_STREAM), ("tcp", socket.AF_INET, socket.SOCK_STREAM),
                                ("udp6", socket.AF_INET6, socket.SOCK_DGRAM), ("netlink", socket.AF_NETLINK, socket.SOCK_RAW)):
            try:
                socket.socket(fam, kind).close()
                out[name] = "opened"
            except OSError as e:
                out[name] = e.errno
        try:
            socket.socketpair()
            out["pair"] = "opened"
        except OSError as e:
            out["pair"] = e.errno
        return out
    assert cell.run(try_sockets, limits=SMALL) == {k: 1 for k in ("unix", "tcp", "udp6", "netlink", "pair")}  # EPERM


def test_a_cell_starts_no_process_root_or_not():
    with pytest.raises(cell.Raised, match="PermissionError"):
        cell.run(os.fork, limits=SMALL)
    with pytest.raises(cell.Raised, match="PermissionError"):
        cell.run(lambda: os.execv("/bin/true", ["true"]), limits=SMALL)


def test_each_limit_stops_its_step_as_exceeded_never_as_broken():
    def spin():
        while True:
            pass
    # the wall-time case: a step that would sleep far past a limit of 1 s (its own, the others' SMALL's)
    cases = {"CPU limit": (spin, SMALL), "wall-time limit": (lambda: time.sleep(SMALL.wall_seconds), replace(SMALL, wall_seconds=1)),
             "memory limit": (lambda: len(bytearray(512 << 20)), SMALL), "output limit": (lambda: "x" * (2 << 20), SMALL),
             "nests too deeply": (lambda: _deep(100000), SMALL)}
    for words, (step, limits) in cases.items():
        with pytest.raises(cell.Exceeded, match=words):
            cell.run(step, limits=limits, what=words)


def _deep(n):
    return _deep(n - 1) if n else 0


def test_a_file_past_its_size_limit_is_refused(tmp_path):
    def write():
        with open(tmp_path / "big", "wb") as f:
            f.write(b"x" * (2 << 20))
    with pytest.raises((cell.Broken, cell.Raised, cell.Exceeded)):
        cell.run(write, limits=SMALL)
    assert (tmp_path / "big").stat().st_size <= 1 << 20


def test_what_the_step_raises_comes_back_named_and_the_caller_goes_on():
    with pytest.raises(cell.Raised) as e:
        cell.run(lambda: {}["missing"], limits=SMALL, what="reading alice's drop box directory")
    assert e.value.kind == "KeyError" and "reading alice's drop box directory" in str(e.value)
    assert cell.run(lambda: "after", limits=SMALL) == "after"


def test_a_cell_ended_from_outside_is_broken_not_the_students():
    with pytest.raises(cell.Broken, match="SIGKILL"):
        cell.run(lambda: os.kill(os.getpid(), 9), limits=SMALL)


def test_a_cell_holds_none_of_the_callers_descriptors(tmp_path):
    secrets = [os.open(tmp_path / "staff-only", os.O_CREAT | os.O_WRONLY) for _ in range(8)]
    try:
        fds = cell.run(lambda: sorted(int(n) for n in os.listdir("/proc/self/fd")), limits=SMALL)
    finally:
        for fd in secrets:
            os.close(fd)
    assert max(secrets) > 4 and max(fds) <= 4, fds  # 0-2 (/dev/null), 3 (its answer), the listing's own


def test_a_course_sets_the_limits_in_its_cells_table():
    limits = cell.Limits.from_settings({"cells.cpu_seconds": 7, "cells.memory_mb": 99})
    assert (limits.cpu_seconds, limits.memory_mb, limits.wall_seconds) == (7, 99, cell.Limits().wall_seconds)


def test_the_instructor_guide_names_every_limit_and_quotes_none_but_its_own():
    """The security page's section on cells names each key of [cells]; the numbers stay in course.toml,
    and wherever an instructor's page quotes one beside its key ("`compile_wall_seconds`, 600") it is
    course.toml's."""
    import re
    import tomllib
    import config
    keys = [k for s, k in config.DEFAULTS if s == "cells"]
    docs = staff_class.ROOT / "docs"
    security = (docs / "security.md").read_text()
    start = security.index("## Each student's step runs in a cell")
    section = security[start:security.index("\n## ", start + 1)]
    guide = "\n".join(p.read_text() for p in sorted([docs / "security.md", *docs.glob("instructor-*.md")]))
    assert not [k for k in keys if f"`{k}`" not in section], "keys of [cells] the security section does not name"
    shown = tomllib.loads((staff_class.ROOT / "course.toml").read_text())["cells"]
    quoted = re.findall(r"`(\w+)`, (\d+)", " ".join(guide.split()))
    assert {(k, int(n)) for k, n in quoted if k in keys} <= {(k, shown[k]) for k in keys}, quoted
