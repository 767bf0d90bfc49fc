"""report/report_tables.py, function by function: the number formats, the pipe table, the variants a
stage shows, and each generated block (environment, summary, scores, stage, pitched, every result,
tensor cores, figure) from a small Dataset made here, so each test says what one block writes for
one case.

The example report's blocks as a reader meets them are test_report_reading.py's.

  python3 -m pytest -q tests/py/report/test_report_tables.py
"""
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from support.paths import ROOT

sys.path.insert(0, str(ROOT / "report"))

import report_tables as rt  # noqa: E402
from report_data import Dataset, Point, ReportSet, StageResult, gpu_peaks  # noqa: E402

N = 1024
HEAD = (N, N, N)
RS = ReportSet(square_sizes=(512, N), odd_sizes=(1001,), rect_shapes=("64x128x256",), headline_size=N)
H100 = {"gpu": {"name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0", "sms": 132, "max_sm_clock_mhz": 1980,
                "memory_bytes": 80 * 2**30, "l2_bytes": 50 * 2**20}}


def stage(name, variants=("",), **kw):
    return {"name": name, "title": name.title(), "variants": list(variants), "baseline": False, "tensor_cores": False,
            "operands": "dense", **kw}


REGISTRY = [stage("naive", baseline=True), stage("tiled", technique="shared-memory tiles"),
            stage("pitched", operands="pitched"), stage("multi", variants=("16", "32"))]


def pt(shape, gflops, disposition="passed", **kw):
    fields = dict(time_ms=None, spread_pct=None, x_naive=None, pct_cublas=None, sm_clock_mhz=None)
    fields.update(kw)
    return Point(shape, disposition, gflops, **fields)


def res(stage_name, variant, prec, points=(), disposition="passed", problem=""):
    return StageResult(stage_name, variant, prec, disposition, problem, {p.shape: p for p in points})


def dataset(results=(), registry=REGISTRY, baselines=None, environment=None, run=None, grade=None, sources=()):
    return Dataset(registry, {(r.stage, r.variant, r.precision): r for r in results}, baselines or {},
                   environment or {}, "2026-11-24T06:00:00Z", run or {}, grade, list(sources))


def row_of(block, first):
    """The table row of `block` whose first cell is `first`, as its cells."""
    for line in block.splitlines():
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        if line.startswith("| ") and cells[0] == first:
            return cells
    raise AssertionError(f"no row {first!r} in:\n{block}")


# ---- formats ---------------------------------------------------------------------------------------
def test_numbers_are_formatted_with_a_dash_for_none():
    assert (rt.fmt_gflops(1234.4), rt.fmt_gflops(None), rt.fmt_gflops(0)) == ("1,234", "—", "—")
    assert (rt.fmt_x(2.5), rt.fmt_x(None)) == ("2.50×", "—")
    assert (rt.fmt_pct(82.27), rt.fmt_pct(None)) == ("82.3", "—")
    assert (rt.fmt_ratio(4.93019), rt.fmt_ratio(12345.6), rt.fmt_ratio(None)) == ("4.93", "12,346", "—")
    assert (rt.fmt_error(0), rt.fmt_error(0.5), rt.fmt_error(None)) == ("0 (exact)", "0.5", "—")


def test_shapes_and_escapes_read_as_in_print():
    assert rt.shape_label((4096, 4096, 4096)) == "4096³"
    assert rt.shape_label((8192, 128, 8192)) == "8192×128×8192"
    assert rt.md_escape("a_b|c*d") == "a\\_b\\|c\\*d"
    assert rt.notice("Not measured") == "> **Not measured**\n"


def test_a_narrow_table_has_one_dash_rule_per_column_as_wide_as_its_widest_cell():
    assert rt.table(["A", "B"], [["x", "1"]], "lr") == "| A | B |\n|:------|------:|\n| x | 1 |\n"
    assert rt.table(["A", "B", "C"], [["x", "1", "c"]], "lrc", min_widths={0: 10}) == (
        "| A | B | C |\n|:----------|------:|:------:|\n| x | 1 | c |\n")
    assert rt.table(["Stage"], [["a-much-longer-name"]], "l").splitlines()[1] == "|:" + "-" * 21 + "|"


def test_include_names_are_the_fixed_blocks_the_figures_and_one_per_stage():
    assert rt.include_names(dataset(), ["fig-square"]) == [*rt.FIXED_INCLUDES, "fig-square", "stage-naive",
                                                           "stage-tiled", "stage-pitched", "stage-multi"]


