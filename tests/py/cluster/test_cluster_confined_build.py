"""A grading build sees only the hand-in: when the cluster grades ([cluster] confine_builds, on by
default), every stage compile runs in a Landlock sandbox (grader/scripts/confine.py) that reads only
the hand-in's scratch copy, the stage API headers, the CUDA toolkit and the system compiler. A stage
file that #includes, .incbin's or #embed's a file elsewhere (another student's hand-in, the reference,
a staff file) compiles in a plain build but not in the cluster's, and the student is told of their own
file and line; a clean file still compiles confined. Where Landlock is unavailable nothing is compiled
unconfined: the grading is an `error` that names the cause and the setting. A layout where something
staff-only lies where the sandbox may read is refused when course.toml is read.
No GPU needed: these compile only (toolchain.Toolchain.compile_only, as the hand-in check does)."""
import datetime as dt
import json
import os
import re
import secrets
import shutil
import subprocess
from pathlib import Path

import pytest

from support.cluster_helpers import ROOT, write_config
from support.cluster_helpers import config  # noqa: F401  (cluster/ on sys.path)

import compile_stage  # noqa: E402  (grader/scripts, on sys.path through cluster/)
import confine  # noqa: E402
import grading  # noqa: E402
import toolchain  # noqa: E402

pytestmark = pytest.mark.skipif(not (shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc")),
                                reason="needs nvcc (the CUDA toolkit) to compile stage files")
DUE = dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc)
STUB = (ROOT / "student" / "tiled.cu").read_text()
SECRET = "int another_students_secret = 42;  // SECRET-MARKER\n"


@pytest.fixture
def secret(tmp_path):
    """A file the grading account can read and the hand-in cannot name: another student's stored
    hand-in, the reference, the extensions file."""
    path = tmp_path / "elsewhere" / "alice-tiled.cu"
    path.parent.mkdir()
    path.write_text(SECRET)
    return path


def course(tmp_path, confined):
    base = tmp_path / ("confined" if confined else "plain")
    base.mkdir()
    return config.load(write_config(base, "local", DUE, confine_builds=confined))


def compile_hand_in(cfg, tmp_path, tiled: str, name: str):
    """compile_only of a hand-in of naive.cu (the stub) and this tiled.cu: (the files that do not
    compile, {stem: the .failed verdict})."""
    sub = tmp_path / f"{name}-submission"
    sub.mkdir()
    shutil.copyfile(ROOT / "student" / "naive.cu", sub / "naive.cu")
    (sub / "tiled.cu").write_text(tiled)
    build = tmp_path / f"{name}-build"
    broken = toolchain.Toolchain(cfg).compile_only(sub, build, tmp_path / f"{name}.log")
    verdicts = {p.name.split(".")[0]: json.loads(p.read_text()) for p in build.rglob("*.o.failed")}
    return broken, verdicts


def refused_confined_compiled_plain(tmp_path, tiled, name):
    broken, _ = compile_hand_in(course(tmp_path, False), tmp_path, tiled, f"{name}-plain")
    assert broken == [], f"the plain build should compile {name}"
    broken, verdicts = compile_hand_in(course(tmp_path, True), tmp_path, tiled, f"{name}-confined")
    assert broken == ["tiled.cu"], broken
    verdict = verdicts["tiled"]
    assert "SECRET-MARKER" not in json.dumps(verdict) and "another_students_secret" not in json.dumps(verdict)
    return verdict


def line_of(text, needle):
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def test_an_include_by_absolute_path_compiles_plain_and_is_refused_confined(tmp_path, secret):
    tiled = f'#include "{secret}"\n' + STUB
    verdict = refused_confined_compiled_plain(tmp_path, tiled, "include")
    assert verdict["first_error"].endswith(f"tiled.cu:1: error: {secret}: Permission denied"), verdict


def test_an_incbin_in_an_asm_statement_compiles_plain_and_is_refused_confined(tmp_path, secret):
    tiled = STUB + f'\nasm(".pushsection .rodata\\n.incbin \\"{secret}\\"\\n.popsection");\n'
    verdict = refused_confined_compiled_plain(tmp_path, tiled, "incbin")
    # The assembler names its temporary file; the student is told of their own file and line.
    assert verdict["first_error"].split(": error: ")[0].endswith(f"tiled.cu:{line_of(tiled, '.incbin')}"), verdict
    assert f"assembler: file not found: {secret}" in verdict["first_error"], verdict


