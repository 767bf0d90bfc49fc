"""The student handout (grader/scripts/handout.py; docs/handout.md).

- Cheap tests of what is selected to ship and of the stubs (no build).
- `make handout-check` end to end (CI; a few minutes on 2 cores): builds the handout into a
  temporary directory, unpacks its tarball afresh, builds it, runs its tests, and scans it for
  solution text. GEMMLAB_SKIP_HANDOUT=1 skips it for quick local runs.
- On a GPU (`gpu` marker): in an unpacked handout, checking the stubs gives not_implemented for
  every stage but naive; and with the reference sources copied into student/ the handout gets full
  marks, with the compiled reference library's GFLOPS beside them.

These tests need the instructor repository (reference/*.cu) and never ship in a handout.
"""
import datetime as dt
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from support import gpu_prebuild
from support.gpu import gpu
from support.paths import ROOT

pytestmark = pytest.mark.skipif(not list((ROOT / "reference").glob("*.cu")),
                                reason="needs the instructor repository (reference/*.cu)")


load_handout_module = gpu_prebuild.load_handout_module
run = gpu_prebuild.run  # a command with no make state of a `make test` that runs us, output shown


# ---- cheap: what ships -------------------------------------------------------------------------

def test_selection_never_ships_solutions_or_instructor_tests():
    handout = load_handout_module()
    cfg = handout.load_config(ROOT / "course.toml")
    files, _ = handout.select_files(cfg)
    assert "Makefile" in files and "course.toml" in files and "student/naive.cu" in files
    for rel in files:
        assert not rel.startswith("reference/"), rel
        assert not rel.startswith(("tests/broken/", "tests/gallery/")), rel
        assert not rel.startswith("tests/py/handout/"), rel
        assert rel not in ("grader/scripts/handout.py", "docs/handout.md", "docs/instructor-guide.md",
                       "docs/instructor-setup.md", "docs/instructor-term.md", "docs/instructor-grading.md",
                       "docs/security.md"), rel
        assert "__pycache__" not in rel, rel


def test_config_errors_name_the_key(tmp_path):
    handout = load_handout_module()
    bad = tmp_path / "course.toml"
    bad.write_text('[course]\nname = "x"\n[handout]\narchs = ["90"]\n')
    with pytest.raises(handout.HandoutError, match=r"\[handout\] archs"):
        handout.load_config(bad)


def test_gencode_has_sass_per_arch_and_ptx_for_the_highest():
    handout = load_handout_module()
    flags = handout.gencode_flags(["sm_80", "sm_90"], ptx=True)
    assert flags == ["-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90a,code=sm_90a",
                     "-gencode", "arch=compute_90,code=compute_90"]


def test_the_check_finds_every_configured_arch_in_the_library(tmp_path):
    """What `handout check` reads of the shipped library (check_archs): machine code for each of the
    course's archs and PTX for the highest, as gencode_flags asks nvcc for them; an arch missing from
    the library, or PTX where none was asked for, fails. (make handout-check in the suite builds the
    library for one arch: this is the packing of several, on a kernel that compiles in seconds.)"""
    handout = load_handout_module()
    archs = ["sm_75", "sm_80", "sm_90"]
    source = tmp_path / "k.cu"
    source.write_text("__global__ void k(float* p) { p[threadIdx.x] *= 2.0f; }\n")
    lib = tmp_path / handout.REF_LIB
    lib.parent.mkdir(parents=True)
    nvcc = handout.cuda_home() / "bin" / "nvcc"
    subprocess.run([str(nvcc), *handout.gencode_flags(archs, ptx=True), "-c", str(source), "-o", str(lib)],
                   check=True, capture_output=True)

    def check(manifest):
        rep = handout.Report()
        handout.check_archs(rep, tmp_path, manifest)
        return rep

    rep = check({"archs": archs, "ptx": True})
    assert not rep.failed, rep.rows
    assert rep.rows[0][2] == "SASS sm_75, sm_80, sm_90; PTX compute_90"
    assert check({"archs": [*archs, "sm_86"], "ptx": True}).failed  # sm_86 has no machine code here
    assert check({"archs": archs, "ptx": False}).failed  # PTX nobody asked for ships readable code


