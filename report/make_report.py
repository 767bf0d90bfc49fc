#!/usr/bin/env python3
"""make_report.py — the lab report: measures the report benchmark set, draws figures and tables, and
renders report/report.pdf from the student's report/report.md with Pandoc.

Three steps, each usable alone, because the GPU node and the machine with Pandoc may differ:
  1. measure (GPU): `gemmlab bench` on the set of course.toml [report] -> report/build/results/*.json
     (skipped with --reuse while the grader binary and the set are unchanged);
  2. figures and tables (matplotlib) -> report/build/generated/;
  3. PDF (pandoc + xelatex, or typst without TeX) -> report/report.pdf. Where pandoc is missing, step 3 is skipped with a
     note: run `make report-pdf` (steps 2 and 3 from the saved results) where pandoc is installed.

  make report                 all three (RERUN=0: reuse fresh measurements)
  make report-pdf             steps 2 and 3 from report/build/results (no GPU, no grader build)
  make report-demo            the example report: the instructor's example measurements
                              (tests/fixtures/report), "EXAMPLE DATA" on every page
  report/make_report.py --from DIR --out /tmp/r.pdf     render other saved results, as example data

Without a GPU, `make report` measures nothing and says where to run it; it also writes a draft,
report/build/draft/report-draft.pdf (never report/report.pdf): your text, every measurement "not
measured yet" with the command that measures it, and under each stage what the build knows of its file
(registers, shared and local memory, its machine code counted: report_draft.py). "DRAFT" heads every page.

Whose measurements: `make report` records the fingerprint of the stage files it measured
(grader/scripts/fingerprint.py) in report-run.json, and the PDF states it — submission, fingerprint,
GPU and date on the first page, and in the PDF's Subject and Keywords, which `make submit` reads back.
Results that carry no such record — anything given with --from, or saved results that make report
did not measure — render only as example data: "EXAMPLE DATA — not your measurements" in the head of
every page and no fingerprint in the PDF.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from report_data import (GRADE_FILE, REGISTRY_FILE, RUN_FILE, ReportError, load_dataset,  # noqa: E402
                         load_report_set, shape_str)
from report_render import ToolsMissing, render, scan_template, unanswered  # noqa: E402

sys.path.insert(0, str(ROOT / "grader" / "scripts"))
import bench_history  # noqa: E402  (make bench's tuning history)
import fingerprint  # noqa: E402  (the one definition of a submission's fingerprint)

BUILD = HERE / "build"
DEMO_RESULTS = ROOT / "tests" / "fixtures" / "report"  # the instructor's example measurements
WATERMARK = "EXAMPLE DATA — not your measurements"
DRAFT_MARK = "DRAFT — nothing measured yet"
DRAFT_PDF = "report-draft.pdf"  # in <build>/draft: a draft never lands where make submit looks
NO_GPU_EXIT = 3  # the grader's exit status when the machine has no GPU


def say(text=""):
    print(f"report: {text}" if text else "", flush=True)


# ---- step 1: measure -------------------------------------------------------------------------

def git_commit():
    """(commit, dirty) of the repository, or (None, None) outside git."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        if head.returncode != 0:
            return None, None
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                                capture_output=True, text=True)
        return head.stdout.strip(), bool(status.stdout.strip())
    except OSError:
        return None, None


def bench_file(prec):
    return f"bench-{prec}.json"


def expected_files(rs):
    return [bench_file(p) for p in rs.precisions]


def submission_fingerprint(submission):
    """fingerprint.of_directory of the submission measured, or None when none is named."""
    if not submission:
        return None
    try:
        return fingerprint.of_directory(submission)
    except FileNotFoundError as e:
        raise ReportError(str(e)) from None


