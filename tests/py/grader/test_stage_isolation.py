"""CI (no GPU needed): a stage file that does not compile or link costs only its own stages.

Each case copies the handed-out stubs (student/) and breaks one file the way students do — a syntax
error, a forgotten explicit instantiation, a helper declared and never defined — then builds it as
`make check` does and proves: the build succeeds, prints a verdict naming the file (and the
compiler's first error as file:line) instead of the compile commands, keeps those in build.log,
records the file in symbols.json, links every other stage into the submission's library, and a
grade without a GPU writes results.json with the broken stages `rejected` with that message (the
others no_gpu). A tree with all three at once builds too. `make` itself (the default goal) builds
the same but fails, naming the file, so that `make && make check ...` stops there. A file that
compiles with warnings is `ok, with N compiler warnings`, the first named at file:line; WERROR=1
(a change of flags) compiles the stage files again and refuses it, its numbered error at file:line.
"""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from support.gpu import HAS_GPU
from support.paths import STUBS

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "grader" / "scripts"))
import compile_stage  # noqa: E402

SYNTAX = ("tiled.cu", "    if (!kTiledKernelWritten) return Status::not_implemented;",
          "    if (!kTiledKernelWritten) return Status::not_implemented  // no semicolon")
INSTANTIATION = ("unrolled.cu", "template Status gemm_unrolled<double>(const GemmProblem<double>&);\n", "")
HELPER = [("pitched.cu", "template <typename T>\nStatus pitched_alloc(",
           "int pitched_row_bytes(int cols);  // declared, never defined\n\ntemplate <typename T>\nStatus pitched_alloc("),
          ("pitched.cu", "(void)out, (void)rows, (void)cols;", "(void)out, (void)rows, (void)pitched_row_bytes(cols);")]
KERNEL_BODY = "    // TODO(student): write the kernel body.\n"
WARNING = ("tiled.cu", KERNEL_BODY, KERNEL_BODY + "    int unused_here = 0;\n")  # nvcc: warning #177-D
BREAKS = {"syntax": [SYNTAX], "instantiation": [INSTANTIATION], "helper": HELPER,
          "all": [SYNTAX, INSTANTIATION, *HELPER], "warning": [WARNING]}
STAGES = ("naive", "tiled", "unrolled", "pitched", "reuse", "tensor")


