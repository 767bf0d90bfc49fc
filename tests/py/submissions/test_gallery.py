"""CI (no GPU needed): the gallery of hostile and careless submissions (tests/gallery/) — every entry
is a complete submission with its expectations, its stage files compile (or fail to, as expected),
and the symbol scan rejects exactly the stages it should, naming the symbols. The GPU half is
test_gallery_gpu.py; docs/gallery.md has the table."""
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "gallery"))
import gallery_lib as g  # noqa: E402
import registry  # noqa: E402  (gallery_lib puts grader/scripts on the path)

CI_BUILD = "build/gallery-ci"
ENTRIES = g.entries()
NAMES = [e.name for e in ENTRIES]
DISPOSITIONS = {"passed", "failed", "out_of_bounds", "crashed", "timed_out", "not_implemented", "rejected",
                "no_gpu", "skipped"}
STAGES = registry.stage_names()


@pytest.fixture(scope="session")
def ci_builds():
    """Every entry's CI build (what it needs compiled) and scan, built concurrently once (after the
    grader's shared inputs of the symbol check, which every entry's build would otherwise race for)."""
    shared = [g.grader_build(CI_BUILD) / "submission_exports.o", g.grader_build(CI_BUILD) / "protected-symbols.json"]
    proc = g.make(CI_BUILD, g.GALLERY / "well_behaved", shared)
    assert proc.returncode == 0, proc.stdout[-3000:]
    jobs = max(1, os.cpu_count() or 1)
    with ThreadPoolExecutor(jobs) as pool:
        done = dict(zip(NAMES, pool.map(lambda e: g.build_ci(CI_BUILD, e, jobs=1), ENTRIES)))
    return done


def test_the_gallery_has_the_entries_the_issue_asks_for():
    wanted = {"calls_grader", "library_gemm_alias", "defines_clock", "defines_cuda_event", "defines_nvml",
              "defines_malloc", "defines_curand", "weak_definition", "raw_syscalls",
              "library_gemm", "lower_precision", "bench_shape_special", "exits", "kills_parent", "fake_output",
              "sleeps", "gpu_memory_hog", "leaks_memory", "device_reset", "forks", "writes_outside",
              "reads_others", "tampers_grader", "missing_instantiation", "printf_flood", "huge_shared",
              "huge_static_shared", "no_launch", "static_constructor", "well_behaved",
              # code a stage's own file does not hold, and the exploits other kernel judges published
              "tensor_by_pointer", "loads_code_from_data", "cached_answer", "fingerprint_cache", "warmup_then_copy",
              "batches_calls", "graph_replay", "host_threads", "host_side_work", "sparse_write"}
    assert wanted <= set(NAMES)


def test_the_quick_sample_holds_the_control_and_what_only_the_gpu_shows():
    """`make test` sweeps the entries marked quick on a GPU: the control must be among them, and each
    of them must build and pass the symbol check (a scan verdict is already proven here, without a
    GPU, so a quick entry is one whose disposition only a run shows)."""
    quick = [e for e in ENTRIES if e.expected.get("quick")]
    assert any(e.expected.get("control") for e in quick), "the control is not in the quick sample"
    assert 3 <= len(quick) < len(ENTRIES) // 2, [e.name for e in quick]
    for e in quick:
        assert e.expected["build"]["ok"] and not e.expected.get("scan"), e.name