def fresh_reason(results_dir, grader, rs, fp=None):
    """None when the saved measurements can be reused, else why not."""
    run_path = results_dir / RUN_FILE
    if not run_path.exists():
        return "there are no earlier measurements"
    try:
        run = json.loads(run_path.read_text())
    except json.JSONDecodeError:
        return f"{run_path} is damaged"
    if run.get("provisional"):
        return "the saved results are provisional fixture data"
    if run.get("grader_sha256") != fingerprint.sha256_file(grader):
        return "the grader (with your stages in it) was rebuilt since"
    if run.get("report_set") != rs.fingerprint():
        return "course.toml [report] changed since"
    if fp and (run.get("submission") or {}).get("fingerprint") != fp["fingerprint"]:
        return f"the stage files of {fp['name']} changed since (their fingerprint is not the one measured)"
    missing = [f for f in expected_files(rs) + [REGISTRY_FILE] if not (results_dir / f).exists()]
    if missing:
        return f"{', '.join(missing)} missing"
    return None


class NoGpu(Exception):
    """The grader found no GPU to measure on; it has said so, and what to run instead."""


def run_grader(grader, *args):
    return subprocess.run([str(grader), *args], capture_output=True, text=True)


def measure(grader, config, rs, results_dir, grade_source, reuse, submission=None):
    grader = Path(grader)
    if not grader.exists():
        raise ReportError(f"the grader {grader} is not built: run `make` first (make report builds it)")
    results_dir.mkdir(parents=True, exist_ok=True)
    fp = submission_fingerprint(submission)
    if reuse:
        why = fresh_reason(results_dir, grader, rs, fp)
        if why is None:
            copy_grade(grade_source, results_dir)
            run = json.loads((results_dir / RUN_FILE).read_text())
            say(f"reusing the measurements of {run.get('created', '?')} in {results_dir} "
                "(grader and report set unchanged; RERUN=1 measures again)")
            return
        say(f"measuring again: {why}")

    # The GPU first, before anything is said about measuring: the judge's own message says what to run
    # on a GPU node (the command typed, from the Makefile), and nothing else is offered.
    typed = os.environ.get("GEMMLAB_COMMAND") or shlex.join([sys.executable, *sys.argv])  # make report's, or ours
    if subprocess.run([str(grader), "gpu", "--for", "report"],
                      env=dict(os.environ, GEMMLAB_COMMAND=typed)).returncode == NO_GPU_EXIT:
        raise NoGpu()
    listing = run_grader(grader, "list", "--json")
    if listing.returncode != 0:
        raise ReportError(f"`{grader} list --json` failed:\n{listing.stderr.strip()}")
    # Measure into a fresh folder and replace the saved results only when every run succeeded: a
    # failed or interrupted run (no GPU, a crash) never costs earlier measurements.
    new_dir = results_dir.with_name(results_dir.name + ".partial")
    shutil.rmtree(new_dir, ignore_errors=True)
    new_dir.mkdir(parents=True)
    (new_dir / REGISTRY_FILE).write_text(listing.stdout)
    help_text = run_grader(grader, "bench", "--help")
    if help_text.returncode != 0:
        raise ReportError(f"this grader has no `bench` command yet ({grader} bench --help failed)")
    options = help_text.stdout + help_text.stderr
    extra = []
    if "--max-seconds" in options:
        extra += ["--max-seconds", f"{rs.max_seconds_per_shape:g}"]
    else:
        say("warning: this grader's bench has no --max-seconds; the report set may take longer")
    if "--config" in options and config and Path(config).exists():
        extra += ["--config", str(config)]
    if "--submission" in options and submission:
        extra += ["--submission", str(submission)]

    # One bench run per precision with every shape of the set: the bench checks every stage before
    # timing it, so fewer runs means fewer checks.
    shapes = list(dict.fromkeys(s for _, _, group in rs.groups() for s in group))
    what = "; ".join(f"{len(group)} {desc}" for _, desc, group in rs.groups())
    say(f"measuring the report set: {len(shapes)} shapes ({what}) in {', '.join(rs.precisions)}, every "
        f"stage next to naive and cuBLAS, at most {rs.max_seconds_per_shape:g} s of timing per stage and shape")
    started = time.monotonic()
    commands = []
    try:
        for i, prec in enumerate(rs.precisions, 1):
            out = new_dir / bench_file(prec)
            cmd = [str(grader), "bench", "--prec", prec, "--shapes", ",".join(shape_str(s) for s in shapes),
                   *extra, "--json", str(out)]
            say(f"[{i}/{len(rs.precisions)}] {prec}: {len(shapes)} shapes "
                f"({time.monotonic() - started:.0f} s so far)")
            t0 = time.monotonic()
            proc = subprocess.run(cmd)
            commands.append(" ".join(cmd))
            if proc.returncode == NO_GPU_EXIT:
                raise NoGpu()  # the grader said so, and what to run
            if proc.returncode not in (0, 1) or not out.exists():
                raise ReportError(f"`{' '.join(cmd)}` ended with status {proc.returncode} and "
                                  f"{'no' if not out.exists() else 'a partial'} results file")
            if proc.returncode == 1:
                say(f"  some stage failed in this run: the report shows which (see {out.name})")
            say(f"  done in {time.monotonic() - t0:.1f} s")
    except BaseException:  # no GPU, a failed run, Ctrl-C: keep the earlier results as they were
        shutil.rmtree(new_dir, ignore_errors=True)
        raise

    if fp and submission_fingerprint(submission)["fingerprint"] != fp["fingerprint"]:
        shutil.rmtree(new_dir, ignore_errors=True)
        raise ReportError(f"the stage files of {submission} changed while they were measured: "
                          "run make report again (it rebuilds and measures what is there now)")
    commit, dirty = git_commit()
    run = {"tool": "report/make_report.py",
           "created": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "commit": commit, "commit_dirty": dirty, "host": socket.gethostname(),
           "grader": str(grader), "grader_sha256": fingerprint.sha256_file(grader),
           "report_set": rs.fingerprint(), "seconds": round(time.monotonic() - started, 1),
           "commands": commands}
    if fp:
        run["submission"] = fp  # whose stage files these are: the report states it, make submit checks it
    (new_dir / RUN_FILE).write_text(json.dumps(run, indent=2) + "\n")
    for old in [*results_dir.glob("bench-*.json"), results_dir / RUN_FILE, results_dir / REGISTRY_FILE]:
        old.unlink(missing_ok=True)  # never mix runs of different sets
    for new in new_dir.iterdir():
        new.replace(results_dir / new.name)
    new_dir.rmdir()
    copy_grade(grade_source, results_dir)
    say(f"measured in {run['seconds']:.0f} s; results in {results_dir}")


