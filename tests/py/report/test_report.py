"""The lab report (report/make_report.py): rendered from the committed fixture results
(tests/fixtures/report) and checked in the PDF itself — the table numbers, a Chinese sentence, every
figure embedded, no missing glyph, the measurement metadata — plus the cases a student meets: no
stage implemented yet, a broken report.md, no pandoc on the GPU node, reusing fresh measurements.

Needs pandoc + xelatex + poppler-utils and matplotlib (`make setup`); tests that need them are
skipped, with the reason, where they are missing. No GPU needed: measuring is tested with a fake
grader; the one real-GPU test is marked `gpu`.
"""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from support.gpu import HAS_GPU, gpu
from support.paths import ROOT
from support.reports import (FIXTURES, HAS_MPL, MAKE_REPORT, REPORT, fake_grader, make_report, missing_tools,
                             needs_mpl, needs_render, pdf_text, squeeze)

sys.path.insert(0, str(REPORT))

from report_data import (RESULTS_SCHEMA, ReportError, ReportSet, load_dataset,  # noqa: E402
                         load_report_set)
from report_render import unanswered  # noqa: E402


def fixture_copy(tmp_path, edit=None):
    """A copy of the fixture results; edit(doc) may change each bench/grade file."""
    out = tmp_path / "results"
    shutil.copytree(FIXTURES, out, ignore=shutil.ignore_patterns("*.md"))
    if edit:
        for path in out.glob("*.json"):
            doc = json.loads(path.read_text())
            if doc.get("schema") == RESULTS_SCHEMA and "kind" in doc:
                edit(path, doc)
                if path.exists():
                    path.write_text(json.dumps(doc))
    return out


# ---- the fixture itself ----------------------------------------------------------------------

def test_fixture_files_follow_the_results_schema():
    files = sorted(FIXTURES.glob("bench-*.json"))
    assert files, "tests/fixtures/report has no bench-*.json"
    for path in files + sorted(FIXTURES.glob("grade.json")):  # a grade is optional
        doc = json.loads(path.read_text())
        assert doc["schema"] == RESULTS_SCHEMA, path
        assert doc["kind"] in ("bench", "grade"), path
        for key in ("created", "submission", "seed", "environment", "results"):
            assert key in doc, f"{path.name}: no {key}"
        env = doc["environment"]
        for key in ("cuda_runtime", "driver_version", "gpu", "clocks"):
            assert key in env, f"{path.name}: environment has no {key}"
        for key in ("name", "sms", "max_sm_clock_mhz", "compute_capability"):
            assert key in env["gpu"], f"{path.name}: environment.gpu has no {key}"
        for r in doc["results"]:
            for key in ("stage", "variant", "precision", "disposition", "problem"):
                assert key in r, f"{path.name}: a result has no {key}"
            for b in r.get("bench", []):
                for key in ("shape", "disposition", "gflops", "time_ms", "spread_pct", "x_naive",
                            "pct_cublas", "sm_clock_mhz"):
                    assert key in b, f"{path.name}: a bench entry has no {key}"
        if doc["kind"] == "grade":
            assert {"total", "max", "stages"} <= set(doc["score"])
        assert doc.get("baselines"), f"{path.name}: no baselines"


def test_fixture_covers_the_report_set_and_the_registry():
    ds = load_dataset(FIXTURES)
    rs = load_report_set(ROOT / "course.toml")
    names = [s["name"] for s in ds.registry]
    assert names, "registry.json lists no stage"
    for _, _, shapes in rs.groups():
        for prec in rs.precisions:
            for s in ds.registry:
                for v in s["variants"]:
                    r = ds.result(s["name"], v, prec)
                    assert r, f"no result for {s['name']}/{v} {prec}"
                    missing = [sh for sh in shapes if sh not in r.points]
                    assert not missing, f"{s['name']}/{v} {prec}: shapes {missing} not in the fixture"


def test_fixture_registry_is_the_graders(grader):
    listing = subprocess.run([str(grader), "list", "--json"], capture_output=True, text=True, check=True)
    real = json.loads(listing.stdout)["stages"]
    saved = json.loads((FIXTURES / "registry.json").read_text())["stages"]
    assert [(s["name"], s["variants"]) for s in saved] == [(s["name"], s["variants"]) for s in real], \
        "the stage registry changed: refresh tests/fixtures/report (see its README.md)"


