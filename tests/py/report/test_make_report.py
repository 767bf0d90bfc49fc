"""report/make_report.py, its parts that need no GPU and no PDF engine, function by function: whether
saved measurements can be reused (fresh_reason, each reason), the submission's fingerprint, the copy of
the latest grade kept beside the results (copy_grade), a draft's results folder (start_draft, with a
stand-in grader), a draft's build facts added to the stage blocks, and the footer, PDF metadata and
marks that say whose measurements a report holds (measured_submission, describe_run).

`make report` end to end (measure, reuse, draft, render) is test_report.py's and
test_report_provenance.py's.

  python3 -m pytest -q tests/py/report/test_make_report.py
"""
import json
import sys

import pytest

from support.paths import ROOT

sys.path.insert(0, str(ROOT / "report"))

import make_report as mr  # noqa: E402
import fingerprint  # noqa: E402  (grader/scripts, on sys.path through make_report)
from report_data import Dataset, ReportError, ReportSet  # noqa: E402

RS = ReportSet(square_sizes=(256,), odd_sizes=(1001,), rect_shapes=("64x128x256",))


def submission(tmp_path, name="mine", text="// mine\n"):
    d = tmp_path / name
    d.mkdir(exist_ok=True)
    (d / "tiled.cu").write_text(text)
    (d / "notes.txt").write_text("not a stage file\n")
    return d


def test_the_bench_files_are_one_per_precision_of_the_report_set():
    assert mr.bench_file("float") == "bench-float.json"
    assert mr.expected_files(RS) == ["bench-float.json", "bench-double.json"]
    assert mr.expected_files(ReportSet(precisions=("double",))) == ["bench-double.json"]


def test_the_submissions_fingerprint_is_of_its_stage_files(tmp_path):
    d = submission(tmp_path)
    assert mr.submission_fingerprint(d) == fingerprint.of_directory(d)
    assert list(mr.submission_fingerprint(d)["files"]) == ["tiled.cu"]
    assert mr.submission_fingerprint(None) is None and mr.submission_fingerprint("") is None
    with pytest.raises(ReportError) as e:
        mr.submission_fingerprint(tmp_path / "gone")
    assert str(e.value) == f"{tmp_path / 'gone'}: no such submission directory"


# ---- reusing saved measurements -----------------------------------------------------------------------
@pytest.fixture
def saved(tmp_path):
    """A results folder measured by `grader` of submission `mine`, with every file of RS: (dir, grader, fp)."""
    grader = tmp_path / "gemmlab"
    grader.write_bytes(b"the grader\n")
    fp = fingerprint.of_directory(submission(tmp_path))
    results = tmp_path / "results"
    results.mkdir()
    for name in [*mr.expected_files(RS), mr.REGISTRY_FILE]:
        (results / name).write_text("{}")
    run = {"grader_sha256": fingerprint.sha256_file(grader), "report_set": RS.fingerprint(), "submission": fp}
    (results / mr.RUN_FILE).write_text(json.dumps(run))
    return results, grader, fp


def rewrite_run(results, **changes):
    run = json.loads((results / mr.RUN_FILE).read_text())
    (results / mr.RUN_FILE).write_text(json.dumps({**run, **changes}))


def test_measurements_of_the_same_grader_set_and_files_are_reused(saved):
    results, grader, fp = saved
    assert mr.fresh_reason(results, grader, RS, fp) is None
    assert mr.fresh_reason(results, grader, RS) is None  # no submission named: not compared


def test_no_earlier_run_or_a_damaged_one_is_measured_again(saved):
    results, grader, fp = saved
    (results / mr.RUN_FILE).write_text("{")
    assert mr.fresh_reason(results, grader, RS, fp) == f"{results / mr.RUN_FILE} is damaged"
    (results / mr.RUN_FILE).unlink()
    assert mr.fresh_reason(results, grader, RS, fp) == "there are no earlier measurements"


def test_provisional_results_are_measured_again(saved):
    results, grader, fp = saved
    rewrite_run(results, provisional=True)
    assert mr.fresh_reason(results, grader, RS, fp) == "the saved results are provisional fixture data"


def test_a_rebuilt_grader_is_measured_again(saved):
    results, grader, fp = saved
    grader.write_bytes(b"the grader, rebuilt with other stage files\n")
    assert mr.fresh_reason(results, grader, RS, fp) == "the grader (with your stages in it) was rebuilt since"


