"""What the stubs (student/*.cu) tell a student agrees with the student guide, and names tools that
every toolkit has. No build, no GPU: the files are read as text."""
import re

import pytest

from support.paths import ROOT, STUBS as STUB_DIR

STUBS = sorted(STUB_DIR.glob("*.cu"))
GUIDE = ROOT / "docs" / "student-guide.md"
# The one way printf is explained, in the stubs and in the guide's table of what a stage may call.
PRINTF_ADVICE = ("printf is fine for debugging, in a kernel too (you see its output; the grader never "
                 "reads it), but take it out before you time: a kernel that prints is slower")


def comment_text(path):
    """The file's // comments joined into one line of prose (line breaks and comment marks removed)."""
    lines = [m.group(1) for m in re.finditer(r"^\s*//\s?(.*)$", path.read_text(), re.M)]
    return re.sub(r"\s+", " ", " ".join(lines))


@pytest.mark.parametrize("stub", STUBS, ids=lambda p: p.name)
def test_stubs_do_not_forbid_printf(stub):
    text = comment_text(stub)
    assert not re.search(r"\bno printf\b", text, re.I), f"{stub.name} forbids printf; the guide allows it"
    if "printf" in text:
        assert PRINTF_ADVICE in text, f"{stub.name} says something else about printf than the guide"


def test_the_guide_says_the_same_about_printf():
    assert PRINTF_ADVICE in re.sub(r"\s+", " ", GUIDE.read_text())
    assert any(PRINTF_ADVICE in comment_text(s) for s in STUBS), "no stub explains printf any more"


@pytest.mark.parametrize("stub", STUBS, ids=lambda p: p.name)
def test_stubs_recommend_what_every_toolkit_has(stub):
    """cuobjdump is not in every CUDA toolkit: `make resources` (nvcc -Xptxas -v) comes first, and
    cuobjdump, where it is named, is the optional extra."""
    text = comment_text(stub)
    if "cuobjdump" not in text:
        return
    assert "make resources" in text, f"{stub.name} names cuobjdump but not make resources"
    assert text.index("make resources") < text.index("cuobjdump")
    assert "where the toolkit has it" in text