def test_an_embed_is_refused_confined(tmp_path, secret):
    """g++ 12 (the course's host compiler) knows no #embed: the plain build refuses it too. Confined,
    it is refused whatever the compiler, and nothing of the file reaches the student."""
    tiled = STUB + f'\nstatic const char embedded[] = {{\n#embed "{secret}"\n}};\n'
    broken, verdicts = compile_hand_in(course(tmp_path, True), tmp_path, tiled, "embed")
    assert broken == ["tiled.cu"]
    assert f"tiled.cu:{line_of(tiled, '#embed')}: error:" in verdicts["tiled"]["first_error"], verdicts
    assert "SECRET-MARKER" not in json.dumps(verdicts)


def test_a_clean_hand_in_compiles_confined(tmp_path):
    fresh = STUB + f"// {secrets.token_hex(8)}: bytes no cache holds, so it is compiled here\n"
    broken, verdicts = compile_hand_in(course(tmp_path, True), tmp_path, fresh, "clean")
    assert broken == [] and verdicts == {}
    (obj,) = (tmp_path / "clean-build").rglob("tiled.o")
    assert "confined to" in (obj.parent.parent / "stage-flags").read_text()  # the Makefile's CONFINE= was on


def test_the_rest_of_the_trusted_tree_is_not_readable_confined(tmp_path):
    """The stage API headers are (grader/include), the grader's sources and the reference are not."""
    tiled = '#include "../src/common/protocol.h"\n' + STUB  # relative to grader/include, on the path
    broken, verdicts = compile_hand_in(course(tmp_path, True), tmp_path, tiled, "tree")
    assert broken == ["tiled.cu"]
    assert "tiled.cu:1: error:" in verdicts["tiled"]["first_error"], verdicts


def limited_course(tmp_path, name, cpu=20, wall=120, memory_mb=1024):
    """A confined course whose compiles have these limits ([cells] compile_*)."""
    base = tmp_path / name
    base.mkdir()
    path = write_config(base, "local", DUE, confine_builds=True)
    path.write_text(path.read_text() + f"[cells]\ncompile_cpu_seconds = {cpu}\ncompile_wall_seconds = {wall}\n"
                    f"compile_memory_mb = {memory_mb}\n")
    return config.load(path)


# Lines a stage file makes the compiler print that read like the machine's failures: a string with
# newlines in it puts them on lines of their own (the front end prints it as it is), and split
# literals keep their words out of the file as written.
FORGED = STUB + r'''
#pragma message("\nnvcc error   : 'cicc' died due to sig" "nal 9 (Kill signal)\nNo spa" "ce left on device")
static_assert(sizeof(int) == 3, "\nnvcc error   : 'cicc' died due to sig" "nal 9 (Kill signal)\n"
              "g++: fatal error: Kil" "led signal terminated program cc1plus\nsh: 1: cicc: not fo" "und\n"
              "cc1plus: out of mem" "ory allocating 65536 bytes\nNo spa" "ce left on device");
'''


def test_what_a_stage_file_makes_the_compiler_print_is_the_students_whatever_it_says(tmp_path):
    """The compiler prints the machine's failures word for word, and nothing failed but the file: it
    does not compile (the student's), the grading goes on — never an `error` retried forever."""
    broken, verdicts = compile_hand_in(limited_course(tmp_path, "forged"), tmp_path, FORGED, "forged")
    assert broken == ["tiled.cu"], broken
    assert "static assertion failed" in verdicts["tiled"]["first_error"], verdicts
    assert "died due to signal 9" in verdicts["tiled"]["output"]  # printed, and read as the file's
    assert not list((tmp_path / "forged-build").rglob("*.o.error"))


# A template whose instantiations double at each of 40 levels: a compile that never ends.
ENDLESS = STUB + """
template <int N, unsigned long M> struct Grow {
    static constexpr unsigned long value = Grow<N - 1, 2 * M>::value + Grow<N - 1, 2 * M + 1>::value;
};
template <unsigned long M> struct Grow<0, M> { static constexpr unsigned long value = M; };
unsigned long grown = Grow<40, 1>::value;
"""


