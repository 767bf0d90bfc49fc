"""report/report_figures.py, figure by figure: each `figure_*` draws its PDF from a small Dataset made
here, or returns no file and says what is missing (no data, a registry without such stages, a report set
without such shapes); and the pure parts — which stages are compared as pitched against dense
(pitched_pairs), a stage's fixed style (style_of), the roofline's compulsory intensity.

The example report's figures in a rendered PDF are test_report.py's.

  python3 -m pytest -q tests/py/report/test_report_figures.py
"""
import sys

import pytest

from support.paths import ROOT

sys.path.insert(0, str(ROOT / "report"))

pytest.importorskip("matplotlib", reason="needs matplotlib (make setup)")

import report_figures as rf  # noqa: E402
from report_data import Dataset, Point, ReportSet, StageResult  # noqa: E402

N = 1024
RS = ReportSet(square_sizes=(512, N), odd_sizes=(1001,), rect_shapes=("64x128x256",), headline_size=N)
NOT_MEASURED = "not measured yet (run `make report` on a GPU)"


def stage(name, variants=("",), **kw):
    return {"name": name, "title": name.title(), "variants": list(variants), "baseline": False, "tensor_cores": False,
            "operands": "dense", **kw}


REGISTRY = [stage("naive", baseline=True), stage("tiled", variants=("16", "32")), stage("unrolled"),
            stage("pitched", operands="pitched"), stage("tensor", variants=("tf32",), tensor_cores=True)]


def res(name, variant, prec, speeds):
    points = {s: Point(s, "passed", g, None, None, None, None, None) for s, g in speeds.items()}
    return StageResult(name, variant, prec, "passed", "", points)


def dataset(results=(), registry=REGISTRY, baselines=None, environment=None):
    return Dataset(registry, {(r.stage, r.variant, r.precision): r for r in results}, baselines or {},
                   environment or {}, "", {}, None, [])


def cube(n):
    return (n, n, n)


def is_pdf(path):
    return path.read_bytes().startswith(b"%PDF")


# ---- the pure parts --------------------------------------------------------------------------------------
def test_each_pitched_stage_is_compared_with_the_dense_stage_before_it():
    assert rf.pitched_pairs(dataset()) == [("pitched", "unrolled")]
    lone = [stage("naive", baseline=True), stage("pitched", operands="pitched")]  # only the baseline before it
    assert rf.pitched_pairs(dataset(registry=lone)) == []
    two = [stage("tiled"), stage("p1", operands="pitched"), stage("p2", operands="pitched")]
    assert rf.pitched_pairs(dataset(registry=two)) == [("p1", "tiled"), ("p2", "tiled")]


def test_a_stages_style_is_fixed_by_its_place_in_the_registry():
    ds = dataset()
    assert rf.style_of(ds, "tiled") == rf.style_of(dataset(registry=REGISTRY[:2]), "tiled")
    assert rf.style_of(ds, "tiled")["marker"] == rf.MARKERS[1]
    assert rf.style_of(ds, "naive")["color"] != rf.style_of(ds, "tiled")["color"]
    assert rf.style_of(ds, "retired")["marker"] == rf.MARKERS[len(REGISTRY)]  # not in the registry: after it


def test_the_compulsory_intensity_reads_a_and_b_once_and_writes_c_once():
    assert rf.compulsory_intensity(cube(1200), "float") == 2 * 1200 ** 3 / (4 * 3 * 1200 ** 2)  # N/6
    assert rf.compulsory_intensity(cube(1200), "double") == 100.0                               # N/12
    assert rf.compulsory_intensity((64, 128, 256), "float") == 2 * 64 * 128 * 256 / (4 * (64 * 256 + 256 * 128 + 64 * 128))


# ---- each figure, drawn or not -----------------------------------------------------------------------------
def test_the_square_figure_is_drawn_with_what_is_missing(tmp_path):
    ds = dataset([res("unrolled", "", "float", {cube(512): 300.0, cube(N): 400.0})],
                 baselines={("float", cube(N)): {"cublas_gflops": 1000.0}})
    fig = rf.figure_square(ds, RS, tmp_path)
    assert fig.name == "fig-square" and fig.path == tmp_path / "fig-square.pdf" and is_pdf(fig.path)
    assert fig.caption.startswith("Performance on square problems ($M = N = K$)")
    assert "unrolled (float)" not in " ".join(fig.missing)
    assert f"naive (float): {NOT_MEASURED}" in fig.missing and f"unrolled (double): {NOT_MEASURED}" in fig.missing


