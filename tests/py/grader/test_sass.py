"""make sass (grader/scripts/stage_sass.py) and the symbol check's tensor-core rule that reads the same
machine code, with no GPU: hand-written SASS and PTX for the spellings of every architecture, then the
real objects the build makes of every reference and student stage file, disassembled with cuobjdump."""
import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from support.paths import ROOT, STUBS
sys.path.insert(0, str(ROOT / "grader" / "scripts"))
import registry  # noqa: E402
import scan_symbols  # noqa: E402
import stage_sass  # noqa: E402

STAGES = registry.stage_names()
CUOBJDUMP = stage_sass.find_cuobjdump(None, "/usr/local/cuda")
needs_cuobjdump = pytest.mark.skipif(not CUOBJDUMP, reason="needs cuobjdump (make setup installs it)")
HAS_REFERENCE = (ROOT / "reference" / "tiled.cu").is_file()


# ---- reading a listing: the spellings of the architectures ---------------------------------------

def listing(body, name="_Z6kernelPf", arch="sm_90a", start=0x100):
    """A cuobjdump -sass listing of one kernel: a prologue, then `body` from `start` on (16 bytes each);
    "BACK:<n>" in body is a conditional branch back to instruction n of the body."""
    lines = ["", "Fatbin elf code:", "================", f"arch = {arch}", "", f"\tcode for {arch}",
             f"\t\tFunction : {name}", '\t.headerflags\t@"EF_CUDA_TEXMODE_INDEPENDENT"',
             "        /*0000*/                   LDC R1, c[0x0][0x28] ;  /* 0x00000a00ff017b82 */"]
    for i, t in enumerate(body):
        addr = start + 16 * i
        if t.startswith("BACK:"):
            t = f"@P0 BRA {start + 16 * int(t[5:]):#x}"
        lines.append(f"        /*{addr:04x}*/                   {t} ;  /* 0x0000000000000000 */")
    end = start + 16 * len(body)
    lines += [f"        /*{end:04x}*/                   EXIT ;", f"        /*{end + 16:04x}*/                   BRA {end + 16:#x};"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("op,label,bits", [
    ("LDG.E.128", "LDG.128", 128), ("LDG.E.128.CONSTANT", "LDG.128", 128), ("LDG.E.64.SYS", "LDG.64", 64),
    ("LDG.E", "LDG", 32), ("LDG.E.U8", "LDG.8", 8), ("LDS.U.128", "LDS.128", 128), ("LDS.128", "LDS.128", 128),
    ("LDS", "LDS", 32), ("LDS.64", "LDS.64", 64), ("STS.128", "STS.128", 128), ("STG.E.128", "STG.128", 128),
    ("LDGSTS.E.BYPASS.128", "LDGSTS.128", 128), ("LDGSTS.E.LTC128B", "LDGSTS", 32), ("LDL.64", "LDL.64", 64),
    ("STL", "STL", 32), ("LD.E.128", "LD.128", 128),
])
def test_memory_spellings_of_every_arch_have_one_label(op, label, bits):
    assert stage_sass.memory_label(op) == label and stage_sass.width_bits(op) == bits


def test_predicates_and_tensor_core_families():
    assert stage_sass.opcode("@!P0 LDG.E.128.CONSTANT R4, desc[UR6][R2.64]") == "LDG.E.128.CONSTANT"
    assert stage_sass.opcode("@!UP1 BRA 0x40") == "BRA"
    for op in ("HMMA.1688.F32.TF32", "HMMA.16816.F32.BF16", "HGMMA.64x128x8.F32.TF32", "IMMA.16832.S8.S8",
               "BMMA.88128.AND.POPC", "QMMA.16832.F32.E4M3.E4M3", "UTCHMMA", "DMMA.8x8x4"):
        assert stage_sass.is_tensor(op), op
    for op in ("FFMA", "DFMA", "HFMA2.MMA", "LDSM.16.M88.4", "MOV"):
        assert not stage_sass.is_tensor(op), op


def test_loops_counts_and_the_main_loop():
    body = ["MOV R2, RZ", "LDS.128 R4, [R0]", "FFMA R8, R4, R5, R8", "FFMA R9, R6, R7, R9", "LDS R10, [R0+0x10]",
            "FFMA R8, R10, R10, R8", "BAR.SYNC.DEFER_BLOCKING 0x0", "BACK:1", "LDG.E R12, desc[UR4][R2.64]",
            "FFMA R12, R12, R12, R12", "BACK:8", "STL [R1], R12", "LDL R13, [R1]", "STG.E.128 desc[UR4][R2.64], R8"]
    [k] = stage_sass.kernel_reports(listing(body))
    assert k.short == "kernel" and k.arch == "sm_90a" and not k.empty
    assert [(lp.start, lp.end) for lp in k.loops] == [(0x110, 0x170), (0x180, 0x1a0)]  # the end's BRA-to-self is no loop
    main = k.main_loop
    assert main.start == 0x110
    c = stage_sass.mix(main.instrs)
    assert (c["FFMA"], c["LDS.128"], c["LDS"], c["BAR"]) == (3, 1, 1, 1)
    text = "\n".join(stage_sass.summary(k, "student/x.cu"))
    assert "FFMA ×3  LDS.128 ×1  LDS ×1  BAR ×1  1.5 FMA per shared load   <- main loop" in text
    assert "1.0 FMA per global load" in text                      # the second loop reads global memory
    assert "STL ×1" in text and "LDL ×1" in text and "spills or a local array" in text
    assert "vector (16 B)  LDS.128 ×1, STG.128 ×1" in text
    marked = stage_sass.annotated(k, stage_sass.parse_listing(listing(body))[0])
    assert "<- 16-byte vector" in marked and "<- local memory" in marked and "// ---- loop 0x0110-0x0170" in marked


def test_an_empty_kernel_says_its_body_is_not_written():
    [k] = stage_sass.kernel_reports(listing(["MOV R2, RZ"]))
    assert k.empty
    assert "the body is not written yet (TODO(student) in student/tiled.cu)" in "\n".join(stage_sass.summary(k, "student/tiled.cu"))


def test_ptx_signal_counts_every_tensor_core_instruction_but_fp64():
    ptx = """
.version 8.5
.target sm_80
.visible .entry _Z4halfPf(
    .param .u64 _Z4halfPf_param_0
)
{
    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%f1,%f2,%f3,%f4};
    @%p1 wmma.mma.sync.aligned.row.row.m16n16k8.f32.tf32.tf32.f32 {%f1}, {%r1}, {%r2}, {%f1};
}
.visible .entry _Z6doublePd(
    .param .u64 _Z6doublePd_param_0
)
{
    mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%fd1,%fd2}, {%fd3}, {%fd4}, {%fd1,%fd2};
}
.entry _Z5hoppv()
{
    wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {%f1}, %rd1, %rd2, 1, 1, 1;
}
"""
    found = stage_sass.ptx_tensor_instructions(ptx)
    assert set(found) == {"_Z4halfPf", "_Z5hoppv"}  # the all-FP64 mma (DMMA) is allowed
    assert sum(found["_Z4halfPf"].values()) == 2


def test_without_a_disassembler_the_rule_says_it_did_not_run(tmp_path):
    found, record = scan_symbols.tensor_core_use([tmp_path / "x.o"], cuobjdump=str(tmp_path / "no-cuobjdump"))
    assert found == {} and record["ran"] is False and "cuobjdump" in record["why_not"]
    import io
    out = io.StringIO()
    scan_symbols.print_tensor_check_note({"tensor_core_check": record}, out=out)
    assert "the tensor-core rule did not run" in out.getvalue()



def test_the_rules_reading_of_an_object_is_kept_by_its_content(tmp_path, monkeypatch):
    """With a cache, an object is disassembled once: the same bytes again (another student's copy of
    the same file, the next sweep) are read from the cache; other bytes, or another disassembler, are
    read afresh; without a cache every call reads."""
    reads = []

    def tensor_core_kernels(obj, tool):
        reads.append(Path(obj).read_bytes())
        return [{"kernel": "_Z1kv", "arch": "sm_90a", "instructions": {"HMMA.16816.F32": 4}, "signal": "sass"}] \
            if b"hmma" in Path(obj).read_bytes() else []
    monkeypatch.setattr(stage_sass, "tensor_core_kernels", tensor_core_kernels)
    tool, other_tool = tmp_path / "cuobjdump", tmp_path / "bin" / "cuobjdump"
    for t in (tool, other_tool):
        t.parent.mkdir(parents=True, exist_ok=True)
        t.write_text("")
    cache = tmp_path / "cache"
    a, b, c = (tmp_path / f"{n}" / "reuse.o" for n in "abc")
    for o, text in ((a, b"hmma"), (b, b"hmma"), (c, b"ffma")):
        o.parent.mkdir()
        o.write_bytes(text)
    first, record = scan_symbols.tensor_core_use([a], cuobjdump=str(tool), cache=cache)
    again, _ = scan_symbols.tensor_core_use([b], cuobjdump=str(tool), cache=cache)
    assert first == again == {"reuse": first["reuse"]} and first["reuse"][0]["instructions"] == {"HMMA.16816.F32": 4}
    assert record["ran"] and len(reads) == 1, "the same bytes were disassembled again"
    assert scan_symbols.tensor_core_use([c], cuobjdump=str(tool), cache=cache)[0] == {} and len(reads) == 2
    scan_symbols.tensor_core_use([a], cuobjdump=str(other_tool), cache=cache)
    assert len(reads) == 3, "another disassembler's reading was taken from the cache"
    scan_symbols.tensor_core_use([a], cuobjdump=str(tool))
    assert len(reads) == 4

# ---- the real objects of every stage file ---------------------------------------------------------

def make(*args):
    return subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), *args], capture_output=True, text=True)


