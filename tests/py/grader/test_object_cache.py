"""The stage object cache (grader/scripts/object_cache.py): a compile with the same command, source
and headers is copied, not run again; any changed byte compiles afresh; two builds that compile the
same thing at the same time compile it once. A stand-in compiler (a shell script) counts its runs."""
import subprocess
import sys
import threading
from pathlib import Path

from support.paths import ROOT

sys.path.insert(0, str(ROOT / "grader" / "scripts"))
import object_cache  # noqa: E402

# Copies its source to its object (after an optional pause) and counts its runs in runs.log.
FAKE_COMPILER = """#!/bin/sh
src=$1; obj=$2
echo run >> "$(dirname "$0")/runs.log"
sleep "${FAKE_COMPILE_SECONDS:-0}"
cp "$src" "$obj"
"""


def setup_tree(tmp_path):
    cc = tmp_path / "cc"
    cc.write_text(FAKE_COMPILER)
    cc.chmod(0o755)
    src = tmp_path / "src"
    src.mkdir()
    (src / "stage.cu").write_text("kernel v1\n")
    (src / "helpers.h").write_text("header v1\n")
    return cc, src / "stage.cu"


def runs(tmp_path):
    log = tmp_path / "runs.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def compile_once(tmp_path, cc, source, name="stage.o"):
    obj = tmp_path / name
    rc = object_cache.run_cached(tmp_path / "cache", [str(cc), str(source), str(obj)], str(source), str(obj),
                                 say=lambda _: None)
    assert rc == 0
    return obj.read_text()


def test_the_same_compile_is_copied_and_any_changed_byte_compiles_again(tmp_path):
    cc, source = setup_tree(tmp_path)
    assert compile_once(tmp_path, cc, source) == "kernel v1\n" and runs(tmp_path) == 1
    assert compile_once(tmp_path, cc, source, "again.o") == "kernel v1\n" and runs(tmp_path) == 1  # copied
    (source.parent / "helpers.h").write_text("header v2\n")  # a header beside the source changed
    compile_once(tmp_path, cc, source)
    assert runs(tmp_path) == 2
    source.write_text("kernel v2\n")
    assert compile_once(tmp_path, cc, source) == "kernel v2\n" and runs(tmp_path) == 3


# Reads its source and the file its "#include NAME" line names beside it into its object, and writes
# the dependency list -MMD would (the object's .d), as nvcc does.
INCLUDING_COMPILER = """#!/bin/sh
src=$1; obj=$2
echo run >> "$(dirname "$0")/runs.log"
inc=$(sed -n 's/^#include //p' "$src")
cat "$src" "$(dirname "$src")/$inc" > "$obj"
printf '%s: %s %s\\n' "$obj" "$src" "$(dirname "$src")/$inc" > "${obj%.o}.d"
"""


def test_the_same_source_with_another_included_file_compiles_again(tmp_path):
    """Each object is kept with what its compile read (its dependency list): the same stage file in
    two folders whose included file differs gets two objects; the first folder's files again, a hit."""
    cc = tmp_path / "cc"
    cc.write_text(INCLUDING_COMPILER)
    cc.chmod(0o755)

    def hand_in(name, helper):
        d = tmp_path / name
        d.mkdir()
        (d / "stage.cu").write_text("#include helper.cu\n")
        (d / "helper.cu").write_text(helper)
        obj = tmp_path / f"{name}.o"
        assert object_cache.run_cached(tmp_path / "cache", [str(cc), str(d / "stage.cu"), str(obj)],
                                       str(d / "stage.cu"), str(obj), say=lambda _: None) == 0
        return obj

    assert hand_in("a", "helper A\n").read_text().endswith("helper A\n") and runs(tmp_path) == 1
    b = hand_in("b", "helper B\n")
    assert b.read_text().endswith("helper B\n") and runs(tmp_path) == 2, "b got the object built from a's helper"
    c = hand_in("c", "helper A\n")
    assert c.read_text().endswith("helper A\n") and runs(tmp_path) == 2  # a's files again: copied
    assert str(tmp_path / "c" / "helper.cu") in c.with_suffix(".d").read_text()  # make sees what it read


