"""No shipped file holds a solution: `make handout` compares every file a handout ships with the solutions
the repository keeps out of it (SOLUTIONS in grader/scripts/handout/handout_files.py) by the staff's own
similarity measure (cluster/staff/similarity.py), and fails naming the file and the solution it matches.

These tests need the instructor repository (reference/*.cu) and the staff's tools (copydetect), and
never ship in a handout.
"""
import pytest

from support import gpu_prebuild
from support.paths import ROOT

pytestmark = pytest.mark.skipif(not list((ROOT / "reference").glob("*.cu")),
                                reason="needs the instructor repository (reference/*.cu)")

# What report/report.md showed under "The heart of my tiled kernel" before it showed where the student's
# own loop goes: the whole graded tiled stage, which every student who pasted it handed in alike.
THE_TEMPLATES_OLD_LOOP = """The heart of my tiled kernel:

```cuda
// Replace with your own inner loop, or include it from your file (see the comment at the top).
// Outside A or B (sizes that are not multiples of TILE) a thread loads 0; only threads inside C store.
for (int t = 0; t < K; t += TILE) {
    const int a_col = t + threadIdx.x, b_row = t + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = (row < M && a_col < K) ? A[row * lda + a_col] : T(0);
    Bs[threadIdx.y][threadIdx.x] = (b_row < K && col < N) ? B[b_row * ldb + col] : T(0);
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
}
if (row < M && col < N)
    C[row * ldc + col] = beta == T(0) ? alpha * acc : alpha * acc + beta * C[row * ldc + col];
```
"""


@pytest.fixture(scope="module")
def handout():
    module = gpu_prebuild.load_handout_module()
    pytest.importorskip("copydetect", reason="the staff's similarity measure needs copydetect (make setup)")
    return module


@pytest.fixture(scope="module")
def settings(handout):
    return handout.similarity_settings(handout.load_config(ROOT / "course.toml"))


def test_the_solutions_never_ship_and_each_pattern_finds_some(handout):
    for pattern in handout.SOLUTIONS:
        found = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob(pattern))
        assert found, f"SOLUTIONS {pattern} finds nothing: a solution folder was moved?"
        for rel in found:
            assert handout.matches(rel, handout.NEVER), f"{rel} is a solution that NEVER does not keep out"


def test_what_ships_today_holds_no_solution(handout, settings):
    """Every file of a handout, the stubs among them (what every student is given is the measure's
    boilerplate), is below the staff's threshold against every solution."""
    files, _ = handout.select_files(handout.load_config(ROOT / "course.toml"))
    assert "report/report.md" in files and "student/tiled.cu" in files
    assert handout.solution_matches(ROOT, files, settings) == []


def test_the_templates_old_loop_matches_a_solution(handout, settings, tmp_path):
    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "report.md").write_text(THE_TEMPLATES_OLD_LOOP)
    matches = handout.solution_matches(tmp_path, ["report/report.md"], settings)
    assert [m[0] for m in matches] == ["report/report.md"], matches
    shipped, solution, score = matches[0]
    assert solution.startswith(("reference/", "tests/")) and "tiled" in solution, solution
    assert score >= settings["report_threshold"]


def test_the_build_fails_naming_the_file_and_the_solution(handout, tmp_path, monkeypatch):
    """A handout whose report.md holds the old loop: make handout stops before compiling anything, names
    the file and the solution, and leaves no half-written handout behind."""
    write_tree = handout.write_tree

    def with_the_old_loop(cfg, out):
        written = write_tree(cfg, out)
        (out / "report" / "report.md").write_text(THE_TEMPLATES_OLD_LOOP)
        return written
    monkeypatch.setattr(handout, "write_tree", with_the_old_loop)
    monkeypatch.setattr(handout, "build_reference_library",
                        lambda *a, **k: pytest.fail("the reference was compiled for a handout that holds a solution"))
    cfg = handout.load_config(gpu_prebuild.handout_config(tmp_path))
    with pytest.raises(handout.HandoutError) as failed:
        handout.build(cfg, tmp_path / "dist")
    text = str(failed.value)
    assert "report/report.md holds solution code" in text and "tiled" in text, text
    assert "make handout again" in text, text
    dist, out, tarball = handout.handout_paths(cfg, tmp_path / "dist")
    assert not out.exists() and not tarball.exists()