def built_objects():
    """{(submission, stage): object}: the reference's objects (the reference library's) and the student
    build's, as make sass reads them; built here where make test has not built them yet."""
    objects = {}
    for sub, folder in (([("reference", "reference")] if HAS_REFERENCE else []) + [("student", STUBS)]):
        proc = make("-n", "sass", f"SUBMISSION={folder}", "STAGE=naive")  # the folder of the stage objects
        line = next(l for l in proc.stdout.splitlines() if "stage_sass.py" in l)
        folder = (ROOT / line.split("--object ")[1].split()[0]).parent
        for stage in STAGES:
            objects[(sub, stage)] = folder / f"{stage}.o"
    missing = sorted({str(o.relative_to(ROOT)) for o in objects.values() if not o.exists()})
    if missing:
        proc = make("-j2", *missing)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return objects


@pytest.fixture(scope="module")
def sass_of_every_stage(tmp_path_factory):
    """{(submission, stage): the --json counts of stage_sass.py} for every stage file."""
    if not CUOBJDUMP:
        pytest.skip("needs cuobjdump (make setup installs it)")
    objects = built_objects()
    out = tmp_path_factory.mktemp("sass")

    def run(item):
        (sub, stage), obj = item
        path = out / f"{sub}-{stage}.json"
        proc = subprocess.run([sys.executable, str(ROOT / "grader/scripts/stage_sass.py"), "--object", str(obj),
                               "--source", f"{sub}/{stage}.cu", "--json", str(path)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return (sub, stage), {"kernels": json.loads(path.read_text()), "text": proc.stdout}

    with ThreadPoolExecutor(4) as pool:
        return dict(pool.map(run, objects.items()))


def main_loop(kernel):
    return next((lp for lp in kernel["loops"] if lp["main"]), None)


def of(found, sub, stage, prec):
    kernels = found[(sub, stage)]["kernels"]
    single = [k for k in kernels if (k["counts"].get("FFMA", 0) + sum(v for op, v in k["tensor"].items()
                                                                        if not op.startswith("DMMA"))) > 0]
    return single if prec == "float" else [k for k in kernels if k not in single]


@needs_cuobjdump
def test_the_student_stubs_have_no_kernel_work_and_naive_is_the_naive_loop(sass_of_every_stage):
    for stage in STAGES:
        kernels = sass_of_every_stage[("student", stage)]["kernels"]
        assert kernels, stage
        if stage == "naive":
            for k in kernels:
                loop = main_loop(k)
                assert loop and loop["counts"].get("FFMA", 0) + loop["counts"].get("DFMA", 0) >= 1, k["short"]
                assert loop["counts"].get("LDG", 0) + loop["counts"].get("LDG.64", 0) >= 2, k["short"]
                assert not k["tensor"] and not any(x.startswith(("LDS", "LDL", "STL")) for x in k["counts"])
        else:
            assert all(k["empty"] for k in kernels), (stage, [k["short"] for k in kernels if not k["empty"]])
            assert "the body is not written yet" in sass_of_every_stage[("student", stage)]["text"]


@needs_cuobjdump
@pytest.mark.skipif(not HAS_REFERENCE, reason="the instructor repository only")
def test_the_reference_kernels_show_what_each_lesson_teaches(sass_of_every_stage):
    found = sass_of_every_stage
    # tiled: one FMA per k from shared memory, the A row read as LDS.128 (four k at once), barriers
    tiled16 = next(k for k in found[("reference", "tiled")]["kernels"] if k["short"] == "tiled_kernel<float, 16>")
    loop = main_loop(tiled16)
    assert loop["counts"]["FFMA"] == 16 and loop["counts"].get("LDS.128", 0) >= 4 and loop["counts"]["BAR"] >= 1
    # unrolled, pitched, reuse: register blocking raises the FMAs per shared load; vector shared loads
    for stage, fmas_per_loop in (("unrolled", 256), ("pitched", 256), ("reuse", 256)):
        for prec, fma in (("float", "FFMA"), ("double", "DFMA")):
            kernels = [k for k in of(found, "reference", stage, prec) if main_loop(k) and
                       main_loop(k)["counts"].get(fma, 0)]
            assert kernels, (stage, prec)
            for k in kernels:
                c = main_loop(k)["counts"]
                loads = sum(v for op, v in c.items() if op.startswith("LDS"))
                assert c[fma] >= fmas_per_loop and c.get("LDS.128", 0) >= 1, (stage, k["short"], c)
                assert c[fma] / loads >= 4, (stage, k["short"], c)  # tiled: under 1
    # pitched: 16-byte global loads from its aligned rows
    assert any(k["counts"].get("LDG.128") for k in of(found, "reference", "pitched", "float"))
    # no stage but tensor runs the tensor cores in float; double may use DMMA
    for stage in STAGES:
        for k in found[("reference", stage)]["kernels"]:
            single = {op for op in k["tensor"] if not op.startswith("DMMA")}
            assert not single or stage == "tensor", (stage, k["short"], k["tensor"])
    tensor = found[("reference", "tensor")]["kernels"]
    assert any(op.startswith(("HMMA", "HGMMA")) for k in tensor for op in k["tensor"])
    assert any(op.startswith("DMMA") for k in tensor for op in k["tensor"])


@needs_cuobjdump
def test_make_sass_end_to_end_names_the_file_the_arch_and_writes_the_marked_listing(tmp_path):
    proc = make("sass", f"SUBMISSION={STUBS}", "STAGE=naive", "PREC=float", f"RESULTS={tmp_path}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"sass: {STUBS}/naive.cu for sm_" in proc.stdout
    assert "naive_kernel<float>" in proc.stdout and "naive_kernel<double>" not in proc.stdout
    assert "<- main loop" in proc.stdout
    [listing_file] = (tmp_path / "sass").glob("naive-sm_*.sass")
    assert "// ---- loop" in listing_file.read_text()


@needs_cuobjdump
def test_make_sass_and_make_resources_show_the_variant_asked_for(tmp_path):
    proc = make("sass", f"SUBMISSION={STUBS}", "STAGE=tiled/16", "PREC=double", f"RESULTS={tmp_path}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(set(re.findall(r"tiled_kernel<\w+, \d+>", proc.stdout))) == ["tiled_kernel<double, 16>"], proc.stdout
    assert "variant 16 and precision double only" in proc.stdout
    [listing_file] = (tmp_path / "sass").iterdir()
    assert re.fullmatch(r"tiled-16-sm_\d+\.sass", listing_file.name), listing_file.name
    proc = make("resources", f"SUBMISSION={STUBS}", "STAGE=tiled/32")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(set(re.findall(r"tiled_kernel<\w+, \d+>", proc.stdout))) == ["tiled_kernel<double, 32>",
                                                                           "tiled_kernel<float, 32>"], proc.stdout
    for target in ("sass", "resources"):
        proc = make(target, f"SUBMISSION={STUBS}", "STAGE=tiled/17")
        assert proc.returncode != 0 and "stage tiled has no variant 17: its variants are 8, 16, 32" in proc.stderr


def test_make_sass_needs_a_stage_and_names_a_missing_file():
    proc = make("sass")
    assert proc.returncode != 0 and "make sass needs STAGE=" in proc.stdout
    proc = make("sass", "STAGE=nosuchstage")
    assert proc.returncode != 0 and "no stage file student/nosuchstage.cu" in proc.stdout


@needs_cuobjdump
@pytest.mark.skipif(not HAS_REFERENCE, reason="the instructor repository only")
def test_the_guides_tiled_against_reuse_lines_are_what_make_sass_prints(sass_of_every_stage):
    """docs/student-tools.md quotes the main loops of the reference's tiled and reuse kernels: each quoted
    line is a line make sass prints today (a new compiler changes them: quote its lines)."""
    guide = (ROOT / "docs" / "student-tools.md").read_text()
    block = guide[guide.index("<!-- sass-example:"):guide.index("<!-- /sass-example -->")]
    quoted = [line.strip() for line in block.splitlines()[1:] if line.strip()]
    printed = {line.strip() for stage in ("tiled", "reuse") for line in
               sass_of_every_stage[("reference", stage)]["text"].splitlines()}
    assert len(quoted) == 4 and not [q for q in quoted if q not in printed], [q for q in quoted if q not in printed]


def test_a_stage_file_that_does_not_compile_has_no_machine_code_and_says_why(tmp_path, capsys):
    obj = tmp_path / "tiled.o"
    (tmp_path / "tiled.o.failed").write_text(json.dumps({"first_error": "student/tiled.cu:86: error: expected a \";\""}))
    assert stage_sass.main(["--object", str(obj), "--source", "student/tiled.cu"]) == 1
    err = capsys.readouterr().err
    assert "student/tiled.cu does not compile, so it has no machine code: student/tiled.cu:86: error" in err