def test_point_ratios_are_the_benchs_own_else_from_the_baselines():
    ds = dataset(baselines={("float", HEAD): {"naive_gflops": 100.0, "cublas_gflops": 1000.0}})
    assert rt.point_ratios(ds, "float", HEAD, 500.0, pt(HEAD, 500.0, x_naive=4.0, pct_cublas=40.0)) == (4.0, 40.0)
    assert rt.point_ratios(ds, "float", HEAD, 500.0) == (5.0, 50.0)
    assert rt.point_ratios(ds, "double", HEAD, 500.0) == (None, None)
    assert rt.point_ratios(ds, "float", HEAD, None) == (None, None)


# ---- the variants a stage shows ----------------------------------------------------------------------
TENSOR = stage("tensor", variants=("tf32", "fp16"), tensor_cores=True, variant_info=[
    {"label": "tf32", "inputs": {"float": "tf32", "double": "fp64"}, "error_bound": {"float": 512.0, "double": 32.0}},
    {"label": "fp16", "inputs": {"float": "fp16", "double": "fp64"}, "error_bound": {"float": 4096.0, "double": 32.0}}])


def test_a_tensor_stage_whose_variants_are_one_fp64_kernel_shows_it_once():
    ds = dataset([res("tensor", "fp16", "double", [pt(HEAD, 50000.0)]), res("tensor", "tf32", "double", [pt(HEAD, 40000.0)])],
                 registry=[stage("naive", baseline=True), TENSOR])
    assert rt.shown_variants(ds, "tensor", "double") == [("fp16", "tensor (FP64, DMMA)")]  # the fastest stands for it
    assert rt.variant_cell(ds, "tensor", "double", "fp16") == "DMMA"
    assert rt.shown_variants(ds, "tensor", "float") == [("tf32", "tensor (tf32)"), ("fp16", "tensor (fp16)")]
    assert rt.variant_cell(ds, "tensor", "float", "tf32") == "tf32"
    assert rt.shown_variants(dataset(), "multi", "double") == [("16", "multi (16)"), ("32", "multi (32)")]


# ---- the environment ---------------------------------------------------------------------------------
def test_the_environment_names_the_gpu_its_clocks_peaks_software_and_the_run():
    ds = dataset([res("naive", "", "float", [pt(HEAD, 10.0, sm_clock_mhz=1900, throttled=True),
                                             pt((512,) * 3, 10.0, sm_clock_mhz=1980)])],
                 environment={**H100, "driver_version": "580.1", "cuda_driver_api": "13.0", "cuda_runtime": "13.0",
                              "cublas": "13.1.0", "host": "gpu_07",
                              "clocks": {"start": {"sm_clock_mhz": 1980}, "end": {"sm_clock_mhz": 1900}}},
                 run={"created": "2026-11-24T06:48:05Z", "seconds": 61.4, "commit": "0123456789abcdef", "commit_dirty": True},
                 sources=["bench-float.json"])
    block = rt.block_environment(ds, RS)
    peaks = gpu_peaks(ds.environment, RS)
    assert row_of(block, "GPU")[1] == "NVIDIA H100 80GB HBM3 (sm\\_90, 132 SMs, 80 GiB, L2 50 MiB)"
    assert row_of(block, "SM clock")[1] == "max 1980 MHz; while timing 1900–1980 MHz (median 1940)"
    assert row_of(block, "Throttling")[1] == "1 of 2 timings saw a power, thermal or hardware slowdown (NVML)"
    assert row_of(block, "Clocks (NVML)")[1] == "start 1980 MHz; end 1900 MHz"
    assert row_of(block, "Driver")[1] == "580.1 (CUDA driver API 13.0)"
    assert row_of(block, "CUDA, cuBLAS")[1] == "13.0, 13.1.0"
    assert row_of(block, "Peaks")[1].startswith(f"FP32 {peaks['fp32_gflops'] / 1000:.1f} TFLOPS, FP64 ")
    assert row_of(block, "Host")[1] == "gpu\\_07"
    assert row_of(block, "Measured")[1] == "2026-11-24 06:48:05 UTC (the report set took 61 s)"
    assert row_of(block, "Commit")[1] == "`0123456789ab` with uncommitted changes"
    assert row_of(block, "Results files")[1] == "`bench-float.json`"


def test_the_environment_of_a_draft_says_where_to_measure():
    block = rt.block_environment(dataset(environment={"no_gpu_reason": "no CUDA device"},
                                         run={"draft": True, "host": "laptop", "measure": "make report"}), RS)
    assert row_of(block, "GPU")[1] == "no CUDA device"
    assert row_of(block, "Measured")[1] == ("not yet: laptop has no GPU; on a GPU node, `make report` measures every "
                                            "stage")
    assert row_of(block, "Commit")[1] == "unknown (measured outside a git checkout)"