def copy_grade(grade_source, results_dir):
    """Keeps a copy of the latest `make grade` result beside the report's results, for the scores."""
    target = results_dir / GRADE_FILE
    if grade_source and Path(grade_source).is_file():
        try:
            doc = json.loads(Path(grade_source).read_text())
        except json.JSONDecodeError:
            say(f"warning: {grade_source} is not valid JSON; the report shows no score")
            target.unlink(missing_ok=True)  # never an earlier grade's score in its place
            return
        if doc.get("kind") == "grade":
            shutil.copyfile(grade_source, target)
            return
    target.unlink(missing_ok=True)


# ---- steps 2 and 3 ---------------------------------------------------------------------------

def build_generated(ds, rs, generated_dir):
    try:
        import report_figures
    except ImportError as e:
        raise ReportError(f"the figures need matplotlib ({e}); install python3-matplotlib "
                          "(`make setup`) or run with the Python that has it") from None
    from report_tables import generated_blocks

    if generated_dir.exists():
        shutil.rmtree(generated_dir)
    figures = report_figures.draw_all(ds, rs, generated_dir / "figures")
    blocks = generated_blocks(ds, rs, figures, report_figures.pitched_pairs(ds))
    for name, text in blocks.items():
        (generated_dir / f"{name}.md").write_text(text, encoding="utf-8")
    drawn = [f.name for f in figures if f.path]
    say(f"{len(drawn)} figures and {len(blocks) - len(figures)} tables in {generated_dir}")
    return blocks