def test_a_compiler_replaced_in_place_compiles_again_even_behind_a_launcher(tmp_path):
    cc, source = setup_tree(tmp_path)
    launcher = tmp_path / "launch"  # a stand-in for ccache: runs the command it is given
    launcher.write_text('#!/bin/sh\nexec "$@"\n')
    launcher.chmod(0o755)

    def build():
        obj = tmp_path / "stage.o"
        cmd = [str(launcher), str(cc), str(source), str(obj)]
        assert object_cache.run_cached(tmp_path / "cache", cmd, str(source), str(obj), say=lambda _: None) == 0

    build()
    build()
    assert runs(tmp_path) == 1
    cc.write_text(FAKE_COMPILER + "# a new release\n")  # the toolkit upgraded where it was
    build()
    assert runs(tmp_path) == 2


def test_two_builds_compiling_the_same_file_at_once_compile_it_once(tmp_path, monkeypatch):
    cc, source = setup_tree(tmp_path)
    monkeypatch.setenv("FAKE_COMPILE_SECONDS", "1")
    outputs = {}

    def build(name):
        outputs[name] = compile_once(tmp_path, cc, source, name)

    threads = [threading.Thread(target=build, args=(f"build{i}.o",)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert runs(tmp_path) == 1, "the second and third builds waited for the first and copied its object"
    assert set(outputs.values()) == {"kernel v1\n"}


def test_a_failed_compile_is_not_kept(tmp_path):
    cc, source = setup_tree(tmp_path)
    obj = tmp_path / "stage.o"
    failing = [sys.executable, "-c", "import sys; sys.exit(3)"]
    assert object_cache.run_cached(tmp_path / "cache", failing, str(source), str(obj), say=lambda _: None) == 3
    assert not list((tmp_path / "cache").rglob("*.o"))
    assert compile_once(tmp_path, cc, source) == "kernel v1\n" and runs(tmp_path) == 1


def test_the_command_line_tool_reuses_an_object(tmp_path):
    cc, source = setup_tree(tmp_path)
    for name in ("a.o", "b.o"):
        obj = tmp_path / name
        out = subprocess.run([sys.executable, str(ROOT / "grader/scripts/object_cache.py"), "--cache", str(tmp_path / "cache"),
                              "--source", str(source), "--object", str(obj), "--", str(cc), str(source), str(obj)],
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert obj.read_text() == "kernel v1\n"
    assert runs(tmp_path) == 1 and "same source and command as before" in out.stdout
    assert (tmp_path / "b.d").read_text().startswith(f"{tmp_path / 'b.o'}: {source}")


def test_what_a_compile_left_beside_its_object_comes_back_with_it(tmp_path):
    """Sidecars (compile_stage.py's <object>.warnings): kept with the object, restored on a hit; a
    stale one beside an object taken from a compile that left none is removed."""
    cc, source = setup_tree(tmp_path)
    obj = tmp_path / "stage.o"

    def compile_(cmd, note):  # as compile_stage.py does: a compile writes its sidecar afresh, or none
        Path(f"{cmd[-1]}.warnings").unlink(missing_ok=True)
        rc = subprocess.run(cmd).returncode
        if note:
            Path(f"{cmd[-1]}.warnings").write_text(note)
        return rc

    def build(note="", name="stage.o"):
        o = tmp_path / name
        cmd = [str(cc), str(source), str(o)]
        return object_cache.run_cached(tmp_path / "cache", cmd, str(source), str(o), say=lambda _: None,
                                       compile_=lambda c: compile_(c, note), sidecars=(".warnings",))

    assert build("1 warning\n") == 0 and runs(tmp_path) == 1
    Path(f"{obj}.warnings").unlink()
    assert build() == 0 and runs(tmp_path) == 1  # a hit
    assert Path(f"{obj}.warnings").read_text() == "1 warning\n"
    source.write_text("kernel v2\n")  # compiles with no warning; a stale sidecar is left beside it
    assert build() == 0 and runs(tmp_path) == 2
    Path(f"{obj}.warnings").write_text("stale\n")
    (tmp_path / "other.o.warnings").write_text("stale\n")
    assert build(name="other.o") == 0 and runs(tmp_path) == 2  # the v2 compile, from the cache
    assert not (tmp_path / "other.o.warnings").exists()
