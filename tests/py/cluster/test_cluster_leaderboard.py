"""The opt-in leaderboard (`make leaderboard`): who is on it, in which order, under which name, for
which stages; and the aliases file's mistakes, named."""
import subprocess
import sys

import pytest

from support import staff_class
from support.staff_class import DUE, ROOT

import class_files  # noqa: E402  (cluster/, on sys.path through staff_class)
import config  # noqa: E402
import leaderboard  # noqa: E402

TOOL = ROOT / "cluster" / "gemmlab_cluster.py"
M = staff_class.dt.timedelta(minutes=1)
# user -> (reuse GFLOPS float, double; reuse correct?; minutes before the due date it was handed in)
CLASS = {
    "u_adams": (3000.0, 1500.0, True, 60),
    "u_baker": (4200.0, 2100.0, True, 30),    # ties with u_clark, handed in LATER: second
    "u_clark": (4200.04, 2100.0, True, 90),   # equal to 0.1 GFLOPS, EARLIER: first
    "u_davis": (9000.0, 4000.0, False, 50),   # fastest but wrong: never on the board
    "u_evans": (8000.0, 3900.0, True, 10),    # fastest correct, but did not opt in
    "u_foster": (1000.0, 500.0, True, 20),
}
ALIASES = 'u_adams = "Tile Twister"\nu_baker = "aardvark"\nu_clark = "zebra"\nu_davis = "d.wrong"\nu_foster = "f-1"\n'


def make(tmp_path, aliases=ALIASES, extra_stage=None):
    (tmp_path / "aliases.toml").write_text(aliases)
    cfg = config.load(staff_class.write_config(tmp_path, '[leaderboard]\naliases = "aliases.toml"\nsize = 3\n',
                                               roster=list(CLASS)))
    for user, (_, _, _, minutes) in CLASS.items():
        staff_class.hand_in(cfg, tmp_path, user, {}, when=DUE - minutes * M)
    sweep = staff_class.plan(cfg)
    for user, (fp32, fp64, ok, _) in CLASS.items():
        # Results of staff_class.SCORED_STAGES name no tensor stage (as a course whose registry has
        # none), so "tensor" in [leaderboard] stages is skipped; extra_stage="tensor" adds it, its
        # float rows counted by a variant as the grader's are.
        stages = staff_class.SCORED_STAGES + ([extra_stage] if extra_stage else [])
        rows = staff_class.full_rows(stages, speeds={("reuse", "float"): fp32, ("reuse", "double"): fp64,
                                                     (extra_stage, "float"): fp32 * 2, (extra_stage, "double"): fp64})
        for r in rows:
            if r["stage"] == "tensor" and r["precision"] == "float":
                r["variant_used"] = "3xtf32"
        if not ok:
            for r in rows:
                if r["stage"] == "reuse":
                    r.update(disposition="failed", correctness=0.0)
        staff_class.write_grade(sweep, user, rows)
    return cfg, sweep


def run(cfg, *args):
    return subprocess.run([sys.executable, str(TOOL), "--config", str(cfg.path), "leaderboard", *args],
                          capture_output=True, text=True, timeout=60)


def test_ranking_ties_and_opt_in(tmp_path):
    cfg, sweep = make(tmp_path)
    r = run(cfg)
    assert r.returncode == 0, r.stderr
    md = (sweep / "leaderboard" / "leaderboard.md").read_text()
    fp32 = md.split("## reuse, FP32 (SGEMM)")[1].split("##")[0]
    lines = [ln for ln in fp32.splitlines() if ln.startswith("| ") and not ln.startswith("| place")]
    assert [ln.split("|")[2].strip() for ln in lines] == ["zebra", "aardvark", "Tile Twister"]  # size = 3
    assert lines[0].startswith("| 1 | zebra | 4200.0 |") and lines[1].startswith("| 2 | aardvark | 4200.0 |")
    assert lines[0].rstrip(" |").endswith("| 2026-12-04")  # u_clark's hand-in, the tie-break: its day only
    assert "22:29" not in md                                # no time of day that could unmask an alias
    assert "d.wrong" not in md             # a failed kernel is never ranked
    assert "f-1" not in fp32               # fourth: beyond size = 3
    assert "reuse, FP64 (DGEMM)" in md
    assert "tensor: no graded result of this class names this stage" in md and "tensor" in r.stdout


def test_the_pages_name_no_student(tmp_path):
    cfg, sweep = make(tmp_path)
    assert run(cfg).returncode == 0
    out = sweep / "leaderboard"
    assert sorted(p.name for p in out.iterdir()) == ["leaderboard.html", "leaderboard.md", "leaderboard.png"]
    for name in ("leaderboard.md", "leaderboard.html"):
        text = (out / name).read_text()
        for user in CLASS:
            assert user not in text, (name, user)
    html = (out / "leaderboard.html").read_text()
    assert 'id="board-reuse-float"' in html and 'id="leaderboard-plot"' in html and "data:image/png;base64," in html
    assert (out / "leaderboard.png").read_bytes()[:4] == b"\x89PNG"