def test_another_report_set_is_measured_again(saved):
    results, grader, fp = saved
    other = ReportSet(square_sizes=(256, 512), odd_sizes=RS.odd_sizes, rect_shapes=RS.rect_shapes)
    assert mr.fresh_reason(results, grader, other, fp) == "course.toml [report] changed since"


def test_changed_stage_files_are_measured_again(saved, tmp_path):
    results, grader, _ = saved
    now = fingerprint.of_directory(submission(tmp_path, text="// mine, changed\n"))
    assert mr.fresh_reason(results, grader, RS, now) == ("the stage files of mine changed since (their fingerprint "
                                                         "is not the one measured)")


def test_missing_results_files_are_named(saved):
    results, grader, fp = saved
    (results / "bench-double.json").unlink()
    (results / mr.REGISTRY_FILE).unlink()
    assert mr.fresh_reason(results, grader, RS, fp) == "bench-double.json, registry.json missing"


# ---- the grade beside the results -----------------------------------------------------------------------
def test_the_latest_grade_is_copied_beside_the_results(tmp_path):
    grade = tmp_path / "results.json"
    grade.write_text(json.dumps({"kind": "grade", "score": {"total": 5}}))
    (tmp_path / "out").mkdir()
    mr.copy_grade(grade, tmp_path / "out")
    assert (tmp_path / "out" / mr.GRADE_FILE).read_text() == grade.read_text()


@pytest.mark.parametrize("make", [lambda p: p.write_text(json.dumps({"kind": "bench"})), lambda p: None])
def test_a_copy_is_removed_where_there_is_no_grade_to_copy(tmp_path, make):
    grade = tmp_path / "results.json"
    make(grade)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / mr.GRADE_FILE).write_text("{}")  # an earlier grade's copy
    mr.copy_grade(grade, tmp_path / "out")
    assert not (tmp_path / "out" / mr.GRADE_FILE).exists()
    mr.copy_grade(None, tmp_path / "out")
    assert not (tmp_path / "out" / mr.GRADE_FILE).exists()


def test_a_grade_that_is_not_json_is_not_copied_and_said(tmp_path, capsys):
    grade = tmp_path / "results.json"
    grade.write_text("{")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / mr.GRADE_FILE).write_text('{"kind": "grade"}')  # an earlier grade's copy: gone too
    mr.copy_grade(grade, tmp_path / "out")
    assert not (tmp_path / "out" / mr.GRADE_FILE).exists()
    assert capsys.readouterr().out == f"report: warning: {grade} is not valid JSON; the report shows no score\n"


# ---- a draft --------------------------------------------------------------------------------------------
def stand_in_grader(tmp_path, listing='{"stages": []}', status=0):
    grader = tmp_path / "gemmlab"
    grader.write_text(f"#!/bin/sh\n[ \"$1 $2\" = 'list --json' ] && {{ echo '{listing}'; exit {status}; }}\n"
                      "echo 'no such command' >&2; exit 2\n")
    grader.chmod(0o755)
    return grader


