"""The lab report as a reader meets it, from the example results (tests/fixtures/report): tables whose
headers do not run together, one FP64 tensor kernel shown once, exact FP64 errors explained, the
pitched figure saying what it compares, and `make report` naming every prompt still unanswered."""
import re
import shutil
import subprocess
import sys

import pytest

from support.paths import ROOT

REPORT = ROOT / "report"
FIXTURES = ROOT / "tests" / "fixtures" / "report"
sys.path.insert(0, str(REPORT))

from report_data import load_dataset, load_report_set  # noqa: E402
from report_render import unanswered  # noqa: E402
import report_tables  # noqa: E402
from report_tables import shown_variants, table  # noqa: E402


@pytest.fixture(scope="module")
def ds():
    return load_dataset(FIXTURES)


@pytest.fixture(scope="module")
def blocks(ds):
    rs = load_report_set(ROOT / "course.toml")
    return {"tensor": report_tables.block_tensor(ds, rs), "results-all": report_tables.block_results_all(ds, rs),
            "stage-tensor": report_tables.block_stage(ds, rs, "tensor"), "summary": report_tables.block_summary(ds, rs),
            "scores": report_tables.block_scores(ds, rs)}


def column_shares(markdown):
    """Each column's share of a pipe table's width, as Pandoc computes it from the rule's dashes."""
    rule = next(line for line in markdown.splitlines() if re.fullmatch(r"\|[-:|]+\|", line))
    dashes = [len(c.strip(":")) for c in rule.strip("|").split("|")]
    return [d / sum(dashes) for d in dashes]


def test_a_wide_table_leaves_every_header_word_room():
    header = ["Stage", "Precision", "Variant", "Result", "Correctness", "Performance", "GFLOPS", "Note"]
    rows = [["unrolled", "FP32", "", "passed", "5 / 5", "7 / 7", "31,945", "62.3% of cuBLAS at 4096x4096x4096 " * 2]]
    md = table(header, rows, "llllrrrl")
    chars = (report_tables.TEXT_WIDTH_PT - 2 * report_tables.TABCOLSEP_PT * len(header)) / report_tables.CHAR_PT
    for share, h in zip(column_shares(md), header):
        assert share * chars >= len(h), f"{h!r} gets {share * chars:.1f} characters"


def test_the_fp64_tensor_kernel_is_shown_once(ds, blocks):
    assert [label for _, label in shown_variants(ds, "tensor", "double")] == ["tensor (FP64, DMMA)"]
    assert len(shown_variants(ds, "tensor", "float")) == 3
    assert len(shown_variants(ds, "tiled", "double")) == 3  # different kernels: every one shown
    for name, text in blocks.items():
        assert not re.search(r"FP64 \((fp16|tf32|3xtf32)\)", text), name
        assert not re.search(r"tensor \((fp16|tf32|3xtf32)\) \| FP64", text), name
    assert blocks["tensor"].count("tensor (FP64, DMMA) | FP64") == 2  # speed and error tables: one row each
    assert "FP64 (DMMA)" in blocks["stage-tensor"] and "| DMMA |" in blocks["summary"]


def test_exact_fp64_errors_say_what_zero_means(blocks):
    text = blocks["tensor"]
    assert "| 0 |" not in text
    assert "0 (exact)" in text and "bit for bit" in text


def test_the_appendix_splits_cuda_and_tensor_cores(blocks):
    text = blocks["results-all"]
    assert text.count("CUDA cores.**") == 2 and text.count("tensor cores.**") == 2


def test_the_pitched_figure_says_it_compares_two_kernels(ds, tmp_path):
    pytest.importorskip("matplotlib")
    import report_figures
    fig = report_figures.figure_pitched(ds, load_report_set(ROOT / "course.toml"), tmp_path)
    assert "two different kernels" in fig.caption and "not of the pitch alone" in fig.caption


def test_unanswered_prompts_and_placeholders_are_named(tmp_path):
    warnings = unanswered(REPORT / "report.md")
    prompts = [w for w in warnings if "unanswered prompt" in w]
    assert len(prompts) == (REPORT / "report.md").read_text().count("> *Prompt:*")
    assert any('in "Summary": In three to five sentences' in w for w in prompts)
    assert any('name is still "Your Name"' in w for w in warnings)
    answered = tmp_path / "report.md"
    answered.write_text('---\ntitle: "GEMM Lab report"\nname: "Ada Lovelace"\nstudent_id: "42"\n---\n\n'
                        "# Summary\n\nreuse is fastest.\n")
    assert unanswered(answered) == []


@pytest.mark.skipif(not (shutil.which("pandoc") and shutil.which("xelatex") and shutil.which("pdftotext")),
                    reason="needs pandoc, xelatex and pdftotext")
def test_rendered_tables_keep_headers_apart(tmp_path):
    pytest.importorskip("matplotlib")
    pdf = tmp_path / "demo.pdf"
    out = subprocess.run([sys.executable, str(REPORT / "make_report.py"), "--from", str(FIXTURES), "--out", str(pdf),
                          "--build", str(tmp_path / "build")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "unanswered prompt" not in out.stdout  # the example report shows the template as it is
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True).stdout
    for glued in ("CorrectnessPerformance", "unrolledpitched", "Corr.Perf.", "pitchedreuse"):
        assert glued not in text
