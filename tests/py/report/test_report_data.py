"""report/report_data.py, function by function: shapes (parse_shape, shape_str), the report set of
course.toml [report] (load_report_set, ReportSet), the results directory read into a Dataset
(load_dataset: files merged, failures shown, baselines recovered from the ratios) and the Dataset's
questions (status, chosen_variant, ...), and the GPU's peaks (gpu_peaks).

Each test writes the few results it needs under tmp_path; the example report's own data is
test_report.py's.

  python3 -m pytest -q tests/py/report/test_report_data.py
"""
import json
import sys

import pytest

from support.paths import ROOT

sys.path.insert(0, str(ROOT / "report"))

import report_data  # noqa: E402
from report_data import ReportError, ReportSet, load_dataset, load_report_set, parse_shape, shape_str  # noqa: E402
from gpu_peaks import fma_peak_gflops  # noqa: E402  (grader/scripts, on sys.path through report_data)

S = (256, 256, 256)
L = (1024, 1024, 1024)


def stage(name, variants=("",), **kw):
    return {"name": name, "title": f"The {name} stage", "variants": list(variants), "baseline": False,
            "tensor_cores": False, "operands": "dense", **kw}


REGISTRY = [stage("naive", baseline=True), stage("tiled", variants=("16", "32")),
            stage("tensor", variants=("tf32",), tensor_cores=True,
                  variant_info=[{"label": "tf32", "inputs": {"float": "tf32"}, "error_bound": {"float": 512.0}}])]


def point(shape, gflops, disposition="passed", **kw):
    return {"shape": {"M": shape[0], "N": shape[1], "K": shape[2]}, "disposition": disposition, "gflops": gflops, **kw}


def result(stage_name, variant, precision, points=(), disposition="passed", problem="", **kw):
    return {"stage": stage_name, "variant": variant, "precision": precision, "disposition": disposition,
            "problem": problem, "bench": list(points), **kw}


def bench_file(results, created="2026-11-24T06:00:00Z", kind="bench", **kw):
    return {"schema": report_data.RESULTS_SCHEMA, "kind": kind, "created": created, "results": results,
            "environment": {"gpu": {"name": "TEST GPU"}}, **kw}


def results_dir(tmp_path, files, registry=REGISTRY, run=None):
    d = tmp_path / "results"
    d.mkdir(parents=True)
    (d / report_data.REGISTRY_FILE).write_text(json.dumps({"stages": registry}))
    for name, doc in files.items():
        (d / name).write_text(json.dumps(doc))
    if run is not None:
        (d / report_data.RUN_FILE).write_text(json.dumps(run))
    return d


# ---- shapes ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, shape", [("4096x4096x256", (4096, 4096, 256)), (" 1 X 2 × 3 ", (1, 2, 3))])
def test_a_shape_is_read_from_mxnxk(text, shape):
    assert parse_shape(text) == shape and shape_str(shape) == "x".join(map(str, shape))


@pytest.mark.parametrize("text", ["64x64", "1x2x3x4", "-1x2x3", "axbxc", ""])
def test_what_is_no_shape_is_named(text):
    with pytest.raises(ReportError) as e:
        parse_shape(text)
    assert str(e.value) == f"'{text}' is not a shape: write MxNxK, e.g. 4096x4096x256"


# ---- the report set ---------------------------------------------------------------------------------
def test_the_report_set_measures_its_groups_in_order():
    rs = ReportSet(square_sizes=(256, 512), odd_sizes=(1001,), rect_shapes=("64x128x256",))
    assert rs.groups() == [("square", "square sizes 256..512", [(256, 256, 256), (512, 512, 512)]),
                           ("odd", "sizes that are not multiples of the tile or vector width", [(1001, 1001, 1001)]),
                           ("rect", "tall-skinny and wide shapes", [(64, 128, 256)])]
    assert rs.fingerprint() == {"groups": [["square", [[256, 256, 256], [512, 512, 512]]], ["odd", [[1001, 1001, 1001]]],
                                           ["rect", [[64, 128, 256]]]],
                                "precisions": ["float", "double"], "max_seconds_per_shape": 0.5}