def test_a_drafts_results_hold_the_registry_and_a_run_that_says_nothing_was_measured(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMMLAB_SRUN", "srun --partition=gpu --gres=gpu:1")
    monkeypatch.setenv("GEMMLAB_COMMAND", "make report")
    (tmp_path / "draft" / "old").mkdir(parents=True)  # an earlier draft: gone
    results = mr.start_draft(stand_in_grader(tmp_path), tmp_path / "mine", tmp_path / "draft")
    assert results == tmp_path / "draft" / "results" and not (tmp_path / "draft" / "old").exists()
    assert json.loads((results / mr.REGISTRY_FILE).read_text()) == {"stages": []}
    run = json.loads((results / mr.RUN_FILE).read_text())
    assert run["draft"] is True and run["submission_name"] == "mine" and run["grader"] == str(tmp_path / "gemmlab")
    assert run["measure"] == "srun --partition=gpu --gres=gpu:1 make report"


def test_a_draft_needs_the_graders_stage_list(tmp_path):
    grader = stand_in_grader(tmp_path, status=1)
    with pytest.raises(ReportError) as e:
        mr.start_draft(grader, None, tmp_path / "draft")
    assert str(e.value).startswith(f"`{grader} list --json` failed:")


def test_build_facts_end_each_stages_block_and_its_file(tmp_path):
    blocks = {"stage-tiled": "numbers\n\n", "summary": "s"}
    mr.add_build_facts(blocks, tmp_path, {"tiled": "`mine/tiled.cu` is not built.\n", "retired": "x\n"})
    assert blocks == {"stage-tiled": "numbers\n\n`mine/tiled.cu` is not built.\n", "summary": "s"}
    assert (tmp_path / "stage-tiled.md").read_text() == blocks["stage-tiled"]
    assert not (tmp_path / "stage-retired.md").exists()


# ---- whose measurements ---------------------------------------------------------------------------------
FP = {"name": "mine", "fingerprint": "sha256:" + "ab" * 32, "files": {"tiled.cu": "sha256:" + "cd" * 32}}
ENV = {"gpu": {"name": "NVIDIA H100", "max_sm_clock_mhz": 1980}, "driver_version": "580.1", "cuda_runtime": "13.0"}


def dataset(run, environment=ENV):
    return Dataset([], {}, {}, environment, "2026-11-20T00:00:00Z", run, None, [])


@pytest.mark.parametrize("run", [
    {"submission": {**FP, "fingerprint": "md5:00"}}, {"submission": {**FP, "files": None}},
    {"submission": {**FP, "name": ""}}, {}, [],
])
def test_a_run_without_a_well_formed_submission_record_names_no_submission(run):
    assert mr.measured_submission(dataset(run)) is None


def test_a_report_of_measured_files_states_the_submission_and_its_fingerprint():
    run = {"submission": FP, "created": "2026-11-24T06:48:05Z", "commit": "0123456789abcdef", "commit_dirty": True}
    assert mr.measured_submission(dataset(run)) == FP
    footer, meta, marks = mr.describe_run(dataset(run), example=False)
    assert footer == (f"mine sha256:{'ab' * 6} · NVIDIA H100 · driver 580.1 · CUDA 13.0 · measured 2026-11-24 · "
                      "commit 0123456789ab+")
    assert meta["subject"] == (f"GEMM Lab report of submission mine ({FP['fingerprint']}) measured on NVIDIA H100, "
                               "max SM clock 1980 MHz, driver 580.1, CUDA 13.0, measured 2026-11-24, commit 0123456789ab+")
    assert meta["keywords"] == ", ".join(["GEMM", "CUDA", "SGEMM", "DGEMM", "NVIDIA H100", *fingerprint.report_keywords(FP)])
    assert marks == {"provenance": f"Measurements of submission mine, stage files fingerprint {FP['fingerprint']}, on "
                                   "NVIDIA H100, measured 2026-11-24.", "watermark": ""}


def test_example_data_carries_no_fingerprint_and_says_so_on_every_page():
    footer, meta, marks = mr.describe_run(dataset({"submission": FP}), example=True)
    assert footer == "EXAMPLE DATA · NVIDIA H100 · driver 580.1 · CUDA 13.0 · measured 2026-11-20 · commit unknown"
    assert meta["subject"].startswith("EXAMPLE DATA, not a student's measurements: GEMM Lab example report")
    assert fingerprint.EXAMPLE_KEYWORD in meta["keywords"] and "gemmlab-fingerprint" not in meta["keywords"]
    assert marks["watermark"] == mr.WATERMARK and marks["provenance"].startswith(f"{mr.WATERMARK}: saved example")


def test_a_draft_says_nothing_was_measured_and_where_to_measure():
    run = {"draft": True, "submission_name": "mine", "host": "laptop", "created": "2026-11-24T06:48:05Z",
           "measure": "srun ... make report"}
    footer, meta, marks = mr.describe_run(dataset(run, environment={}), example=False)
    assert footer == "DRAFT of mine · made 2026-11-24 · commit unknown"
    assert meta == {"subject": "DRAFT of the GEMM Lab report of mine: nothing measured yet (no GPU on laptop)",
                    "keywords": "GEMM, CUDA, draft"}
    assert marks == {"provenance": f"{mr.DRAFT_MARK}: the text of report.md and what the build of mine/ knows, made "
                                   "where there is no GPU (laptop, 2026-11-24). On a GPU node, srun ... make report "
                                   "measures it and writes report/report.pdf.", "watermark": mr.DRAFT_MARK}
