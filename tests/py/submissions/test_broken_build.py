"""CI (no GPU needed): every deliberately broken submission under tests/broken/ builds with the
project's flags, keeps the correct naive stage, and documents each stage's expected disposition."""
import re

import pytest

from support import gpu_prebuild
from support.broken_submissions import BROKEN, EXPECTED, ROOT, build


def test_every_directory_is_listed():
    dirs = sorted(p.name for p in BROKEN.iterdir() if p.is_dir())
    assert dirs == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_layout_and_readme(name):
    d = BROKEN / name
    stage_files = sorted(p.name for p in (ROOT / "student").glob("*.cu"))
    assert sorted(p.name for p in d.glob("*.cu")) == stage_files
    # naive is the student's correct one: the same build's baseline must still pass.
    assert (d / "naive.cu").read_text() == (ROOT / "student" / "naive.cu").read_text()
    for cu in d.glob("*.cu"):
        if cu.name == "naive.cu":
            continue
        if cu.is_symlink():  # an untouched stub, as handed out
            assert cu.resolve() == (ROOT / "student" / cu.name).resolve(), f"{cu} links elsewhere than student/"
            assert all(want == "not_implemented" for (stage, _), want in EXPECTED[name].items() if stage == cu.stem)
            continue
        assert "BROKEN" in cu.read_text(), f"{cu} does not mark its breakage"
    readme = (d / "README.md").read_text()
    for (stage, variant), want in EXPECTED[name].items():
        label = f"{stage}/{variant}" if variant else stage
        rows = [line for line in readme.splitlines()
                if line.startswith("|") and re.search(rf"(^|[ ,|]){re.escape(label)}([ ,|]|$)", line)]
        assert rows, f"{name}/README.md has no row for {label}"
        for disposition in (set(want.values()) if isinstance(want, dict) else {want}):
            assert any(f"| {disposition} |" in row for row in rows), \
                f"{name}/README.md: {label} should be documented as {disposition}"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_builds(name):
    gpu_prebuild.result("broken")  # all of them, beside each other (in the background on a GPU machine)
    binary = build(name)
    assert binary.exists()
