"""report/report_history.py, function by function: which runs of `make bench` a stage's tuning history
holds (stage_runs), the one shape they are compared at (compare_shape), each run's best variant there
(best), the table's rows (history_rows), the block and figure added to the stage's section
(history_block, add_history), from history entries written here in bench_history.py's format.

`make bench TAG=...` then `make report` end to end is test_report_provenance.py's.

  python3 -m pytest -q tests/py/report/test_report_history.py
"""
import sys
import pytest

from support.paths import ROOT

sys.path.insert(0, str(ROOT / "report"))

import report_history as rh  # noqa: E402
from report_data import Dataset, ReportError  # noqa: E402
from report_tables import notice  # noqa: E402

try:
    import matplotlib  # noqa: F401
    HAS_MPL = True
except ImportError:
    HAS_MPL = False
needs_mpl = pytest.mark.skipif(not HAS_MPL, reason="needs matplotlib (make setup)")

BIG, SMALL = "2048x2048x2048", "512x512x512"


def row(stage, prec, shape, gflops, variant="", disposition="passed", pct=None):
    return {"stage": stage, "variant": variant, "precision": prec, "shape": shape, "disposition": disposition,
            "gflops": gflops, "pct_cublas": pct}


def entry(results, tag="", time="2026-11-20T10:00:00Z", files=None, gpu="NVIDIA H100"):
    return {"time": time, "tag": tag, "gpu": {"name": gpu}, "files": files or {}, "results": results}


HISTORY = [
    entry([row("tiled", "float", SMALL, 100.0), row("tiled", "float", BIG, 120.0, pct=5.0)], tag="first",
          files={"tiled.cu": "sha256:" + "ab" * 32}),
    entry([row("naive", "float", BIG, 10.0)], tag="naive only"),
    entry([row("tiled", "float", BIG, 300.0, variant="16", pct=15.0), row("tiled", "float", BIG, 350.0, variant="32",
                                                                          pct=17.5),
           row("tiled", "double", BIG, None, disposition="failed")], time="2026-11-21T11:30:00Z"),
    entry([row("tiled", "float", SMALL, 400.0)], tag="small only"),
]


def test_a_stages_runs_are_the_entries_that_tried_it_numbered_in_order():
    assert [(n, e["tag"]) for n, e in rh.stage_runs(HISTORY, "tiled")] == [(1, "first"), (3, ""), (4, "small only")]
    assert rh.stage_runs(HISTORY, "reuse") == []


def test_runs_are_compared_at_the_shape_most_of_them_timed_the_largest_on_a_tie():
    runs = rh.stage_runs(HISTORY, "tiled")
    assert rh.compare_shape(runs, "tiled") == BIG  # timed by runs 1 and 3 (three rows), SMALL by 1 and 4
    tie = [(1, entry([row("tiled", "float", SMALL, 1.0), row("tiled", "float", BIG, 1.0)]))]
    assert rh.compare_shape(tie, "tiled") == BIG
    failed = [(1, entry([row("tiled", "float", BIG, None, disposition="failed")]))]
    assert rh.compare_shape(failed, "tiled") is None


def test_a_runs_best_is_its_fastest_passed_variant_at_the_shape():
    assert rh.best(HISTORY[2], "tiled", "float", BIG) == ("32", 350.0, 17.5)
    assert rh.best(HISTORY[2], "tiled", "double", BIG) is None
    assert rh.best(HISTORY[3], "tiled", "float", BIG) is None


def test_a_run_without_a_tag_is_named_by_its_number():
    assert rh.run_label(3, HISTORY[2]) == "run 3" and rh.run_label(1, HISTORY[0]) == "first"


def two_stages():
    return Dataset([{"name": "naive", "variants": [""]}, {"name": "tiled", "variants": [""]}], {}, {}, {}, "", {},
                   None, [])


def test_the_history_table_has_a_row_per_run_saying_what_each_did_at_the_shape():
    shape, header, rows = rh.history_rows(HISTORY, "tiled", ("float", "double"))
    assert shape == BIG
    assert header == ["#", "configuration (TAG)", "measured", "tiled.cu", "FP32 GFLOPS", "FP32 % cuBLAS",
                      "FP64 GFLOPS", "FP64 % cuBLAS"]
    assert rows == [
        ["1", "first", "2026-11-20 10:00", "`abababab`", "120", "5.0", "—", ""],
        ["3", "run 3", "2026-11-21 11:30", "—", "350 (32)", "17.5", "failed", ""],
        ["4", "small only", "2026-11-20 10:00", "—", "not at this shape", "", "—", ""],
    ]


def test_a_stage_with_no_run_is_a_notice_that_says_how_to_add_one(tmp_path):
    block = rh.history_block(HISTORY, "reuse", ("float",), tmp_path, "results/student/bench-history.jsonl")
    assert block == ("\n**Tuning history of reuse.** The runs of `make bench` kept in "
                     "results/student/bench-history.jsonl, in the order they ran, each labelled with its `TAG=`.\n\n"
                     + notice("No bench run of reuse in the history yet: `make bench STAGE=reuse "
                              "TAG=<configuration>` adds one."))


@needs_mpl
def test_the_history_block_holds_the_table_and_the_figure(tmp_path):
    block = rh.history_block(HISTORY, "tiled", ("float",), tmp_path / "figures", "h.jsonl")
    assert "Best variant of each run at 2048³:\n" in block
    assert "| 3 | run 3 | 2026-11-21 11:30 | — | 350 (32) | 17.5 |" in block
    assert "![Tuning history of tiled: GFLOPS of each configuration at 2048³](figures/fig-history-tiled.pdf)" \
           "{width=100%}" in block
    assert (tmp_path / "figures" / "fig-history-tiled.pdf").read_bytes().startswith(b"%PDF")
    assert "different GPUs" not in block


@needs_mpl
def test_runs_on_different_gpus_are_compared_by_their_share_of_cublas(tmp_path):
    history = [entry([row("tiled", "float", BIG, 100.0)], gpu="NVIDIA A100"),
               entry([row("tiled", "float", BIG, 200.0)], gpu="NVIDIA H100")]
    block = rh.history_block(history, "tiled", ("float",), tmp_path, "h.jsonl")
    assert block.endswith("*The runs were measured on different GPUs (NVIDIA A100, NVIDIA H100): compare % cuBLAS, "
                          "not GFLOPS.*\n")


def test_no_figure_is_drawn_where_no_run_passed(tmp_path):
    history = [entry([row("tiled", "float", BIG, None, disposition="failed")])]
    assert rh.draw(history, "tiled", ("float",), tmp_path) is None
    assert list(tmp_path.iterdir()) == []


@needs_mpl
def test_add_history_appends_to_the_stages_block_and_its_file(tmp_path):
    blocks = {"stage-tiled": "numbers\n"}
    ds = two_stages()
    assert rh.add_history(blocks, tmp_path, HISTORY, ["tiled"], ds, ("float",), "h.jsonl") == ["tiled"]
    assert blocks["stage-tiled"].startswith("numbers\n\n\n**Tuning history of tiled.**")
    assert (tmp_path / "stage-tiled.md").read_text() == blocks["stage-tiled"]
    assert (tmp_path / "figures" / "fig-history-tiled.pdf").is_file()


def test_add_history_of_an_unknown_stage_names_the_stages(tmp_path):
    ds = two_stages()
    with pytest.raises(ReportError) as e:
        rh.add_history({}, tmp_path, HISTORY, ["tilde"], ds, ("float",), "h.jsonl")
    assert str(e.value) == "history: no stage named 'tilde' (stages: naive, tiled)"
