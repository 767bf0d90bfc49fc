"""The similarity report (`make similarity`) on a synthetic class with planted copies.

The class (solutions in tests/fixtures/similarity/, spliced into the handout's stubs):
  tiled:    ana textbook; ben = ana's with every name changed, helpers reordered, comments
            rewritten; cat and dan honest, different solutions; the others hand in the stub
  unrolled: eve outer product; fay = eve's, renamed and reordered; ana and gil honest, different;
            the others hand in the stub
  hal hands in the stubs only; ivy is on the roster and hands in nothing.
The planted pairs must come out on top of their stage, far above every honest pair, and students who
handed in the same untouched stub must not be paired at all (the stub is boilerplate).
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
}
PLANTED = {"tiled": ("ana", "ben"), "unrolled": ("eve", "fay")}


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    base = tmp_path_factory.mktemp("similarity")
    cfg_path = staff_class.write_config(base, roster=[*CLASS, "ivy"])
    cfg = staff_class.load(cfg_path)
    for student, solutions in CLASS.items():
        staff_class.hand_in(cfg, base, student, solutions)
    sweep = staff_class.plan(cfg)
    r = subprocess.run([sys.executable, str(ROOT / "cluster" / "gemmlab_cluster.py"), "--config", str(cfg_path),
                        "similarity", "--name", "final"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return cfg, sweep, r.stdout


def top_pairs(sweep):
    with open(sweep / "similarity" / "top-pairs.csv") as f:
        return list(csv.DictReader(f))


def test_planted_copies_rank_first_and_honest_pairs_stay_low(swept):
    _, sweep, out = swept
    rows = top_pairs(sweep)
    assert list(rows[0]) == similarity.CSV_COLUMNS
    for stage, pair in PLANTED.items():
        ranked = [r for r in rows if r["stage"] == stage]
        first = ranked[0]
        assert (first["rank"], (first["student_a"], first["student_b"])) == ("1", pair), ranked
        assert float(first["similarity"]) >= 0.8, first
        assert float(first["similarity_a"]) >= 0.8 and float(first["similarity_b"]) >= 0.8, first
        honest = [r for r in ranked[1:]]
        assert honest, f"{stage}: the honest pairs should be listed below the copy"
        assert max(float(r["similarity"]) for r in honest) <= 0.5, honest
        assert f"most similar {pair[0]}–{pair[1]}" in out


def test_the_stub_is_boilerplate(swept):
    """hal, and everyone who did not touch a stage, hand in the same stub: no pair, no score."""
    _, sweep, _ = swept
    rows = top_pairs(sweep)
    assert all(float(r["similarity"]) > 0 for r in rows)
    assert not any("hal" in (r["student_a"], r["student_b"]) for r in rows)
    assert not [r for r in rows if r["stage"] in ("naive", "pitched", "reuse")], rows
    tiled = {(r["student_a"], r["student_b"]) for r in rows if r["stage"] == "tiled"}
    assert ("eve", "fay") not in tiled and ("fay", "gil") not in tiled  # both handed in the tiled stub


def test_without_the_stub_as_boilerplate_stubs_would_match(swept, tmp_path):
    """The control: the same comparison with an empty boilerplate file pairs identical stubs at 100 %,
    so the test above proves the stub is what keeps them apart."""
    cfg, sweep, _ = swept
    dirs, _ = similarity.hand_ins(sweep)
    empty = tmp_path / "empty.cu"
    empty.write_text("\n")
    settings = {k: cfg.setting("similarity", k) for k in ("noise_threshold", "guarantee_threshold", "report_threshold")}
    files = {s: dirs[s] / "tiled.cu" for s in ("eve", "fay", "hal")}
    pairs, _ = similarity.compare_stage("tiled.cu", empty, files, settings, tmp_path / "r.html")
    assert min(p.similarity for p in pairs) > 0.95


def test_reports_are_written(swept):
    _, sweep, _ = swept
    out = sweep / "similarity"
    index = (out / "index.html").read_text()
    assert 'id="similarity-plot"' in index and 'id="pairs-tiled"' in index and 'id="pairs-unrolled"' in index
    assert 'href="tiled.html"' in index and 'href="unrolled.html"' in index
    for stage, (a, b) in PLANTED.items():
        report = (out / f"{stage}.html").read_text()
        assert f"/{a}/attempt-" in report and f"/{b}/attempt-" in report  # the pair, side by side
        assert "highlight-red" in report
    assert (out / "similarity.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(sweep.glob(".similarity-*"))


def test_the_report_is_the_same_each_time(swept):
    """The tool fixes Python's string hash (copydetect's fingerprints depend on it)."""
    cfg, sweep, _ = swept
    before = (sweep / "similarity" / "top-pairs.csv").read_text()
    r = subprocess.run([sys.executable, str(ROOT / "cluster" / "gemmlab_cluster.py"), "--config", str(cfg.path),
                        "similarity", "--sweep", str(sweep)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert (sweep / "similarity" / "top-pairs.csv").read_text() == before


def test_no_sweep_is_named(tmp_path):
    cfg_path = staff_class.write_config(tmp_path)
    r = subprocess.run([sys.executable, str(ROOT / "cluster" / "gemmlab_cluster.py"), "--config", str(cfg_path),
                        "similarity", "--name", "midterm"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "midterm has no plan.json" in r.stderr and "make sweep SWEEP=midterm" in r.stderr