def start_draft(grader, submission, draft_dir):
    """A draft's results folder, for a machine without a GPU: the registry and a run record that says
    nothing was measured, where, and the command that measures (the course's srun line and the command
    typed, as the grader's own hint prints them). Returns it."""
    listing = run_grader(grader, "list", "--json")
    if listing.returncode != 0:
        raise ReportError(f"`{grader} list --json` failed:\n{listing.stderr.strip()}")
    shutil.rmtree(draft_dir, ignore_errors=True)
    results = draft_dir / "results"
    results.mkdir(parents=True)
    (results / REGISTRY_FILE).write_text(listing.stdout)
    commit, dirty = git_commit()
    command = os.environ.get("GEMMLAB_COMMAND") or shlex.join([sys.executable, *sys.argv])
    run = {"tool": "report/make_report.py", "draft": True,
           "created": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "commit": commit, "commit_dirty": dirty, "host": socket.gethostname(), "grader": str(grader),
           "measure": f"{os.environ.get('GEMMLAB_SRUN') or 'srun ...'} {command}",
           "submission_name": Path(submission).name if submission else ""}
    (results / RUN_FILE).write_text(json.dumps(run, indent=2) + "\n")
    return results


def add_build_facts(blocks, generated, facts):
    """Each stage's block of a draft ends with what the build knows of its file (report_draft.py)."""
    for name, text in facts.items():
        key = f"stage-{name}"
        if key in blocks:
            blocks[key] = blocks[key].rstrip() + "\n\n" + text
            (generated / f"{key}.md").write_text(blocks[key], encoding="utf-8")


def measured_submission(ds):
    """The submission record make report measured (report-run.json `submission`), or None."""
    fp = ds.run.get("submission") if isinstance(ds.run, dict) else None
    if isinstance(fp, dict) and str(fp.get("fingerprint", "")).startswith(fingerprint.PREFIX) \
            and isinstance(fp.get("files"), dict) and fp.get("name"):
        return fp
    return None