def test_the_quick_sample_grades_at_the_smallest_scoring_shape_with_the_courses_rubric(tmp_path):
    """`make test`'s quick sample grades at the gallery configuration's smallest scoring shape (2048³),
    the full gallery at all of them; both with the rubric of course.toml, where it lives."""
    import tomllib
    import run_gallery
    full = tomllib.loads(Path(run_gallery.with_rubric(Path("tests/gallery/gallery.toml"), tmp_path)).read_text())
    quick = tomllib.loads(Path(run_gallery.with_rubric(Path("tests/gallery/gallery.toml"), tmp_path, quick=True)).read_text())
    assert [s["shape"] for s in full["scoring"]["shapes"]] == ["4096x4096x4096", "2048x2048x2048"]
    assert [s["shape"] for s in quick["scoring"]["shapes"]] == ["2048x2048x2048"]
    assert quick["bench"]["shapes"] == ["2048x2048x2048"]
    course = tomllib.loads((ROOT / "course.toml").read_text())
    assert quick["scoring"]["stages"] == full["scoring"]["stages"] == course["scoring"]["stages"]
    # course.toml itself, its comments and all (the GPU tests whose claim holds at any size grade so)
    smallest = tomllib.loads(run_gallery.smallest_shape_only((ROOT / "course.toml").read_text()))
    assert [s["shape"] for s in smallest["scoring"]["shapes"]] == ["2048x2048x2048"]
    assert smallest["bench"]["shapes"] == ["2048x2048x2048"]
    assert smallest["scoring"]["stages"] == course["scoring"]["stages"]


@pytest.mark.parametrize("name", NAMES)
def test_entry_is_a_complete_submission_with_expectations(name):
    e = g.Entry(g.GALLERY / name)
    assert sorted(p.name for p in e.path.glob("*.cu")) == sorted(f"{s}.cu" for s in STAGES)
    readme = (e.path / "README.md").read_text()
    assert "What it does" in readme or "what it does" in readme.lower()
    assert "must conclude" in readme.lower() or "grader" in readme.lower()
    x = e.expected
    assert x.get("summary")
    assert isinstance(x.get("build"), dict) and "ok" in x["build"]
    for stage, symbols in x.get("scan", {}).items():
        assert stage in STAGES and symbols, (stage, symbols)
    for table in ("check", "grade"):
        if table not in x:
            assert not x["build"]["ok"] or table == "grade", f"{name} has no {table} table"
            continue
        covered = {k.split("/")[0] for k in x[table]}
        assert covered == set(STAGES), f"{name}: the {table} table must say what happens to every stage " \
                                       f"(other stages intact), missing {set(STAGES) - covered}"
        for key, value in x[table].items():
            assert g.allowed(value) <= DISPOSITIONS, (key, value)
    for key in x.get("xfail", {}):
        assert key == "marker" or key.split(":")[0] in ("check", "grade"), key


@pytest.mark.parametrize("name", [e.name for e in ENTRIES if e.builds])
def test_entry_compiles_and_scan_rejects_what_it_should(name, ci_builds):
    proc, result = ci_builds[name]
    assert proc.returncode == 0, proc.stdout[-3000:]
    problems = g.compare_scan(g.Entry(g.GALLERY / name), result)
    assert not problems, problems


@pytest.mark.parametrize("name", [e.name for e in ENTRIES if e.expected["build"].get("rejected")])
def test_a_file_that_does_not_compile_or_lacks_an_entry_point_is_left_out_with_the_fix(name, ci_builds):
    """The build goes on (make -k is not what saves it: the stage compile never fails), and the verdict
    says what to fix: the compiler's first error, or the explicit instantiation to add."""
    e = g.Entry(g.GALLERY / name)
    proc, result = ci_builds[name]
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert not g.compare_scan(e, result), g.compare_scan(e, result)
    for stage in e.expected["build"]["rejected"]:
        compiled = (g.sub_build(CI_BUILD, e.path) / "stages" / f"{stage}.o").exists()
        assert compiled == bool(e.expected["build"].get("scan_missing")), proc.stdout[-2000:]


def test_make_scan_names_the_missing_instantiation_and_the_line_to_add(ci_builds):
    """`make scan` prints one verdict per stage file, each time; a missing instantiation no longer stops
    the build: unrolled/double is rejected with the line to add."""
    e = g.Entry(g.GALLERY / "missing_instantiation")
    proc = g.make(CI_BUILD, e.path, ["scan"], jobs=2)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "unrolled/double will be rejected: unrolled.cu does not define gemm_unrolled<double>" in proc.stdout
    assert "template Status gemm_unrolled<double>(const GemmProblem<double>&);" in proc.stdout


