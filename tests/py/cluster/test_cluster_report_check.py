"""make submit and the gradebook against a report made from other stage files than those handed in:
the hand-in is stored, make submit warns (which files differ, how to fix it), the attempt's manifest
records the verdict, and the sweep's gradebook marks it (`report` column, summary.md). No GPU, no
build: grading is left out (the local scheduler's grade_attempt is replaced), the report is rendered
from the fixture results with a short template."""
import datetime as dt
import json
import shutil
import subprocess
import sys
import zlib

import pytest

from support.paths import ROOT
from support.reports import HAS_MPL, make_report, measured_results, missing_tools, stage_dir

sys.path.insert(0, str(ROOT / "cluster"))

import config  # noqa: E402
import fingerprint  # noqa: E402  (grader/scripts/, on sys.path through config)
import dropbox  # noqa: E402
import gemmlab_cluster  # noqa: E402
import attempt_records  # noqa: E402
import attempts  # noqa: E402
from support.cluster_helpers import folder  # noqa: E402
from commands import common, sweep as sweep_commands  # noqa: E402
import gradebook  # noqa: E402

needs_render = pytest.mark.skipif(bool(missing_tools) or not HAS_MPL,
                                  reason="needs pandoc, xelatex, poppler-utils and matplotlib (make setup)")


def render(tmp_path, results_args, name):
    template = tmp_path / "short.md"
    template.write_text('---\ntitle: "Report"\n---\n\n# Summary\n\n::: {include="summary"}\n:::\n')
    pdf = tmp_path / f"{name}.pdf"
    out = make_report(*results_args, "--build", tmp_path / f"build-{name}", "--out", pdf, "--template", template)
    assert out.returncode == 0, out.stdout + out.stderr
    return pdf


@needs_render
def test_submit_warns_and_the_gradebook_marks_a_report_of_other_files(tmp_path, monkeypatch, capsys):
    cfg_path = tmp_path / "course.toml"
    cfg_path.write_text(f'[course]\nname = "report-check"\n[cluster]\ngrader_root = "{ROOT}"\n'
                        f'dropbox = "{tmp_path}/dropbox"\nsweeps = "{tmp_path}/sweeps"\nscheduler = "local"\n'
                        f'[deadline]\ndue = {(dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes=1)).isoformat()}\n')
    measured = stage_dir(tmp_path / "measured" / "student")
    measured_results(tmp_path / "build-measured", measured)
    report = render(tmp_path, ["--render-only"], "measured")
    tmp_path.joinpath("build-measured", "results").rename(tmp_path / "build-measured" / "kept")
    example = render(tmp_path, ["--from", tmp_path / "build-measured" / "kept"], "example")
    # handed in: the measured files with tiled.cu changed since the report was made
    handed = stage_dir(tmp_path / "handed" / "student",
                       lambda n, t: t + "\n// tuned after the report\n" if n == "tiled.cu" else t)

    monkeypatch.setattr(common, "grade_attempt", lambda cfg, attempt: {"status": "skipped", "message": ""})
    rc = gemmlab_cluster.main(["--config", str(cfg_path), "submit", "--student-dir", str(handed),
                               "--report", str(report), "--no-compile-check"])
    out = capsys.readouterr()
    assert rc == 0, out.out + out.err
    assert "submit: stored" in out.out  # stored all the same
    warning = out.err
    assert "WARNING" in warning and "other stage files" in warning, warning
    assert "tiled.cu" in warning and "naive.cu" not in warning.split("differ:")[1], warning
    assert "make report" in warning and "make submit" in warning
    cfg = config.load(cfg_path)
    me = dropbox.current_user()
    attempt = attempts.in_directory(folder(cfg, me))[-1]
    assert attempt.manifest["report"]["verdict"] == "mismatch"
    assert attempt.manifest["report"]["differ"] == ["tiled.cu"]

    # the files the report measured, with that report: no warning
    rc = gemmlab_cluster.main(["--config", str(cfg_path), "submit", "--student-dir", str(measured),
                               "--report", str(report), "--no-compile-check"])
    out = capsys.readouterr()
    assert rc == 0 and "WARNING" not in out.err, out.err
    assert attempts.in_directory(folder(cfg, me))[-1].manifest["report"]["verdict"] == "ok"

    # others of the class, stored directly: a mismatch, the example report, no report
    files = dropbox.collect(cfg, handed, None)
    dropbox.store_attempt(cfg, "bob", {**files, attempt_records.REPORT_NAME: report})
    dropbox.store_attempt(cfg, "carol", {**dropbox.collect(cfg, measured, None), attempt_records.REPORT_NAME: example})
    dropbox.store_attempt(cfg, "dave", files)
    assert "EXAMPLE report" in dropbox.report_warning(attempt_records.report_check({**files, attempt_records.REPORT_NAME: example}))

    sweep = tmp_path / "sweeps" / "final"
    sweep.mkdir(parents=True)
    (sweep / "plan.json").write_text(json.dumps({"students": sweep_commands.plan_sweep(cfg)}))
    gradebook.write(sweep, [], "final")
    import csv
    rows = {r["student"]: r for r in csv.DictReader(open(sweep / "gradebook.csv"))}
    assert {s: rows[s]["report"] for s in (me, "bob", "carol", "dave")} == \
        {me: "ok", "bob": "mismatch", "carol": "example", "dave": "none"}
    summary = (sweep / "summary.md").read_text()
    assert "Reports not made from the stage files handed in: 2" in summary
    assert "bob: report: mismatch" in summary and "carol: report: example" in summary