def describe_run(ds, example):
    """(footer line, PDF metadata, marks) naming the submission measured and its fingerprint, the GPU,
    clocks, driver, CUDA, date and commit. marks: {"provenance": the first page's statement,
    "watermark": the head of every page ("" but for example data)}. Example data gets no fingerprint."""
    env, run = ds.environment, ds.run
    gpu = (env.get("gpu") or {}).get("name", "no GPU")
    when = (run.get("created") or ds.created or "")[:10] or "not measured"
    parts = [gpu]
    if env.get("driver_version"):
        parts.append(f"driver {env['driver_version']}")
    if env.get("cuda_runtime"):
        parts.append(f"CUDA {env['cuda_runtime']}")
    parts.append(f"measured {when}")
    if run.get("commit"):
        parts.append(f"commit {run['commit'][:12]}" + ("+" if run.get("commit_dirty") else ""))
    else:
        parts.append("commit unknown")
    clock = (env.get("gpu") or {}).get("max_sm_clock_mhz")
    measured_on = ", ".join(parts[:1] + ([f"max SM clock {clock} MHz"] if clock else []) + parts[1:])
    keywords = ["GEMM", "CUDA", "SGEMM", "DGEMM", gpu]
    fp = None if example else measured_submission(ds)
    if run.get("draft"):
        name = run.get("submission_name") or "your submission"
        who = f"DRAFT of {name}"
        subject = f"DRAFT of the GEMM Lab report of {name}: nothing measured yet (no GPU on {run.get('host', '?')})"
        provenance = (f"{DRAFT_MARK}: the text of report.md and what the build of {name}/ knows, made where there "
                      f"is no GPU ({run.get('host', '?')}, {when}). On a GPU node, {run.get('measure', 'make report')} "
                      "measures it and writes report/report.pdf.")
        footer = " · ".join([who, f"made {(run.get('created') or '')[:10]}",
                             f"commit {run['commit'][:12]}" if run.get("commit") else "commit unknown"])
        return footer, {"subject": subject, "keywords": ", ".join(["GEMM", "CUDA", "draft"])}, \
            {"provenance": provenance, "watermark": DRAFT_MARK}
    if fp:
        who = f"{fp['name']} {fp['fingerprint'][:len(fingerprint.PREFIX) + 12]}"
        subject = f"GEMM Lab report of submission {fp['name']} ({fp['fingerprint']}) measured on {measured_on}"
        keywords += fingerprint.report_keywords(fp)
        provenance = (f"Measurements of submission {fp['name']}, stage files fingerprint "
                      f"{fp['fingerprint']}, on {gpu}, measured {when}.")
        watermark = ""
    else:
        who = "EXAMPLE DATA"
        subject = f"EXAMPLE DATA, not a student's measurements: GEMM Lab example report measured on {measured_on}"
        keywords.append(fingerprint.EXAMPLE_KEYWORD)
        provenance = (f"{WATERMARK}: saved example results, rendered without a submission fingerprint "
                      f"(measured on {gpu}, {when}). `make report` measures yours.")
        watermark = WATERMARK
    footer = " · ".join([who] + parts)
    return footer, {"subject": subject, "keywords": ", ".join(keywords)}, \
        {"provenance": provenance, "watermark": watermark}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0].split("— ", 1)[-1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[1:]))
    ap.add_argument("--grader", help="the gemmlab binary that measures (make report passes it)")
    ap.add_argument("--config", default=str(ROOT / "course.toml"), help="course.toml ([report] section)")
    ap.add_argument("--results", help="the submission's results folder; its results.json (make grade) "
                                      "gives the scores")
    ap.add_argument("--submission", help="the submission folder, recorded in the results")
    ap.add_argument("--reuse", action="store_true", help="reuse measurements while grader and set are unchanged")
    ap.add_argument("--render-only", action="store_true", help="no measuring: figures, tables and PDF "
                                                               "from saved results")
    ap.add_argument("--from", dest="from_dir", help="render these saved results as EXAMPLE DATA (watermarked, "
                                                    "no fingerprint; default out: report/build/demo)")
    ap.add_argument("--demo", action="store_true", help="the example report: --from tests/fixtures/report "
                                                        "(make report-demo)")
    ap.add_argument("--history", help="stages whose tuning history (RESULTS/bench-history.jsonl) the report "
                                      "shows, comma-separated (make report HISTORY=reuse; default: course.toml "
                                      "[report] history)")
    ap.add_argument("--profiles", help="the folder of make profile's summaries (default RESULTS/profile, or "
                                       "DIR/profile with --from)")
    ap.add_argument("--build", help="work folder (default report/build, report/build/demo for example data)")
    ap.add_argument("--template", default=str(HERE / "report.md"), help="the report text (default report/report.md)")
    ap.add_argument("--out", help="the PDF (default report/report.pdf; report/build/demo/example-report.pdf "
                                  "for example data)")
    args = ap.parse_args(argv)
    if args.demo and not args.from_dir:
        args.from_dir = str(DEMO_RESULTS)
    # Example data never lands where make submit looks (report/report.pdf) unless asked for by name.
    example_dir = BUILD / "demo"
    args.build = args.build or str(example_dir if args.from_dir else BUILD)
    args.out = args.out or str(example_dir / "example-report.pdf" if args.from_dir else HERE / "report.pdf")

    draft = False
    try:
        build = Path(args.build)
        rs = load_report_set(args.config)
        results_dir = Path(args.from_dir) if args.from_dir else build / "results"
        if not (args.render_only or args.from_dir):
            if not args.grader:
                raise ReportError("measuring needs --grader (make report passes it); "
                                  "use --render-only to render saved results")
            grade = Path(args.results) / "results.json" if args.results else None
            try:
                measure(args.grader, args.config, rs, results_dir, grade, args.reuse, args.submission)
            except NoGpu:  # the grader has said where to run it; what can be known here goes into a draft
                draft = True
                build = build / "draft"
                results_dir = start_draft(args.grader, args.submission, build)
                args.out = str(build / DRAFT_PDF)
                say(f"no GPU here: a draft of the report instead, from {args.template} and the build")
        elif args.results and not args.from_dir and results_dir.is_dir():
            copy_grade(Path(args.results) / "results.json", results_dir)

        ds = load_dataset(results_dir)
        generated = build / "generated"
        blocks = build_generated(ds, rs, generated)
        history = [n for n in args.history.split(",") if n] if args.history is not None else list(rs.history)
        if history:
            from report_history import add_history
            source = Path(args.results) / bench_history.FILE if args.results else None
            try:
                entries = bench_history.load(source) if source else []
            except bench_history.HistoryError as e:
                raise ReportError(str(e)) from None
            add_history(blocks, generated, entries, history, ds, rs.precisions,
                        str(source) if source else "no results folder (--results)")
            say(f"tuning history of {', '.join(history)}: {len(entries)} run(s) in {source}")
        # make profile's summaries (results/<submission>/profile/*.json; example data: DIR/profile)
        profiles = Path(args.profiles) if args.profiles else (
            Path(args.from_dir) / "profile" if args.from_dir else Path(args.results) / "profile" if args.results else None)
        from report_profile import add_profiles
        count = add_profiles(blocks, generated, profiles, ds.stage_names())
        if count:
            say(f"{count} profile(s) of make profile from {profiles}")
        if draft:
            from report_draft import build_facts
            add_build_facts(blocks, generated, build_facts(args.grader, args.submission, ds.stage_names(),
                                                            os.environ.get("CUDA_HOME")))
        for warning in scan_template(args.template, set(blocks), ROOT, ds.stage_names()):
            say(f"warning: {warning}")
        if not args.from_dir:  # the example report shows the template as it is
            todo = unanswered(args.template)
            for warning in todo:
                say(f"warning: {warning}")
            if todo:
                say(f"warning: {len(todo)} thing(s) of the template still to write in {args.template}: replace "
                    "each prompt with your own text, and the header's placeholders with your name and ID")
        example = not draft and (bool(args.from_dir) or measured_submission(ds) is None)
        if example and not args.from_dir:
            say(f"note: {results_dir} does not say which stage files it measured (results from before "
                "reports carried a fingerprint, or not measured by make report): the PDF is marked "
                f"\"{WATERMARK}\" on every page. `make report` measures your stages.")
        elif example:
            say(f"rendering {results_dir} as example data: \"{WATERMARK}\" on every page, no fingerprint")
        footer, pdf_meta, marks = describe_run(ds, example)
        try:
            render(args.template, generated, build / "latex", args.out, ROOT, footer, pdf_meta, marks)
        except ToolsMissing as e:
            say(f"{e}: the PDF is not rendered here.")
            if draft:
                print(f"report: nothing was measured here, and the draft is not rendered ({e})", file=sys.stderr)
                return NO_GPU_EXIT
            say(f"  Measurements, figures and tables are saved in {build}. Finish the PDF on a "
                "machine with pandoc and xelatex or typst (`make setup` installs them, without root too), in this "
                "same folder:")
            say("    make report-pdf")
            return 0
        if draft:
            say(f"wrote the draft {args.out}: your text and what the build knows, \"{DRAFT_MARK}\" on every page")
            print(f"report: nothing was measured here: {ds.run['measure']} on a GPU node measures every stage and "
                  "writes the report, report/report.pdf", file=sys.stderr)
            return NO_GPU_EXIT
        say(f"wrote {args.out}")
        return 0
    except NoGpu:
        print("report: nothing was measured and nothing was written", file=sys.stderr)
        return NO_GPU_EXIT
    except ReportError as e:
        print(f"report: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("report: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