def test_tensor_cores_outside_the_tensor_stage_are_refused_at_build_time_with_the_rule(ci_builds):
    """unrolled's own FP16 WMMA kernel and reuse's call into the tensor stage's 3xTF32 kernel are refused by
    the tensor-core rule (the machine code, not a symbol), naming the kernel, the instructions and where such
    code belongs; tensor.cu itself stays in the library."""
    proc, result = ci_builds["tensor_cores_outside_tensor"]
    assert result["tensor_core_check"]["ran"], result["tensor_core_check"]
    unrolled, reuse = result["stages"]["unrolled"], result["stages"]["reuse"]
    assert unrolled["rules"] == ["tensor_cores"] and reuse["rules"] == ["tensor_cores"]
    assert "its kernel half_wmma_kernel<" in unrolled["problem"] and "HMMA" in unrolled["problem"]
    assert "reuse.cu calls into tensor.cu, whose kernel split_tf32_kernel runs HMMA" in reuse["problem"]
    for verdict in (unrolled, reuse):
        assert "Only the tensor stage (tensor.cu) may use the tensor cores" in verdict["problem"]
        assert "Put such code in tensor.cu" in verdict["problem"] and "tensor-core rule" in verdict["problem"]
    assert result["files"]["tensor.cu"]["linked"] and not result["files"]["reuse.cu"]["linked"]
    assert "tensor" not in result["stages"]


def test_a_stage_cannot_reach_another_stages_kernel_through_a_pointer(grader):
    """tensor_by_pointer: reuse.cu calls through a pointer that tensor.cu's static initializer fills with
    the tensor stage's 3xTF32 entry point. No name reaches tensor.cu from reuse.cu, so the symbol check
    accepts every file — and reuse's library, linked from exactly the files the check read for reuse,
    holds neither tensor.cu's kernel nor its initializer: in reuse's runner the pointer stays null.
    tensor's library holds reuse.cu (it names the pointer) next to its own kernel."""
    build = Path(grader).parent.parent
    entry = g.GALLERY / "tensor_by_pointer"
    sb = g.sub_build(build, entry)
    proc = g.make(build, entry, [sb / "gemmlab"])
    assert proc.returncode == 0, proc.stdout[-3000:]
    scan = json.loads((sb / "symbols.json").read_text())
    assert scan["stages"] == {} and scan["missing"] == [], scan["stages"]
    assert scan["tensor_core_check"]["ran"], scan["tensor_core_check"]
    libraries = {stage: sorted(Path(o).stem for o in objects) for stage, objects in scan["libraries"].items()}
    assert libraries["reuse"] == ["naive", "reuse"] and libraries["tensor"] == ["naive", "reuse", "tensor"], libraries
    assert libraries["unrolled"] == ["unrolled"] and set(libraries) == set(STAGES), libraries

    def defined(stage):
        return subprocess.run(["nm", "-C", "--defined-only", str(sb / f"libgemmlab-submission-{stage}.so")],
                              capture_output=True, text=True, check=True).stdout

    reuse, tensor = defined("reuse"), defined("tensor")
    assert "fast_float_gemm" in reuse and "gemm_naive<double>" in reuse
    for name in ("split_tf32_kernel", "gemm_tensor", "_tensor.cudafe1.cpp"):  # the last: its static initializer
        assert name not in reuse, f"{name} is in reuse's library"
        assert name in tensor, f"{name} is not in tensor's library"