@pytest.mark.parametrize("name, tiled", [
    ("endless-template", ENDLESS),
    ("endless-include", '#include "/dev/urandom"\n' + STUB),  # a device a compiler may read: bytes without end
])
def test_a_compile_that_never_ends_runs_into_its_limits_and_is_the_students(tmp_path, name, tiled):
    """Its CPU seconds or memory run out; the file does not compile, and the others still do. (The
    hand-in's compiles share one wall-time limit: here it only bounds a hang, so that a loaded machine,
    which spends the CPU seconds slowly, cannot leave the other files without time.)"""
    broken, verdicts = compile_hand_in(limited_course(tmp_path, name, cpu=10, wall=600, memory_mb=1024), tmp_path,
                                       tiled, name)
    assert broken == ["tiled.cu"], broken
    first = verdicts["tiled"]["first_error"]
    assert "limit" in first or "out of memory" in first or "memory exhausted" in first, first
    assert not list((tmp_path / f"{name}-build").rglob("*.o.error"))


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/kmsg", "/dev/tty"])
def test_a_device_a_compiler_does_not_need_is_refused_and_the_file_is_the_students(tmp_path, device):
    tiled = f'#include "{device}"\n' + STUB
    name = device.rsplit("/", 1)[1]
    broken, verdicts = compile_hand_in(limited_course(tmp_path, name), tmp_path, tiled, name)
    assert broken == ["tiled.cu"], broken
    assert verdicts["tiled"]["first_error"].endswith(f"tiled.cu:1: error: {device}: Permission denied"), verdicts
    assert not list((tmp_path / f"{name}-build").rglob("*.o.error"))


def test_hand_ins_with_the_same_stage_file_share_no_object_built_from_another_file(tmp_path):
    """The object cache keys each object on everything its compile read: two hand-ins with the same
    tiled.cu, which #includes a helper of the hand-in, get objects built from their own helper; a
    third with the first's helper again reuses the first's object."""
    cfg = course(tmp_path, True)
    token = secrets.token_hex(8)  # bytes no cache holds yet
    tiled = STUB + f'// {token}\n#include "helper.cu"\n'
    helper = 'static const char gemmlab_helper_marker[] __attribute__((used)) = "HELPER-{}-' + token + '";\n'

    def compiled(name, which):
        sub = tmp_path / f"{name}-submission"
        sub.mkdir()
        (sub / "tiled.cu").write_text(tiled)
        (sub / "helper.cu").write_text(helper.format(which))
        build, log = tmp_path / f"{name}-build", tmp_path / f"{name}.log"
        assert toolchain.Toolchain(cfg).compile_only(sub, build, log) == []
        (obj,) = build.rglob("stages/tiled.o")
        return obj.read_bytes(), "tiled.cu" in log.read_text()

    first, _ = compiled("first", "A")
    second, second_compiled = compiled("second", "B")
    assert f"HELPER-A-{token}".encode() in first
    assert f"HELPER-B-{token}".encode() in second and second_compiled, "the second hand-in got the first's object"
    again, again_compiled = compiled("again", "A")
    assert again == first and not again_compiled, "the same files again: the object is reused"


def test_without_landlock_a_grading_is_an_error_naming_the_setting(tmp_path, monkeypatch):
    def unavailable():
        raise confine.Unavailable("Linux Landlock is unavailable on node7 (test)")
    monkeypatch.setattr(confine, "abi", unavailable)
    cfg = course(tmp_path, True)
    files = {"tiled.cu": STUB.encode()}  # what the drop box's door hands a grading
    out = tmp_path / "out"
    out.mkdir()
    outcome = grading.grade_into(cfg, files, out, {"student": "s01"}, say=lambda *_: None)
    assert outcome["status"] == "error", outcome  # retried by the next sweep, blank in exports
    assert "Linux Landlock is unavailable on node7" in outcome["message"], outcome
    assert "confine_builds = false" in outcome["message"] and "compiles none without it" in outcome["message"]
    assert outcome["build_confinement"].startswith("required, and unavailable here"), outcome
    assert "error" in grading.SWEEP_RETRIES


def test_compile_stage_never_compiles_unconfined_when_asked_to_confine(tmp_path, monkeypatch):
    """compile_stage.py's own guard: no sandbox, no compile (OBJ.error: the machine's, not OBJ.failed)."""
    def unavailable():
        raise confine.Unavailable("no Landlock here (test)")
    monkeypatch.setattr(confine, "abi", unavailable)
    src = tmp_path / "tiled.cu"
    src.write_text(STUB)
    obj = tmp_path / "tiled.o"
    marker = tmp_path / "ran"
    with pytest.raises(compile_stage.MachineError, match="cannot be: no Landlock here"):
        compile_stage.compile_stage(["touch", str(marker)], src, obj, confine=[str(tmp_path)])
    assert not marker.exists()
    assert json.loads(Path(f"{obj}.error").read_text())["cause"].startswith("the compile was to be confined")
    assert not Path(f"{obj}.failed").exists()