def test_solution_scan_catches_copied_reference_code_but_not_the_stubs():
    handout = load_handout_module()
    distinctive = handout.distinctive_reference_lines()
    for src in sorted((ROOT / "reference").glob("*.cu")):
        if src.name == "naive.cu":
            continue  # the baseline ships complete: its lines are public
        hits = [l for l in src.read_text().splitlines() if handout.normalize(l) in distinctive]
        assert len(hits) >= 10, f"{src.name}: the scan would not notice a copy of it"
    for stub in sorted((ROOT / "student").glob("*.cu")):
        shared = [(n, l) for n, l in enumerate(stub.read_text().splitlines(), 1)
                  if handout.normalize(l) in distinctive]
        assert not shared, f"{stub.name} shares lines with the reference: {shared[:3]}"


def test_the_shipped_docs_name_only_sections_the_handouts_readme_has():
    """A student reads the handout's README (grader/scripts/handout/README.md.in), not the repository's:
    a shipped doc that sends them to a README section must name one that README has."""
    handout = load_handout_module()
    readme = (ROOT / "grader" / "scripts" / "handout" / "README.md.in").read_text()
    sections = set(re.findall(r"^#+ (.+)$", readme, re.M))
    for doc in handout.load_config(ROOT / "course.toml")["docs"]:
        text = " ".join((ROOT / "docs" / doc).read_text().split())
        for named in re.findall(r"README(?:\.md)?'s \"([^\"]+)\"", text):
            assert named in sections, f"docs/{doc} sends students to the README's \"{named}\", which the handout's lacks"
        assert "README's" not in text or re.search(r"README(?:\.md)?'s \"", text), f"docs/{doc}: which README section?"


def test_every_link_of_the_handouts_docs_leads_inside_it(tmp_path):
    """The handout's files as make handout writes them (the compiled reference aside): every relative link
    of a shipped Markdown file, and every doc it names by path (docs/<name>.md), is a file of the handout;
    handout check fails on one that is not."""
    handout = load_handout_module()
    tree = tmp_path / "handout"
    handout.write_tree(handout.load_config(ROOT / "course.toml"), tree)
    assert handout.broken_links(tree) == []
    (tree / "docs" / "timing.md").write_text("see [the notes](PERFORMANCE.md) and docs/gallery.md\n")
    assert handout.broken_links(tree) == ["docs/timing.md -> PERFORMANCE.md", "docs/timing.md -> docs/gallery.md"]


def test_the_readme_shows_the_deadline_in_the_courses_time_zone_and_where_the_reference_runs():
    handout = load_handout_module()
    cfg = dict(handout.load_config(ROOT / "course.toml"), deadline=dt.datetime.fromisoformat("2026-12-04T23:59:00-08:00"))
    readme = handout.render_readme(cfg, "2026-11-27T00:00:00Z", "sm_90")
    assert "Deadline: **2026-12-05T07:59:00Z (2026-12-04 23:59 -08:00, the course's time)**" in readme
    assert "same program" not in readme and "never hold the reference" in readme


def test_the_handout_carries_the_header_libraries_and_their_licences(tmp_path):
    """A student's machine needs no package of the grader's header-only libraries: make handout copies them
    (with their licences) into grader/third_party, and the handout's Makefile compiles with them."""
    handout = load_handout_module()
    unlicensed = [package for _, package in handout.THIRD_PARTY
                  if not (Path("/usr/share/doc") / package / "copyright").is_file()]
    if unlicensed:  # headers carried without their packages (a lent GPU machine): nothing the handout may ship
        pytest.skip(f"the header libraries' packages are not installed here ({', '.join(unlicensed)}): "
                    "make handout leaves out what it has no licence for")
    tree = tmp_path / "handout"
    files, _ = handout.write_tree(handout.load_config(ROOT / "course.toml"), tree)
    for header in ("doctest/doctest.h", "nlohmann/json.hpp", "CLI/CLI.hpp", "toml++/toml.h"):
        assert f"grader/third_party/include/{header}" in files, header
    for name, _ in handout.THIRD_PARTY:
        assert "Copyright" in (tree / "grader/third_party/licences" / f"{name}.txt").read_text(errors="replace"), name
    def cxxflags(*more):
        out = subprocess.run(["make", "--no-print-directory", "-f", "Makefile", "-f", "cluster/make-vars.mk",
                              "print-cluster-vars", *more], cwd=tree, capture_output=True, text=True)
        return next(line for line in out.stdout.splitlines() if line.startswith("CXXFLAGS="))
    # a machine without them (no /usr/include copies): the handout's own
    assert "-isystem grader/third_party/include" in cxxflags(f"SYSTEM_INCLUDE={tmp_path}/none")
    headers_here = all((Path("/usr/include") / h).is_file() for h in
                       ("doctest/doctest.h", "nlohmann/json.hpp", "CLI/CLI.hpp", "toml++/toml.h"))
    assert ("third_party" in cxxflags()) != headers_here  # the system's where it has all four


