"""Whose measurements a lab report shows: the fingerprint of a submission's stage files
(grader/scripts/fingerprint.py), the report that states it (first page, PDF Subject and Keywords),
and the example report (make report-demo, or any results make report did not measure), which says
"EXAMPLE DATA — not your measurements" on every page and carries no fingerprint.

No GPU: measured results are the fixture's (tests/fixtures/report) with the record make report
writes (report-run.json `submission`); measuring itself is tested with test_report.py's fake grader.
"""
import json
import os
import shutil
import subprocess
import sys

import pytest

from support.paths import ROOT
from support.reports import (FIXTURES, HAS_MPL, fake_grader, make_report, measured_results, missing_tools, needs_mpl,
                             needs_render, squeeze, stage_dir)

sys.path.insert(0, str(ROOT / "grader" / "scripts"))
import fingerprint  # noqa: E402

WATERMARK = "EXAMPLE DATA — not your measurements"


def pdf_pages(pdf):
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    n = int(next(line.split()[-1] for line in info.splitlines() if line.startswith("Pages:")))
    return [subprocess.run(["pdftotext", "-f", str(i), "-l", str(i), "-layout", str(pdf), "-"],
                           capture_output=True, text=True, check=True).stdout for i in range(1, n + 1)]


def pdf_info(pdf):
    return subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout


# ---- the fingerprint -------------------------------------------------------------------------

def test_fingerprint_is_stable_and_order_independent(tmp_path):
    a = stage_dir(tmp_path / "a")
    names = sorted(p.name for p in a.glob("*.cu"))
    b = tmp_path / "elsewhere" / "b"
    b.mkdir(parents=True)
    for name in reversed(names):  # written in the other order, at other times, with other modes
        (b / name).write_bytes((a / name).read_bytes())
        os.chmod(b / name, 0o600)
    (b / "notes.txt").write_text("not a stage file\n")
    (b / "sub.cu").mkdir()  # a directory is not a stage file either
    fa, fb = fingerprint.of_directory(a), fingerprint.of_directory(b)
    assert fa["fingerprint"] == fb["fingerprint"]
    assert fa["fingerprint"].startswith("sha256:") and len(fa["fingerprint"]) == len("sha256:") + 64
    assert sorted(fa["files"]) == names and fa["files"] == fb["files"]
    assert fa["scheme"] == "gemmlab-fingerprint/1" and (fa["name"], fb["name"]) == ("a", "b")
    digests = {n: fingerprint.sha256_file(a / n) for n in names}
    assert fingerprint.combine(dict(reversed(list(digests.items())))) == fa["fingerprint"]
    assert fingerprint.of_directory(a)["fingerprint"] == fa["fingerprint"]  # same answer twice

    (b / names[0]).write_bytes((b / names[0]).read_bytes() + b" ")  # one byte more
    assert fingerprint.of_directory(b)["fingerprint"] != fa["fingerprint"]
    (b / names[0]).write_bytes((a / names[0]).read_bytes())
    assert fingerprint.of_directory(b)["fingerprint"] == fa["fingerprint"]
    os.rename(b / names[0], b / ("x" + names[0]))  # the same bytes under another name
    assert fingerprint.of_directory(b)["fingerprint"] != fa["fingerprint"]


