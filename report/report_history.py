"""report_history.py — a stage's tuning history in the report: the runs of `make bench` kept in
results/<submission>/bench-history.jsonl (grader/scripts/bench_history.py), as a table (one row per
run: its label, when, the stage file's hash, the best variant's GFLOPS per precision, % of cuBLAS) and
a figure (each run's GFLOPS, in the order of the runs).

Which stages: course.toml [report] history = ["reuse"], or `make report HISTORY=reuse` (which wins).
The block is added at the end of the stage's own section (include "stage-<name>").

Every run of a stage is compared at one shape: the largest shape (by 2MNK) that most of the stage's
runs timed, so rows compare like with like; a run that did not time it shows "not at this shape".
"""
from __future__ import annotations

import collections
from pathlib import Path

from report_data import ReportError, parse_shape
from report_tables import PREC_NAME, fmt_gflops, fmt_pct, md_escape, notice, shape_label, table


def stage_runs(entries, stage):
    """[(run number, entry)] of the history entries that timed or tried the stage."""
    return [(i, e) for i, e in enumerate(entries, 1) if any(r.get("stage") == stage for r in e.get("results", []))]


def _passed(e, stage, precision, shape=None):
    return [r for r in e.get("results", []) if r.get("stage") == stage and r.get("precision") == precision
            and r.get("disposition") == "passed" and r.get("gflops") and (shape is None or r.get("shape") == shape)]


def compare_shape(runs, stage):
    """The shape the runs of a stage are compared at (see the module comment), or None."""
    counts = collections.Counter(r["shape"] for _, e in runs for r in e.get("results", [])
                                 if r.get("stage") == stage and r.get("disposition") == "passed" and r.get("gflops"))
    if not counts:
        return None
    flops = lambda s: (lambda m, n, k: m * n * k)(*parse_shape(s))  # noqa: E731
    return max(counts, key=lambda s: (counts[s], flops(s)))


def best(e, stage, precision, shape):
    """The fastest passed variant of one run at one shape: (variant, gflops, pct_cublas) or None."""
    rows = _passed(e, stage, precision, shape)
    if not rows:
        return None
    r = max(rows, key=lambda r: r["gflops"])
    return r.get("variant", ""), r["gflops"], r.get("pct_cublas")


def run_label(number, e):
    return e.get("tag") or f"run {number}"


def history_rows(entries, stage, precisions):
    """(shape, header, rows) of a stage's history table."""
    runs = stage_runs(entries, stage)
    shape = compare_shape(runs, stage)
    header = ["#", "configuration (TAG)", "measured", f"{stage}.cu"]
    for p in precisions:
        header += [f"{PREC_NAME[p]} GFLOPS", f"{PREC_NAME[p]} % cuBLAS"]
    rows = []
    for number, e in runs:
        digest = (e.get("files") or {}).get(f"{stage}.cu", "")
        row = [str(number), md_escape(run_label(number, e)), (e.get("time") or "")[:16].replace("T", " "),
               f"`{digest.removeprefix('sha256:')[:8]}`" if digest else "—"]
        for p in precisions:
            b = best(e, stage, p, shape) if shape else None
            if b:
                variant, gflops, pct = b
                row += [fmt_gflops(gflops) + (f" ({md_escape(variant)})" if variant else ""), fmt_pct(pct)]
            else:
                tried = [r for r in e.get("results", []) if r.get("stage") == stage and r.get("precision") == p]
                row += ["not at this shape" if _passed(e, stage, p) else
                        (md_escape(tried[0].get("disposition", "—").replace("_", " ")) if tried else "—"), ""]
        rows.append(row)
    return shape, header, rows


def draw(entries, stage, precisions, outdir):
    """The figure of a stage's history: GFLOPS of each run at the compared shape, per precision."""
    import matplotlib.pyplot as plt
    from report_figures import GFLOPS_FORMAT  # the report's matplotlib settings come with it

    runs = stage_runs(entries, stage)
    shape = compare_shape(runs, stage)
    if not shape:
        return None
    labels = [run_label(n, e) for n, e in runs]
    fig, ax = plt.subplots(figsize=(6.3, 2.8))
    width = 0.8 / max(1, len(precisions))
    for j, p in enumerate(precisions):
        values = [(best(e, stage, p, shape) or (None, 0, None))[1] for _, e in runs]
        xs = [i + (j - (len(precisions) - 1) / 2) * width for i in range(len(runs))]
        ax.bar(xs, values, width=width, label=PREC_NAME[p])
    ax.set_xticks(range(len(runs)))
    ax.set_xticklabels(labels, rotation=30 if len(runs) > 4 else 0, ha="right" if len(runs) > 4 else "center")
    ax.yaxis.set_major_formatter(GFLOPS_FORMAT)
    ax.set_ylabel("GFLOPS")
    ax.set_xlabel("configuration (make bench TAG=...), in the order measured")
    ax.legend(frameon=False)
    path = Path(outdir) / f"fig-history-{stage}.pdf"
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def history_block(entries, stage, precisions, outdir, source):
    """The Markdown added to a stage's section: its tuning table and figure, or a note."""
    out = [f"\n**Tuning history of {md_escape(stage)}.** The runs of `make bench` kept in {md_escape(source)}, "
           "in the order they ran, each labelled with its `TAG=`.\n"]
    runs = stage_runs(entries, stage)
    if not runs:
        out.append(notice(f"No bench run of {md_escape(stage)} in the history yet: `make bench STAGE={stage} "
                          "TAG=<configuration>` adds one."))
        return "\n".join(out)
    shape, header, rows = history_rows(entries, stage, precisions)
    if shape:
        out.append(f"Best variant of each run at {shape_label(parse_shape(shape))}:\n")
    out.append(table(header, rows, "rllr" + "rr" * len(precisions)))
    path = draw(entries, stage, precisions, outdir)
    if path:
        out.append(f"![Tuning history of {md_escape(stage)}: GFLOPS of each configuration at "
                   f"{shape_label(parse_shape(shape))}](figures/{path.name}){{width=100%}}\n")
    gpus = sorted({(e.get("gpu") or {}).get("name", "") for _, e in runs} - {""})
    if len(gpus) > 1:
        out.append(f"*The runs were measured on different GPUs ({md_escape(', '.join(gpus))}): compare % cuBLAS, "
                   "not GFLOPS.*\n")
    return "\n".join(out)


def add_history(blocks, generated_dir, entries, stages, ds, precisions, source):
    """Appends each named stage's history block to its stage-<name> block (and file); returns the stages."""
    known = ds.stage_names()
    for stage in stages:
        if stage not in known:
            raise ReportError(f"history: no stage named '{stage}' (stages: {', '.join(known)})")
        text = history_block(entries, stage, precisions, Path(generated_dir) / "figures", source)
        blocks[f"stage-{stage}"] = blocks.get(f"stage-{stage}", "") + "\n" + text
        (Path(generated_dir) / f"stage-{stage}.md").write_text(blocks[f"stage-{stage}"], encoding="utf-8")
    return stages
