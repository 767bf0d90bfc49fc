"""report/report_render.py, the parts before and after the PDF engine, function by function: which
engine renders (pdf_engine, with stand-in programs on PATH), report.md's includes checked with their
lines (scan_template), what the student has still to write (unanswered), text made safe for LaTeX and
Typst (latex_escape, typst_string), and what a LaTeX log says (missing_glyphs, latex_errors).

Rendering a whole report with Pandoc and xelatex is test_report.py's.

  python3 -m pytest -q tests/py/report/test_report_render.py
"""
import json
import sys

import pytest

from support.paths import ROOT

sys.path.insert(0, str(ROOT / "report"))

import report_render as rr  # noqa: E402
from report_data import ReportError  # noqa: E402


# ---- the PDF engine -----------------------------------------------------------------------------------
@pytest.fixture
def tools(tmp_path, monkeypatch):
    """A PATH of stand-in programs only: tools("pandoc", "xelatex") puts those there."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv("GEMMLAB_PDF_ENGINE", raising=False)

    def put(*names):
        for name in names:
            (bin_dir / name).write_text("#!/bin/sh\nexit 0\n")
            (bin_dir / name).chmod(0o755)
    return put


def test_without_pandoc_the_tools_are_missing(tools):
    with pytest.raises(rr.ToolsMissing) as e:
        rr.pdf_engine()
    assert str(e.value) == "pandoc not found on this machine"


def test_xelatex_renders_where_it_is_installed(tools, monkeypatch):
    tools("pandoc", "xelatex")
    assert rr.pdf_engine() == "xelatex"
    monkeypatch.setenv("GEMMLAB_PDF_ENGINE", "xelatex")
    assert rr.pdf_engine() == "xelatex"


def test_an_engine_asked_for_and_missing_is_named(tools, monkeypatch):
    tools("pandoc")
    monkeypatch.setenv("GEMMLAB_PDF_ENGINE", "xelatex")
    with pytest.raises(rr.ToolsMissing) as e:
        rr.pdf_engine()
    assert str(e.value) == "xelatex not found on this machine"


def test_an_engine_of_another_name_is_refused(tools, monkeypatch):
    tools("pandoc", "xelatex")
    monkeypatch.setenv("GEMMLAB_PDF_ENGINE", "lualatex")
    with pytest.raises(ReportError) as e:
        rr.pdf_engine()
    assert str(e.value) == "GEMMLAB_PDF_ENGINE=lualatex: say xelatex or typst"
    assert not isinstance(e.value, rr.ToolsMissing)


# ---- report.md's includes -------------------------------------------------------------------------------
def template(tmp_path, text):
    path = tmp_path / "report.md"
    path.write_text(text, encoding="utf-8")
    return path


def test_known_includes_and_existing_code_files_pass_with_a_warning_per_stage_without_a_section(tmp_path):
    (tmp_path / "student").mkdir()
    (tmp_path / "student" / "tiled.cu").write_text("// mine\n")
    path = template(tmp_path, '# Results\n\n::: {include="summary"}\n:::\n\n::: {#tiled include=\'stage-tiled\'}\n:::\n\n'
                              '```{.cuda include="student/tiled.cu"}\n```\n')
    assert rr.scan_template(path, {"summary", "stage-tiled", "stage-naive"}, tmp_path, ["naive", "tiled"]) == [
        f"{path} has no section for stage naive: add ::: {{include=\"stage-naive\"}} and ::: where you discuss it"]


def test_an_unknown_include_and_a_missing_code_file_are_named_with_their_lines(tmp_path):
    path = template(tmp_path, '# Results\n::: {include=summry}\n:::\n~~~{.cuda include="student/gone.cu"}\n~~~\n')
    with pytest.raises(ReportError) as e:
        rr.scan_template(path, {"summary", "scores"}, tmp_path, [])
    assert str(e.value) == (f'{path}:2: unknown include "summry"\n'
                            f"{path}:4: the code block includes student/gone.cu, which does not exist (paths are "
                            f"relative to {tmp_path})\n  known includes: scores, summary")


def test_a_template_that_is_not_utf8_is_named(tmp_path):
    path = tmp_path / "report.md"
    path.write_bytes(b"# R\xe9sultats\n")
    with pytest.raises(ReportError, match=rf"^{path}: not UTF-8 text \("):
        rr.scan_template(path, set(), tmp_path, [])


# ---- what is still to be written --------------------------------------------------------------------------
def test_prompts_still_in_place_are_named_with_their_line_and_section(tmp_path):
    path = template(tmp_path, "---\ntitle: Lab\n---\n\n# Tiling {#sec-tiling}\n\n"
                              "> *Prompt:* Why does the tile size 16 beat 32 on this GPU and what limits it?\n\n"
                              "## Coalescing\n\n>*Prompt:*   Short one.\n\nMy own text.\n")
    assert rr.unanswered(path) == [
        f'{path}:7: unanswered prompt in "Tiling": Why does the tile size 16 beat 32 on this …',
        f'{path}:11: unanswered prompt in "Coalescing": Short one.']


def test_placeholders_of_the_yaml_header_are_named(tmp_path):
    path = template(tmp_path, '---\ntitle: Lab\nname: "Your Name"\nstudent_id: Your student ID\n---\n\n'
                              "name: Your Name\n")  # after the header: text, not a placeholder
    assert rr.unanswered(path) == [f'{path}:3: name is still "Your Name"',
                                   f'{path}:4: student_id is still "Your student ID"']


def test_a_written_report_has_nothing_unanswered(tmp_path):
    path = template(tmp_path, "---\nname: Ada Lovelace\nstudent_id: 1815\n...\n# Tiling\n\n> A quote of mine.\n")
    assert rr.unanswered(path) == []


# ---- text for LaTeX and Typst --------------------------------------------------------------------------
def test_latex_escape_makes_every_special_character_text():
    assert rr.latex_escape(r"a_b & 50% $x# {y} ~z^ \ --partition") == (
        r"a\_b \& 50\% \$x\# \{y\} \textasciitilde{}z\textasciicircum{} \textbackslash{} -{}-{}partition")
    assert rr.latex_escape(7) == "7"


def test_a_typst_string_is_a_quoted_literal_with_its_escapes():
    assert rr.typst_string('say "hi"\\\n中文') == '"say \\"hi\\"\\\\\\n中文"'
    assert json.loads(rr.typst_string("x\ty")) == "x\ty"


# ---- reading a LaTeX log --------------------------------------------------------------------------------
def test_missing_glyphs_are_the_distinct_missing_character_lines():
    log = ("Missing character: There is no ☃ in font lmroman10-regular!\nother\n"
           "Missing character: There is no ☃ in font lmroman10-regular!\n"
           "  Missing character: There is no ✓ in font lmroman10-regular!\n")
    assert rr.missing_glyphs(log) == ["Missing character: There is no ☃ in font lmroman10-regular!",
                                      "Missing character: There is no ✓ in font lmroman10-regular!"]
    assert rr.missing_glyphs("all fine\n") == []


def test_latex_errors_quote_the_error_and_the_offending_line_of_the_tex(tmp_path):
    tex = tmp_path / "report.tex"
    tex.write_text("\\documentclass{article}\n\\begin{document}\n\\badmacro\n\\end{document}\n")
    log = ("This is XeTeX\n./report.tex:3: Undefined control sequence.\nl.3 \\badmacro\n\n"
           "! Emergency stop.\n<*> report.tex\n")
    assert rr.latex_errors(log, tex).splitlines() == [
        "./report.tex:3: Undefined control sequence.", "l.3 \\badmacro", "  report.tex line 3: \\badmacro",
        "! Emergency stop.", "<*> report.tex"]


def test_a_log_without_an_error_line_gives_its_last_lines(tmp_path):
    log = "\n".join(f"line {i}" for i in range(30))
    assert rr.latex_errors(log, tmp_path / "report.tex") == "\n".join(f"line {i}" for i in range(10, 30))
