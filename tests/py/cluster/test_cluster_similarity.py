"""The similarity report (`make similarity`) on synthetic classes with planted copies.

The class (solutions in tests/fixtures/similarity/, spliced into the handout's stubs):
  tiled:    ana textbook; ben = ana's with every name changed, helpers reordered, comments
            rewritten; cat and dan honest, different solutions; rex hands in the instructor's
            reference/tiled.cu; the others hand in the stub
  unrolled: eve outer product; fay = eve's, renamed and reordered; ana and gil honest, different;
            the others hand in the stub
  hal hands in the stubs only; ivy is on the roster and hands in nothing.
The planted pairs must come out on top of their stage, far above every honest pair, and students who
handed in the same untouched stub must not be paired at all (the stub is boilerplate). A second
class: five students hand in one tiled file (one group of five), and one hands in the file a
student of an earlier term handed in (found in the archive, [similarity] archive).
"""
import csv
import subprocess
import sys

import pytest

import staff_class
from staff_class import ROOT

pytest.importorskip("copydetect", reason="copydetect is not installed: `make setup` installs it")

import similarity  # noqa: E402  (cluster/, on sys.path through staff_class)

CLASS = {
    "ana": {"tiled": "tiled_textbook", "unrolled": "unrolled_transposed_a"},
    "ben": {"tiled": "tiled_textbook_copied"},
    "cat": {"tiled": "tiled_pointer_walk"},
    "dan": {"tiled": "tiled_fma_padded"},
    "eve": {"unrolled": "unrolled_outer_product"},
    "fay": {"unrolled": "unrolled_outer_product_copied"},
    "gil": {"unrolled": "unrolled_acc4_rows"},
    "hal": {},
    "rex": {},  # hands in reference/tiled.cu as it is
}
PLANTED = {"tiled": ("ana", "ben"), "unrolled": ("eve", "fay")}
REFERENCE_TILED = (ROOT / "reference" / "tiled.cu").read_text()


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    base = tmp_path_factory.mktemp("similarity")
    cfg_path = staff_class.write_config(base, roster=[*CLASS, "ivy"])
    cfg = staff_class.load(cfg_path)
    for student, solutions in CLASS.items():
        staff_class.hand_in(cfg, base, student, solutions, texts={"tiled": REFERENCE_TILED} if student == "rex" else None)
    sweep = staff_class.plan(cfg)
    r = subprocess.run([sys.executable, str(ROOT / "cluster" / "gemmlab_cluster.py"), "--config", str(cfg_path),
                        "similarity", "--name", "final"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return cfg, sweep, r.stdout


def read_csv(sweep, name):
    with open(sweep / "similarity" / name) as f:
        return list(csv.DictReader(f))


def test_planted_copies_rank_first_and_honest_pairs_stay_low(swept):
    _, sweep, out = swept
    rows = [r for r in read_csv(sweep, "pairs.csv") if "student" == r["kind_a"] == r["kind_b"]]
    assert list(rows[0]) == similarity.PAIR_COLUMNS
    for stage, pair in PLANTED.items():
        ranked = [r for r in rows if r["stage"] == stage]
        first = ranked[0]
        assert (first["a"], first["b"]) == pair, ranked
        assert float(first["similarity"]) >= 0.8, first
        assert float(first["similarity_a"]) >= 0.8 and float(first["similarity_b"]) >= 0.8, first
        honest = [r for r in ranked[1:] if "rex" not in (r["a"], r["b"])]
        assert honest, f"{stage}: the honest pairs should be listed below the copy"
        assert max(float(r["similarity"]) for r in honest) <= 0.5, honest
        assert all(r["group"] == "" for r in honest), honest
        assert f": {pair[0]}, {pair[1]} (up to " in out, out


def test_each_planted_copy_is_one_group_of_two(swept):
    _, sweep, _ = swept
    groups = {(g["stage"], g["members"]): g for g in read_csv(sweep, "groups.csv")}
    assert list(next(iter(groups.values()))) == similarity.GROUP_COLUMNS
    for stage, pair in PLANTED.items():
        g = groups[(stage, " ".join(pair))]
        assert (g["size"], g["students"]) == ("2", "2") and float(g["similarity"]) >= 0.8, g


def test_a_hand_in_of_the_reference_is_flagged_against_reference(swept):
    """rex copied nobody in the class, only the instructor's solution: a group of rex and "reference"."""
    _, sweep, _ = swept
    groups = [g for g in read_csv(sweep, "groups.csv") if "rex" in g["members"].split()]
    assert [(g["stage"], g["members"], g["students"]) for g in groups] == [("tiled", "rex reference", "1")], groups
    pair = next(r for r in read_csv(sweep, "pairs.csv") if (r["a"], r["b"]) == ("rex", "reference"))
    assert (pair["stage"], pair["kind_b"]) == ("tiled", "reference") and float(pair["similarity"]) > 0.95, pair
    assert pair["page"] == "tiled/rex--reference.html"
    # nobody else is near the reference: honest solutions are not flagged against it
    near = [r for r in read_csv(sweep, "pairs.csv") if r["b"] == "reference" and r["a"] != "rex"]
    assert all(r["group"] == "" for r in near), near


def test_the_stub_is_boilerplate(swept):
    """hal, and everyone who did not touch a stage, hand in the same stub: no pair, no score."""
    _, sweep, _ = swept
    rows = read_csv(sweep, "pairs.csv")
    assert all(float(r["similarity"]) > 0 for r in rows)
    assert not any("hal" in (r["a"], r["b"]) for r in rows)
    assert not [r for r in rows if r["stage"] in ("naive", "pitched", "reuse")], rows
    tiled = {(r["a"], r["b"]) for r in rows if r["stage"] == "tiled"}
    assert ("eve", "fay") not in tiled and ("fay", "gil") not in tiled  # both handed in the tiled stub


def test_a_stage_the_handout_gives_complete_is_not_compared(swept):
    """naive's stub is the finished baseline (no TODO(student): task): nothing of the students' own."""
    _, sweep, out = swept
    assert "naive: given complete in the handout" in out
    index = (sweep / "similarity" / "index.html").read_text()
    assert 'id="stage-naive"' not in index and "Not compared: naive" in index
    assert 'id="stage-tiled"' in index and 'id="stage-pitched"' in index
    assert not [r for r in read_csv(sweep, "pairs.csv") + read_csv(sweep, "groups.csv") if r["stage"] == "naive"]


def test_without_the_stub_as_boilerplate_stubs_would_match(swept, tmp_path):
    """The control: the same comparison with an empty boilerplate file pairs identical stubs at 100 %,
    so the test above proves the stub is what keeps them apart."""
    cfg, sweep, _ = swept
    files, _ = similarity.hand_ins(sweep)
    dirs = {s: similarity.staged(tmp_path / "hand-ins", s, files[s].stage_bytes()) for s in files}
    empty = tmp_path / "empty.cu"
    empty.write_text("\n")
    settings = {k: cfg.setting("similarity", k) for k in ("noise_threshold", "guarantee_threshold", "report_threshold")}
    entries = [similarity.Entry(s, "student", dirs[s] / "tiled.cu") for s in ("eve", "fay", "hal")]
    result = similarity.compare_stage("tiled.cu", empty, entries, settings)
    assert len(result.pairs) == 3 and min(p.similarity for p in result.pairs) > 0.95
    assert [[e.label for e in g] for g in result.groups] == [["eve", "fay", "hal"]]


def test_reports_are_written(swept):
    _, sweep, _ = swept
    out = sweep / "similarity"
    index = (out / "index.html").read_text()
    assert 'id="similarity-plot"' in index and 'id="pairs-tiled-1"' in index and 'id="pairs-unrolled-1"' in index
    for stage, (a, b) in PLANTED.items():
        page = f"{stage}/{a}--{b}.html"
        assert f'href="{page}"' in index  # each pair links to its own page, not the stage's
        html = (out / page).read_text()
        assert f"/{a}/attempt-" in html and f"/{b}/attempt-" in html  # the pair, side by side
        assert "highlight-red" in html and "highlight-green" in html
        assert html.count("<pre>") == 2
    pages = sorted(p.relative_to(out).as_posix() for p in out.glob("*/*.html"))
    assert pages == ["tiled/ana--ben.html", "tiled/rex--reference.html", "unrolled/eve--fay.html"], pages
    assert (out / "similarity.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(sweep.glob(".similarity-*"))


def test_the_report_is_the_same_each_time(swept):
    """The tool fixes Python's string hash (copydetect's fingerprints depend on it)."""
    cfg, sweep, _ = swept
    before = [(sweep / "similarity" / n).read_text() for n in ("pairs.csv", "groups.csv")]
    r = subprocess.run([sys.executable, str(ROOT / "cluster" / "gemmlab_cluster.py"), "--config", str(cfg.path),
                        "similarity", "--sweep", str(sweep)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert [(sweep / "similarity" / n).read_text() for n in ("pairs.csv", "groups.csv")] == before


# ---- a second class: a group of five, and an earlier term's hand-in --------------------------------
FIVE = ["p1", "p2", "p3", "p4", "p5"]


@pytest.fixture(scope="module")
def with_archive(tmp_path_factory):
    """p1..p5 hand in one tiled file (tiled_fma_padded); zoe hands in tiled_pointer_walk, which old
    handed in last term (an archived drop box, 2025-fall/dropbox); una hands in something of her own."""
    base = tmp_path_factory.mktemp("archive")
    last_term = base / "2025-fall"
    last_term.mkdir()
    old_cfg = staff_class.load(staff_class.write_config(last_term, roster=["old", "other"]))
    staff_class.hand_in(old_cfg, last_term, "old", {"tiled": "tiled_pointer_walk"})
    staff_class.hand_in(old_cfg, last_term, "other", {"unrolled": "unrolled_acc4_rows"})
    now = base / "2026-fall"
    now.mkdir()
    cfg_path = staff_class.write_config(now, f'[similarity]\narchive = ["{last_term}/dropbox"]\n',
                                        roster=[*FIVE, "zoe", "una"])
    cfg = staff_class.load(cfg_path)
    for student in FIVE:
        staff_class.hand_in(cfg, now, student, {"tiled": "tiled_fma_padded"})
    staff_class.hand_in(cfg, now, "zoe", {"tiled": "tiled_pointer_walk"})
    staff_class.hand_in(cfg, now, "una", {"tiled": "tiled_textbook"})
    sweep = staff_class.plan(cfg)
    r = subprocess.run([sys.executable, str(ROOT / "cluster" / "gemmlab_cluster.py"), "--config", str(cfg_path),
                        "similarity", "--name", "final"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return cfg, sweep


def test_five_students_sharing_a_file_are_one_group(with_archive):
    _, sweep = with_archive
    groups = [g for g in read_csv(sweep, "groups.csv") if g["stage"] == "tiled"]
    five = [g for g in groups if set(FIVE) & set(g["members"].split())]
    assert [(g["members"], g["size"], g["students"]) for g in five] == [(" ".join(FIVE), "5", "5")], groups
    pairs = [r for r in read_csv(sweep, "pairs.csv") if r["group"] == five[0]["group"] and r["stage"] == "tiled"]
    assert len(pairs) == 10  # every pair is in pairs.csv; the index shows top_pairs of them, each with a page
    index = (sweep / "similarity" / "index.html").read_text()
    table = index.split(f'id="pairs-tiled-{five[0]["group"]}"')[1].split("</table>")[0]
    assert table.count("<tr") == 1 + 10 and table.count("side by side") == 10
    assert len(list((sweep / "similarity" / "tiled").glob("p*--p*.html"))) == 10


def test_top_pairs_bounds_the_pairs_shown_in_a_group_not_the_groups(with_archive, tmp_path):
    cfg, sweep = with_archive
    text = cfg.path.read_text().replace("[similarity]\n", "[similarity]\ntop_pairs = 3\n")
    small = cfg.path.with_name("course-top3.toml")
    small.write_text(text)
    r = subprocess.run([sys.executable, str(ROOT / "cluster" / "gemmlab_cluster.py"), "--config", str(small),
                        "similarity", "--sweep", str(sweep)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    groups = read_csv(sweep, "groups.csv")
    assert len(groups) == 2  # the five, and zoe with last term's hand-in: every group is shown
    index = (sweep / "similarity" / "index.html").read_text()
    group = next(g["group"] for g in groups if g["size"] == "5")
    table = index.split(f'id="pairs-tiled-{group}"')[1].split("</table>")[0]
    assert table.count("<tr") == 1 + 3 and "the 3 most similar of its 10 pairs" in index
    assert sum(1 for r in read_csv(sweep, "pairs.csv") if r["page"]) == 3 + 1


def test_an_archived_hand_in_is_matched(with_archive):
    _, sweep = with_archive
    groups = [g for g in read_csv(sweep, "groups.csv") if "zoe" in g["members"].split()]
    assert [(g["stage"], g["members"], g["students"]) for g in groups] == [
        ("tiled", "zoe 2025-fall/dropbox/old", "1")], groups
    pair = next(r for r in read_csv(sweep, "pairs.csv") if r["a"] == "zoe" and r["kind_b"] == "archive")
    assert pair["b"] == "2025-fall/dropbox/old" and float(pair["similarity"]) > 0.95, pair
    html = (sweep / "similarity" / pair["page"]).read_text()
    assert "/2025-fall/dropbox/old/attempt-" in html and "an earlier term" in html
    # the archive is compared with this term's students only, never with itself; una copied nobody
    rows = read_csv(sweep, "pairs.csv")
    assert not [r for r in rows if r["kind_a"] != "student"]
    assert not [g for g in read_csv(sweep, "groups.csv") if "una" in g["members"].split()]


def test_the_archive_key_is_checked(tmp_path):
    cfg = staff_class.load(staff_class.write_config(tmp_path, roster=["ana"]))
    staff_class.hand_in(cfg, tmp_path, "ana", {"tiled": "tiled_textbook"})
    staff_class.plan(cfg)
    for value, want in (('["nowhere"]', f"{tmp_path}/nowhere does not exist"),
                        ('"one/path"', "should be a list of strings")):
        cfg_path = staff_class.write_config(tmp_path, f"[similarity]\narchive = {value}\n", roster=["ana"])
        r = subprocess.run([sys.executable, str(ROOT / "cluster" / "gemmlab_cluster.py"), "--config", str(cfg_path),
                            "similarity", "--name", "final"], capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and "[similarity] archive" in r.stderr and want in r.stderr, r.stderr
    (tmp_path / "empty").mkdir()
    cfg = staff_class.load(staff_class.write_config(tmp_path, '[similarity]\narchive = ["empty"]\n'))
    with pytest.raises(staff_class.config.ConfigError, match="neither a sweep directory .* nor a drop box"):
        cfg.similarity_archive()


def test_no_sweep_is_named(tmp_path):
    cfg_path = staff_class.write_config(tmp_path)
    r = subprocess.run([sys.executable, str(ROOT / "cluster" / "gemmlab_cluster.py"), "--config", str(cfg_path),
                        "similarity", "--name", "midterm"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "midterm has no plan.json" in r.stderr and "make sweep SWEEP=midterm" in r.stderr