def test_provisional_numbers_are_noticed_above_the_environment():
    block = rt.block_environment(dataset(run={"provisional": True, "note": "synthesized"}), RS)
    assert block.startswith("> **Provisional numbers: synthesized**\n\n| ")


def test_nvml_readings_are_described_in_words():
    assert rt.describe_reading({"sm_clock_mhz": 1980, "max_sm_clock_mhz": 1980, "temperature_c": 42, "power_w": 227.2,
                                "clock_reasons": []}) == "1980 MHz (max 1980), 42 °C, 227 W, no slowdown"
    assert rt.describe_clocks({"float": {"start": {"sm_clock_mhz": 1980},
                                         "end": {"sm_clock_mhz": 1700, "clock_reasons": ["sw_power_cap"]}},
                               "double": "n/a"}) == "float: start 1980 MHz; end 1700 MHz, sw_power_cap — double: n/a"
    assert rt.describe_clocks("none") == "none"


# ---- the summary and the scores ----------------------------------------------------------------------
GRADE = {"total": 12.0, "max": 10.0, "stages": [
    {"stage": "tiled", "precision": "float", "variant_used": "", "disposition": "passed", "correctness": 5,
     "correctness_max": 5, "performance": 3, "performance_max": 5, "gflops": 800.0, "x_naive": 8.0, "pct_cublas": 40.0},
    {"stage": "tensor", "precision": "float", "variant_used": "tf32", "disposition": "passed", "correctness": 2,
     "correctness_max": 2, "performance": 2, "performance_max": 2, "extra_credit": True}]}


def test_the_summary_has_a_row_per_stage_and_precision_at_the_headline_size():
    ds = dataset([res("tiled", "", "float", [pt(HEAD, 800.0, x_naive=8.0, pct_cublas=40.0)]),
                  res("naive", "", "float", disposition="failed", problem="C[1] is 2")],
                 baselines={("float", HEAD): {"naive_gflops": 100.0, "cublas_gflops": 2000.0}})
    block = rt.block_summary(ds, ReportSet(precisions=("float",), headline_size=N))
    assert block.splitlines()[0] == f"| Stage | Precision | Variant | GFLOPS at {N}³ | × naive | % cuBLAS |"
    assert row_of(block, "tiled") == ["tiled", "FP32", "", "800", "8.00×", "40.0"]
    assert row_of(block, "naive") == ["naive", "FP32", "", "*failed: C[1] is 2*", "", ""]
    assert row_of(block, "pitched") == ["pitched", "FP32", "", "*not measured yet (run `make report` on a GPU)*", "", ""]
    assert row_of(block, "cuBLAS") == ["cuBLAS", "FP32", "", "2,000", "20.00×", "100.0"]


def test_the_summary_with_a_grade_adds_the_scores_and_explains_extra_credit():
    ds = dataset([res("tiled", "", "float", [pt(HEAD, 800.0)])], grade=GRADE)
    block = rt.block_summary(ds, ReportSet(precisions=("float",), headline_size=N))
    assert row_of(block, "tiled")[-1] == "8 / 10" and row_of(block, "naive")[-1] == "—"
    assert ("Scores from `make grade` (total 12 of 10); GFLOPS here are from the report set. 4 of these points are "
            "extra credit (tensor): they count in the total but not in the maximum of 10, so a total above it is no "
            "error.") in block


def test_a_draft_summary_says_nothing_is_measured_yet():
    block = rt.block_summary(dataset(run={"draft": True, "measure": "make report"}), RS)
    assert block.startswith("> **A draft: nothing is measured yet. On a GPU node, `make report` measures every stage "
                            "and writes the report.**\n")


def test_extra_credit_is_noted_only_where_points_were_earned():
    assert rt.extra_credit_note({"stages": [{"stage": "tensor", "extra_credit": True, "correctness": 0}]}) == ""
    assert rt.extra_credit_note(GRADE).startswith(" 4 of these points are extra credit (tensor)")