def test_no_course_file_is_the_default_report_set(tmp_path):
    assert load_report_set(None) == ReportSet()
    assert load_report_set(tmp_path / "absent.toml") == ReportSet()
    (tmp_path / "course.toml").write_text('[course]\nname = "x"\n')
    assert load_report_set(tmp_path / "course.toml") == ReportSet()


def test_the_report_set_takes_every_key_of_course_toml(tmp_path):
    path = tmp_path / "course.toml"
    path.write_text('[report]\nsquare_sizes = [512, 256, 512]\nodd_sizes = [1001]\nrect_shapes = ["64x128x256"]\n'
                    'precisions = ["double"]\nheadline_size = 512\nmax_seconds_per_shape = 2\nhistory = ["tiled"]\n'
                    '[report.gpu_peaks."TEST GPU"]\nfp32_tflops = 10\n')
    rs = load_report_set(path)
    assert (rs.square_sizes, rs.odd_sizes, rs.rect_shapes, rs.precisions, rs.headline_size) == (
        (256, 512), (1001,), ("64x128x256",), ("double",), 512)  # sizes sorted, each once
    assert rs.max_seconds_per_shape == 2.0 and isinstance(rs.max_seconds_per_shape, float)
    assert rs.history == ("tiled",) and rs.gpu_peaks == {"TEST GPU": {"fp32_tflops": 10}}


@pytest.mark.parametrize("line, message", [
    ("square_sizes = [256, 0]", "square_sizes must be a list of positive integers, got [256, 0]"),
    ("odd_sizes = []", "odd_sizes must be a list of positive integers, got []"),
    ('rect_shapes = "64x64x64"', 'rect_shapes must be a list of "MxNxK" strings'),
    ('precisions = ["half"]', "precisions must be a list of \"float\"/\"double\", got ['half']"),
    ("headline_size = 4096.0", "headline_size must be a positive integer, got 4096.0"),
    ("max_seconds_per_shape = 0", "max_seconds_per_shape must be a positive number, got 0"),
    ("gpu_peaks = 5", 'gpu_peaks must be tables, e.g. [report.gpu_peaks."NVIDIA H100 PCIe"]'),
    ('history = ["tiled", ""]', "history must be a list of stage names, e.g. [\"reuse\"], got ['tiled', '']"),
])
def test_a_wrong_report_value_is_named_with_its_file_and_key(tmp_path, line, message):
    path = tmp_path / "course.toml"
    path.write_text(f"[report]\n{line}\n")
    with pytest.raises(ReportError) as e:
        load_report_set(path)
    assert str(e.value) == f"{path} [report]: {message}"


def test_a_report_key_nothing_resembles_lists_the_known_ones(tmp_path):
    path = tmp_path / "course.toml"
    path.write_text("[report]\nzzz = 1\n")
    with pytest.raises(ReportError) as e:
        load_report_set(path)
    known = ", ".join(sorted(ReportSet.__dataclass_fields__))
    assert str(e.value) == f"{path} [report]: unknown key 'zzz' (known: {known})"


def test_a_course_file_that_is_not_toml_is_named(tmp_path):
    path = tmp_path / "course.toml"
    path.write_text("[report\n")
    with pytest.raises(ReportError, match=f"^{path}: "):
        load_report_set(path)


# ---- reading a results directory ---------------------------------------------------------------------
def test_no_results_directory_says_where_to_measure(tmp_path):
    with pytest.raises(ReportError) as e:
        load_dataset(tmp_path / "none")
    assert str(e.value) == f"no results directory {tmp_path / 'none'}: run `make report` on a GPU first"


