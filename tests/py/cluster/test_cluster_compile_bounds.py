"""A grading's compiles of a hand-in cost that hand-in a bounded share of the node, whatever its files
do, and never another student's grading: a stage file whose compile writes without end (an asm
statement's .fill: an object of any size, written for real) runs into the largest file a compile may
write ([cells] compile_file_mb) and does not compile, never filling the disk the node's other gradings
share (a full disk is the machine's `error`, retried forever); a hand-in of many files that each take
their whole compile limit ends its compiles within one compile_wall_seconds, not one per file (a
grading job past its Slurm time limit leaves no outcome and is graded again by every sweep); and a
grading that waits for another's compile of a file both hand in (the stub of a stage neither did)
waits a bounded time (toolchain.LOCK_WAIT_SECONDS), though the other's make holds that lock through all
of its own compiles. No GPU needed: these compile only (toolchain.Toolchain.compile_only)."""
import datetime as dt
import json
import os
import secrets
import shutil
import stat
import threading
from pathlib import Path

import pytest

from support.cluster_helpers import ROOT, write_config
from support.cluster_helpers import config  # noqa: F401  (cluster/ on sys.path)

import toolchain  # noqa: E402

pytestmark = pytest.mark.skipif(not (shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc")),
                                reason="needs nvcc (the CUDA toolkit) to compile stage files")
DUE = dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc)
STUB = (ROOT / "student" / "tiled.cu").read_text()
# A template whose instantiations double at each of 40 levels: a compile that never ends.
ENDLESS = STUB + """
template <int N, unsigned long M> struct Grow {
    static constexpr unsigned long value = Grow<N - 1, 2 * M>::value + Grow<N - 1, 2 * M + 1>::value;
};
template <unsigned long M> struct Grow<0, M> { static constexpr unsigned long value = M; };
unsigned long grown = Grow<40, 1>::value;
"""


def limited_course(tmp_path, name, cpu=60, wall=120, memory_mb=2048, file_mb=64):
    """A confined course whose compiles have these limits ([cells] compile_*)."""
    base = tmp_path / name
    base.mkdir()
    path = write_config(base, "local", DUE, confine_builds=True)
    path.write_text(path.read_text() + f"[cells]\ncompile_cpu_seconds = {cpu}\ncompile_wall_seconds = {wall}\n"
                    f"compile_memory_mb = {memory_mb}\ncompile_file_mb = {file_mb}\n")
    return config.load(path)


def hand_in(tmp_path, name, files: dict[str, str]) -> Path:
    sub = tmp_path / f"{name}-submission"
    sub.mkdir()
    for file, text in files.items():
        (sub / file).write_text(text)
    return sub


def verdicts_of(build: Path) -> dict:
    return {p.name.split(".")[0]: json.loads(p.read_text()) for p in build.rglob("*.o.failed")}


def test_a_stage_file_that_writes_past_the_largest_file_does_not_compile_and_fills_no_disk(tmp_path):
    cfg = limited_course(tmp_path, "fill", file_mb=8)
    # 32 MiB of data in the host object (the assembler writes every byte), four times the limit.
    tiled = STUB + f'// {secrets.token_hex(8)}\nasm(".pushsection .data\\n.fill 0x2000000,1,0x5a\\n.popsection");\n'
    sub = hand_in(tmp_path, "fill", {"tiled.cu": tiled})
    build = tmp_path / "fill-build"
    broken = toolchain.Toolchain(cfg).compile_only(sub, build, tmp_path / "fill.log")
    assert broken == ["tiled.cu"], broken
    first = verdicts_of(build)["tiled"]["first_error"]
    assert "assembler" in first and "no file larger than 8 MiB" in first, first
    assert not list(build.rglob("*.o.error"))  # the file's failure, not the machine's
    biggest = max((p.stat().st_size for p in build.rglob("*") if p.is_file()), default=0)
    assert biggest <= 8 << 20, f"a compile wrote a file of {biggest >> 20} MiB past the 8 MiB limit"