# ---- course.toml [report] --------------------------------------------------------------------

def test_report_set_reads_course_toml(tmp_path):
    rs = load_report_set(ROOT / "course.toml")
    assert rs.square_sizes == tuple(sorted(rs.square_sizes))
    assert any(n & (n - 1) for n in rs.square_sizes), "square sizes need non-powers of two"
    assert all(n % 4 for n in rs.odd_sizes), "odd sizes must not be multiples of the vector width"
    assert load_report_set(tmp_path / "absent.toml") == ReportSet()
    bad = tmp_path / "course.toml"
    bad.write_text('[report]\nsquare_size = [256]\n')
    with pytest.raises(ReportError, match="unknown key 'square_size'"):
        load_report_set(bad)
    bad.write_text('[report]\nrect_shapes = ["64x64"]\n')
    with pytest.raises(ReportError, match="'64x64' is not a shape"):
        load_report_set(bad)


def test_template_has_a_section_for_every_stage():
    from report_render import scan_template
    ds = load_dataset(FIXTURES)
    known = {f"stage-{n}" for n in ds.stage_names()} | {
        "environment", "summary", "scores", "table-pitched", "results-all", "fig-square", "fig-tiles",
        "fig-pitched", "fig-rect", "fig-precision", "fig-roofline", "tensor", "fig-tensor", "profiles"}
    assert scan_template(REPORT / "report.md", known, ROOT, ds.stage_names()) == []


# ---- rendering the fixture -------------------------------------------------------------------

@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    if missing_tools or not HAS_MPL:
        pytest.skip("needs pandoc, xelatex, poppler-utils and matplotlib (make setup)")
    build = tmp_path_factory.mktemp("report")
    pdf = build / "report.pdf"
    out = make_report("--from", FIXTURES, "--build", build, "--out", pdf)
    assert out.returncode == 0, out.stdout + out.stderr
    return build, pdf, pdf_text(pdf)


@needs_render
def test_pdf_holds_the_students_numbers(rendered):
    build, pdf, text = rendered
    assert pdf.stat().st_size > 20_000
    rs = load_report_set(ROOT / "course.toml")
    n = rs.headline_size
    checked = 0
    from report_tables import shown_variants
    ds = load_dataset(FIXTURES)
    for path in FIXTURES.glob("bench-*.json"):
        for r in json.loads(path.read_text())["results"]:
            if r["variant"] not in [v for v, _ in shown_variants(ds, r["stage"], r["precision"])]:
                continue  # one kernel for several variants (the tensor stage in double): shown once
            for b in r.get("bench", []):
                if (b["shape"]["M"], b["shape"]["N"], b["shape"]["K"]) == (n, n, n) and b["gflops"]:
                    assert f"{b['gflops']:,.0f}" in text, f"{r['stage']}/{r['variant']} {r['precision']}"
                    checked += 1
    assert checked >= 2
    if (FIXTURES / "grade.json").exists():
        grade = json.loads((FIXTURES / "grade.json").read_text())["score"]
        assert f"{grade['total']:g} / {grade['max']:g}" in text
    for word in ("× naive", "% cuBLAS", "GFLOPS"):
        assert word in text


@needs_render
def test_an_english_report_needs_no_cjk_tex(rendered):
    """The template as handed out has no CJK text outside its comment: no xeCJK, no CJK font (a TeX
    without texlive-lang-chinese renders it)."""
    build, pdf, text = rendered
    tex = (build / "latex" / "report.tex").read_text()
    assert "xeCJK" not in tex and "CJKmainfont" not in tex
    assert "Missing character" not in (build / "latex" / "report.log").read_text(errors="replace")


@needs_render
def test_a_report_with_chinese_text_gets_the_cjk_font_and_no_missing_glyph(tmp_path):
    template = tmp_path / "report.md"
    template.write_text("---\ntitle: x\n---\n\nThe summary. 本报告可以用中文或英文撰写。\n")
    out = make_report("--from", FIXTURES, "--build", tmp_path / "b", "--out", tmp_path / "r.pdf",
                      "--template", template)
    assert out.returncode == 0, out.stderr
    assert "本报告可以用中文或英文撰写" in squeeze(pdf_text(tmp_path / "r.pdf"))
    assert "xeCJK" in (tmp_path / "b" / "latex" / "report.tex").read_text()
    assert "Missing character" not in (tmp_path / "b" / "latex" / "report.log").read_text(errors="replace")