def test_fp64_above_the_fma_peak_is_explained_by_the_tensor_cores():
    ds = dataset(environment=H100)
    fma = gpu_peaks(H100, RS)["fp64_gflops"]
    assert rt.fp64_tensor_note(ds, RS, {"tiled": fma / 2, "cuBLAS": fma / 2}) == ""
    note = rt.fp64_tensor_note(ds, RS, {"reuse": fma * 1.5, "tiled": fma / 2, "cuBLAS": fma * 1.2})
    assert note.startswith(f"FP64 above the FP64 peak: reuse and cuBLAS run faster in double than the GPU's FP64 FMA "
                           f"units can ({fma / 1000:.1f} TFLOPS), on its FP64 tensor cores (DMMA")
    assert rt.fp64_tensor_note(dataset(), RS, {"reuse": 1e9}) == ""  # no GPU named: no peak to compare with


def test_the_scores_table_without_notes_has_no_note_column():
    block = rt.block_scores(dataset(grade=GRADE), RS)
    assert block.splitlines()[0] == ("| Stage | Prec. | Variant | Result | Corr. | Perf. | GFLOPS | × naive | % cuBLAS |")
    assert row_of(block, "tiled") == ["tiled", "FP32", "", "passed", "5 / 5", "3 / 5", "800", "8.00×", "40.0"]
    assert "Total: **12 / 10**." in block


def test_the_scores_table_with_notes_leaves_out_the_ratios_the_notes_give():
    grade = {**GRADE, "stages": [{**GRADE["stages"][0], "note": "40% of cuBLAS"}]}
    block = rt.block_scores(dataset(grade=grade), RS)
    assert block.splitlines()[0] == "| Stage | Prec. | Variant | Result | Corr. | Perf. | GFLOPS | Note |"
    assert row_of(block, "tiled")[-1] == "40% of cuBLAS"


def test_no_grade_is_a_notice():
    assert rt.block_scores(dataset(), RS) == rt.notice(
        "No grade yet: `make grade` writes one, and `make report` then shows the score here.")


# ---- one stage -----------------------------------------------------------------------------------------
def test_a_stage_of_one_variant_shows_each_size_in_both_precisions():
    ds = dataset([res("tiled", "", "float", [pt(HEAD, 800.0, x_naive=8.0, pct_cublas=40.0)]),
                  res("tiled", "", "double", [pt(HEAD, 300.0)])])
    block = rt.block_stage(ds, RS, "tiled")
    assert block.startswith("*Technique:* shared-memory tiles.\n")
    assert "| N | FP32 GFLOPS | × naive | % cuBLAS | FP64 GFLOPS | × naive | % cuBLAS |" in block
    assert row_of(block, str(N)) == [str(N), "800", "8.00×", "40.0", "300", "—", "—"]
    assert row_of(block, "512") == ["512", "—", "—", "—", "—", "—", "—"]


def test_a_stage_of_several_variants_shows_a_column_per_variant():
    ds = dataset([res("multi", "16", "float", [pt(HEAD, 600.0)]), res("multi", "32", "float", [pt(HEAD, 700.0)])])
    block = rt.block_stage(ds, RS, "multi")
    assert "GFLOPS of each variant (16, 32) on square problems.\n" in block
    assert "| N | FP32 (16) | FP32 (32) | FP64 (16) | FP64 (32) |" in block
    assert row_of(block, str(N)) == [str(N), "600", "700", "—", "—"]
    assert block.endswith(rt.notice("FP64: not measured yet (run `make report` on a GPU)."))


def test_a_stage_not_implemented_in_any_precision_is_one_notice():
    ds = dataset([res("tiled", "", p, disposition="not_implemented") for p in ("float", "double")])
    assert rt.block_stage(ds, RS, "tiled") == "*Technique:* shared-memory tiles.\n\n" + rt.notice(
        "Stage tiled: not implemented yet.")


# ---- pitched, every result, tensor cores, figures -------------------------------------------------------
def test_the_pitched_table_compares_each_pair_at_the_odd_sizes():
    odd = (1001, 1001, 1001)
    ds = dataset([res("tiled", "", "float", [pt(odd, 400.0)]), res("pitched", "", "float", [pt(odd, 500.0)])])
    block = rt.block_pitched(ds, ReportSet(odd_sizes=(1001,), precisions=("float",)), [("pitched", "tiled")])
    assert block.splitlines()[0] == "| N | FP32 tiled | FP32 pitched | pitched / tiled |"
    assert row_of(block, "1001") == ["1001", "400", "500", "1.25×"]


def test_the_pitched_table_without_data_says_why():
    rs = ReportSet(odd_sizes=(1001,))
    assert rt.block_pitched(dataset(), rs, [("pitched", "tiled")]) == rt.notice(
        "Stages tiled and pitched: not measured yet (run `make report` on a GPU).")
    assert rt.block_pitched(dataset(), rs, []) == rt.notice("The registry has no stage with pitched operands.")


