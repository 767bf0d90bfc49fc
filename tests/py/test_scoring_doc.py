"""docs/scoring.md's table of points and targets says what course.toml says: students read the
table, the grader reads the file, and the two must not drift apart when the targets are refreshed."""
import re
import tomllib

ROW = re.compile(r"^\| (\w+)(?: \(extra credit\))? \| ([\d.]+) \| ([\d.]+) \| (.*) \|$")


def table_rows(root):
    rows = {}
    for line in (root / "docs" / "scoring.md").read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if m:
            stage, correctness, performance, targets = m.groups()
            rows[stage] = (float(correctness), float(performance), targets)
    return rows


def test_the_scoring_table_matches_course_toml(root):
    stages = tomllib.loads((root / "course.toml").read_text(encoding="utf-8"))["scoring"]["stages"]
    rows = table_rows(root)
    assert set(rows) == set(stages), "docs/scoring.md's table lists other stages than course.toml"
    for name, rubric in stages.items():
        correctness, performance, targets = rows[name]
        assert (correctness, performance) == (rubric["correctness_points"], rubric["performance_points"]), name
        target = rubric.get("target_pct_cublas")
        if target is None:
            continue
        shown = [float(x) for x in re.findall(r"([\d.]+)%", targets)]
        assert shown == [target["float"], target["double"]], (name, targets, target)