@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="needs sha256sum (coreutils)")
def test_fingerprint_is_sha256sum_of_the_sha256sum_lines(tmp_path):
    """The documented way to recompute it by hand: (cd student && LC_ALL=C sha256sum *.cu) | sha256sum."""
    d = stage_dir(tmp_path / "student")
    out = subprocess.run("(cd student && LC_ALL=C sha256sum *.cu) | sha256sum", shell=True, cwd=tmp_path,
                         capture_output=True, text=True, check=True, env=dict(os.environ, LC_ALL="C"))
    assert fingerprint.of_directory(d)["fingerprint"] == "sha256:" + out.stdout.split()[0]
    cli = subprocess.run([sys.executable, str(ROOT / "grader" / "scripts" / "fingerprint.py"), str(d),
                          "--json", str(tmp_path / "fp.json")], capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    assert json.loads((tmp_path / "fp.json").read_text()) == fingerprint.of_directory(d)


def test_report_keywords_round_trip(tmp_path):
    fp = fingerprint.of_directory(stage_dir(tmp_path / "alice"))
    stamp = fingerprint.parse_stamp(", ".join(["GEMM", "CUDA", *fingerprint.report_keywords(fp)]))
    assert stamp["submission"] == "alice" and stamp["fingerprint"] == fp["fingerprint"]
    assert stamp["files"] == {n: d[len("sha256:"):][:fingerprint.SHORT] for n, d in fp["files"].items()}
    assert not stamp["example"]
    example = fingerprint.parse_stamp(f"GEMM, {fingerprint.EXAMPLE_KEYWORD}")
    assert example["example"] and example["fingerprint"] is None
    assert fingerprint.parse_stamp("gemmlab-fingerprint=sha256:abc")["fingerprint"] is None  # not a hash


# ---- a report of a submission's measurements ---------------------------------------------------

@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """(submission dir, its fingerprint, PDF) of a report rendered from measurements of submission "alice"."""
    if missing_tools or not HAS_MPL:
        pytest.skip("needs pandoc, xelatex, poppler-utils and matplotlib (make setup)")
    base = tmp_path_factory.mktemp("measured")
    alice = stage_dir(base / "alice", lambda n, t: t + f"\n// alice's {n}\n")
    build = base / "build"
    measured_results(build, alice)
    pdf = base / "report.pdf"
    out = make_report("--render-only", "--build", build, "--out", pdf)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "EXAMPLE DATA" not in out.stdout
    return alice, fingerprint.of_directory(alice), pdf


@needs_render
def test_report_states_the_submission_and_its_fingerprint(measured):
    alice, fp, pdf = measured
    pages = pdf_pages(pdf)
    first = squeeze(pages[0])
    env = json.loads((FIXTURES / "bench-float.json").read_text())["environment"]
    for needle in ("alice", fp["fingerprint"], env["gpu"]["name"], "2026-11-24"):
        assert squeeze(needle) in first, needle
    for page in pages:  # no page says example data, and every footer names the submission
        assert "EXAMPLE DATA" not in page
        assert "alice" in page
    info = pdf_info(pdf)
    subject = next(line for line in info.splitlines() if line.startswith("Subject:"))
    assert "alice" in subject and fp["fingerprint"] in subject and env["gpu"]["name"] in subject
    assert fingerprint.EXAMPLE_KEYWORD not in info
    # make submit's reading (no PDF tool) agrees with poppler's
    stamp = fingerprint.read_report_stamp(pdf)
    assert stamp["fingerprint"] == fp["fingerprint"] and stamp["submission"] == "alice"
    keywords = next(line for line in info.splitlines() if line.startswith("Keywords:"))
    assert keywords.split(":", 1)[1].strip() == fingerprint.pdf_keywords(pdf)


# ---- example data -----------------------------------------------------------------------------

@needs_render
def test_make_report_demo_marks_every_page_and_carries_no_fingerprint():
    out = subprocess.run(["make", "-s", "report-demo", f"PYTHON={sys.executable}"], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    pdf = ROOT / "report" / "build" / "demo" / "example-report.pdf"
    assert pdf.exists() and not (out.stdout + out.stderr).count("report/report.pdf")
    pages = pdf_pages(pdf)
    assert len(pages) >= 5
    for i, page in enumerate(pages, 1):
        assert squeeze(WATERMARK) in squeeze(page), f"page {i} has no watermark"
    stamp = fingerprint.read_report_stamp(pdf)
    assert stamp["example"] and stamp["fingerprint"] is None and stamp["submission"] is None
    info = pdf_info(pdf)
    assert "gemmlab-fingerprint" not in info and "sha256:" not in info and "EXAMPLE DATA" in info


@needs_render
def test_saved_results_without_a_submission_record_render_as_example_data(tmp_path):
    """Results make report did not measure (here: the fixture copied where make report-pdf looks)."""
    build = tmp_path / "build"
    shutil.copytree(FIXTURES, build / "results", ignore=shutil.ignore_patterns("*.md"))
    pdf = tmp_path / "r.pdf"
    template = tmp_path / "report.md"
    template.write_text('---\ntitle: "A report"\n---\n\n# Summary\n\n::: {include="summary"}\n:::\n\n'
                        '\\newpage\n\n# More\n\n::: {include="results-all"}\n:::\n')
    out = make_report("--render-only", "--build", build, "--out", pdf, "--template", template)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "does not say which stage files it measured" in out.stdout
    pages = pdf_pages(pdf)
    assert len(pages) >= 2
    assert all(squeeze(WATERMARK) in squeeze(p) for p in pages)
    assert fingerprint.read_report_stamp(pdf)["example"]


@needs_mpl
def test_from_never_writes_the_students_report(tmp_path):
    """--from renders example data into report/build/demo unless told otherwise: never report/report.pdf."""
    env = dict(os.environ, PATH=str(tmp_path / "no-pandoc-here"))
    out = make_report("--from", FIXTURES, "--build", tmp_path / "b", env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "as example data" in out.stdout
    assert "report/report.pdf" not in out.stdout


# ---- measuring records the fingerprint ----------------------------------------------------------

@needs_mpl
def test_measure_records_the_fingerprint_and_measures_again_when_files_change(tmp_path):
    grader, log = fake_grader(tmp_path)
    alice = stage_dir(tmp_path / "alice")
    build = tmp_path / "build"
    env = dict(os.environ, PATH=str(tmp_path / "no-pandoc-here"))
    args = ["--grader", grader, "--config", ROOT / "course.toml", "--build", build, "--out", tmp_path / "r.pdf",
            "--submission", alice]
    out = make_report(*args, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    run = json.loads((build / "results" / "report-run.json").read_text())
    assert run["submission"] == fingerprint.of_directory(alice)
    calls = len(log.read_text().splitlines())
    out = make_report(*args, "--reuse", env=env)
    assert "reusing the measurements" in out.stdout
    (alice / "tiled.cu").write_text((alice / "tiled.cu").read_text() + "// tuned\n")
    out = make_report(*args, "--reuse", env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "the stage files of alice changed since" in out.stdout
    assert len(log.read_text().splitlines()) == 2 * calls
    run = json.loads((build / "results" / "report-run.json").read_text())
    assert run["submission"]["fingerprint"] == fingerprint.of_directory(alice)["fingerprint"]


# ---- the tuning history (make bench TAG=...) ---------------------------------------------------

import bench_history  # noqa: E402

FAKE_BENCH = r'''#!{python}
"""A stand-in for gemmlab bench: writes the fixture's float bench, its GFLOPS scaled, then exits."""
import json, sys
from pathlib import Path
args = sys.argv[1:]
out = Path(args[args.index("--json") + 1])
doc = json.loads(Path({fixture!r}).read_text())
doc["created"] = "2026-12-01T10:00:%02dZ" % {second}
doc["seed"] = {second}
for r in doc["results"]:
    for b in r.get("bench") or []:
        if b.get("gflops"):
            b["gflops"] *= {scale}
out.write_text(json.dumps(doc))
sys.exit({status})
'''


def fake_bench(tmp_path, second, scale=1.0, status=0):
    path = tmp_path / "gemmlab"
    path.write_text(FAKE_BENCH.format(python=sys.executable, fixture=str(FIXTURES / "bench-float.json"),
                                      second=second, scale=scale, status=status))
    path.chmod(0o755)
    return path


def make_bench(tmp_path, grader, submission, *extra):
    # -o: the stand-in is never remade (make would otherwise link the real grader over it)
    return subprocess.run(["make", "-s", "-o", str(grader), "bench", f"GRADER={grader}", f"SUBMISSION={submission}",
                           f"RESULTS={tmp_path / 'results'}", f"PYTHON={sys.executable}", *extra],
                          cwd=ROOT, capture_output=True, text=True)


def test_make_bench_keeps_a_history_labelled_by_tag(tmp_path):
    alice = stage_dir(tmp_path / "alice")
    history = tmp_path / "results" / "bench-history.jsonl"
    out = make_bench(tmp_path, fake_bench(tmp_path, 1), alice, "TAG=bm64-bk8")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "added to" in out.stdout
    (alice / "reuse.cu").write_text((alice / "reuse.cu").read_text() + "// BM = 128\n")
    out = make_bench(tmp_path, fake_bench(tmp_path, 2, scale=1.5), alice, "TAG=bm128-bk8")
    assert out.returncode == 0, out.stdout + out.stderr
    # the same bench.json again is not a new run
    again = subprocess.run([sys.executable, str(ROOT / "grader" / "scripts" / "bench_history.py"), "append",
                            "--bench", str(tmp_path / "results" / "bench.json"), "--submission", str(alice),
                            "--history", str(history)], capture_output=True, text=True)
    assert again.returncode == 0 and "already" in again.stdout
    out = make_bench(tmp_path, fake_bench(tmp_path, 3, status=3), alice, "TAG=no-gpu")  # a failed bench
    assert out.returncode != 0
    entries = bench_history.load(history)
    assert [e["tag"] for e in entries] == ["bm64-bk8", "bm128-bk8"]
    first, second = entries
    assert first["submission"]["name"] == "alice"
    assert second["submission"]["fingerprint"] == fingerprint.of_directory(alice)["fingerprint"]
    assert first["files"]["reuse.cu"] != second["files"]["reuse.cu"]
    assert second["files"]["reuse.cu"] == fingerprint.of_directory(alice)["files"]["reuse.cu"]
    assert first["files"]["tiled.cu"] == second["files"]["tiled.cu"]
    env = json.loads((FIXTURES / "bench-float.json").read_text())["environment"]
    assert first["gpu"]["name"] == env["gpu"]["name"]
    r1 = {(r["stage"], r["variant"], r["shape"]): r["gflops"] for r in first["results"] if r["gflops"]}
    r2 = {(r["stage"], r["variant"], r["shape"]): r["gflops"] for r in second["results"] if r["gflops"]}
    assert r1 and set(r1) == set(r2) and all(abs(r2[k] - 1.5 * r1[k]) < 1e-6 * r2[k] for k in r1)


def history_from_fixtures(tmp_path, tags_scales):
    """A history of runs made from the fixture's bench files, GFLOPS scaled per run."""
    alice = stage_dir(tmp_path / "alice")
    history = tmp_path / "results" / "bench-history.jsonl"
    for i, (tag, scale) in enumerate(tags_scales):
        doc = json.loads((FIXTURES / "bench-float.json").read_text())  # one bench of both precisions
        doc["results"] += json.loads((FIXTURES / "bench-double.json").read_text())["results"]
        doc["created"], doc["seed"] = f"2026-12-0{i + 1}T10:00:00Z", i
        for r in doc["results"]:
            for b in r.get("bench") or []:
                if b.get("gflops"):
                    b["gflops"] *= scale
        assert bench_history.append(history, bench_history.entry_of(doc, alice, tag))
    return history


@needs_mpl
def test_report_shows_a_stages_tuning_history(tmp_path):
    history = history_from_fixtures(tmp_path, [("bm64-bk8", 0.5), ("bm128-bk8", 0.8), ("bm128-bk16", 1.0)])
    entries = bench_history.load(history)
    from report_history import history_rows
    shape, header, rows = history_rows(entries, "reuse", ("float", "double"))
    assert shape == "8192x8192x8192"  # the largest shape every run timed
    assert [r[1] for r in rows] == ["bm64-bk8", "bm128-bk8", "bm128-bk16"]
    assert header[4:] == ["FP32 GFLOPS", "FP32 % cuBLAS", "FP64 GFLOPS", "FP64 % cuBLAS"]
    for prec, column in (("float", 4), ("double", 6)):
        best = max(b["gflops"] for r in json.loads((FIXTURES / f"bench-{prec}.json").read_text())["results"]
                   if r["stage"] == "reuse" for b in r["bench"] if (b["shape"]["M"], b["shape"]["N"], b["shape"]["K"]) == (8192,) * 3)
        assert rows[2][column].startswith(f"{best:,.0f}") and rows[0][column].startswith(f"{best * 0.5:,.0f}")

    build = tmp_path / "build"
    env = dict(os.environ, PATH=str(tmp_path / "no-pandoc-here"))  # the blocks only
    out = make_report("--from", FIXTURES, "--build", build, "--results", tmp_path / "results",
                      "--history", "reuse", env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    block = (build / "generated" / "stage-reuse.md").read_text()
    for words in ("Tuning history of reuse", "bm64-bk8", "bm128-bk8", "bm128-bk16", "FP32 GFLOPS", "8192³",
                  "fig-history-reuse.pdf"):
        assert words in block, words
    assert (build / "generated" / "figures" / "fig-history-reuse.pdf").exists()
    assert "Tuning history" not in (build / "generated" / "stage-tiled.md").read_text()
    out = make_report("--from", FIXTURES, "--build", build, "--results", tmp_path / "results",
                      "--history", "reus", env=env)
    assert out.returncode == 1 and "no stage named 'reus'" in out.stderr


def test_history_key_of_course_toml(tmp_path):
    from report_data import ReportError, load_report_set
    cfg = tmp_path / "course.toml"
    cfg.write_text('[report]\nhistory = ["reuse", "tiled"]\n')
    assert load_report_set(cfg).history == ("reuse", "tiled")
    cfg.write_text('[report]\nhistory = "reuse"\n')
    with pytest.raises(ReportError, match="history must be a list of stage names"):
        load_report_set(cfg)
    assert load_report_set(ROOT / "course.toml").history == ()
