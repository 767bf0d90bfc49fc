"""report/report_draft.py, function by function: what a draft report says of each stage file from its
build, without a GPU — a file that does not compile (its first error), one not built, an object with no
kernel — the kernels' resources read from `cuobjdump -res-usage` (resources), and the stages of a build
(build_facts), with a stand-in cuobjdump that prints what the real one prints.

A draft made by `make report` on a machine without a GPU is test_report.py's.

  python3 -m pytest -q tests/py/report/test_report_draft.py
"""
import json
import sys

import pytest

from support.paths import ROOT

sys.path.insert(0, str(ROOT / "report"))

import report_draft as rd  # noqa: E402

RES_USAGE = """\
Fatbin elf code:
================
arch = sm_90
code version = [1,8]
host = linux
compile_size = 64bit

Resource usage:
 Common:
  GLOBAL:0
 Function _Z12tiled_kernelIfEviiiT_PKS0_iS2_iS0_PS0_i:
  REG:40 STACK:0 SHARED:2048 LOCAL:0 CONSTANT[0]:436 TEXTURE:0 SURFACE:0 SAMPLER:0
 Function _Z12tiled_kernelIdEviiiT_PKS0_iS2_iS0_PS0_i:
  REG:72 STACK:16 SHARED:4096 LOCAL:24 CONSTANT[0]:448 TEXTURE:0 SURFACE:0 SAMPLER:0
"""


def cuobjdump(where, res_usage=RES_USAGE, sass="", fail=""):
    """A stand-in cuobjdump at where/bin/cuobjdump: -res-usage prints res_usage, -sass prints sass (or,
    with no sass, what cuobjdump says of an object without device code); fail: every call fails with it."""
    path = where / "bin" / "cuobjdump"
    path.parent.mkdir(parents=True, exist_ok=True)
    (where / "res-usage.txt").write_text(res_usage)
    (where / "sass.txt").write_text(sass)
    path.write_text(f"""#!/bin/sh
[ -n '{fail}' ] && {{ echo '{fail}' >&2; exit 1; }}
case "$1" in
  -res-usage) cat '{where}/res-usage.txt' ;;
  -sass) [ -s '{where}/sass.txt' ] && cat '{where}/sass.txt' || {{
           echo "cuobjdump info    : File '$2' does not contain device code"; exit 255; }} ;;
esac
""")
    path.chmod(0o755)
    return str(path)


def test_resources_are_read_per_kernel_from_res_usage(tmp_path):
    used = rd.resources(tmp_path / "tiled.o", cuobjdump(tmp_path))
    assert used == {"_Z12tiled_kernelIfEviiiT_PKS0_iS2_iS0_PS0_i": {"registers": 40, "shared": 2048, "local": 0},
                    "_Z12tiled_kernelIdEviiiT_PKS0_iS2_iS0_PS0_i": {"registers": 72, "shared": 4096, "local": 24}}


def test_a_failing_cuobjdump_is_named_with_what_it_said(tmp_path):
    with pytest.raises(RuntimeError) as e:
        rd.resources(tmp_path / "tiled.o", cuobjdump(tmp_path, fail="not an ELF file"))
    assert str(e.value) == f"cuobjdump -res-usage {tmp_path / 'tiled.o'}: not an ELF file"


def test_a_stage_file_that_does_not_compile_shows_its_first_error(tmp_path):
    obj = tmp_path / "tiled.o"
    (tmp_path / "tiled.o.failed").write_text(json.dumps({"first_error": "\nstudent/tiled.cu(42): error: x undefined\n"}))
    assert rd.stage_facts(obj, "student/tiled.cu", cuobjdump(tmp_path)) == (
        "`student/tiled.cu` does not compile, so it has no machine code yet:\n\n"
        "```\nstudent/tiled.cu(42): error: x undefined\n```\n")


def test_a_stage_file_not_built_says_what_builds_it(tmp_path):
    assert rd.stage_facts(tmp_path / "tiled.o", "student/tiled.cu", cuobjdump(tmp_path)) == (
        "`student/tiled.cu` is not built (`make` builds it).\n")