def test_no_submission_code_runs_in_the_grader_parent(grader):
    """The judge, `gemmlab`, holds no submission code, so a stage file's static constructor (gallery
    entry static_constructor, in unrolled.cu) cannot run in it; neither does `gemmlab-stages` itself:
    each stage lives in a library of its own, which gemmlab-stages opens on that stage's first use —
    there the constructor is live (run here without the sandbox, with or without a GPU), and only there:
    running another stage loads nothing of unrolled.cu."""
    build = Path(grader).parent.parent
    entry = g.GALLERY / "static_constructor"
    sb = g.sub_build(build, entry)
    proc = g.make(build, entry, [sb / "gemmlab"])
    assert proc.returncode == 0, proc.stdout[-3000:]
    parent, runner, library = sb / "gemmlab", sb / "gemmlab-stages", sb / "libgemmlab-submission-unrolled.so"

    def submission_symbols(binary):
        nm = subprocess.run(["nm", "-C", str(binary)], capture_output=True, text=True, check=True).stdout
        return [line for line in nm.splitlines() if "gemmlab::submission::gemm_" in line]

    assert submission_symbols(parent) == []
    assert submission_symbols(runner) == []
    assert submission_symbols(library), "the stage's library should hold its entry points"
    exported = subprocess.run(["nm", "-D", "--defined-only", str(library)], capture_output=True, text=True,
                              check=True).stdout.split()
    assert "gemmlab_submission_abi" in exported and not any("gemmlab10submission" in s for s in exported), \
        "the library exports one symbol"

    def marker_after(*cmd):
        p = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out, _ = p.communicate(timeout=60)
        marker = Path(f"/tmp/gemmlab-gallery-unsandboxed-{p.pid}")
        found = marker.exists()
        marker.unlink(missing_ok=True)
        return found, out

    found, out = marker_after(parent, "list")
    assert "tiled" in out and not found, "submission code ran in the grader's parent"
    # `run --stage tiled` asks tiled's library for its first variant before anything of CUDA: nothing of
    # unrolled.cu is in it
    found, out = marker_after(runner, "run", "--stage", "tiled", "--prec", "float")
    assert "ran tiled/8" in out or "gemmlab-stages needs an NVIDIA GPU" in out, out
    assert not found, "unrolled.cu's constructor ran in a runner of another stage"
    found, out = marker_after(runner, "run", "--stage", "unrolled", "--prec", "float")
    assert "ran unrolled" in out or "gemmlab-stages needs an NVIDIA GPU" in out, out
    assert found, "the constructor did not run when gemmlab-stages loaded unrolled's library: the test proves nothing"


def test_a_stage_that_calls_the_grader_or_defines_a_clock_is_rejected_by_name(grader):
    """Two submissions, built as `make grade` builds them: one whose unrolled.cu calls the grader's own
    cuBLAS helper, one whose unrolled.cu defines clock_gettime. Both stages are rejected with the
    symbol named, their files are left out of the submission's library, and every other stage of the
    submission is still in it."""
    build = Path(grader).parent.parent
    for name, symbol, rule in (("calls_grader", "gemmlab::reference_dgemm", "grader_internal"),
                               ("defines_clock", "clock_gettime", "defines_protected")):
        entry = g.GALLERY / name
        sb = g.sub_build(build, entry)
        # The verdict is printed when the symbol check runs: make it run even where an earlier
        # `make test` left this build behind.
        (sb / "symbols.json").unlink(missing_ok=True)
        proc = g.make(build, entry, [sb / "gemmlab"])
        assert proc.returncode == 0, proc.stdout[-3000:]
        assert f"stage unrolled will be rejected: unrolled.cu" in proc.stdout and symbol in proc.stdout, proc.stdout[-3000:]
        scan = json.loads((sb / "symbols.json").read_text())
        assert list(scan["stages"]) == ["unrolled"]
        verdict = scan["stages"]["unrolled"]
        assert symbol in verdict["problem"] and rule in verdict["rules"], verdict
        assert "What a stage may call" in verdict["problem"]
        def linked(stage):
            return subprocess.run(["nm", "-C", "--defined-only", str(sb / f"libgemmlab-submission-{stage}.so")],
                                  capture_output=True, text=True, check=True).stdout
        assert "gemm_unrolled" not in linked("unrolled") and symbol.split("::")[-1] not in linked("unrolled")
        assert "gemm_naive" in linked("naive") and "gemm_reuse" in linked("reuse")