@needs_render
def test_pdf_embeds_every_figure(rendered):
    build, pdf, text = rendered
    figures = sorted((build / "generated" / "figures").glob("*.pdf"))
    assert len(figures) == 7, [f.name for f in figures]
    # TeX wraps its log at 79 characters, inside file names too (where depends on the path's length)
    log = (build / "latex" / "report.log").read_text(errors="replace").replace("\n", "")
    for fig in figures:
        assert re.search(rf"{re.escape(fig.name)}\S*\s+Graphic file|<use [^>]*{re.escape(fig.name)}", log) \
            or fig.name in log, f"{fig.name} is not in the LaTeX log"
    # the text of the figures is in the PDF too (matplotlib writes TrueType text)
    for label in ("matrix size N", "arithmetic intensity", "FP64 tensor-core peak", "shape M×N×K", "cuBLAS TF32"):
        assert label in text, label
    assert text.count("Figure ") >= 7


@needs_render
def test_pdf_names_the_measurement_environment(rendered):
    build, pdf, text = rendered
    env = json.loads((FIXTURES / "bench-float.json").read_text())["environment"]
    run = json.loads((FIXTURES / "report-run.json").read_text())
    commit = run["commit"][:12] if run.get("commit") else "commit unknown"
    for needle in (env["gpu"]["name"], env["driver_version"], f"max {env['gpu']['max_sm_clock_mhz']} MHz", commit):
        assert needle in text, needle
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    assert env["gpu"]["name"] in info and commit in info
    assert "A4" in info


@needs_render
def test_pdf_has_the_tensor_section(rendered):
    """Speed per precision beside cuBLAS in the same precision and true FP32, error per precision."""
    build, pdf, text = rendered
    block = (build / "generated" / "tensor.md").read_text()
    for words in ("% cuBLAS same precision", "% cuBLAS FP32/FP64", "worst error (u·G)", "bound (u·G)",
                  "cuBLAS TF32", "cuBLAS FP16", "Error per precision"):
        assert words in block, words
    flat = squeeze(text)
    assert squeeze("Tensor cores (extra credit)") in flat
    assert squeeze("Error per precision") in flat
    assert "32,800" in text  # the bound of the FP16 and TF32 variants, beside 32 for 3xtf32
    if any(r.get("placeholder") for r in json.loads((FIXTURES / "bench-float.json").read_text())["results"]):
        assert "Placeholder numbers for the tensor stage" in text


def test_the_numbers_that_surprise_are_explained():
    """The example data totals 110 of 100 and its FP64 stages run above the FP64 peak the environment
    names: the summary and the scores say why (extra credit; the FP64 tensor cores, DMMA), and say
    nothing where there is nothing to explain."""
    from report_data import gpu_peaks
    from report_tables import block_environment, block_scores, block_summary, extra_credit_note, fp64_tensor_note
    ds = load_dataset(FIXTURES)
    rs = load_report_set(ROOT / "course.toml")
    grade = ds.grade
    extra = sum(r["correctness"] + r["performance"] for r in grade["stages"] if r["extra_credit"])
    assert grade["total"] > grade["max"] and extra == grade["total"] - grade["max"], "the fixture's 110 of 100"
    said = f"{extra:g} of these points are extra credit (tensor): they count in the total but not in the maximum"
    assert said in block_summary(ds, rs) and said in block_scores(ds, rs)
    assert extra_credit_note({"total": 90, "max": 100, "stages": [{"extra_credit": False, "correctness": 5}]}) == ""

    fma = gpu_peaks(ds.environment, rs)["fp64_gflops"]
    n = rs.headline_size
    above = [s for s in ("pitched", "reuse")
             if ds.result(s, ds.chosen_variant(s, "double"), "double").gflops((n, n, n)) > fma]
    assert above, "the fixture's FP64 stages above the FMA peak"
    summary = " ".join(block_summary(ds, rs).split())
    assert f"FP64 above the FP64 peak: {', '.join(above)} and cuBLAS run faster in double" in summary, summary
    assert f"({fma / 1000:.1f} TFLOPS), on its FP64 tensor cores (DMMA" in summary
    assert "on the FP64 tensor cores, DMMA" in block_environment(ds, rs)
    assert fp64_tensor_note(ds, rs, {"tiled": fma / 2, "cuBLAS": None}) == ""