def test_an_object_without_device_code_holds_no_kernel(tmp_path):
    (tmp_path / "tiled.o").write_bytes(b"\x7fELF")
    assert rd.stage_facts(tmp_path / "tiled.o", "student/tiled.cu", cuobjdump(tmp_path)) == (
        "`student/tiled.cu` holds no kernel.\n")


def test_build_facts_read_each_stage_beside_the_grader_and_name_the_submission(tmp_path):
    build = tmp_path / "build" / "sub-mine-123"
    (build / "stages").mkdir(parents=True)
    (build / "stages" / "naive.o").write_bytes(b"\x7fELF")
    (build / "stages" / "pitched.o.failed").write_text(json.dumps({"first_error": "pitched.cu(3): error: y"}))
    cuobjdump(tmp_path / "cuda")
    facts = rd.build_facts(build / "gemmlab", tmp_path / "mine", ["naive", "tiled", "pitched"], cuda_home=tmp_path / "cuda")
    assert facts == {"naive": "`mine/naive.cu` holds no kernel.\n",
                     "tiled": "`mine/tiled.cu` is not built (`make` builds it).\n",
                     "pitched": "`mine/pitched.cu` does not compile, so it has no machine code yet:\n\n"
                                "```\npitched.cu(3): error: y\n```\n"}
    assert rd.build_facts(build / "gemmlab", None, ["tiled"], cuda_home=tmp_path / "cuda") == {
        "tiled": "`student/tiled.cu` is not built (`make` builds it).\n"}


def test_a_stage_whose_object_cannot_be_read_says_so_and_the_others_go_on(tmp_path):
    build = tmp_path / "build"
    (build / "stages").mkdir(parents=True)
    (build / "stages" / "naive.o").write_bytes(b"\x7fELF")
    cuobjdump(tmp_path / "cuda", fail="cannot read it")
    facts = rd.build_facts(build / "gemmlab", None, ["naive", "tiled"], cuda_home=tmp_path / "cuda")
    assert facts["naive"].startswith("What the build knows of `student/naive.cu` could not be read: cuobjdump -sass ")
    assert facts["naive"].endswith(": cannot read it\n")
    assert facts["tiled"] == "`student/tiled.cu` is not built (`make` builds it).\n"


def sass(*names):
    """A `cuobjdump -sass` listing of these kernels, each a short loop of loads and FMAs."""
    lines = ["", "Fatbin elf code:", "================", "arch = sm_90", "", "\tcode for sm_90"]
    for name in names:
        lines += [f"\t\tFunction : {name}", "        /*0000*/                   LDC R1, c[0x0][0x28] ;"]
        body = ["LDS.128 R4, [R0]", "FFMA R8, R4, R5, R8", "FFMA R9, R6, R7, R9", "@P0 BRA 0x10", "EXIT"]
        lines += [f"        /*{16 * (i + 1):04x}*/                   {t} ;" for i, t in enumerate(body)]
    return "\n".join(lines) + "\n"


def test_a_built_stage_shows_each_kernels_resources_and_its_machine_code_counted(tmp_path):
    names = ["_Z12tiled_kernelIfEviiiT_PKS0_iS2_iS0_PS0_i", "_Z12tiled_kernelIdEviiiT_PKS0_iS2_iS0_PS0_i"]
    (tmp_path / "tiled.o").write_bytes(b"\x7fELF")
    facts = rd.stage_facts(tmp_path / "tiled.o", "student/tiled.cu", cuobjdump(tmp_path, sass=sass(*names)))
    lines = facts.splitlines()
    assert lines[:6] == [
        "What the build knows of `student/tiled.cu` (sm_90; `make resources` and `make sass` show the same, no GPU "
        "needed):", "",
        "| kernel | registers | shared memory (static) | local memory |", "|:--|--:|--:|--:|",
        "| `tiled_kernel<double>` | 72 | 4,096 B | 24 B |",
        "| `tiled_kernel<float>` | 40 | 2,048 B | 0 B |"]
    assert lines[6:8] == ["", "```"] and facts.endswith("\n```\n")
    assert all(len(line) <= rd.WIDTH for line in lines[8:]), "make sass's lines are wrapped to the page"