def test_outcomes_say_when_builds_are_not_confined(tmp_path):
    assert toolchain.confinement_note(course(tmp_path, False)).startswith("off ([cluster] confine_builds = false)")
    assert toolchain.confinement_note(course(tmp_path, True)).startswith(f"on (Linux Landlock ABI {confine.abi()})")


@pytest.mark.parametrize("key, where", [
    ("dropbox", "{root}/grader/include/dropbox"),   # under the stage API headers
    ("sweeps", "/usr/lib/gemmlab-sweeps"),          # under the system compiler's files (never created)
])
def test_a_layout_that_exposes_staff_files_to_the_sandbox_is_refused(tmp_path, key, where):
    path = where.format(root=ROOT)

    def laid_out(**cluster):
        cfg_path = write_config(tmp_path, "local", DUE, **cluster)
        cfg_path.write_text(re.sub(rf"(?m)^{key} = .*$", f'{key} = "{path}"', cfg_path.read_text()))
        return cfg_path

    with pytest.raises(config.ConfigError) as e:
        config.load(laid_out())
    assert "[cluster] confine_builds" in str(e.value) and path in str(e.value), e.value
    assert f"[cluster] {key}" in str(e.value), e.value
    # Unconfined, nothing a compile reads is limited, so there is no layout to refuse.
    config.load(laid_out(confine_builds=False))


def test_scratch_may_hold_the_trusted_tree_but_no_readable_directory_may_hold_scratch(tmp_path):
    """Scratch is the parent of the gradings' own directories (gemmlab-<uid>-...): a trusted tree that lies
    below it (a copy under /tmp, scratch = /tmp) exposes none of them; scratch below a readable
    directory, or a readable directory inside a grading's own, does."""
    cfg = config.load(write_config(tmp_path, "local", DUE, scratch="/tmp"))
    tree = Path("/tmp/gemmlab-copy-of-the-trusted-tree")  # a readable root named like a grading's directory
    assert config.confinement_overlap(cfg) is None or str(ROOT).startswith("/tmp/gemmlab-"), \
        config.confinement_overlap(cfg)
    assert config.confinement_overlap(cfg, readable=[tmp_path / "toolkit"]) is None
    assert "[cluster] scratch" in config.confinement_overlap(cfg, readable=[tree])
    assert config.confinement_overlap(cfg, readable=["/"])  # holds everything staff-only


def test_a_host_compiler_of_the_sites_own_is_readable_confined(tmp_path, monkeypatch):
    """nvcc runs the g++ on PATH: one a site installs outside the system's directories (`module load
    gcc`: /opt/gcc-12/bin/g++) is readable in the sandbox, its whole installation; the system's adds nothing."""
    gxx = tmp_path / "opt" / "gcc-12" / "bin" / "g++"
    gxx.parent.mkdir(parents=True)
    gxx.write_text("#!/bin/sh\n")
    gxx.chmod(0o755)
    monkeypatch.setenv("PATH", f"{gxx.parent}{os.pathsep}{os.environ['PATH']}")
    assert confine.host_compiler_home() == [str(tmp_path / "opt" / "gcc-12")]
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert confine.host_compiler_home() == []


def test_a_local_build_is_not_confined_and_confine_reaches_each_stage_compile(tmp_path):
    """`make check` as a student runs it compiles as before (no CONFINE: no --confine); CONFINE=, which
    the cluster passes, reaches every stage compile and the stamp its objects depend on (a build
    confined after an unconfined one compiles again)."""
    obj = Path(toolchain.make_vars(ROOT, tmp_path, ROOT / "student", "")["SUB_BUILD"]) / "stages" / "naive.o"

    def dry_run(*extra):
        r = subprocess.run(["make", "-n", "-B", f"BUILD={tmp_path}", "SUBMISSION=student", "OBJECT_CACHE=", *extra,
                            str(obj)], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout

    assert "--confine" not in dry_run()
    confined = dry_run("CONFINE=/somewhere:/else")
    assert "--confine '/somewhere:/else'" in confined and "confined to /somewhere:/else" in confined, confined