def test_every_result_is_a_table_per_precision_or_a_notice():
    shapes = [(512,) * 3, HEAD, (1001,) * 3, (64, 128, 256)]
    ds = dataset([res("tiled", "", "float", [pt(HEAD, 800.0)])],
                 baselines={("float", HEAD): {"naive_gflops": 100.0, "cublas_gflops": 2000.0}})
    block = rt.block_results_all(ds, RS)
    assert "**FP32, GFLOPS, CUDA cores.**\n" in block
    assert row_of(block, f"{N}³") == [f"{N}³", "800", "100", "2,000"]
    assert [row_of(block, rt.shape_label(s))[0] for s in shapes] == [rt.shape_label(s) for s in shapes]
    assert block.endswith(rt.notice("FP64: no measurements yet."))


def test_every_result_without_a_stage_still_shows_the_baselines():
    ds = dataset(baselines={("double", HEAD): {"naive_gflops": 50.0, "cublas_gflops": 900.0}})
    block = rt.block_results_all(ds, ReportSet(square_sizes=(N,), odd_sizes=(1001,), rect_shapes=(),
                                               precisions=("double",)))
    assert "**FP64, GFLOPS.**\n" in block and row_of(block, f"{N}³") == [f"{N}³", "50", "900"]


def test_the_tensor_block_names_each_variant_beside_cublas_and_explains_an_exact_error():
    rs = ReportSet(precisions=("float", "double"), headline_size=N)
    ds = dataset([res("tensor", "tf32", "float", [pt(HEAD, 40000.0, pct_cublas=80.0, cublas_item="cublas/tf32",
                                                     pct_cublas_fp32=400.0, max_error_ratio=3.5, error_bound=512.0)]),
                  res("tensor", "fp16", "float", disposition="failed"),
                  res("tensor", "tf32", "double", [pt(HEAD, 50000.0, pct_cublas=90.0, max_error_ratio=0.0)])],
                 registry=[stage("naive", baseline=True), TENSOR],
                 baselines={("float", HEAD): {"cublas_gflops": 10000.0, "cublas_tf32_gflops": 50000.0}})
    block = rt.block_tensor(ds, rs)
    assert row_of(block, "tensor (tf32)") == ["tensor (tf32)", "FP32", "tf32", "40,000", "80.0 (of TF32)", "400.0",
                                              "3.5", "512"]
    assert row_of(block, "tensor (fp16)") == ["tensor (fp16)", "FP32", "fp16", "*failed*", "", "", "—", "4,096"]
    assert row_of(block, "cuBLAS TF32 (FAST\\_TF32)") == ["cuBLAS TF32 (FAST\\_TF32)", "FP32", "", "50,000", "100.0",
                                                         "500.0", "", ""]
    assert row_of(block, "tensor (FP64, DMMA)")[-2:] == ["0 (exact)", "32"]
    assert rt.EXACT_NOTE in block
    assert rt.block_tensor(dataset(), rs) == rt.notice("The registry has no stage that uses the tensor cores.")


def test_a_figure_block_is_the_figure_and_what_it_leaves_out_or_a_notice():
    drawn = SimpleNamespace(name="fig-square", path=Path("/x/fig-square.pdf"), caption="GFLOPS by size",
                            missing=["tiled (double): not implemented yet"])
    assert rt.block_figure(drawn) == ("![GFLOPS by size](figures/fig-square.pdf){width=100%}\n\n"
                                      "*Not in this figure:* tiled (double): not implemented yet.\n")
    none = SimpleNamespace(name="fig-tiles", path=None, caption="", missing=["no tiled variants"])
    assert rt.block_figure(none) == rt.notice("Figure not drawn: no tiled variants.")
    assert rt.block_figure(SimpleNamespace(name="f", path=None, caption="", missing=[])) == rt.notice(
        "Figure not drawn: not implemented yet.")


def test_generated_blocks_are_the_names_report_md_may_include():
    fig = SimpleNamespace(name="fig-square", path=None, caption="", missing=["x"])
    ds = dataset()
    blocks = rt.generated_blocks(ds, RS, [fig], [])
    assert list(blocks) == rt.include_names(ds, ["fig-square"])
    assert all(isinstance(b, str) and b for b in blocks.values())


@pytest.mark.parametrize("value", [0, 0.0])
def test_an_exact_error_is_zero_however_it_is_written(value):
    assert rt.fmt_error(value) == "0 (exact)"