def test_fingerprint_of_a_stored_attempt_is_the_students(tmp_path):
    """The drop box's files/ and the student's directory give one fingerprint (grading hashes files/)."""
    cfg_path = tmp_path / "course.toml"
    cfg_path.write_text(f'[course]\nname = "fp"\n[cluster]\ngrader_root = "{ROOT}"\n'
                        f'dropbox = "{tmp_path}/dropbox"\nsweeps = "{tmp_path}/sweeps"\nscheduler = "local"\n')
    cfg = config.load(cfg_path)
    student = stage_dir(tmp_path / "student")
    attempt = dropbox.store_attempt(cfg, "erin", dropbox.collect(cfg, student, None))
    fp = fingerprint
    assert fp.of_directory(attempt / "files")["fingerprint"] == fp.of_directory(student)["fingerprint"]
    copy = tmp_path / "scratch" / "submission"
    shutil.copytree(attempt / "files", copy)
    assert fp.of_directory(copy)["files"] == fp.of_directory(student)["files"]
    assert subprocess.run([sys.executable, str(ROOT / "grader" / "scripts" / "fingerprint.py"), str(copy)],
                          capture_output=True, text=True).stdout.strip() == fp.of_directory(student)["fingerprint"]


def test_a_report_past_what_reading_may_cost_is_unstamped_and_says_why():
    """A deflate bomb for a report (fingerprint.py's bounds): not read, `unstamped`, and make submit's
    warning says why (tests/py/report/test_report_stamp_bounds.py: the bounds themselves)."""
    bomb = zlib.compress(bytes(fingerprint.STREAM_CAP + 1))
    report = b"%%PDF-1.5\n1 0 obj\n<</Type/ObjStm/Filter/FlateDecode/Length %d>>\nstream\n%s\nendstream\n" % (
        len(bomb), bomb)
    check = attempt_records.report_check({"naive.cu": b"// mine\n", attempt_records.REPORT_NAME: report})
    assert check["verdict"] == "unstamped" and "inflates to more than" in check["unreadable"], check
    warning = dropbox.report_warning(check)
    assert "the report was not read: its object stream 1 inflates to more than" in warning, warning
    assert "make report" in warning
    plain = attempt_records.report_check({"naive.cu": b"// mine\n", attempt_records.REPORT_NAME: b"%PDF-1.5\n"})
    assert plain["verdict"] == "unstamped" and plain["unreadable"] is None
    assert "names no stage files" in dropbox.report_warning(plain)