def test_a_hand_in_of_many_endless_files_ends_its_compiles_within_one_wall_limit(tmp_path, monkeypatch):
    """Four files, each a compile that never ends, one compile at a time: together they are stopped
    at the hand-in's one wall limit (5 s), not at four of them; each is its student's failure."""
    monkeypatch.setenv("SLURM_CPUS_PER_TASK", "1")  # toolchain.jobs(): one compile at a time
    wall = 5
    cfg = limited_course(tmp_path, "many", cpu=60, wall=wall)
    files = {f"endless{i}.cu": ENDLESS + f"// {secrets.token_hex(8)}\n" for i in range(4)}
    sub = hand_in(tmp_path, "many", files)
    build = tmp_path / "many-build"
    broken = toolchain.Toolchain(cfg).compile_only(sub, build, tmp_path / "many.log")
    assert broken == sorted(files), broken
    firsts = [v["first_error"] for v in verdicts_of(build).values()]
    assert all("limit" in f for f in firsts), firsts
    # the first compile has (at most) the whole limit; every one after it only what the first left, and
    # so does each one after it: none has a limit of its own
    together = [f for f in firsts if f"the hand-in's compiles together reached their limit of {wall} s" in f]
    assert len(together) >= len(files) - 1, firsts
    assert not list(build.rglob("*.o.error"))


def test_a_grading_waits_a_bounded_time_for_another_gradings_compile_of_a_file_both_hand_in(tmp_path, monkeypatch):
    """Mallory's hand-in holds the stub everyone hands in and a file that never ends: her make holds
    the stub's lock in the object cache until its last compile ends. Alice's grading of the same stub
    waits LOCK_WAIT_SECONDS for it, then compiles it herself, while mallory's compiles still run."""
    monkeypatch.setattr(toolchain, "LOCK_WAIT_SECONDS", 1, raising=False)
    cfg = limited_course(tmp_path, "shared", cpu=60, wall=15)
    stub = STUB + f"// {secrets.token_hex(8)}: a stub no cache holds yet\n"
    mallory = hand_in(tmp_path, "mallory", {"tiled.cu": stub, "endless.cu": ENDLESS})
    alice = hand_in(tmp_path, "alice", {"tiled.cu": stub})
    endless_started, alice_done, mallory_let_go = threading.Event(), threading.Event(), threading.Event()

    def mallory_line(line):
        """What mallory's make prints, read inside her grading's hold of the locks: once her endless
        compile has started, the hold lasts until alice's grading is done (600 s only bound a hang),
        however long a loaded machine takes over alice's compile."""
        if "endless.cu" in line:
            endless_started.set()
            alice_done.wait(600)
            mallory_let_go.set()

    def mallory_grading():
        toolchain.Toolchain(cfg).compile_only(mallory, tmp_path / "mallory-build", tmp_path / "mallory.log",
                                            on_line=mallory_line)

    thread = threading.Thread(target=mallory_grading, daemon=True)
    thread.start()
    try:
        assert endless_started.wait(600), "mallory's make never started its endless compile"
        broken = toolchain.Toolchain(cfg).compile_only(alice, tmp_path / "alice-build", tmp_path / "alice.log")
        assert broken == []
        assert list((tmp_path / "alice-build").rglob("tiled.o"))
        assert not mallory_let_go.is_set(), "alice's grading waited until mallory's let go of the lock"
    finally:
        alice_done.set()
        thread.join(600)


def test_an_object_is_never_reused_for_a_hand_in_whose_extra_file_it_did_not_read(tmp_path):
    """tiled.cu .incbin's the bytes of tiled.cu.cu (a name built from __FILE__: its dependency list does
    not name the file). Two hand-ins with the same tiled.cu and their own tiled.cu.cu: each object holds
    its own hand-in's bytes, never the first's from the object cache."""
    cfg = limited_course(tmp_path, "incbin")
    tiled = STUB + f'// {secrets.token_hex(8)}\nasm(".pushsection .rodata\\n.incbin \\"" __FILE__ ".cu\\"\\n.popsection");\n'
    for who in ("FIRST", "SECOND"):
        sub = hand_in(tmp_path, who, {"tiled.cu": tiled, "tiled.cu.cu": f"// PAYLOAD-OF-{who}\n"})
        build = tmp_path / f"{who}-build"
        assert toolchain.Toolchain(cfg).compile_only(sub, build, tmp_path / f"{who}.log") == []
        (obj,) = build.rglob("stages/tiled.o")
        held = [w for w in ("FIRST", "SECOND") if f"PAYLOAD-OF-{w}".encode() in obj.read_bytes()]
        assert held == [who], f"{who.lower()} hand-in's object holds the bytes of: {held}"


def test_a_students_own_cache_is_theirs_alone_whatever_the_umask(tmp_path, monkeypatch):
    """The object cache below ~/.cache/gemmlab holds a student's compiled code and what the symbol check
    found in it: made 0700 at every level, even under umask 000."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    old = os.umask(0)
    try:
        assert toolchain._writable_dir(toolchain.private_cache() / "objects")
    finally:
        os.umask(old)
    for d in (toolchain.private_cache(), toolchain.private_cache() / "objects"):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700, (d, oct(d.stat().st_mode))