def test_a_results_directory_without_the_registry_is_not_measured_yet(tmp_path):
    with pytest.raises(ReportError) as e:
        load_dataset(tmp_path)
    assert str(e.value) == (f"no measurements in {tmp_path} yet (registry.json is missing): run `make report` on a "
                            "GPU node first")


def test_a_registry_without_stages_is_named(tmp_path):
    (tmp_path / "registry.json").write_text('{"kernels": []}')
    with pytest.raises(ReportError) as e:
        load_dataset(tmp_path)
    assert str(e.value) == f"{tmp_path / 'registry.json'}: no 'stages' list (expected `gemmlab list --json` output)"


def test_a_results_file_of_another_schema_is_named(tmp_path):
    d = results_dir(tmp_path, {"bench-float.json": {"schema": "gemmlab.results/0"}})
    with pytest.raises(ReportError) as e:
        load_dataset(d)
    assert str(e.value) == f"{d / 'bench-float.json'}: schema is 'gemmlab.results/0', expected 'gemmlab.results/1'"


def test_a_results_file_that_is_not_json_is_named(tmp_path):
    d = results_dir(tmp_path, {})
    (d / "bench-float.json").write_text("{")
    with pytest.raises(ReportError, match=r"bench-float\.json: not valid JSON \("):
        load_dataset(d)


def test_a_dataset_holds_every_point_of_the_submissions_results(tmp_path):
    d = results_dir(tmp_path, {"bench-float.json": bench_file([
        result("naive", "", "float", [point(S, 100.0, time_ms=0.3, spread_pct=1.5, x_naive=1.0, pct_cublas=10.0,
                                            sm_clock_mhz=1980, throttled=True)]),
        result("naive", "", "float", [point(L, 999.0)], side="reference"),  # the reference's: not the student's
    ])}, run={"commit": "abc"})
    ds = load_dataset(d)
    (sr,) = ds.results.values()
    assert (sr.stage, sr.variant, sr.precision, sr.disposition) == ("naive", "", "float", "passed")
    p = sr.points[S]
    assert (p.gflops, p.time_ms, p.spread_pct, p.x_naive, p.pct_cublas, p.sm_clock_mhz, p.throttled) == (
        100.0, 0.3, 1.5, 1.0, 10.0, 1980.0, True)
    assert list(sr.points) == [S] and ds.run == {"commit": "abc"} and ds.sources == ["bench-float.json"]
    assert ds.environment == {"gpu": {"name": "TEST GPU"}} and ds.created == "2026-11-24T06:00:00Z"


def test_later_measurements_win_and_a_failure_in_any_run_shows(tmp_path):
    d = results_dir(tmp_path, {
        "b-late.json": bench_file([result("tiled", "16", "float", [point(S, 300.0)])], created="2026-11-25T00:00:00Z"),
        "a-early.json": bench_file([result("tiled", "16", "float", [point(S, 200.0), point(L, 50.0)]),
                                    result("tiled", "32", "float", [], disposition="failed", problem="C[0] is 3")],
                                   created="2026-11-24T00:00:00Z"),
        "c-later.json": bench_file([result("tiled", "32", "float", [point(S, 400.0)])], created="2026-11-26T00:00:00Z"),
    })
    ds = load_dataset(d)
    t16, t32 = ds.result("tiled", "16", "float"), ds.result("tiled", "32", "float")
    assert t16.points[S].gflops == 300.0 and t16.points[L].gflops == 50.0  # the later file's point, the rest kept
    assert (t32.disposition, t32.problem) == ("failed", "C[0] is 3")       # passed later, failed once: failed
    assert ds.created == "2026-11-26T00:00:00Z"
    assert ds.sources == ["a-early.json", "b-late.json", "c-later.json"]   # in the order of their times