def test_tensor_block_reads_the_variants_from_the_registry():
    """No GPU, no pandoc: the tensor block of the fixture, from the registry's variant_info."""
    from report_tables import block_tensor
    ds = load_dataset(FIXTURES)
    rs = load_report_set(ROOT / "course.toml")
    assert ds.tensor_stages() == [s["name"] for s in ds.registry if s.get("tensor_cores")]
    assert set(ds.tensor_stages()).isdisjoint(ds.cuda_core_stages())
    block = block_tensor(ds, rs)
    n = rs.headline_size
    for name in ds.tensor_stages():
        for v in ds.variants(name):
            info = ds.variant_info(name, v)
            assert info["inputs"]["double"] == "fp64"
            assert ds.label(name, v) in block.replace("\\", "")
            r = ds.result(name, v, "float")
            g = r.gflops((n, n, n)) if r else None
            if g:
                assert f"{g:,.0f}" in block
    assert "(of TF32)" in block and "(of FP16)" in block and "(of FP32)" in block


# ---- what students meet ----------------------------------------------------------------------

@needs_render
def test_no_implemented_stage_still_renders(tmp_path):
    def nothing_implemented(path, doc):
        if doc["kind"] == "grade":
            path.unlink()
        for r in doc["results"]:
            r["disposition"], r["problem"], r["bench"] = "not_implemented", "the stage is a stub", []
    results = fixture_copy(tmp_path, nothing_implemented)
    pdf = tmp_path / "report.pdf"
    out = make_report("--from", results, "--build", tmp_path / "build", "--out", pdf)
    assert out.returncode == 0, out.stdout + out.stderr
    text = pdf_text(pdf)
    assert text.count("not implemented yet") >= len(load_dataset(results).stage_names())
    assert "No grade yet" in text


@needs_render
def test_results_without_baselines_or_gpu_still_render(tmp_path):
    def bare(path, doc):
        doc.pop("baselines", None)
        doc["environment"] = {"gpu_available": False, "no_gpu_reason": "no CUDA device"}
        for r in doc["results"]:
            for b in r.get("bench", []):
                b["x_naive"] = b["pct_cublas"] = 0
    results = fixture_copy(tmp_path, bare)
    (results / "report-run.json").unlink()
    out = make_report("--from", results, "--build", tmp_path / "build", "--out", tmp_path / "r.pdf")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "no CUDA device" in pdf_text(tmp_path / "r.pdf")


@needs_render
def test_broken_yaml_gives_pandocs_error_with_its_line(tmp_path):
    template = tmp_path / "report.md"
    template.write_text('---\ntitle: "x"\nname: [unclosed\n---\n\n# Hi\n')
    out = make_report("--from", FIXTURES, "--build", tmp_path / "b", "--out", tmp_path / "r.pdf",
                      "--template", template)
    assert out.returncode == 1
    assert "pandoc could not convert" in out.stderr
    assert re.search(r"line \d+", out.stderr), out.stderr
    assert "Traceback" not in out.stderr + out.stdout


@needs_mpl
def test_unknown_include_names_its_line(tmp_path):
    template = tmp_path / "report.md"
    template.write_text('---\ntitle: x\n---\n\nText.\n\n::: {include="sumary"}\n:::\n')
    out = make_report("--from", FIXTURES, "--build", tmp_path / "b", "--out", tmp_path / "r.pdf",
                      "--template", template)
    assert out.returncode == 1
    assert f"{template}:7: unknown include \"sumary\"" in out.stderr
    assert "summary" in out.stderr  # the known names are listed
    assert "Traceback" not in out.stderr


@needs_render
def test_missing_glyph_fails_the_report(tmp_path):
    template = tmp_path / "report.md"
    template.write_text("---\ntitle: x\n---\n\nA glyph no font here has: \U0001F9EA.\n")
    out = make_report("--from", FIXTURES, "--build", tmp_path / "b", "--out", tmp_path / "r.pdf",
                      "--template", template)
    assert out.returncode == 1
    assert "missing from its fonts" in out.stderr
    assert "Traceback" not in out.stderr