def test_a_stage_in_the_results_gets_its_boards(tmp_path):
    """A course whose registry has a tensor stage: its results name it, and it is ranked too."""
    cfg, sweep = make(tmp_path, extra_stage="tensor")
    r = run(cfg)
    assert r.returncode == 0, r.stderr
    md = (sweep / "leaderboard" / "leaderboard.md").read_text()
    assert "## tensor, FP32 (SGEMM)" in md and "## tensor, FP64 (DGEMM)" in md
    tensor = md.split("## tensor, FP32 (SGEMM)")[1].split("##")[0]
    assert "| 1 | d.wrong | 18000.0 |" in tensor and "| 2 | zebra | 8400.1 |" in tensor  # its tensor is correct
    assert tensor.count("d.wrong") == 1 and "| variant |" in tensor and "| 3xtf32 |" in tensor
    assert "| variant |" not in md.split("## reuse, FP32 (SGEMM)")[1].split("##")[0]  # reuse has no variants
    assert "no result names" not in md
    assert "## tiled" not in md  # only the stages [leaderboard] stages names


def test_one_place_per_student_on_a_board():
    """Several score rows of one stage and precision (one per variant) give the student one place:
    the fastest correct one, named by its variant."""
    def row(variant, gflops, disposition="passed"):
        return dict(staff_class.stage_row("tensor", "float", disposition=disposition, gflops=gflops,
                                          pct_cublas=gflops / 100), variant_used=variant)
    rows = [{"student": "u_adams", "status": "graded", "submitted_at": "2026-12-04T22:00:00Z",
             "_results": {"score": {"stages": [row("fp16", 900.0, "failed"), row("tf32", 500.0),
                                               row("3xtf32", 300.0)]}}},
            {"student": "u_baker", "status": "graded", "submitted_at": "2026-12-04T21:00:00Z",
             "_results": {"score": {"stages": [row("tf32", 400.0)]}}}]
    bs, _ = leaderboard.boards(rows, {"u_adams": "Tile Twister", "u_baker": "aardvark"}, ["tensor"], 10)
    assert [(b.stage, b.precision) for b in bs] == [("tensor", "float")]
    assert [(p.place, p.alias, p.gflops, p.variant) for p in bs[0].places] == \
        [(1, "Tile Twister", 500.0, "tf32"), (2, "aardvark", 400.0, "tf32")]


@pytest.mark.parametrize("aliases, words", [
    ('u_adams = "Warp Speed"\nu_baker = "x"\nu_clark = "warp-speed"\n',
     ["aliases.toml, line 3", "alias clash", "u_clark = 'warp-speed'", "u_adams = 'Warp Speed' (line 1)",
      "choose another"]),
    ('u_adams = "a"\nu_zed = "b"\n', ["aliases.toml, line 2", "'u_zed' is not a student of this course", "plan.json"]),
    ('u_adams = "u_baker"\n', ["line 1", "u_adams = 'u_baker' is a student's user name"]),
    ('u_adams = "<script>"\n', ["line 1", "u_adams = '<script>' is not a usable alias", "1 to 24"]),
    ("u_adams = 7\n", ["line 1", "u_adams = 7 is not a usable alias"]),
    ('u_adams = "a"\nu_adams = "b"\n', ["aliases.toml: not valid TOML", "line 2"]),
])
def test_bad_aliases_are_named(tmp_path, aliases, words):
    cfg, sweep = make(tmp_path, aliases)
    r = run(cfg)
    assert r.returncode == 2, r.stdout + r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
    assert not (sweep / "leaderboard").exists()


def test_aliases_compare_without_case_and_punctuation():
    assert class_files.normalized_alias(" Warp_Speed ") == class_files.normalized_alias("warp-speed") == "warp-speed"
    assert class_files.normalized_alias("Warp.Speed") == class_files.normalized_alias("WARP  SPEED")


def test_no_opt_in_file_is_refused(tmp_path):
    cfg = config.load(staff_class.write_config(tmp_path, roster=["u_adams"]))
    staff_class.hand_in(cfg, tmp_path, "u_adams", {})
    staff_class.plan(cfg)
    r = run(cfg)
    assert r.returncode == 1 and "sets no [leaderboard] aliases file" in r.stderr


def test_nothing_graded_on_a_gpu_gives_no_page(tmp_path):
    (tmp_path / "aliases.toml").write_text(ALIASES)
    cfg = config.load(staff_class.write_config(tmp_path, '[leaderboard]\naliases = "aliases.toml"\n', roster=list(CLASS)))
    for user in CLASS:
        staff_class.hand_in(cfg, tmp_path, user, {}, when=DUE - M)
    sweep = staff_class.plan(cfg)
    for user in CLASS:
        staff_class.write_grade(sweep, user, [], status="no_gpu")
    r = run(cfg)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "no student of sweep final was graded on a GPU (no_gpu 6)" in r.stderr and "No leaderboard was written" in r.stderr
    assert not (sweep / "leaderboard").exists()


def test_axis_labels_stay_short_at_tensor_core_speeds():
    assert [leaderboard._gflops_tick(v, None) for v in (0, 850, 12000, 150000, 1.25e6)] == ["0", "850", "12k", "150k", "1250k"]