def test_the_grade_file_gives_the_score_and_other_kinds_are_left_out(tmp_path):
    score = {"total": 7.0, "max": 10.0, "stages": [{"stage": "tiled", "precision": "float", "variant_used": "32"}]}
    d = results_dir(tmp_path, {"grade.json": bench_file([], kind="grade", score=score),
                               "check.json": bench_file([result("naive", "", "float", [point(S, 1.0)])], kind="check")})
    ds = load_dataset(d)
    assert ds.grade == score and ds.results == {}
    assert ds.score_row("tiled", "float") == score["stages"][0] and ds.score_row("tiled", "double") is None


@pytest.mark.parametrize("baselines", [
    {"float": {"256x256x256": {"naive_gflops": 10, "cublas_gflops": 500}}},
    {"float": [{"shape": {"M": 256, "N": 256, "K": 256}, "naive_gflops": 10, "cublas_gflops": 500}]},
    [{"precision": "float", "shape": [256, 256, 256], "naive_gflops": 10, "cublas_gflops": 500}],
])
def test_baselines_are_read_in_each_form_the_schema_allows(tmp_path, baselines):
    ds = load_dataset(results_dir(tmp_path, {"bench-float.json": bench_file([], baselines=baselines)}))
    assert ds.baseline("float", S) == (10.0, 500.0)
    assert ds.baseline("float", L) == (None, None)


def test_baselines_missing_from_a_file_are_recovered_from_each_points_ratios(tmp_path):
    d = results_dir(tmp_path, {"bench-float.json": bench_file([
        result("naive", "", "float", [point(S, 100.0, x_naive=1.0, pct_cublas=20.0)]),
        result("tensor", "tf32", "float", [point(S, 800.0, pct_cublas=50.0, cublas_item="cublas/tf32",
                                                 pct_cublas_fp32=160.0)]),
    ])})
    ds = load_dataset(d)
    assert ds.baseline("float", S) == (100.0, 500.0)
    assert ds.cublas_gflops("float", S, "cublas/tf32") == 1600.0
    assert ds.cublas_gflops("float", S) == 500.0  # the true-FP32 cuBLAS, set by the first point that gives it


# ---- the Dataset's questions ------------------------------------------------------------------------
def dataset(tmp_path, results, registry=REGISTRY, grade=None, run=None):
    files = {"bench-float.json": bench_file(results)}
    if grade is not None:
        files["grade.json"] = bench_file([], kind="grade", score=grade)
    return load_dataset(results_dir(tmp_path, files, registry, run))


def test_the_registry_gives_names_titles_variants_and_roles(tmp_path):
    ds = dataset(tmp_path, [result("retired", "x", "float", [point(S, 1.0)])])
    assert ds.stage_names() == ["naive", "tiled", "tensor", "retired"]  # a stage no longer listed comes last
    assert ds.title("tiled") == "The tiled stage" and ds.title("retired") == "retired"
    assert ds.variants("tiled") == ["16", "32"] and ds.variants("retired") == ["x"] and ds.variants("naive") == [""]
    assert ds.baseline_stage() == "naive" and ds.tensor_stages() == ["tensor"]
    assert ds.cuda_core_stages() == ["naive", "tiled", "retired"]
    assert ds.variant_info("tensor", "tf32")["error_bound"] == {"float": 512.0} and ds.variant_info("tiled", "16") == {}
    assert ds.label("tiled", "16") == "tiled (16)" and ds.label("naive", "") == "naive"


def test_a_stage_is_implemented_where_a_variant_passed_and_was_timed(tmp_path):
    ds = dataset(tmp_path, [result("tiled", "16", "float", [point(S, 200.0), point(L, 250.0), point((8, 8, 8), 900.0,
                                                                                                     "failed")])])
    assert ds.implemented("tiled", "float") and ds.best_gflops("tiled", "16", "float") == 250.0
    assert ds.result("tiled", "16", "float").gflops((8, 8, 8)) is None  # a failed point has no speed
    assert not ds.implemented("tiled", "double") and ds.best_gflops("tiled", "32", "float") is None
    assert ds.status("tiled", "float") == ("ok", "")