def make(build, submission, *targets):
    return subprocess.run(["make", "--no-print-directory", "-j2", f"BUILD={build}", f"SUBMISSION={submission}",
                           *map(str, targets)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def line_of(path, text):
    return next(n for n, line in enumerate(Path(path).read_text().splitlines(), 1) if text in line)


@pytest.fixture(scope="module")
def built(grader, tmp_path_factory):
    """kind -> (make's output, the submission's build directory, the submission directory)."""
    build = Path(grader).resolve().parent.parent  # the grader's objects are built already
    done = {}

    def get(kind):
        if kind not in done:
            sub = tmp_path_factory.mktemp(f"isolation-{kind}") / "student"
            sub.mkdir()
            for name in STAGES:
                (sub / f"{name}.cu").write_text((STUBS / f"{name}.cu").read_text())
            for file, old, new in BREAKS[kind]:
                text = (sub / file).read_text()
                assert old in text, f"student/{file} changed: this test's edit no longer applies"
                (sub / file).write_text(text.replace(old, new, 1))
            proc = make(build, sub, "grader")
            assert proc.returncode == 0, proc.stdout[-4000:]
            sbs = sorted(build.glob(f"sub-student-*/symbols.json"), key=lambda p: p.stat().st_mtime)
            sb = next(p.parent for p in reversed(sbs) if json.loads(p.read_text()).get("source_dir") == str(sub))
            done[kind] = (proc.stdout, sb, sub)
        return done[kind]
    return get


def library_entry_points(sb):
    """The entry points the build's libraries hold, all stages' together (each stage has its own)."""
    found = set()
    for library in sb.glob("libgemmlab-submission-*.so"):
        nm = subprocess.run(["nm", "-C", "--defined-only", str(library)], capture_output=True, text=True,
                            check=True).stdout
        found |= set(re.findall(r"gemmlab::submission::(gemm_\w+<[^>]*>)", nm))
    return found


def no_gpu_grade(sb, tmp_path):
    out = subprocess.run([str(sb / "gemmlab"), "grade", "--config", str(ROOT / "course.toml"), "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 3, out.stdout + out.stderr
    res = json.loads((tmp_path / "results.json").read_text())
    return res, {(r["stage"], r["variant"], r["precision"]): r for r in res["results"]}


def test_a_syntax_error_costs_only_its_stage(built, tmp_path):
    output, sb, sub = built("syntax")
    first = r"\S*tiled\.cu:\d+: error: expected a \";\""
    # what the student sees: the compiler's message and one verdict per file, not the commands
    assert re.search(rf"tiled\.cu: does not compile — stage tiled will be rejected \(first error: {first}\)", output), output
    assert re.search(r"naive\.cu: ok$", output, re.M) and re.search(r"reuse\.cu: ok$", output, re.M), output
    assert "-DGEMMLAB_NS=submission" not in output, "compile commands belong in build.log"
    log = (sb / "build.log").read_text()
    assert f"the compiler's commands and full output: " in output and "build.log" in output
    assert "-DGEMMLAB_NS=submission" in log and 'error: expected a ";"' in log
    scan = json.loads((sb / "symbols.json").read_text())
    assert scan["files"]["tiled.cu"]["compiled"] is False and re.fullmatch(first, scan["files"]["tiled.cu"]["first_error"])
    assert scan["stages"]["tiled"]["rules"] == ["does_not_compile"]
    assert list(scan["stages"]) == ["tiled"] and scan["missing"] == []
    linked = library_entry_points(sb)
    assert "gemm_naive<float>" in linked and "gemm_unrolled<double>" in linked and "gemm_reuse<float>" in linked
    assert not any(x.startswith("gemm_tiled") for x in linked)
    listed = subprocess.run([str(sb / "gemmlab"), "list"], capture_output=True, text=True)
    assert listed.returncode == 0 and "tiled" in listed.stdout
    if HAS_GPU:
        return  # the grade of a GPU machine runs the stages: test_broken_gpu's business
    res, by = no_gpu_grade(sb, tmp_path)
    for variant in ("8", "16", "32"):
        for prec in ("float", "double"):
            r = by[("tiled", variant, prec)]
            assert r["disposition"] == "rejected" and re.search(rf"tiled\.cu does not compile: {first}", r["problem"])
    assert {r["disposition"] for k, r in by.items() if k[0] != "tiled"} == {"no_gpu"}
    rows = {(s["stage"], s["precision"]): s for s in res["score"]["stages"]}
    assert rows[("tiled", "float")]["disposition"] == "rejected" and "does not compile" in rows[("tiled", "float")]["note"]
    assert res["symbol_scan"]["rejected"]["tiled"].startswith("tiled.cu does not compile")
    gradescope = json.loads((tmp_path / "gradescope.json").read_text())
    assert any("tiled" in t["name"] and "does not compile" in t["output"] for t in gradescope["tests"])


def test_make_fails_on_a_refused_file_once_the_rest_is_built(built):
    """`make` (the guide's `make -j2 && make check FULL=1 && make bench`) stops on a file that does not
    compile; `make grader`, what make check builds, succeeds, and the grader with every other stage is there."""
    _, sb, sub = built("syntax")
    proc = make(sb.parent, sub)  # the default goal
    assert proc.returncode == 2, proc.stdout[-3000:]
    assert re.search(r"^make: 1 stage file\(s\) cost points: \S*tiled\.cu \(the verdicts above say why", proc.stdout,
                     re.M), proc.stdout[-3000:]
    assert "`make check` still checks every other stage" in proc.stdout
    assert (sb / "gemmlab").is_file() and all((sb / f"libgemmlab-submission-{s}.so").is_file() for s in STAGES)
    assert make(sb.parent, sub, "grader").returncode == 0


def test_warnings_are_a_verdict_and_werror_rebuilds_and_refuses(built):
    output, sb, sub = built("warning")
    at = line_of(sub / "tiled.cu", "int unused_here")
    shown = re.escape(str(sub / "tiled.cu"))  # the submission lies outside the working directory
    first = rf'{shown}:{at}: warning #177-D: variable "unused_here" was declared but never referenced'
    assert re.search(rf"tiled\.cu: ok, with 1 compiler warning \(no points lost; the first: {first}\)$", output, re.M), output
    assert "every warning included: " in output and "`make WERROR=1` turns warnings into errors" in output
    assert "Remark: The warnings can be suppressed" not in output, "nvcc's remark is for the log"
    assert "Remark: The warnings can be suppressed" in (sb / "build.log").read_text()
    scan = json.loads((sb / "symbols.json").read_text())
    assert scan["files"]["tiled.cu"]["warnings"]["count"] == 1 and scan["stages"] == {}
    assert make(sb.parent, sub).returncode == 0, "a warning costs nothing: make succeeds"

    # WERROR=1 after a good build: the stage files compile again with the new flags
    proc = make(sb.parent, sub, "WERROR=1")
    assert "Nothing to be done" not in proc.stdout and "is up to date" not in proc.stdout, proc.stdout
    assert "FLAGS   changed: the stage files compile again" in proc.stdout, proc.stdout
    error = rf'{shown}:{at}: error #177-D: variable "unused_here" was declared but never referenced'
    assert re.search(rf"tiled\.cu: does not compile — stage tiled will be rejected \(first error: {error}\)$",
                     proc.stdout, re.M), proc.stdout
    assert proc.stdout.count(f"{sub / 'tiled.cu'}: {sub / 'tiled.cu'}") == 0, "the path once"
    assert proc.returncode == 2 and "cost points" in proc.stdout
    assert json.loads((sb / "symbols.json").read_text())["files"]["tiled.cu"]["compiled"] is False

    # and back: the objects compiled before come from the object cache, their warnings with them
    proc = make(sb.parent, sub)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "FLAGS   changed: the stage files compile again" in proc.stdout
    assert re.search(rf"{shown}\({at}\): warning #177-D", proc.stdout), "the warning is shown again"
    assert re.search(r"tiled\.cu: ok, with 1 compiler warning", proc.stdout), proc.stdout


def test_a_missing_instantiation_rejects_only_the_runs_without_it(built, tmp_path):
    output, sb, _ = built("instantiation")
    fix = "template Status gemm_unrolled<double>(const GemmProblem<double>&);"
    assert re.search(r"unrolled\.cu: compiles, but unrolled/double will be rejected: unrolled\.cu does not define "
                     r"gemm_unrolled<double>", output), output
    assert fix in output
    scan = json.loads((sb / "symbols.json").read_text())
    assert scan["stages"]["unrolled"]["runs"] == [{"variant": "", "precision": "double",
                                                    "problem": scan["missing"][0]["problem"]}]
    assert fix in scan["missing"][0]["problem"]
    linked = library_entry_points(sb)
    assert "gemm_unrolled<float>" in linked and "gemm_unrolled<double>" not in linked and "gemm_tiled<float, 8>" in linked
    if HAS_GPU:
        return
    _, by = no_gpu_grade(sb, tmp_path)
    assert by[("unrolled", "", "double")]["disposition"] == "rejected" and fix in by[("unrolled", "", "double")]["problem"]
    assert by[("unrolled", "", "float")]["disposition"] == "no_gpu"


def test_an_undefined_helper_is_caught_before_the_link(built, tmp_path):
    output, sb, _ = built("helper")
    assert re.search(r"pitched\.cu: left out of the library — stage pitched will be rejected: pitched\.cu references "
                     r"gemmlab::submission::pitched_row_bytes\(int\), which no stage file defines", output), output
    scan = json.loads((sb / "symbols.json").read_text())
    assert scan["stages"]["pitched"]["rules"] == ["undefined"] and not scan["files"]["pitched.cu"]["linked"]
    linked = library_entry_points(sb)
    assert "gemm_naive<double>" in linked and not any(x.startswith("gemm_pitched") for x in linked)
    if HAS_GPU:
        return
    _, by = no_gpu_grade(sb, tmp_path)
    assert by[("pitched", "", "float")]["disposition"] == "rejected"
    assert "pitched_row_bytes" in by[("pitched", "", "float")]["problem"]


def test_three_broken_files_at_once_and_make_scan_says_so_each_time(built):
    output, sb, sub = built("all")
    scan = json.loads((sb / "symbols.json").read_text())
    assert set(scan["stages"]) == {"tiled", "unrolled", "pitched"}
    linked = library_entry_points(sb)
    assert {"gemm_naive<float>", "gemm_reuse<double>", "gemm_unrolled<float>"} <= linked
    build = sb.parent
    again = make(build, sub, "scan")
    assert again.returncode == 0 and "Nothing to be done" not in again.stdout
    for file in ("naive.cu: ok", "tiled.cu: does not compile", "unrolled.cu: compiles, but", "pitched.cu: left out"):
        assert file in again.stdout, again.stdout


@pytest.mark.parametrize("output,first", [
    ('/x/student/tiled.cu(42): error: expected a ";"\n      int x\n', '/x/student/tiled.cu:42: error: expected a ";"'),
    # nvcc's numbered diagnostics (what -Werror all-warnings makes of a warning): file:line, the path once
    ('/x/student/tiled.cu(62): error #177-D: variable "x" was declared but never referenced\n      int x = 0;\n\n'
     'Remark: The warnings can be suppressed with "-diag-suppress <warning-number>"\n',
     '/x/student/tiled.cu:62: error #177-D: variable "x" was declared but never referenced'),
    ('/x/student/tiled.cu(7): warning #177-D: unused\n/x/student/tiled.cu(9): error #20: identifier "y" is undefined\n',
     '/x/student/tiled.cu:9: error #20: identifier "y" is undefined'),
    ("student/tiled.cu:42:7: error: expected ';' before '}' token\n", "student/tiled.cu:42: error: expected ';' before '}' token"),
    ("nvcc warning : something\nptxas error   : Entry function '_Z1kv' uses too much shared data (0x20000 bytes, 0xc000 max)\n",
     "student/unrolled.cu: ptxas error: Entry function '_Z1kv' uses too much shared data (0x20000 bytes, 0xc000 max)"),
    ("something odd happened\n", "student/unrolled.cu: something odd happened"),
])
def test_the_first_error_is_file_line_message(output, first):
    source = "student/tiled.cu" if "tiled" in first else "student/unrolled.cu"
    assert compile_stage.first_error(output, source, cwd="/nonexistent") == first


def test_warnings_are_file_line_and_nvccs_remark_is_not_shown():
    output = ('/x/student/tiled.cu(62): warning #177-D: variable "x" was declared but never referenced\n      int x = 0;\n'
              '          ^\n\nRemark: The warnings can be suppressed with "-diag-suppress <warning-number>"\n\n'
              "/x/student/tiled.cu:70:5: warning: unused variable 'y' [-Wunused-variable]\n")
    assert compile_stage.warnings_in(output, cwd="/nonexistent") == [
        '/x/student/tiled.cu:62: warning #177-D: variable "x" was declared but never referenced',
        "/x/student/tiled.cu:70: warning: unused variable 'y' [-Wunused-variable]"]
    shown = compile_stage.for_the_student(output, "/x/student/tiled.cu", cwd="/x")
    assert "Remark" not in shown and "\n\n\n" not in shown
    assert shown.startswith('student/tiled.cu(62): warning #177-D') and "student/tiled.cu:70:5: warning" in shown