def test_the_handouts_own_make_takes_none_of_the_calling_makes_variables(monkeypatch):
    """make handout-check CONFIG=<the instructor's file> puts CONFIG in the environment too: the unpacked
    handout's make (its build, its tests' makes) must read the handout's own course.toml."""
    handout = load_handout_module()
    monkeypatch.setenv("MAKEFLAGS", "s -- HANDOUT_NO_GPU=1 CONFIG=/x/course.toml DIST=/x\\ y")
    for name, value in (("CONFIG", "/x/course.toml"), ("DIST", "/x y"), ("HANDOUT_NO_GPU", "1"), ("HOME", "/root")):
        monkeypatch.setenv(name, value)
    env = handout.clean_env()
    assert not {"CONFIG", "DIST", "HANDOUT_NO_GPU", "MAKEFLAGS"} & set(env) and env["HOME"] == "/root"


def test_stubs_are_tagged_and_not_implemented():
    stubs = [p for p in sorted((ROOT / "student").glob("*.cu")) if p.name != "naive.cu"]
    assert [p.stem for p in stubs] == ["pitched", "reuse", "tensor", "tiled", "unrolled"]
    for p in stubs:
        text = p.read_text()
        assert "TODO(student):" in text, p.name
        assert "return Status::not_implemented;" in text, p.name
        assert "Written = false;" in text, p.name  # the switch a student flips once the kernel is written


# ---- CI: make handout-check --------------------------------------------------------------------

def test_make_handout_check(tmp_path):
    if os.environ.get("GEMMLAB_SKIP_HANDOUT"):
        pytest.skip("GEMMLAB_SKIP_HANDOUT is set")
    # --no-gpu: the handout's own GPU tests would repeat what the GPU tests below prove, on the one GPU
    # a drop box make handout accepts; the library for the course's first GPU only (packing several:
    # test_the_check_finds_every_configured_arch_in_the_library)
    config = gpu_prebuild.handout_config(tmp_path, first_arch_only=True)
    # HANDOUT_TESTED_HERE: the report's tests, which this suite runs on the same files, stay out of the
    # handout's own make test while they and what they read are byte for byte this checkout's
    proc = run(["make", "--no-print-directory", "handout-check", f"DIST={tmp_path}", f"CONFIG={config}",
                "HANDOUT_NO_GPU=1", "HANDOUT_TESTED_HERE=1"], cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-6000:]
    assert "the handout is fit to hand out" in proc.stdout
    # the handout's own tests pass with a working stage in student/, as once a student has written one
    assert re.search(r"ok +its tests pass once a student has written a stage \(make test, with reference/tiled\.cu "
                     r"in student/\)", proc.stdout), proc.stdout[-3000:]
    assert "left out: test_report.py, test_report_provenance.py, test_report_reading.py" in proc.stdout, proc.stdout[-3000:]


def test_the_report_tests_are_left_out_of_the_handouts_only_while_what_they_read_is_the_same(tmp_path):
    """What `handout check --tested-here` compares: a changed byte in anything the report's tests read,
    or a [report] table of its own, and they run in the handout too."""
    handout = gpu_prebuild.load_handout_module()
    tree = tmp_path / "tree"
    for rel in handout.TESTED_HERE + handout.TESTED_HERE_READS + ["course.toml"]:
        src, dst = ROOT / rel, tree / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("build", "report.pdf", "__pycache__"))
        else:
            shutil.copy2(src, dst)
    assert handout.same_report_tests(tree) == ""
    figures = tree / "report" / "report_figures.py"
    figures.write_text(figures.read_text() + "\n")
    assert handout.same_report_tests(tree) == "report"
    shutil.copy2(ROOT / "report" / "report_figures.py", figures)
    (tree / "student" / "extra.cu").write_text("// a file the checkout does not have\n")
    assert handout.same_report_tests(tree) == "student"
    (tree / "student" / "extra.cu").unlink()
    (tree / "grader" / "scripts" / "gpu_peaks.py").unlink()
    assert handout.same_report_tests(tree) == "grader/scripts/gpu_peaks.py"
    shutil.copy2(ROOT / "grader" / "scripts" / "gpu_peaks.py", tree / "grader" / "scripts" / "gpu_peaks.py")
    config = tree / "course.toml"
    config.write_text(config.read_text().replace("[report]", "[report]\nextra_key = 1", 1))
    assert handout.same_report_tests(tree) == "course.toml [report]"