@needs_render
def test_code_listing_from_a_student_file(tmp_path):
    template = tmp_path / "report.md"
    template.write_text('---\ntitle: x\n---\n\n```{.cuda include="student/naive.cu" lines="1-3"}\n```\n')
    out = make_report("--from", FIXTURES, "--build", tmp_path / "b", "--out", tmp_path / "r.pdf",
                      "--template", template)
    assert out.returncode == 0, out.stderr
    first = (ROOT / "student" / "naive.cu").read_text().splitlines()[0]
    assert squeeze(first)[:30] in squeeze(pdf_text(tmp_path / "r.pdf"))


@needs_mpl
def test_without_pandoc_it_says_how_to_finish(tmp_path):
    env = dict(os.environ, PATH=str(tmp_path / "empty-bin"))
    out = make_report("--from", FIXTURES, "--build", tmp_path / "b", "--out", tmp_path / "r.pdf", env=env)
    assert out.returncode == 0, out.stderr
    assert "make report-pdf" in out.stdout
    assert (tmp_path / "b" / "generated" / "figures" / "fig-square.pdf").exists()
    assert not (tmp_path / "r.pdf").exists()


# ---- measuring, with a fake grader (support/reports.py) --------------------------------------

@needs_mpl
def test_measure_runs_the_report_set_then_reuses_it(tmp_path):
    grader, log = fake_grader(tmp_path)
    build = tmp_path / "build"
    env = dict(os.environ, PATH=str(tmp_path / "no-pandoc-here"))  # measure + figures only
    args = ["--grader", grader, "--config", ROOT / "course.toml", "--build", build, "--out", tmp_path / "r.pdf"]
    out = make_report(*args, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    rs = load_report_set(ROOT / "course.toml")
    runs = len(rs.precisions)
    calls = log.read_text().splitlines()
    assert len(calls) == runs
    assert all("--max-seconds" in c for c in calls)
    assert f"[{runs}/{runs}]" in out.stdout  # progress
    run = json.loads((build / "results" / "report-run.json").read_text())
    assert run["report_set"] == rs.fingerprint() and len(run["commands"]) == runs

    out = make_report(*args, "--reuse", env=env)
    assert out.returncode == 0, out.stderr
    assert "reusing the measurements" in out.stdout
    assert len(log.read_text().splitlines()) == runs  # nothing measured again

    grader.write_text(grader.read_text() + "\n# rebuilt\n")
    out = make_report(*args, "--reuse", env=env)
    assert "the grader (with your stages in it) was rebuilt" in out.stdout
    assert len(log.read_text().splitlines()) == 2 * runs


DRAFT_TEMPLATE = """---
title: "GEMM Lab report"
name: "Ada"
student_id: "42"
---

# Summary

::: {include="summary"}
:::

# Measurement environment

::: {include="environment"}
:::

# Naive

::: {include="stage-naive"}
:::

My own words, written before any GPU was at hand.
"""


@pytest.mark.skipif(HAS_GPU, reason="this machine has a GPU: the no-GPU path is not taken")
def test_measure_without_gpu_says_where_to_run_and_writes_a_draft(grader, tmp_path):
    """The real grader, on a machine without a GPU: asked first, it says what to run — the command
    typed (make passes it), on a GPU node, after the course's srun line — and make report measures
    nothing, keeps the earlier measurements, and writes a draft instead: never report.pdf (--out), but
    <build>/draft/report-draft.pdf, DRAFT on every page, the student's text, every measurement "not
    measured yet" with that command (its hyphens as typed), and under each stage what the build knows of
    its file; no fingerprint, so nothing takes it for a measured report."""
    build = tmp_path / "build"
    shutil.copytree(FIXTURES, build / "results")  # earlier measurements
    template = tmp_path / "report.md"
    template.write_text(DRAFT_TEMPLATE)
    srun = "srun --partition=gpu --account=cs101 --gres=gpu:1"
    args = ["--grader", grader, "--build", build, "--out", tmp_path / "r.pdf", "--template", template,
            "--submission", ROOT / "student"]
    out = make_report(*args, env=dict(os.environ, GEMMLAB_COMMAND="make report HISTORY=reuse", GEMMLAB_SRUN=srun))
    assert out.returncode == 3, out.stdout + out.stderr
    assert "make report needs an NVIDIA GPU" in out.stderr
    assert f"{srun} make report HISTORY=reuse\n" in out.stderr, out.stderr
    assert "measuring" not in out.stdout and "[1/" not in out.stdout, out.stdout
    for other in ("make submit", "report-pdf", "make check"):
        assert other not in out.stdout + out.stderr, other
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "r.pdf").exists()
    for f in FIXTURES.glob("*.json"):  # kept: a failed run never costs earlier measurements
        assert (build / "results" / f.name).read_text() == f.read_text(), f.name
    draft = build / "draft" / "report-draft.pdf"
    if missing_tools:
        assert "the draft is not rendered" in out.stderr, out.stderr
    else:
        assert f"wrote the draft {draft}" in out.stdout, out.stdout
        text = pdf_text(draft)
        flat = squeeze(text)
        assert text.count("DRAFT — nothing measured yet") >= 2  # the head of every page, and under the title
        assert "My own words, written before any GPU was at hand." in text
        assert squeeze(f"On a GPU node, {srun} make report HISTORY=reuse measures it") in flat, text
        assert squeeze(f"{srun} make report HISTORY=reuse") in flat  # two hyphens each, not a dash
        assert "not measured yet" in text and "GFLOPS" in text
        assert squeeze("What the build knows of student/naive.cu") in flat, text
        assert "naive_kernel<float>" in text and "registers" in text and "FFMA" in text
        import fingerprint  # grader/scripts, on the path through report_data
        stamp = fingerprint.read_report_stamp(draft)
        assert not stamp.get("fingerprint") and not stamp.get("example"), stamp
    # run by hand, the hint is make_report.py's own command line
    by_hand = make_report(*args, env=dict(os.environ, PATH=str(tmp_path / "no-tools")))
    assert f"srun ... {sys.executable} {MAKE_REPORT} --grader {grader}" in by_hand.stderr, by_hand.stderr


