"""report_figures.py — the figures of the lab report (matplotlib, vector PDF), drawn from a Dataset.

Each `figure_*` function draws one figure into `outdir` and returns a `Figure`: the file (None
when there is nothing to draw), its caption, and a note on what is missing. Stages, their order,
colours and variants come from the registry in the Dataset; no stage is named here. Stages that may
use the tensor cores (registry `tensor_cores`) run an order of magnitude faster than the CUDA-core
ladder: they have a figure of their own (fig-tensor) and stay out of the others.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter  # noqa: E402

from report_data import gpu_peaks, shape_str  # noqa: E402

PAGE_WIDTH_IN = 6.5  # A4 with 2 cm margins is 6.7 in of text width
ELEMENT_BYTES = {"float": 4, "double": 8}
PREC_TITLE = {"float": "FP32 (SGEMM)", "double": "FP64 (DGEMM)"}
CUBLAS_STYLE = dict(color="black", linestyle="--", linewidth=1.4, marker="", label="cuBLAS")
NAIVE_STYLE = dict(color="0.55", linestyle=":", linewidth=1.4, marker="", label="naive baseline (reference)")
MARKERS = "osD^vP*Xh<>"
LEGEND_COLUMNS = 4

matplotlib.rcParams.update({
    "pdf.fonttype": 42,           # TrueType in the PDF: the text of the figures stays searchable
    "font.size": 8.5,
    "axes.titlesize": 9,
    "axes.labelsize": 8.5,
    "legend.fontsize": 7.5,
    "xtick.labelsize": 7.5,
    "ytick.labelsize": 7.5,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.dpi": 100,
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.03,
})


@dataclass
class Figure:
    name: str
    path: Path | None
    caption: str
    missing: list = field(default_factory=list)  # sentences: what could not be drawn and why


def style_of(ds, stage):
    """Colour and marker of a stage, fixed by its place in the registry."""
    names = [s["name"] for s in ds.registry] or ds.stage_names()
    i = names.index(stage) if stage in names else len(names)
    return dict(color=plt.get_cmap("tab10")(i % 10), marker=MARKERS[i % len(MARKERS)])


GFLOPS_FORMAT = FuncFormatter(lambda v, _: f"{v:,.0f}")


def _square_axis(ax, sizes):
    """Log2 axis of sizes: powers of two labelled, the other measured sizes as unlabelled ticks."""
    ax.set_xscale("log", base=2)
    powers = [n for n in sizes if n & (n - 1) == 0] or sizes
    ax.xaxis.set_major_locator(FixedLocator(powers))
    ax.xaxis.set_minor_locator(FixedLocator([n for n in sizes if n not in powers]))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{int(round(v))}"))
    ax.set_xlabel("matrix size N  (M = N = K)")
    ax.yaxis.set_major_formatter(GFLOPS_FORMAT)
    ax.set_ylabel("GFLOPS")
    ax.set_ylim(bottom=0)


def _missing_stages(ds, precisions, names=None):
    out = []
    for name in (ds.cuda_core_stages() if names is None else names):
        for prec in precisions:
            status, why = ds.status(name, prec)
            if status != "ok":
                out.append(f"{name} ({prec}): {why}")
    return out


def _save(fig, outdir, name):
    path = Path(outdir) / f"{name}.pdf"
    fig.savefig(path)
    plt.close(fig)
    return path


def _legend_below(fig, axes):
    handles, labels = {}, []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in handles:
                handles[lab] = h
                labels.append(lab)
    if labels:
        fig.legend([handles[l] for l in labels], labels, loc="lower center", ncol=min(len(labels), LEGEND_COLUMNS),
                    frameon=False, bbox_to_anchor=(0.5, -0.01))
    return len(labels)


def _legend_rows(n):
    return math.ceil(n / LEGEND_COLUMNS) if n else 0


def figure_square(ds, rs, outdir):
    """GFLOPS against the size of square problems: every stage, naive and cuBLAS."""
    sizes = list(rs.square_sizes)
    fig, axes = plt.subplots(1, len(rs.precisions), figsize=(PAGE_WIDTH_IN, 3.0), sharey=False,
                             squeeze=False)
    drawn = False
    for ax, prec in zip(axes[0], rs.precisions):
        shapes = [(n, n, n) for n in sizes]
        for name in ds.cuda_core_stages():
            if not ds.implemented(name, prec):
                continue
            v = ds.chosen_variant(name, prec)
            pts = [(n, ds.result(name, v, prec).gflops(s)) for n, s in zip(sizes, shapes)]
            pts = [(n, g) for n, g in pts if g]
            if pts:
                ax.plot(*zip(*pts), label=ds.label(name, v), markersize=3.5, linewidth=1.3,
                        **style_of(ds, name))
                drawn = True
        cub = [(n, ds.baseline(prec, s)[1]) for n, s in zip(sizes, shapes)]
        cub = [(n, g) for n, g in cub if g]
        if cub:
            ax.plot(*zip(*cub), **CUBLAS_STYLE)
            drawn = True
        base = ds.baseline_stage()
        if base is None or not ds.implemented(base, prec):
            nv = [(n, ds.baseline(prec, s)[0]) for n, s in zip(sizes, shapes)]
            nv = [(n, g) for n, g in nv if g]
            if nv:
                ax.plot(*zip(*nv), **NAIVE_STYLE)
        ax.set_title(PREC_TITLE[prec])
        _square_axis(ax, sizes)
    if not drawn:
        plt.close(fig)
        return Figure("fig-square", None, "", ["no stage has been timed yet, and no cuBLAS baseline"])
    rows = _legend_rows(_legend_below(fig, axes[0]))
    fig.tight_layout(rect=(0, 0.06 * rows + 0.02, 1, 1))
    return Figure("fig-square", _save(fig, outdir, "fig-square"),
                  "Performance on square problems ($M = N = K$): every stage, with cuBLAS in the "
                  "same run. For stages with variants, the variant that was graded (else the fastest) "
                  "is shown. Higher is better.",
                  _missing_stages(ds, rs.precisions))


def figure_tiles(ds, rs, outdir):
    """The variants (e.g. tile sizes) of every stage that has more than one, against the size."""
    multi = [n for n in ds.cuda_core_stages() if len(ds.variants(n)) > 1]
    if not multi:
        return Figure("fig-tiles", None, "", ["no stage of the registry has variants"])
    sizes = list(rs.square_sizes)
    fig, axes = plt.subplots(len(multi), len(rs.precisions), squeeze=False,
                             figsize=(PAGE_WIDTH_IN, 2.7 * len(multi)))
    drawn, missing = False, []
    for row, name in zip(axes, multi):
        for ax, prec in zip(row, rs.precisions):
            variants = ds.variants(name)
            for i, v in enumerate(variants):
                r = ds.result(name, v, prec)
                pts = [(n, r.gflops((n, n, n))) for n in sizes] if r else []
                pts = [(n, g) for n, g in pts if g]
                if pts:
                    cmap = plt.get_cmap("viridis")
                    ax.plot(*zip(*pts), label=f"{name} ({v})", marker=MARKERS[i], markersize=3.5,
                            linewidth=1.3, color=cmap(0.1 + 0.8 * i / max(1, len(variants) - 1)))
                    drawn = True
                else:
                    status = r.disposition.replace("_", " ") if r else "not measured"
                    missing.append(f"{name} ({v}, {prec}): {status}")
            ax.set_title(f"{ds.title(name)} — {PREC_TITLE[prec]}")
            _square_axis(ax, sizes)
            if not ax.lines:
                ax.text(0.5, 0.5, "not implemented yet", transform=ax.transAxes, ha="center",
                        va="center", color="0.4")
    if not drawn:
        plt.close(fig)
        return Figure("fig-tiles", None, "", missing or ["no variant has been timed yet"])
    rows = _legend_rows(_legend_below(fig, axes.ravel()))
    fig.tight_layout(rect=(0, 0.05 * rows / len(multi) + 0.02, 1, 1))
    return Figure("fig-tiles", _save(fig, outdir, "fig-tiles"),
                  "Variants of " + ", ".join(f"*{n}*" for n in multi) +
                  " (" + ", ".join(f"{n}: " + "/".join(ds.variants(n)) for n in multi) +
                  ") on square problems.", missing)


def pitched_pairs(ds):
    """(pitched stage, the dense stage before it in the registry) for every stage with pitched operands."""
    pairs = []
    for i, s in enumerate(ds.registry):
        if s.get("operands") == "pitched":
            before = [p for p in ds.registry[:i] if p.get("operands") != "pitched" and not p.get("baseline")]
            if before:
                pairs.append((s["name"], before[-1]["name"]))
    return pairs


def _bars(ax, groups, series, colors, labels, hatches=None):
    """Grouped bars: groups on x, one bar per series; None values are left out."""
    n = len(series)
    width = 0.8 / max(n, 1)
    for i, values in enumerate(series):
        xs = [g + (i - (n - 1) / 2) * width for g in range(len(groups))]
        keep = [(x, v) for x, v in zip(xs, values) if v]
        if keep:
            ax.bar(*zip(*keep), width=width * 0.92, color=colors[i], label=labels[i],
                   hatch=hatches[i] if hatches else None, edgecolor="white", linewidth=0.3)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups)
    ax.grid(axis="x", visible=False)
    ax.yaxis.set_major_formatter(GFLOPS_FORMAT)
    ax.set_ylabel("GFLOPS")


def figure_pitched(ds, rs, outdir):
    """The pitched stage against the dense stage before it, on sizes that are not multiples of the tile
    or vector width. These are two stages, two kernels: the report set times each stage once, on its own
    operands, so the ratio is the whole pitched stage against the dense one, not the pitch alone."""
    pairs = pitched_pairs(ds)
    if not pairs:
        return Figure("fig-pitched", None, "", ["the registry has no stage with pitched operands"])
    sizes = list(rs.odd_sizes)
    fig, axes = plt.subplots(len(pairs), len(rs.precisions), squeeze=False,
                             figsize=(PAGE_WIDTH_IN, 2.6 * len(pairs)))
    drawn, missing = False, []
    for row, (pitched, dense) in zip(axes, pairs):
        for ax, prec in zip(row, rs.precisions):
            series, labels, colors = [], [], []
            for name in (dense, pitched):
                v = ds.chosen_variant(name, prec)
                r = ds.result(name, v, prec)
                vals = [r.gflops((n, n, n)) if r else None for n in sizes]
                if any(vals):
                    drawn = True
                else:
                    missing.append(f"{name} ({prec}): {ds.status(name, prec)[1] or 'no data at these sizes'}")
                series.append(vals)
                labels.append(ds.label(name, v) + (" (its kernel, pitched operands)" if name == pitched
                                                   else " (its kernel, dense operands)"))
                colors.append(style_of(ds, name)["color"])
            _bars(ax, [str(n) for n in sizes], series, colors, labels)
            for gi, (d, p) in enumerate(zip(*series)):
                if d and p:
                    ax.annotate(f"{p / d:.2f}×", (gi + 0.2, p), ha="center", va="bottom", fontsize=6.5,
                                xytext=(0, 1), textcoords="offset points")
            ax.set_xlabel("matrix size N  (M = N = K)")
            ax.set_title(PREC_TITLE[prec])
            ax.margins(y=0.12)
            if not any(any(s) for s in series):
                ax.text(0.5, 0.5, "not implemented yet", transform=ax.transAxes, ha="center", va="center",
                        color="0.4")
    if not drawn:
        plt.close(fig)
        return Figure("fig-pitched", None, "", missing)
    rows = _legend_rows(_legend_below(fig, axes.ravel()))
    fig.tight_layout(rect=(0, 0.06 * rows / len(pairs) + 0.02, 1, 1))
    text = "; ".join(f"*{p}* against *{d}*" for p, d in pairs)
    return Figure("fig-pitched", _save(fig, outdir, "fig-pitched"),
                  f"The pitched stage against the dense stage before it ({text}) on sizes that are not "
                  "multiples of the tile or vector width. They are two different kernels, each on its own "
                  "operands: the ratio over each pair (pitched / dense) is the gain of the whole stage — "
                  "aligned rows and vector loads together with whatever else its kernel changes — not of "
                  "the pitch alone.", missing)


def _stage_series(ds, prec, shapes):
    """(label, colour, values) for each stage with data at these shapes, then cuBLAS."""
    out = []
    for name in ds.cuda_core_stages():
        if not ds.implemented(name, prec):
            continue
        v = ds.chosen_variant(name, prec)
        r = ds.result(name, v, prec)
        vals = [r.gflops(s) for s in shapes]
        if any(vals):
            out.append((ds.label(name, v), style_of(ds, name)["color"], vals))
    cub = [ds.baseline(prec, s)[1] for s in shapes]
    if any(cub):
        out.append(("cuBLAS", "0.15", cub))
    return out


def figure_rect(ds, rs, outdir):
    """Tall-skinny and wide shapes: every stage and cuBLAS."""
    shapes = [g for g in rs.groups() if g[0] == "rect"][0][2]
    if not shapes:
        return Figure("fig-rect", None, "", ["course.toml [report] rect_shapes is empty"])
    fig, axes = plt.subplots(len(rs.precisions), 1, squeeze=False,
                             figsize=(PAGE_WIDTH_IN, 2.3 * len(rs.precisions)))
    drawn = False
    for ax, prec in zip(axes[:, 0], rs.precisions):
        series = _stage_series(ds, prec, shapes)
        if series:
            drawn = True
            labels, colors, values = zip(*series)
            _bars(ax, [shape_str(s).replace("x", "×") for s in shapes], values, colors, labels)
        ax.set_title(PREC_TITLE[prec])
    if not drawn:
        plt.close(fig)
        return Figure("fig-rect", None, "", ["no stage has been timed on these shapes yet"])
    axes[-1, 0].set_xlabel("shape M×N×K")
    rows = _legend_rows(_legend_below(fig, axes[:, 0]))
    fig.tight_layout(rect=(0, 0.035 * rows + 0.02, 1, 1))
    return Figure("fig-rect", _save(fig, outdir, "fig-rect"),
                  "Tall-skinny and wide shapes ($M \\times N \\times K$). Few blocks or a short $K$ loop "
                  "leave SMs idle.", _missing_stages(ds, rs.precisions))


def figure_precision(ds, rs, outdir):
    """FP32 against FP64 at the headline size, every stage and cuBLAS."""
    if len(rs.precisions) < 2:
        return Figure("fig-precision", None, "", ["the report set measures one precision only"])
    n = rs.headline_size
    shape = (n, n, n)
    names = [s for s in ds.cuda_core_stages() if any(ds.implemented(s, p) for p in rs.precisions)]
    groups, per_prec = [], {p: [] for p in rs.precisions}
    for name in names:
        variant = ds.chosen_variant(name, rs.precisions[0])
        groups.append(ds.label(name, variant) if len(ds.variants(name)) > 1 else name)
        for p in rs.precisions:
            r = ds.result(name, ds.chosen_variant(name, p), p)
            per_prec[p].append(r.gflops(shape) if r else None)
    if any(ds.baseline(p, shape)[1] for p in rs.precisions):
        groups.append("cuBLAS")
        for p in rs.precisions:
            per_prec[p].append(ds.baseline(p, shape)[1])
    if not any(any(v) for v in per_prec.values()):
        return Figure("fig-precision", None, "", [f"nothing was timed at {n}×{n}×{n} yet"])
    fig, ax = plt.subplots(figsize=(PAGE_WIDTH_IN, 2.6))
    _bars(ax, groups, [per_prec[p] for p in rs.precisions], ["#4c72b0", "#dd8452"],
          [PREC_TITLE[p] for p in rs.precisions], hatches=["", "//"])
    f, d = per_prec[rs.precisions[0]], per_prec[rs.precisions[1]]
    for gi, (a, b) in enumerate(zip(f, d)):
        if a and b:
            ax.annotate(f"{b / a:.2f}", (gi + 0.2, b), ha="center", va="bottom", fontsize=6.5,
                        xytext=(0, 1), textcoords="offset points")
    ax.set_title(f"M = N = K = {n}")
    ax.margins(y=0.1)
    ax.legend(frameon=False, loc="upper left")
    fig.tight_layout()
    return Figure("fig-precision", _save(fig, outdir, "fig-precision"),
                  f"Single against double precision at $N = {n}$. The number over each pair is the "
                  "FP64/FP32 ratio of GFLOPS.", _missing_stages(ds, rs.precisions))


def compulsory_intensity(shape, prec):
    """Flops per byte of DRAM traffic if A and B are read once and C written once."""
    M, N, K = shape
    return 2.0 * M * N * K / (ELEMENT_BYTES[prec] * (M * K + K * N + M * N))


def figure_roofline(ds, rs, outdir):
    """Arithmetic intensity against GFLOPS, under the GPU's compute and memory ceilings."""
    peaks = gpu_peaks(ds.environment, rs)
    shapes = [(n, n, n) for n in rs.square_sizes] + [g for g in rs.groups() if g[0] == "rect"][0][2]
    fig, axes = plt.subplots(1, len(rs.precisions), figsize=(PAGE_WIDTH_IN, 3.1), squeeze=False)
    drawn, missing = False, []
    for ax, prec in zip(axes[0], rs.precisions):
        series = []
        for name in ds.cuda_core_stages():
            if ds.implemented(name, prec):
                v = ds.chosen_variant(name, prec)
                series.append((ds.label(name, v), style_of(ds, name), ds.result(name, v, prec).gflops))
        series.append(("cuBLAS", dict(color="black", marker="x"), lambda s, p=prec: ds.baseline(p, s)[1]))
        xs_all, ys_all = [], []
        for label, style, gflops_at in series:
            pts = sorted((compulsory_intensity(s, prec), gflops_at(s)) for s in shapes if gflops_at(s))
            if pts:
                ax.plot(*zip(*pts), linestyle="none", markersize=3.5, label=label, alpha=0.85, **style)
                xs_all += [p[0] for p in pts]
                ys_all += [p[1] for p in pts]
                drawn = True
        compute = peaks["fp32_gflops"] if prec == "float" else peaks["fp64_gflops"]
        bw = peaks["bandwidth_gbs"]
        ridge = compute / bw if compute and bw else None
        lo = min(xs_all + ([ridge / 4] if ridge else [1.0])) / 1.5
        hi = max(xs_all + [100.0]) * 2
        if compute:
            ax.plot([max(ridge or lo, lo), hi], [compute, compute], color="firebrick", linewidth=1.6,
                    label=f"{'FP32' if prec == 'float' else 'FP64'} FMA peak {compute / 1000:.1f} TFLOPS")
            if bw:
                ax.plot([lo, ridge], [bw * lo, compute], color="darkorange", linewidth=1.6,
                        label=f"DRAM bandwidth {bw:,.0f} GB/s")
                ax.axvline(ridge, color="0.5", linewidth=0.6, linestyle=":")
            tc = peaks["fp64_tensor_gflops"]
            if prec == "double" and tc:
                ax.plot([max(tc / bw if bw else lo, lo), hi], [tc, tc], color="firebrick", linewidth=1.0,
                        linestyle="--", label=f"FP64 tensor-core peak {tc / 1000:.1f} TFLOPS")
        else:
            missing.append(f"{prec}: the GPU's peaks are unknown (set course.toml [report.gpu_peaks])")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        top = max(ys_all + [compute or 0, peaks["fp64_tensor_gflops"] or 0 if prec == "double" else 0])
        ax.set_ylim(bottom=max(10.0, min(ys_all + [top]) / 3) if ys_all else 10.0, top=top * 1.6 if top else None)
        ax.set_xlabel("arithmetic intensity (flop/byte)")
        ax.set_ylabel("GFLOPS")
        ax.yaxis.set_major_formatter(GFLOPS_FORMAT)
        ax.set_title(PREC_TITLE[prec])
        ax.grid(True, which="major", alpha=0.3)
    if not drawn:
        plt.close(fig)
        return Figure("fig-roofline", None, "", ["no stage has been timed yet"])
    rows = _legend_rows(_legend_below(fig, axes[0]))
    fig.tight_layout(rect=(0, 0.055 * rows + 0.02, 1, 1))
    gpu = peaks["name"] or "the GPU"
    return Figure("fig-roofline", _save(fig, outdir, "fig-roofline"),
                  f"Roofline of {gpu}: every measured shape placed at its compulsory arithmetic intensity "
                  "(A and B read once, C written once: $2MNK / (s(MK + KN + MN))$ flop/byte for $s$-byte "
                  "elements). " + ("; ".join(peaks["source"]) + "." if peaks["source"] else ""),
                  missing)


