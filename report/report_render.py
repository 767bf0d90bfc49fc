"""report_render.py — report.md + generated blocks -> report.pdf, with Pandoc and xelatex.

Two steps, so that the LaTeX log is ours to check: `pandoc -t latex` (with filters/include.lua,
cuda.xml and preamble.tex; a broken report.md stops here with Pandoc's own message and line), then
`xelatex` in the work folder, re-run until references settle. The log is checked for missing
glyphs ("Missing character"), which would leave holes in the text.

The command line follows the proven recipe for pandoc 2.17 (Debian 12): fontfamily=iftex (no
lmodern.sty), a CJK main font (else every Chinese glyph is missing), east_asian_line_breaks (a line
break inside Chinese is not a space), A4.
"""
from __future__ import annotations

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


class ToolsMissing(ReportError):
    """pandoc or xelatex is not installed here: the PDF has to be rendered elsewhere."""


def missing_tools():
    return [t for t in ("pandoc", "xelatex") if shutil.which(t) is None]


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
             "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
    return "".join(table.get(c, c) for c in str(text))


def render(template, generated_dir, work_dir, out_pdf, root, footer, pdf_meta, marks=None):
    """Renders the PDF; returns the path of the LaTeX log. marks: {"provenance": the statement of whose
    measurements these are, under the title; "watermark": the head of every page, "" for none}.
    Raises ReportError with the tool's own message when Pandoc or LaTeX fails."""
    missing = missing_tools()
    if missing:
        raise ToolsMissing(" and ".join(missing) + " not found on this machine")
    work_dir = Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    meta_tex = work_dir / "gemmlab-meta.tex"
    marks = marks or {}
    meta_tex.write_text("".join(f"\\newcommand{{\\{name}}}{{{latex_escape(text)}}}\n" for name, text in (
        ("gemmlabfooter", footer), ("gemmlabprovenance", marks.get("provenance", "")),
        ("gemmlabwatermark", marks.get("watermark", "")))), encoding="utf-8")
    tex = work_dir / "report.tex"
    template = Path(template).resolve()
    cmd = ["pandoc", "-f", READER, str(template), "-t", "latex", "-s", "-o", str(tex),
           f"--lua-filter={FILTER}", f"--syntax-definition={SYNTAX}", "--highlight-style=tango",
           "--default-image-extension=pdf",
           "-H", str(meta_tex), "-H", str(PREAMBLE),
           "-V", "fontfamily=iftex", "-V", f"CJKmainfont={CJK_FONT}", "-V", "papersize=a4",
           "-V", "geometry:margin=2cm", "-V", "colorlinks=true",
           "-M", f"gemmlab-generated={Path(generated_dir).resolve()}",
           "-M", f"gemmlab-root={Path(root).resolve()}",
           "-M", f"gemmlab-report-dir={template.parent}"]
    for key, value in pdf_meta.items():
        cmd += ["-M", f"{key}={value}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ReportError(f"pandoc could not convert {template}:\n"
                          + _indent(proc.stderr.strip() or proc.stdout.strip()))
    for line in proc.stderr.splitlines():
        print(f"pandoc: {line}")

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