FAKE_GRADER = '''#!{python}
"""A stand-in for gemmlab: reports, for the entry whose build directory it sits in, exactly what
that entry's expected.json allows (first choice), so the sweep's own logic can be tested without a GPU."""
import json, sys
from pathlib import Path
sys.path.insert(0, {gallery!r})
import gallery_lib as g
entry = g.Entry(g.GALLERY / Path(__file__).resolve().parent.name.rsplit("-", 1)[0][len("sub-"):])
args = sys.argv[1:]
runs = [(s, v) for s in ("naive", "unrolled", "pitched", "reuse") for v in [""]] + [("tiled", v) for v in ("8", "16", "32")] \
    + [("tensor", v) for v in ("fp16", "tf32", "3xtf32")]
def results(table):
    out = []
    for stage, variant in runs:
        for prec in g.PRECISIONS:
            r = {{"stage": stage, "variant": variant, "precision": prec, "problem": "", "process": {{"output_tail": ""}}}}
            keys = [k for k in table if g.key_matches(k, r)]
            best = max(keys, key=lambda k: g.key_matches(k, r))
            r["disposition"] = sorted(g.allowed(table[best]))[0]
            r["problem"] = " ".join(t for k, t in entry.expected.get("problem_contains", {{}}).items() if g.key_matches(k, r))
            out.append(r)
    return out
if args[:2] == ["grade", "--help"]:
    print("--config --out --seed --symbols"); sys.exit(0)
if args[0] == "check":
    Path(args[args.index("--json") + 1]).write_text(json.dumps({{"results": results(entry.expected["check"])}}))
if args[0] == "grade":
    out = Path(args[args.index("--out") + 1]); out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({{"results": results(entry.expected["grade"])}}))
sys.exit(0)
'''


def test_the_sweep_logic_with_a_stand_in_grader(tmp_path, ci_builds):
    """run_gallery.py's run phase end to end, with a fake gemmlab that answers what each entry
    expects: every comparison, the control's untouched results and the summary work without a GPU."""
    build = tmp_path / "build"
    names = ["well_behaved", "exits", "fake_output", "library_gemm", "missing_instantiation"]
    (build / "grader").parent.mkdir(parents=True, exist_ok=True)
    (build / "grader").symlink_to(g.grader_build(ROOT / CI_BUILD))  # the symbol check's shared inputs
    for name in names:
        e = g.Entry(g.GALLERY / name)
        sb = g.sub_build(build, e.path)
        (sb / "stages").mkdir(parents=True)
        ci = g.sub_build(ROOT / CI_BUILD, e.path)
        for obj in (ci / "stages").glob("*.o"):
            (sb / "stages" / obj.name).symlink_to(obj)
        if e.builds:
            fake = sb / "gemmlab"
            fake.write_text(FAKE_GRADER.format(python=sys.executable, gallery=str(g.GALLERY)))
            fake.chmod(0o755)
        (build / "results" / name).mkdir(parents=True)
        (build / "results" / name / "build.log").write_text("")
    proc = subprocess.run([sys.executable, str(g.GALLERY / "run_gallery.py"), "--phase", "run", "--build", str(build),
                           "--only", ",".join(names)], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    summary = json.loads((build / "results" / "summary.json").read_text())
    assert summary["failures"] == []
    assert summary["complete"] is True
    # each entry's verdict is printed as soon as it is known
    for i, name in enumerate(sorted(names, key=lambda n: n != "well_behaved"), 1):
        assert f"  -> {name}: " in proc.stdout and f"({i} of {len(names)} entries)" in proc.stdout
    assert "  -> exits: 0 as expected" not in proc.stdout
    verdicts = {(r["entry"], r["what"]): r["verdict"] for r in summary["rows"]}
    assert verdicts[("well_behaved", "results files unchanged")] == "OK"
    assert verdicts[("exits", "check unrolled/float")] == "OK"
    assert verdicts[("fake_output", "check unrolled/double")] == "OK"  # rejected: the report key
    assert verdicts[("missing_instantiation", "check unrolled/double")] == "OK"  # rejected: no instantiation