def figure_tensor(ds, rs, outdir):
    """The tensor-core stages at the headline size: every variant next to cuBLAS in the same precision
    and to true-FP32/FP64 cuBLAS, per precision."""
    names = ds.tensor_stages()
    if not names:
        return Figure("fig-tensor", None, "", ["the registry has no stage that uses the tensor cores"])
    n = rs.headline_size
    shape = (n, n, n)
    fig, axes = plt.subplots(1, len(rs.precisions), figsize=(PAGE_WIDTH_IN, 2.8), squeeze=False,
                             gridspec_kw={"width_ratios": [2 if p == "float" else 1 for p in rs.precisions]})
    drawn = False
    for ax, prec in zip(axes[0], rs.precisions):
        labels, values, colors = [], [], []
        for name in names:
            variants = ds.variants(name)
            if prec == "double":
                # One FP64 kernel serves every variant (stages.h): one bar, the best of its timings.
                gs = [ds.result(name, v, prec).gflops(shape) for v in variants if ds.result(name, v, prec)]
                gs = [g for g in gs if g]
                labels.append(f"{name} (FP64)")
                values.append(max(gs) if gs else None)
                colors.append(plt.get_cmap("viridis")(0.15))
                continue
            for i, v in enumerate(variants):
                r = ds.result(name, v, prec)
                labels.append(ds.label(name, v))
                values.append(r.gflops(shape) if r else None)
                colors.append(plt.get_cmap("viridis")(0.15 + 0.7 * i / max(1, len(variants) - 1)))
        items = [("cublas/fp16", "cuBLAS FP16"), ("cublas/tf32", "cuBLAS TF32"), ("cublas", "cuBLAS FP32")] \
            if prec == "float" else [("cublas", "cuBLAS FP64")]
        for item, label in items:
            g = ds.cublas_gflops(prec, shape, item)
            if g:
                labels.append(label)
                values.append(g)
                colors.append("0.25")
        xs = list(range(len(labels)))
        ax.bar(xs, [v or 0 for v in values], color=colors, width=0.7)
        for x, v in zip(xs, values):
            if v:
                ax.annotate(f"{v / 1000:,.0f}", (x, v), ha="center", va="bottom", fontsize=6.5, xytext=(0, 1),
                            textcoords="offset points")
                drawn = True
        ax.set_xticks(xs)
        ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=6.5)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda val, _: f"{val / 1000:,.0f}"))
        ax.set_ylabel("TFLOPS")
        ax.set_title(f"{PREC_TITLE[prec]}, M = N = K = {n}")
        ax.margins(y=0.12)
    if not drawn:
        plt.close(fig)
        return Figure("fig-tensor", None, "", _missing_stages(ds, rs.precisions, names) or
                      [f"nothing was timed at {n}×{n}×{n} yet"])
    fig.tight_layout()
    return Figure("fig-tensor", _save(fig, outdir, "fig-tensor"),
                  f"The tensor cores at $N = {n}$ (TFLOPS, $2N^3/t$): each variant beside cuBLAS in the "
                  "precision it declares and beside true-FP32 cuBLAS; in double, the one FP64 kernel every "
                  "variant shares, beside cuBLAS DGEMM.", _missing_stages(ds, rs.precisions, names))


FIGURES = [figure_square, figure_tiles, figure_pitched, figure_rect, figure_precision, figure_roofline,
           figure_tensor]


def draw_all(ds, rs, outdir):
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    return [f(ds, rs, outdir) for f in FIGURES]