@gpu
@needs_mpl
def test_measure_on_the_gpu_with_the_real_grader(grader, tmp_path):
    """A small report set on the real GPU: the bench's output is what the report reads."""
    config = tmp_path / "course.toml"
    config.write_text('[report]\nsquare_sizes = [256, 1000]\nodd_sizes = [257]\n'
                      'rect_shapes = ["512x64x256"]\nheadline_size = 1000\nmax_seconds_per_shape = 0.05\n')
    build = tmp_path / "build"
    out = make_report("--grader", grader, "--config", config, "--build", build, "--out", tmp_path / "r.pdf")
    assert out.returncode == 0, out.stdout + out.stderr
    ds = load_dataset(build / "results")
    base = ds.baseline_stage()
    assert ds.baseline("float", (1000, 1000, 1000))[1], "no cuBLAS baseline in the bench results"
    assert base is None or ds.status(base, "float")[0] in ("ok", "not_implemented")


def test_the_template_leaves_the_tiled_kernel_to_the_student():
    """report/report.md shows where the student's own tiled loop and reasoning go, never a loop: every
    student who pasted one would hand in the same kernel (the handout's build refuses a shipped file that
    holds a solution: tests/py/handout/test_handout_similarity.py). The placeholder is a prompt, so that
    make report warns while it is still there, and it names the student's own file."""
    text = (REPORT / "report.md").read_text()
    section = text.split("## Shared-memory tiling", 1)[1].split("\n## ", 1)[0]
    heart = section.split("The heart of my tiled kernel:", 1)[1]
    assert not re.search(r"^```", heart, re.M), "a code block in the template's tiled section"
    for code in ("__syncthreads();", "for (int", "acc +=", "As["):
        assert code not in heart, code
    assert re.match(r"\s*> \*Prompt:\*", heart), heart[:200]
    assert 'include="student/tiled.cu"' in heart
    # make report names the placeholder among what is still to write
    line = text.splitlines().index("The heart of my tiled kernel:") + 3
    warned = unanswered(REPORT / "report.md")
    assert any(w.startswith(f"{REPORT / 'report.md'}:{line}: unanswered prompt in \"Shared-memory tiling\"")
               for w in warned), warned