@pytest.mark.parametrize("results, run, status", [
    ([], None, ("not_measured", "not measured yet (run `make report` on a GPU)")),
    ([], {"draft": True}, ("not_measured", "not measured yet")),
    ([result("naive", "", "float", disposition="not_implemented")], None, ("not_implemented", "not implemented yet")),
    ([result("naive", "", "float", disposition="failed", problem="C[3] = 7, expected 8")], None,
     ("failed", "failed: C[3] = 7, expected 8")),
    ([result("naive", "", "float", disposition="no_gpu")], None, ("no_gpu", "no gpu")),
    ([result("naive", "", "float")], None, ("no_data", "no timed shapes")),
])
def test_the_status_of_a_stage_without_timed_data_says_why(tmp_path, results, run, status):
    assert dataset(tmp_path, results, run=run).status("naive", "float") == status


def test_the_chosen_variant_is_the_grades_else_the_fastest_at_the_largest_common_shape(tmp_path):
    results = [result("tiled", "16", "float", [point(S, 500.0), point(L, 100.0)]),
               result("tiled", "32", "float", [point(S, 200.0), point(L, 300.0)])]
    assert dataset(tmp_path / "a", results).chosen_variant("tiled", "float") == "32"  # at L, not its best at S
    grade = {"stages": [{"stage": "tiled", "precision": "float", "variant_used": "16"}]}
    assert dataset(tmp_path / "b", results, grade=grade).chosen_variant("tiled", "float") == "16"
    apart = [result("tiled", "16", "float", [point(S, 500.0)]), result("tiled", "32", "float", [point(L, 300.0)])]
    assert dataset(tmp_path / "c", apart).chosen_variant("tiled", "float") == "16"   # no common shape: the best
    assert dataset(tmp_path / "d", []).chosen_variant("tiled", "float") == "16"      # nothing timed: the first
    assert dataset(tmp_path / "e", []).chosen_variant("naive", "float") == ""


# ---- the GPU's peaks -----------------------------------------------------------------------------------
H100 = {"gpu": {"name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0", "sms": 132, "max_sm_clock_mhz": 1980}}


def test_the_peaks_of_a_known_gpu_are_computed_and_say_from_what():
    peaks = report_data.gpu_peaks(H100, ReportSet())
    assert peaks["name"] == "NVIDIA H100 80GB HBM3"
    assert peaks["fp32_gflops"] == fma_peak_gflops("9.0", 132, 1980, "float")
    assert peaks["fp64_gflops"] == fma_peak_gflops("9.0", 132, 1980, "double")
    assert peaks["fp64_tensor_gflops"] > peaks["fp64_gflops"] and peaks["bandwidth_gbs"] > 0
    assert peaks["source"][0] == "FMA peaks: 132 SMs × FMA lanes of sm_90 × 2 × 1980 MHz"
    assert peaks["source"][1].startswith("bandwidth: datasheet of the ")


def test_the_course_may_give_a_gpus_peaks_by_part_of_its_name():
    rs = ReportSet(gpu_peaks={"H100": {"fp32_tflops": 50, "bandwidth_gbs": 3000}})
    peaks = report_data.gpu_peaks(H100, rs)
    assert peaks["fp32_gflops"] == 50000.0 and peaks["bandwidth_gbs"] == 3000.0
    assert peaks["fp64_gflops"] == fma_peak_gflops("9.0", 132, 1980, "double")  # not given: computed
    assert peaks["source"][-1] == "course.toml [report.gpu_peaks]"


def test_an_unknown_gpu_has_no_peaks():
    assert report_data.gpu_peaks({"gpu": {"name": "SOME GPU"}}, ReportSet()) == {
        "name": "SOME GPU", "fp32_gflops": None, "fp64_gflops": None, "fp64_tensor_gflops": None,
        "bandwidth_gbs": None, "source": []}
    assert report_data.gpu_peaks({}, ReportSet())["name"] == ""
