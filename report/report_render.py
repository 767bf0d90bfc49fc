"""report_render.py — report.md + generated blocks -> report.pdf, with Pandoc and a PDF engine:
xelatex where TeX is installed, else Typst (the `typst` Python package: `make setup` installs it, and
a pandoc that writes Typst, without root where it must).

Two steps, so that the engine's log is ours to check: `pandoc -t latex` (or `-t typst`; with
filters/include.lua, cuda.xml and preamble.tex or the Typst header below; a broken report.md stops
here with Pandoc's own message and line), then `xelatex` in the work folder, re-run until references
settle (or typst, once). The LaTeX log is checked for missing glyphs ("Missing character"), which
would leave holes in the text.

The LaTeX command line follows the proven recipe for pandoc 2.17 (Debian 12): fontfamily=iftex (no
lmodern.sty), east_asian_line_breaks (a line break inside Chinese is not a space), A4. A CJK main
font (xeCJK, texlive-lang-chinese) is named only when the report has CJK text: an English report
needs no CJK TeX. GEMMLAB_PDF_ENGINE=xelatex|typst picks the engine where both are installed.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from report_data import ReportError

HERE = Path(__file__).resolve().parent
FILTER = HERE / "filters" / "include.lua"
SYNTAX = HERE / "cuda.xml"
PREAMBLE = HERE / "preamble.tex"
CJK_FONT = "Noto Serif CJK SC"
READER = "markdown+east_asian_line_breaks"
MAX_LATEX_RUNS = 3
RERUN = re.compile(r"Rerun to get|Label\(s\) may have changed|Table widths have changed")
INCLUDE_DIV = re.compile(r"^\s*:{3,}\s*\{([^}]*)\}")
INCLUDE_ATTR = re.compile(r"""\binclude\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s}]+))""")
CODE_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*\{([^}]*)\}")


# The CJK scripts: CJK punctuation, kana, ideographs (and extension A), Hangul, compatibility ideographs,
# full-width forms.
CJK = re.compile("[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")
TYPST_FONTS = ["Libertinus Serif", CJK_FONT]   # Typst's own serif, then the CJK font where one is installed


class ToolsMissing(ReportError):
    """pandoc, or a PDF engine (xelatex, or typst), is not here: the PDF has to be rendered elsewhere."""


def has_typst():
    """The typst Python package (make setup without TeX) and a pandoc that writes Typst (3.1.2 or newer)."""
    try:
        import typst  # noqa: F401
    except ImportError:
        return False
    proc = subprocess.run(["pandoc", "--list-output-formats"], capture_output=True, text=True)
    return "typst" in proc.stdout.split()


def pdf_engine():
    """'xelatex' or 'typst'. Raises ToolsMissing saying what is missing."""
    if shutil.which("pandoc") is None:
        raise ToolsMissing("pandoc not found on this machine")
    wanted = os.environ.get("GEMMLAB_PDF_ENGINE", "")
    if wanted not in ("", "xelatex", "typst"):
        raise ReportError(f"GEMMLAB_PDF_ENGINE={wanted}: say xelatex or typst")
    if wanted != "typst" and shutil.which("xelatex"):
        return "xelatex"
    if wanted != "xelatex" and has_typst():
        return "typst"
    raise ToolsMissing(f"{wanted or 'xelatex'} not found on this machine" if wanted == "xelatex" else
                       "neither xelatex (TeX) nor typst (the Python package, with pandoc 3.1.2 or newer) "
                       "found on this machine")


def scan_template(template, known_includes, root, stage_names):
    """Checks report.md's includes before Pandoc runs: an unknown name or a missing file is an error
    with its line number. Returns warnings (stages without a section)."""
    errors, used = [], set()
    try:
        lines = Path(template).read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as e:
        raise ReportError(f"{template}: not UTF-8 text ({e})") from None
    for number, line in enumerate(lines, 1):
        div = INCLUDE_DIV.match(line)
        if div:
            m = INCLUDE_ATTR.search(div.group(1))
            if m:
                name = next(g for g in m.groups() if g is not None)
                used.add(name)
                if name not in known_includes:
                    errors.append(f"{template}:{number}: unknown include \"{name}\"")
        fence = CODE_FENCE.match(line)
        if fence:
            m = INCLUDE_ATTR.search(fence.group(2))
            if m:
                file = next(g for g in m.groups() if g is not None)
                if not (Path(root) / file).is_file():
                    errors.append(f"{template}:{number}: the code block includes {file}, which does not "
                                  f"exist (paths are relative to {root})")
    if errors:
        known = ", ".join(sorted(known_includes))
        raise ReportError("\n".join(errors) + f"\n  known includes: {known}")
    return [f"{template} has no section for stage {n}: add ::: {{include=\"stage-{n}\"}} and ::: "
            "where you discuss it" for n in stage_names if f"stage-{n}" not in used]


# What report.md marks as still to be written: a block quote that starts with *Prompt:* (report.md:
# "Replace every block quote that starts with "Prompt" with your own text"), and the YAML header's
# placeholders.
PROMPT_LINE = re.compile(r"^>\s*\*Prompt:\*\s*(.*)$")
HEADING_LINE = re.compile(r"^#{1,6}\s+(.+?)\s*(\{.*\})?$")
PLACEHOLDERS = {"name": "Your Name", "student_id": "Your student ID"}


def unanswered(template):
    """Warnings for what the student has not written yet: each prompt still in report.md (its line, its
    section and its first words) and each placeholder of the YAML header still in place."""
    lines = Path(template).read_text(encoding="utf-8").splitlines()
    warnings, section, in_header = [], "", bool(lines) and lines[0].strip() == "---"
    for number, line in enumerate(lines, 1):
        if in_header:
            if number > 1 and line.strip() in ("---", "..."):
                in_header = False
                continue
            key, _, value = line.partition(":")
            if PLACEHOLDERS.get(key.strip()) == value.strip().strip("'\""):
                warnings.append(f"{template}:{number}: {key.strip()} is still \"{PLACEHOLDERS[key.strip()]}\"")
            continue
        heading = HEADING_LINE.match(line)
        if heading:
            section = heading.group(1)
        prompt = PROMPT_LINE.match(line)
        if prompt:
            words = prompt.group(1).split()
            text = " ".join(words[:10]) + (" …" if len(words) > 10 else "")
            warnings.append(f"{template}:{number}: unanswered prompt in \"{section}\": {text}")
    return warnings


def latex_escape(text):
    table = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
             "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
             "-": "-{}"}  # no ligature: "--partition" stays two hyphens, as a command is typed
    return "".join(table.get(c, c) for c in str(text))


def render(template, generated_dir, work_dir, out_pdf, root, footer, pdf_meta, marks=None):
    """Renders the PDF; returns the path of the engine's log. marks: {"provenance": the statement of whose
    measurements these are, under the title; "watermark": the head of every page, "" for none}.
    Raises ReportError with the tool's own message when Pandoc or the engine fails."""
    engine = pdf_engine()
    work_dir = Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    template = Path(template).resolve()
    marks = marks or {}
    cmd = ["pandoc", "-f", READER, str(template), "-s", f"--lua-filter={FILTER}",
           f"--syntax-definition={SYNTAX}", "--highlight-style=tango", "--default-image-extension=pdf",
           "-M", f"gemmlab-generated={Path(generated_dir).resolve()}",
           "-M", f"gemmlab-root={Path(root).resolve()}",
           "-M", f"gemmlab-report-dir={template.parent}"]
    if engine == "typst":  # pandoc's Typst template would not quote the keywords: set in the document itself
        return _render_typst(cmd, template, work_dir, out_pdf, footer, marks, pdf_meta)
    for key, value in pdf_meta.items():
        cmd += ["-M", f"{key}={value}"]
    meta_tex = work_dir / "gemmlab-meta.tex"
    meta_tex.write_text("".join(f"\\newcommand{{\\{name}}}{{{latex_escape(text)}}}\n" for name, text in (
        ("gemmlabfooter", footer), ("gemmlabprovenance", marks.get("provenance", "")),
        ("gemmlabwatermark", marks.get("watermark", "")))), encoding="utf-8")
    tex = work_dir / "report.tex"
    cmd += ["-t", "latex", "-o", str(tex), "-H", str(meta_tex), "-H", str(PREAMBLE),
            "-V", "fontfamily=iftex", "-V", "papersize=a4", "-V", "geometry:margin=2cm", "-V", "colorlinks=true"]
    _pandoc(cmd, template)
    if CJK.search(tex.read_text(encoding="utf-8")):  # CJK text: xeCJK with a CJK font
        _pandoc(cmd + ["-V", f"CJKmainfont={CJK_FONT}"], template)

    log = work_dir / "report.log"
    for run in range(1, MAX_LATEX_RUNS + 1):
        proc = subprocess.run(["xelatex", "-interaction=nonstopmode", "-halt-on-error", "-file-line-error",
                               tex.name], cwd=work_dir, capture_output=True, text=True, errors="replace")
        text = log.read_text(errors="replace") if log.exists() else proc.stdout
        if proc.returncode != 0 or not (work_dir / "report.pdf").exists():
            raise ReportError("xelatex failed on the LaTeX that Pandoc made from "
                              f"{template} (full log: {log}):\n" + _indent(latex_errors(text, tex)))
        if not RERUN.search(text):
            break
    glyphs = missing_glyphs(text)
    Path(out_pdf).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(work_dir / "report.pdf", out_pdf)
    if glyphs:
        raise ReportError(f"{out_pdf} was written, but {len(glyphs)} character(s) are missing from its "
                          "fonts and show as blanks:\n" + _indent("\n".join(glyphs)) +
                          "\n  Use characters the fonts have (Latin, Chinese, common symbols), or write "
                          "maths as $...$.")
    return log