# ---- GPU: grading inside an unpacked handout ----------------------------------------------------

@pytest.fixture(scope="module")
def handout_trees():
    """(the unpacked handout, built; a copy with the reference sources in student/, built), made in
    the background while the GPU tests before these ran (support/gpu_prebuild.py)."""
    return gpu_prebuild.result("handout")


@gpu
def test_handout_checks_stubs_as_not_implemented(handout_trees):
    # `make check`, not `make grade`: what the stubs report needs no timing (the one timed grade of
    # the handout is the full-marks one below, which also times the compiled reference).
    unpacked, _ = handout_trees
    proc = run(["make", "check"], cwd=unpacked)
    results = unpacked / "results" / "student" / "check.json"
    assert results.exists(), proc.stdout[-4000:]
    rows = json.loads(results.read_text())["results"]
    assert rows, "no check results"
    for row in rows:
        if row["stage"] == "naive":
            assert row["disposition"] == "passed", row
        else:
            assert row["disposition"] == "not_implemented", row


@gpu
def test_handout_with_the_reference_sources_gets_full_marks(handout_trees):
    # the handout's build was kept, as a student's is when they edit their files: only the stage
    # files compiled again (gpu_prebuild.build_handout)
    _, tree = handout_trees
    # at the smallest scoring shape: full marks are a % of the reference's own speed in the same run
    config = gpu_prebuild.smallest_scoring_shape(tree / "course.toml", tree)
    proc = run(["make", "grade", f"CONFIG={config}"], cwd=tree)
    results = tree / "results" / "student" / "results.json"
    assert results.exists(), proc.stdout[-4000:]
    doc = json.loads(results.read_text())
    score = doc["score"]
    extra = sum(r["correctness_max"] + r["performance_max"] for r in score["stages"] if r["extra_credit"])
    assert score["total"] == pytest.approx(score["max"] + extra, rel=1e-6), json.dumps(score["stages"], indent=1)[:4000]
    # The handout's compiled reference library was timed in the same run: every reference stage has a speed.
    reference = doc.get("reference", [])
    assert reference, "results.json has no reference timings ([scoring] measure_reference?)"
    for r in reference:
        speeds = [b.get("gflops") or 0 for b in r.get("bench", [])]
        assert speeds and all(s > 0 for s in speeds), r


def test_tuning_names_are_read_from_every_part_of_a_library(tmp_path):
    """A kernel whose template arguments spell a tile shape is found by the handout's check, in the
    host symbols, the device code and the names the runtime registers; neutral names pass."""
    handout = load_handout_module()
    src = tmp_path / "k.cu"
    src.write_text("namespace gemmlab { template <int BM, int BN> struct Config {};\n"
                   "struct Neutral {};\n"
                   "template <typename C> __global__ void gemm_kernel(float* p) { p[0] = 1; }\n"
                   "void launch(float* p) { gemm_kernel<Config<128, 64>><<<1, 1>>>(p);"
                   " gemm_kernel<Neutral><<<1, 1>>>(p); } }\n")
    nvcc = handout.cuda_home() / "bin" / "nvcc"
    subprocess.run([str(nvcc), "-c", str(src), "-o", str(tmp_path / "k.o"), "-arch=sm_80"], check=True)
    subprocess.run(["ar", "rcs", str(tmp_path / "lib.a"), str(tmp_path / "k.o")], check=True)
    names, refused = handout.library_symbol_names(tmp_path / "lib.a")
    bad = refused(names)
    assert any("Config<128, 64>" in n for n in bad), bad
    assert not any("Neutral" in n for n in bad), bad
    assert any("Neutral" in n for n in names), sorted(names)[:20]
