"""The docs stay references a reader can follow: every page under docs/ and the README is at most
MAX_LINES long (a longer one is split by task, its history moved to the performance log), every relative
Markdown link among them leads to a file that exists and, where it names one, to an anchor that page has
(as GitHub makes it from a heading), and every doc the code cites by path (`docs/<name>.md`, in a message
or a comment, with a section's name in quotes after it) exists and has that section. No build, no GPU.

The handout's own check (grader/scripts/handout/handout_checks.py, broken_links) holds the shipped docs to
lead nowhere outside the handout; this file holds every doc, the staff's too, to lead somewhere real.
"""
import re
import subprocess
import unicodedata

import pytest

from support.paths import ROOT

MAX_LINES = 500
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.M | re.S)
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$", re.M)
HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"", re.I)
# [text](target) or ![alt](target), the text on one line or several; a title after the target is allowed.
LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE_SPAN = re.compile(r"(`+)(?!`)(?:(?!\n\n).)*?(?<!`)\1(?!`)", re.S)  # within a paragraph


def rel(path):
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.as_posix()


def without_code(text):
    """The text with fenced code blocks blanked (their lines kept, so line numbers still hold)."""
    return FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def slug(heading):
    """The anchor GitHub makes of a heading's text: its rendered text (no link targets, emphasis or code
    marks) in lower case, without the characters that are no letter, mark, decimal digit, connector,
    space or hyphen, each space a hyphen."""
    text = re.sub(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"<[^>]+>", "", text).lower()
    kept = (c for c in text if c in " -" or unicodedata.category(c)[0] in "LM" or unicodedata.category(c) in ("Nd", "Pc"))
    return "".join(kept).replace(" ", "-")


def anchors(path, cache={}):
    """Every anchor of a Markdown page: its headings' (GitHub numbers a repeated one -1, -2, ...) and its
    HTML anchors."""
    if path not in cache:
        text = without_code(path.read_text(encoding="utf-8"))
        found, seen = set(HTML_ANCHOR.findall(text)), {}
        for m in HEADING.finditer(text):
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        cache[path] = found
    return cache[path]


def links(path):
    """(line number, target) of every Markdown link of a page, outside code."""
    text = without_code(path.read_text(encoding="utf-8"))
    text = CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    for m in LINK.finditer(text):
        yield text.count("\n", 0, m.start()) + 1, m.group(2)


def broken(path, target):
    """Why `target`, a link of the page `path`, leads nowhere; None where it leads somewhere."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:
        return None
    file, _, anchor = target.partition("#")
    dest = (path.parent / file).resolve() if file else path
    if not dest.exists():
        return f"{file}: no such file"
    if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
        return f"#{anchor}: {rel(dest)} has no such heading"
    return None


@pytest.mark.parametrize("doc", DOCS, ids=rel)
def test_a_doc_is_at_most_max_lines(doc):
    n = len(doc.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_LINES, (f"{rel(doc)} has {n} lines, more than {MAX_LINES}: split it by task (a page per "
                            "audience or job, the first an index), and move dated measurements to "
                            "docs/performance-log/<date>.md")


@pytest.mark.parametrize("doc", DOCS, ids=rel)
def test_every_relative_link_of_a_doc_leads_to_a_file_and_heading(doc):
    bad = [f"{rel(doc)}:{n}: ({target}) {why}" for n, target in links(doc) if (why := broken(doc, target))]
    assert not bad, "links that lead nowhere:\n" + "\n".join(bad)


# A doc the code names by path, optionally with the section it means in quotes after it (a C++ or Python
# string may escape the quotes): docs/student-guide.md, "What a stage may call".
CITATION = re.compile(r"(?<![\w/.-])docs/([\w./-]+?\.md)(?:#([\w-]+))?(?:(?:,\s*|\s+)(?:section\s+)?\\?\"([^\"\\\n]{3,80})\\?\")?")
CODE_GLOBS = ["*.py", "*.cu", "*.h", "*.cpp", "*.sh", "*.toml", "Makefile", "*.mk", "*.in", "*.sbatch"]


def cited(text):
    """(line number, doc, anchor, section) of each citation of a doc by path in `text`."""
    for m in CITATION.finditer(text):
        yield text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2), m.group(3)


def plain(text):
    """Markdown as a reader sees it, for finding a section's name: no emphasis or code marks, one space
    between words, lower case."""
    return " ".join(re.sub(r"[*`_]", "", text).split()).lower()


def code_files():
    listed = subprocess.run(["git", "ls-files", "-z", "--", *CODE_GLOBS, *(f"**/{g}" for g in CODE_GLOBS)],
                            cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip(f"not a git checkout: {listed.stderr.strip()}")
    return sorted({ROOT / p for p in listed.stdout.split("\0") if p and (ROOT / p).is_file()})


def test_every_doc_the_code_cites_exists_with_the_section_it_names():
    bad = []
    for path in code_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for n, doc, anchor, section in cited(text):
            target = ROOT / "docs" / doc
            where = f"{rel(path)}:{n}: docs/{doc}"
            if not target.is_file():
                bad.append(f"{where}: no such doc")
            elif anchor and anchor not in anchors(target):
                bad.append(f"{where}#{anchor}: no such heading")
            elif section and plain(section) not in plain(target.read_text(encoding="utf-8")):
                bad.append(f"{where}, \"{section}\": the doc has no such section")
    assert not bad, "the code cites docs that are not there (a section moved? name the page it moved to):\n" + "\n".join(bad)


def test_the_checks_find_what_they_look_for(tmp_path):
    """A heading's anchor as GitHub makes it; a link to a missing file or heading is found; code is not
    read for links; a citation's doc, anchor and section are taken apart."""
    assert slug("Reading the machine code: `make sass`") == "reading-the-machine-code-make-sass"
    assert slug("The tensor stage: which precision when") == "the-tensor-stage-which-precision-when"
    assert slug("Against the targets (4096³)") == "against-the-targets-4096"
    assert slug("How a job grades (the same for submit jobs and sweep tasks)") == \
        "how-a-job-grades-the-same-for-submit-jobs-and-sweep-tasks"
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# Other\n\n## Part two\n\n## Part two\n")
    page.write_text("# Page\n\nSee [the other](other.md#part-two-1), [a part](other.md#part-three),\n"
                    "[gone](missing.md), [here](#page) and [the\nweb](https://example.org).\n\n"
                    "```\n[not a link](nowhere.md)\n```\n\nand `[code](nowhere.md)`.\n")
    found = {target: broken(page, target) for _, target in links(page)}
    assert found == {"other.md#part-two-1": None, "other.md#part-three": "#part-three: " + rel(tmp_path / "other.md")
                     + " has no such heading", "missing.md": "missing.md: no such file", "#page": None,
                     "https://example.org": None}, found
    text = 'see docs/instructor-term.md, "Decisions"; (docs/security.md#who-reads-what) and "docs/timing.md".\n'
    assert list(cited(text)) == [(1, "instructor-term.md", None, "Decisions"), (1, "security.md", "who-reads-what", None),
                                 (1, "timing.md", None, None)]