def _pandoc(cmd, template):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ReportError(f"pandoc could not convert {template}:\n"
                          + _indent(proc.stderr.strip() or proc.stdout.strip()))
    for line in proc.stderr.splitlines():
        if "Deprecated: --highlight-style" not in line:  # pandoc 3.8 renamed it; 2.17 knows only this name
            print(f"pandoc: {line}")


def typst_string(text):
    """A Typst string literal: JSON's escapes (backslash, quote, newline) are Typst's too."""
    return json.dumps(str(text), ensure_ascii=False)


def _render_typst(cmd, template, work_dir, out_pdf, footer, marks, pdf_meta):
    """pandoc -t typst, then the typst package: the same pages as the LaTeX route's preamble.tex (the
    watermark at the head of every page, the footer, the provenance under the title), A4, 2 cm."""
    import typst
    watermark, provenance = marks.get("watermark", ""), marks.get("provenance", "")
    head = work_dir / "gemmlab-head.typ"
    head.write_text(
        f"#set text(font: ({', '.join(map(typst_string, TYPST_FONTS))}))\n"
        f"#set page(header: align(center, text(fill: red, weight: \"bold\", {typst_string(watermark)})),\n"
        f"  footer: context [#text(size: 8pt, fill: gray, {typst_string(footer)}) #h(1fr) "
        "#text(size: 8pt)[#counter(page).display()]])\n", encoding="utf-8")
    before = work_dir / "gemmlab-provenance.typ"
    document = {"keywords": pdf_meta.get("keywords", ""), "description": pdf_meta.get("subject", "")}
    before.write_text(  # the PDF's Keywords (make submit reads them) and Subject, after the template's own
        f"#set document({', '.join(f'{k}: {typst_string(v)}' for k, v in document.items())})\n" +
                      (f"#align(center, block(width: 90%, text(size: 9pt, {typst_string(provenance)})))\n"
                       if provenance else ""), encoding="utf-8")
    meta = work_dir / "gemmlab-page.yaml"
    meta.write_text("papersize: a4\nmargin:\n  x: 2cm\n  y: 2cm\n", encoding="utf-8")
    typ = work_dir / "report.typ"
    _pandoc(cmd + ["-t", "typst", "-o", str(typ), "-H", str(head), "-B", str(before),
                   f"--metadata-file={meta}"], template)
    pdf = work_dir / "report.pdf"
    try:
        _, warnings = typst.compile_with_warnings(str(typ), output=str(pdf), root="/")
    except typst.TypstError as e:
        raise ReportError(f"typst failed on the Typst that Pandoc made from {template} ({typ}):\n"
                          + _indent(getattr(e, "diagnostic", "") or str(e))) from None
    log = work_dir / "report.typst.log"
    messages = [getattr(w, "message", str(w)) for w in warnings]
    log.write_text("".join(m + "\n" for m in messages), encoding="utf-8")
    Path(out_pdf).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(pdf, out_pdf)
    if CJK.search(typ.read_text(encoding="utf-8")) and any(CJK_FONT.lower() in m.lower() for m in messages):
        raise ReportError(f"{out_pdf} was written, but its Chinese (CJK) text has no font: {CJK_FONT} is not "
                          "installed here. Install it (Debian: fonts-noto-cjk; RHEL: google-noto-serif-cjk-fonts; "
                          "or put NotoSerifCJK*.otf into ~/.local/share/fonts), or render where it is.")
    return log


def missing_glyphs(log_text):
    """The distinct "Missing character" lines of a LaTeX log."""
    seen = []
    for line in log_text.splitlines():
        if "Missing character" in line and line.strip() not in seen:
            seen.append(line.strip())
    return seen


def latex_errors(log_text, tex):
    """The error lines of a LaTeX log with the offending lines of the .tex file."""
    lines = log_text.splitlines()
    out = []
    for i, line in enumerate(lines):
        if line.startswith("!") or re.match(r"^\S*report\.tex:\d+:", line):
            out.append(line)
            out += [l for l in lines[i + 1:i + 3] if l.strip()]
            m = re.match(r"^\S*report\.tex:(\d+):", line)
            if m and Path(tex).exists():
                n = int(m.group(1))
                src = Path(tex).read_text(errors="replace").splitlines()
                out.append(f"  report.tex line {n}: {src[n - 1] if 0 < n <= len(src) else '?'}")
    return "\n".join(out[:20]) or "\n".join(lines[-20:])


def _indent(text):
    return "\n".join("  " + line for line in text.splitlines())