def test_no_figure_is_drawn_without_data_and_each_says_why(tmp_path):
    ds = dataset()
    expected = {
        "fig-square": ["no stage has been timed yet, and no cuBLAS baseline"],
        "fig-tiles": [f"tiled ({v}, {p}): not measured" for v in ("16", "32") for p in ("float", "double")],
        "fig-pitched": [f"{n} ({p}): {NOT_MEASURED}" for p in ("float", "double") for n in ("unrolled", "pitched")],
        "fig-rect": ["no stage has been timed on these shapes yet"],
        "fig-precision": [f"nothing was timed at {N}×{N}×{N} yet"],
        "fig-roofline": ["no stage has been timed yet"],
        "fig-tensor": [f"tensor ({p}): {NOT_MEASURED}" for p in ("float", "double")],
    }
    figures = rf.draw_all(ds, RS, tmp_path / "figures")
    assert [f.name for f in figures] == list(expected)
    for fig in figures:
        assert (fig.path, fig.caption) == (None, ""), fig.name
        assert sorted(fig.missing) == sorted(expected[fig.name]), fig.name
    assert list((tmp_path / "figures").iterdir()) == []


def test_figures_a_registry_or_report_set_cannot_have_say_so(tmp_path):
    plain = dataset(registry=[stage("naive", baseline=True), stage("tiled")])
    assert rf.figure_tiles(plain, RS, tmp_path).missing == ["no stage of the registry has variants"]
    assert rf.figure_pitched(plain, RS, tmp_path).missing == ["the registry has no stage with pitched operands"]
    assert rf.figure_tensor(plain, RS, tmp_path).missing == ["the registry has no stage that uses the tensor cores"]
    one = ReportSet(precisions=("float",), rect_shapes=())
    assert rf.figure_precision(plain, one, tmp_path).missing == ["the report set measures one precision only"]
    assert rf.figure_rect(plain, one, tmp_path).missing == ["course.toml [report] rect_shapes is empty"]


def test_the_tiles_figure_draws_each_variant_and_names_those_not_timed(tmp_path):
    ds = dataset([res("tiled", "16", "float", {cube(N): 500.0})])
    fig = rf.figure_tiles(ds, RS, tmp_path)
    assert is_pdf(fig.path) and fig.caption == "Variants of *tiled* (tiled: 16/32) on square problems."
    assert sorted(fig.missing) == ["tiled (16, double): not measured", "tiled (32, double): not measured",
                                   "tiled (32, float): not measured"]


def test_the_pitched_figure_compares_the_pair_at_the_odd_sizes(tmp_path):
    ds = dataset([res("unrolled", "", "float", {cube(1001): 400.0}), res("pitched", "", "float", {cube(1001): 500.0})])
    fig = rf.figure_pitched(ds, RS, tmp_path)
    assert is_pdf(fig.path) and "(*pitched* against *unrolled*)" in fig.caption
    assert sorted(fig.missing) == [f"pitched (double): {NOT_MEASURED}", f"unrolled (double): {NOT_MEASURED}"]


def test_the_rect_precision_and_tensor_figures_are_drawn_from_their_shapes(tmp_path):
    ds = dataset([res("unrolled", "", p, {(64, 128, 256): 50.0, cube(N): g}) for p, g in (("float", 400.0),
                                                                                           ("double", 200.0))]
                 + [res("tensor", "tf32", "float", {cube(N): 20000.0})])
    for draw, name in ((rf.figure_rect, "fig-rect"), (rf.figure_precision, "fig-precision"),
                       (rf.figure_tensor, "fig-tensor")):
        fig = draw(ds, RS, tmp_path)
        assert fig.name == name and fig.path == tmp_path / f"{name}.pdf" and is_pdf(fig.path), name


def test_the_roofline_of_a_gpu_without_known_peaks_says_how_to_give_them(tmp_path):
    ds = dataset([res("unrolled", "", "float", {cube(N): 400.0})], environment={"gpu": {"name": "SOME GPU"}})
    fig = rf.figure_roofline(ds, RS, tmp_path)
    assert is_pdf(fig.path) and fig.caption.startswith("Roofline of SOME GPU: every measured shape placed")
    assert fig.missing == [f"{p}: the GPU's peaks are unknown (set course.toml [report.gpu_peaks])"
                           for p in ("float", "double")]
    given = ReportSet(square_sizes=RS.square_sizes, rect_shapes=RS.rect_shapes,
                      gpu_peaks={"SOME GPU": {"fp32_tflops": 10, "fp64_tflops": 5, "bandwidth_gbs": 1000}})
    fig = rf.figure_roofline(ds, given, tmp_path)
    assert fig.missing == [] and fig.caption.endswith("course.toml [report.gpu_peaks].")
