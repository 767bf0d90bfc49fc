"""The rubric lives in course.toml only: docs/scoring.md explains it without a copy of its numbers
(a copy would drift when a TA changes a target), and course.toml's own rubric is complete."""
import re
import tomllib

# A row of a table that repeats the rubric: "| tiled | 5 | 5 | ... |".
RUBRIC_ROW = re.compile(r"^\| (\w+)(?: \(extra credit\))? \| [\d.]+ \| [\d.]+ \|")


def test_the_scoring_doc_keeps_no_copy_of_the_rubric(root):
    rows = [line for line in (root / "docs" / "scoring.md").read_text(encoding="utf-8").splitlines()
            if RUBRIC_ROW.match(line)]
    assert not rows, "docs/scoring.md repeats course.toml's points: point to `make rubric` instead\n" + "\n".join(rows)


def test_course_toml_scores_every_stage_against_the_reference(root):
    scoring = tomllib.loads((root / "course.toml").read_text(encoding="utf-8"))["scoring"]
    assert scoring["shapes"], "course.toml has no [[scoring.shapes]]"
    for name, rubric in scoring["stages"].items():
        assert "target_pct_cublas" not in rubric, name
        points = rubric["performance_points"]
        if (points if isinstance(points, (int, float)) else max(points.values())) > 0:
            assert "target_pct_reference" in rubric, name
