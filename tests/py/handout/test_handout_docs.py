"""The docs a handout ships cite only what a student has: every path they name under one of the
repository's top folders is in the handout (shipped, or written by make handout), a folder of it, or
what the kit's commands write (OUTPUTS: build/, results/, report/report.pdf...). The notes of the test
fixtures (tests/**/README.md) say where the fixtures come from, in the instructor repository: left out.

Needs the instructor repository (grader/scripts/handout.py); never ships in a handout.
"""
import re

import pytest

from support import gpu_prebuild
from support.paths import ROOT

pytestmark = pytest.mark.skipif(not list((ROOT / "reference").glob("*.cu")),
                                reason="needs the instructor repository (reference/*.cu)")


def cited_paths(text, tops):
    """(line number, path) of each path under one of `tops` that `text` names, up to the first character
    that is no path's (a placeholder: student/<stage>.cu names student/)."""
    path = re.compile(r"(?<![\w/.$-])((?:" + "|".join(map(re.escape, tops)) + r")/[\w./-]*)")
    for n, line in enumerate(text.splitlines(), 1):
        for m in path.finditer(line):
            yield n, m.group(1).rstrip("/.")


def test_the_docs_a_student_reads_cite_only_what_they_have(tmp_path):
    handout = gpu_prebuild.load_handout_module()
    cfg = handout.load_config(gpu_prebuild.handout_config(tmp_path))
    out = tmp_path / "handout"
    files, _ = handout.write_tree(cfg, out)
    have = {*files, handout.REF_LIB, handout.MANIFEST}  # the last two: build() writes them after the tree
    folders = {"/".join(f.split("/")[:i]) for f in have for i in range(1, f.count("/") + 1)}
    tops = sorted(p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith("."))
    docs = sorted(f for f in have if f.endswith(".md") and not f.startswith("tests/"))
    assert {"README.md", "docs/student-guide.md", "docs/student-tools.md", "report/README.md"} <= set(docs), docs
    missing = [f"{doc}:{n}: {p}" for doc in docs for n, p in cited_paths((out / doc).read_text(), tops)
               if p not in have and p not in folders and not handout.matches(p, handout.OUTPUTS)]
    assert not missing, "the handout's docs cite what it does not ship:\n" + "\n".join(missing)


def test_a_cited_path_that_does_not_ship_is_found():
    tops = ["tests", "student"]
    text = "The GPU tests (`tests/gpu/test_engine.cu`) confirm it; edit student/<stage>.cu.\n"
    assert list(cited_paths(text, tops)) == [(1, "tests/gpu/test_engine.cu"), (1, "student")]
