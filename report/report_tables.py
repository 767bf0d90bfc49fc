"""report_tables.py — the generated Markdown blocks of the lab report: tables of the student's numbers,
the measurement environment, and the figure blocks (figure + caption, or a note in its place).

`generated_blocks()` returns {name: Markdown}; report.md pulls each in with an include div
(`::: {include="summary"}` ... `:::`). `include_names()` lists the names report.md may use.
No stage is named here: per-stage blocks are `stage-<name>` for every stage of the registry.
"""
from __future__ import annotations

import statistics

from report_data import gpu_peaks, shape_str

NOT_IMPLEMENTED = "not implemented yet"
CUBLAS_NAME = {"cublas/tf32": "cuBLAS TF32", "cublas/fp16": "cuBLAS FP16"}  # the tensor stage's baselines
PREC_NAME = {"float": "FP32", "double": "FP64"}
FIXED_INCLUDES = ("environment", "summary", "scores", "table-pitched", "results-all", "tensor")


def include_names(ds, figure_names):
    return list(FIXED_INCLUDES) + list(figure_names) + [f"stage-{n}" for n in ds.stage_names()]


# ---- formatting ------------------------------------------------------------------------------

def fmt_gflops(v):
    return f"{v:,.0f}" if v else "—"


def fmt_x(v):
    return f"{v:.2f}×" if v else "—"


def fmt_pct(v):
    return f"{v:.1f}" if v else "—"


def shape_label(shape):
    """"4096³" for a cube, "8192×128×8192" otherwise."""
    M, N, K = shape
    return f"{M}³" if M == N == K else shape_str(shape).replace("x", "×")


def md_escape(text):
    return str(text).replace("|", "\\|").replace("*", "\\*").replace("_", "\\_")


# What Pandoc and LaTeX make of a pipe table: Pandoc sizes the columns of a table with a line wider than
# PANDOC_COLUMNS characters in proportion to the dashes of its rule, out of the text width less a
# \tabcolsep on each side of every column (A4, 2 cm margins: 482 pt; 6 pt; about 4.8 pt a character at 10 pt).
PANDOC_COLUMNS = 72
TEXT_WIDTH_PT, TABCOLSEP_PT, CHAR_PT = 482.0, 6.0, 4.8


def _cell_width(cell):  # "×", "³" and CJK characters print wider than a digit
    return len(str(cell)) + sum(1 for c in str(cell) if ord(c) > 127)


def _longest_word(cell):
    return max([_cell_width(w) for w in str(cell).split()] + [1])


def table(header, rows, align, min_widths=None):
    """A pipe table; align is a string of 'l'/'r', one per column. The rule under the header has
    as many dashes as the column's widest cell: when a table is wider than a line, Pandoc sizes its
    columns in proportion to those dashes, and a column then gets at least the room of its longest
    word (of the header or a cell: LaTeX breaks lines only between words), so no two headers run
    together."""
    widths = [min(60, 3 + max([_cell_width(h)] + [_cell_width(r[i]) for r in rows] + [3]))
              for i, h in enumerate(header)]
    for i, w in (min_widths or {}).items():
        widths[i] = max(widths[i], w)
    widest_row = max(sum(_cell_width(c) + 3 for c in r) + 1 for r in [header] + rows)
    if max(sum(widths) + len(widths) + 1, widest_row) > PANDOC_COLUMNS:
        chars = (TEXT_WIDTH_PT - 2 * TABCOLSEP_PT * len(widths)) / CHAR_PT  # room for the cells, in characters
        # every header word, and the numbers of right-aligned columns, on one line; text cells may wrap
        need = [2 + max([_longest_word(h)] + [_longest_word(r[i]) if align[i] == "r" else min(18, _cell_width(r[i]))
                                               for r in rows])
                for i, h in enumerate(header)]
        if sum(need) > chars:  # it cannot all fit: the same shortfall for every column
            need = [n * chars / sum(need) for n in need]
        for _ in range(50):  # raising one column shrinks the share of the others: settle
            total = sum(widths)
            short = [i for i, w in enumerate(widths) if w * chars < need[i] * total]
            if not short:
                break
            for i in short:
                widths[i] = int(-(-need[i] * total // chars))
    rule = {"l": ":{}", "r": "{}:", "c": ":{}:"}
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join(rule[a].format("-" * w) for a, w in zip(align, widths)) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def shown_variants(ds, name, prec):
    """[(variant, label)] of a stage as the report shows it in one precision. The variants of a
    tensor-core stage differ only in what A and B are rounded to; where all of them declare the same
    inputs in a precision (double: fp64), they are one kernel — stages.h registers
    gemm_tensor<double, full> for every variant — shown once, as "tensor (FP64, DMMA)", with the
    timings of the variant the grade used (else the fastest)."""
    variants = ds.variants(name)
    if name in ds.tensor_stages() and len(variants) > 1:
        inputs = {(ds.variant_info(name, v).get("inputs") or {}).get(prec) for v in variants}
        if len(inputs) == 1 and None not in inputs:
            what = "FP64, DMMA" if prec == "double" else PREC_NAME[prec]
            return [(ds.chosen_variant(name, prec), f"{name} ({what})")]
    return [(v, ds.label(name, v)) for v in variants]


def variant_cell(ds, name, prec, variant):
    """The variant column of a row: "DMMA" where every variant is one FP64 kernel (shown_variants)."""
    if prec in PREC_NAME and len(ds.variants(name)) > 1 and len(shown_variants(ds, name, prec)) == 1:
        return "DMMA" if prec == "double" else ""
    return variant or ""


def notice(text):
    """A visible note that stands where numbers or a figure would be."""
    return f"> **{text}**\n"


def point_ratios(ds, prec, shape, gflops, point=None):
    """(× naive, % cuBLAS) of a GFLOPS value: the bench's own ratios when it gave them."""
    if point and point.x_naive and point.pct_cublas:
        return point.x_naive, point.pct_cublas
    naive, cublas = ds.baseline(prec, shape)
    return (gflops / naive if gflops and naive else None,
            100.0 * gflops / cublas if gflops and cublas else None)


# ---- the blocks ------------------------------------------------------------------------------

def block_environment(ds, rs):
    env, run = ds.environment, ds.run
    gpu = env.get("gpu") or {}
    rows = []
    if gpu:
        extras = []
        if gpu.get("compute_capability"):
            extras.append(f"sm\\_{str(gpu['compute_capability']).replace('.', '')}")
        if gpu.get("sms"):
            extras.append(f"{gpu['sms']} SMs")
        if gpu.get("memory_bytes"):
            extras.append(f"{gpu['memory_bytes'] / 2**30:.0f} GiB")
        if gpu.get("l2_bytes"):
            extras.append(f"L2 {gpu['l2_bytes'] / 2**20:.0f} MiB")
        rows.append(("GPU", f"{md_escape(gpu.get('name', '?'))} ({', '.join(extras)})"))
    elif env:
        rows.append(("GPU", md_escape(env.get("no_gpu_reason", "none"))))
    clocks = [p.sm_clock_mhz for r in ds.results.values() for p in r.points.values() if p.sm_clock_mhz]
    clock = f"max {gpu['max_sm_clock_mhz']} MHz" if gpu.get("max_sm_clock_mhz") else ""
    if clocks:
        clock += (f"; while timing {min(clocks):.0f}–{max(clocks):.0f} MHz "
                  f"(median {statistics.median(clocks):.0f})")
    if clock:
        rows.append(("SM clock", clock.lstrip("; ")))
    points = [p for r in ds.results.values() for p in r.points.values()]
    throttled = sum(p.throttled for p in points)
    if throttled:
        rows.append(("Throttling", f"{throttled} of {len(points)} timings saw a power, thermal or "
                                   "hardware slowdown (NVML)"))
    if env.get("clocks"):
        rows.append(("Clocks (NVML)", md_escape(describe_clocks(env["clocks"]))))
    driver = env.get("driver_version", "")
    if env.get("cuda_driver_api"):
        driver = f"{driver} (CUDA driver API {env['cuda_driver_api']})".strip()
    if driver:
        rows.append(("Driver", md_escape(driver)))
    if env.get("cuda_runtime") or env.get("cublas"):
        rows.append(("CUDA, cuBLAS", f"{env.get('cuda_runtime', '?')}, {env.get('cublas', '?')}"))
    peaks = gpu_peaks(env, rs) if gpu else None
    if peaks and (peaks["fp32_gflops"] or peaks["bandwidth_gbs"]):
        parts = []
        if peaks["fp32_gflops"]:
            parts.append(f"FP32 {peaks['fp32_gflops'] / 1000:.1f} TFLOPS")
        if peaks["fp64_gflops"]:
            tc = peaks["fp64_tensor_gflops"]
            parts.append(f"FP64 {peaks['fp64_gflops'] / 1000:.1f} TFLOPS" +
                         (f" ({tc / 1000:.1f} on the FP64 tensor cores, DMMA)" if tc else ""))
        if peaks["bandwidth_gbs"]:
            parts.append(f"DRAM {peaks['bandwidth_gbs']:,.0f} GB/s")
        rows.append(("Peaks", ", ".join(parts)))
    if env.get("host"):
        rows.append(("Host", md_escape(env["host"])))
    when = (run.get("created") or ds.created or "").replace("T", " ").replace("Z", " UTC")
    if run.get("draft"):
        rows.append(("Measured", f"not yet: {md_escape(run.get('host', 'this machine'))} has no GPU; on a GPU node, "
                                 f"`{run.get('measure', 'make report')}` measures every stage"))
    elif when:
        took = f" (the report set took {run['seconds']:.0f} s)" if run.get("seconds") else ""
        rows.append(("Measured", when + took))
    if run.get("commit"):
        dirty = " with uncommitted changes" if run.get("commit_dirty") else ""
        rows.append(("Commit", f"`{run['commit'][:12]}`{dirty}"))
    else:
        rows.append(("Commit", "unknown (measured outside a git checkout)"))
    if ds.sources:
        rows.append(("Results files", ", ".join(f"`{s}`" for s in ds.sources)))
    if not rows:
        return notice("No measurements yet: run `make report` on a GPU node.")
    out = table(["", ""], rows, "ll")
    if run.get("provisional"):
        out = notice("Provisional numbers: " + md_escape(run.get("note", "not from a GPU run"))) + "\n" + out
    return out


def describe_reading(reading):
    """One NVML reading: "1980 MHz (max 1980), 45 °C, 127 W, no slowdown"."""
    parts = []
    if "sm_clock_mhz" in reading:
        parts.append(f"{reading['sm_clock_mhz']} MHz" +
                     (f" (max {reading['max_sm_clock_mhz']})" if "max_sm_clock_mhz" in reading else ""))
    if "temperature_c" in reading:
        parts.append(f"{reading['temperature_c']} °C")
    if "power_w" in reading:
        parts.append(f"{reading['power_w']:.0f} W")
    if "clock_reasons" in reading:
        reasons = reading["clock_reasons"]
        parts.append(", ".join(reasons) if reasons else "no slowdown")
    return ", ".join(parts)


def describe_clocks(clocks):
    """NVML readings at the start and end of each precision's timing:
    {"float": {"start": {...}, "end": {...}}, ...}, or a flat {"start": ..., "end": ...}."""
    if not isinstance(clocks, dict):
        return str(clocks)
    if "start" in clocks or "end" in clocks:
        clocks = {"": clocks}
    parts = []
    for prec, span in clocks.items():
        if not isinstance(span, dict):
            parts.append(f"{prec}: {span}")
            continue
        ends = [f"{when} {describe_reading(span[when])}" for when in ("start", "end")
                if isinstance(span.get(when), dict)]
        parts.append((f"{prec}: " if prec else "") + "; ".join(ends))
    return " — ".join(parts)


def block_summary(ds, rs):
    """One row per stage × precision at the headline size; score columns when a grade exists."""
    n = rs.headline_size
    shape = (n, n, n)
    header = ["Stage", "Precision", "Variant", f"GFLOPS at {n}³", "× naive", "% cuBLAS"]
    with_score = bool(ds.grade)
    if with_score:
        header += ["Score"]
    rows = []
    for name in ds.stage_names():
        for prec in rs.precisions:
            status, why = ds.status(name, prec)
            score = ds.score_row(name, prec)
            score_cell = []
            if with_score:
                score_cell = [f"{_num(score.get('correctness')) + _num(score.get('performance')):g} / "
                              f"{_num(score.get('correctness_max')) + _num(score.get('performance_max')):g}"
                              if score else "—"]
            if status != "ok":
                rows.append([name, PREC_NAME[prec], "", f"*{md_escape(why)}*", "", ""] + score_cell)
                continue
            v = ds.chosen_variant(name, prec)
            r = ds.result(name, v, prec)
            g = r.gflops(shape)
            point = r.points.get(shape)
            xn, pc = point_ratios(ds, prec, shape, g, point)
            pct = fmt_pct(pc)
            if point and point.cublas_item and point.cublas_item != "cublas" and pc:
                pct += f" (of {CUBLAS_NAME.get(point.cublas_item, point.cublas_item)})"  # cuBLAS in its precision
            rows.append([name, PREC_NAME[prec], variant_cell(ds, name, prec, v), fmt_gflops(g), fmt_x(xn), pct]
                        + score_cell)
    for prec in rs.precisions:
        naive, cublas = ds.baseline(prec, shape)
        if cublas:
            rows.append(["cuBLAS", PREC_NAME[prec], "", fmt_gflops(cublas), fmt_x(cublas / naive if naive else None),
                         "100.0"] + ([""] if with_score else []))
    out = table(header, rows, "lllrrr" + ("r" if with_score else ""))
    if ds.run.get("draft"):
        out = notice(f"A draft: nothing is measured yet. On a GPU node, `{ds.run.get('measure', 'make report')}` "
                     "measures every stage and writes the report.") + "\n" + out
    if with_score:
        out += (f"\nScores from `make grade` (total {_num(ds.grade.get('total')):g} of "
                f"{_num(ds.grade.get('max')):g}); GFLOPS here are from the report set.{extra_credit_note(ds.grade)}\n")
    doubles = {name: ds.result(name, ds.chosen_variant(name, "double"), "double").gflops(shape)
               for name in ds.stage_names() if "double" in rs.precisions and ds.status(name, "double")[0] == "ok"}
    doubles["cuBLAS"] = ds.baseline("double", shape)[1] if "double" in rs.precisions else None
    note = fp64_tensor_note(ds, rs, doubles)
    return out + (f"\n{note}\n" if note else "")


def _num(v):
    return float(v) if isinstance(v, (int, float)) else 0.0


def extra_credit_note(grade):
    """What makes a total above the maximum ("110 of 100") no error: the points of the extra-credit
    stages count in the total and not in the maximum (course.toml [scoring] extra_credit). "" without them."""
    rows = [r for r in grade.get("stages", []) if r.get("extra_credit")]
    earned = sum(_num(r.get("correctness")) + _num(r.get("performance")) for r in rows)
    if not earned:
        return ""
    stages = ", ".join(dict.fromkeys(md_escape(r.get("stage", "")) for r in rows))
    return (f" {earned:g} of these points are extra credit ({stages}): they count in the total but not in the "
            f"maximum of {_num(grade.get('max')):g}, so a total above it is no error.")


def fp64_tensor_note(ds, rs, gflops):
    """Why FP64 speeds stand above the GPU's FP64 peak, where some do: the FMA units' peak is the one the
    environment names first; above it, the work ran on the FP64 tensor cores (DMMA), which every stage
    may use in double. gflops: {name: FP64 GFLOPS shown}. "" where none is above it, or the peak is unknown."""
    peaks = gpu_peaks(ds.environment, rs) if ds.environment.get("gpu") else None
    fma = peaks["fp64_gflops"] if peaks else None
    above = [name for name, g in gflops.items() if fma and g and g > fma]
    if not above:
        return ""
    tensor = peaks["fp64_tensor_gflops"]
    names = [md_escape(n) for n in above]
    return (f"FP64 above the FP64 peak: {' and '.join(filter(None, [', '.join(names[:-1]), names[-1]]))} "
            f"{'runs' if len(above) == 1 else 'run'} faster in double than the GPU's FP64 FMA units can "
            f"({fma / 1000:.1f} TFLOPS), on its FP64 tensor cores (DMMA: `mma.sync` on doubles"
            + (f", up to {tensor / 1000:.1f} TFLOPS" if tensor else "") + "), which every stage may use in double, "
            "with no loss of precision (the student guide's Rules).")


def block_scores(ds, rs):
    if not ds.grade:
        return notice("No grade yet: `make grade` writes one, and `make report` then shows the score here.")
    header = ["Stage", "Prec.", "Variant", "Result", "Corr.", "Perf.", "GFLOPS", "× naive", "% cuBLAS", "Note"]
    rows = []
    score_rows = ds.grade.get("stages", [])
    for row in score_rows:
        rows.append([md_escape(row.get("stage", "")), PREC_NAME.get(row.get("precision"), row.get("precision", "")),
                     md_escape(variant_cell(ds, row.get("stage", ""), row.get("precision"), row.get("variant_used", ""))), md_escape(str(row.get("disposition", "")).replace("_", " ")),
                     f"{_num(row.get('correctness')):g} / {_num(row.get('correctness_max')):g}",
                     f"{_num(row.get('performance')):g} / {_num(row.get('performance_max')):g}",
                     fmt_gflops(row.get("gflops")), fmt_x(row.get("x_naive")), fmt_pct(row.get("pct_cublas")),
                     md_escape(row.get("note", ""))])
    align = "llllrrrrrl"
    if not any(r.get("note") for r in score_rows):  # no notes: no empty column
        header, rows, align = header[:-1], [r[:-1] for r in rows], align[:-1]
    else:  # the grader's notes say "% of cuBLAS at <shape> (full marks at ...), ...x naive": not twice
        keep = [i for i, h in enumerate(header) if h not in ("× naive", "% cuBLAS")]
        header, rows = [header[i] for i in keep], [[r[i] for i in keep] for r in rows]
        align = "".join(align[i] for i in keep)
    out = table(header, rows, align)
    return out + (f"\nCorr. and Perf.: correctness and performance points. "
                  f"Total: **{_num(ds.grade.get('total')):g} / {_num(ds.grade.get('max')):g}**."
                  f"{extra_credit_note(ds.grade)}\n")


def block_stage(ds, rs, name):
    """The numbers of one stage on square sizes, every variant, both precisions."""
    stage = ds.stage(name) or {}
    lines = []
    if stage.get("technique"):
        lines.append(f"*Technique:* {md_escape(stage['technique'])}.\n")
    statuses = {p: ds.status(name, p) for p in rs.precisions}
    if all(s != "ok" for s, _ in statuses.values()):
        why = {w for _, w in statuses.values()}
        text = NOT_IMPLEMENTED if statuses and all(s == "not_implemented" for s, _ in statuses.values()) \
            else "; ".join(sorted(why))
        lines.append(notice(f"Stage {name}: {md_escape(text)}."))
        return "\n".join(lines)
    variants = ds.variants(name)
    sizes = list(rs.square_sizes)
    if len(variants) == 1:
        v = variants[0]
        header, align = ["N"], "r"
        for p in rs.precisions:
            header += [f"{PREC_NAME[p]} GFLOPS", "× naive", "% cuBLAS"]
            align += "rrr"
        rows = []
        for n in sizes:
            shape, row = (n, n, n), [str(n)]
            for p in rs.precisions:
                r = ds.result(name, v, p)
                g = r.gflops(shape) if r else None
                xn, pc = point_ratios(ds, p, shape, g, r.points.get(shape) if r else None)
                row += [fmt_gflops(g), fmt_x(xn), fmt_pct(pc)]
            rows.append(row)
    else:
        header, align = ["N"], "r"
        shown = {p: shown_variants(ds, name, p) for p in rs.precisions}
        for p in rs.precisions:
            header += [f"{PREC_NAME[p]} ({v})" if len(shown[p]) > 1 else f"{PREC_NAME[p]} ({variant_cell(ds, name, p, v)})"
                       for v, _ in shown[p]]
            align += "r" * len(shown[p])
        rows = []
        for n in sizes:
            shape, row = (n, n, n), [str(n)]
            for p in rs.precisions:
                for v, _ in shown[p]:
                    r = ds.result(name, v, p)
                    row.append(fmt_gflops(r.gflops(shape) if r else None))
            rows.append(row)
        lines.append(f"GFLOPS of each variant ({', '.join(variants)}) on square problems.\n")
        if any(len(shown[p]) == 1 for p in rs.precisions):
            lines.append("In double every variant is the same FP64 kernel on the FP64 tensor cores (DMMA), shown "
                         "once.\n")
    lines.append(table(header, rows, align))
    for p, (status, why) in statuses.items():
        if status != "ok":
            lines.append(notice(f"{PREC_NAME[p]}: {md_escape(why)}."))
    return "\n".join(lines)


def block_pitched(ds, rs, pairs):
    if not pairs:
        return notice("The registry has no stage with pitched operands.")
    out = []
    for pitched, dense in pairs:
        header, align, rows = ["N"], "r", []
        for p in rs.precisions:
            header += [f"{PREC_NAME[p]} {dense}", f"{PREC_NAME[p]} {pitched}", f"{pitched} / {dense}"]
            align += "rrr"
        any_data = False
        for n in rs.odd_sizes:
            row = [str(n)]
            for p in rs.precisions:
                vals = []
                for name in (dense, pitched):
                    r = ds.result(name, ds.chosen_variant(name, p), p)
                    vals.append(r.gflops((n, n, n)) if r else None)
                any_data = any_data or any(vals)
                row += [fmt_gflops(vals[0]), fmt_gflops(vals[1]),
                        fmt_x(vals[1] / vals[0]) if all(vals) else "—"]
            rows.append(row)
        if not any_data:
            unmeasured = {ds.status(n, p)[0] for n in (dense, pitched) for p in rs.precisions} == {"not_measured"}
            why = ds.status(dense, rs.precisions[0])[1] if unmeasured else NOT_IMPLEMENTED
            out.append(notice(f"Stages {dense} and {pitched}: {md_escape(why)}."))
        else:
            out.append(table(header, rows, align))
    return "\n".join(out)


def block_results_all(ds, rs):
    """Every measured shape: per precision, one table of the CUDA-core stages and one of the tensor-core
    stages (so that each fits the page), one column per stage variant (GFLOPS), cuBLAS in both."""
    out = []
    shapes = list(dict.fromkeys(s for _, _, group in rs.groups() for s in group))
    for prec in rs.precisions:
        measured = lambda n, v: ds.result(n, v, prec) and any(p.gflops for p in ds.result(n, v, prec).points.values())
        parts = [(ds.cuda_core_stages(), "CUDA cores", True), (ds.tensor_stages(), "tensor cores", False)]
        tables = []
        for names, what, with_naive in parts:
            columns = [(n, v, label) for n in names for v, label in shown_variants(ds, n, prec) if measured(n, v)]
            if not columns:
                continue
            header = ["M×N×K"] + [md_escape(label) for _, _, label in columns] + \
                (["naive (ref.)"] if with_naive else []) + ["cuBLAS"]
            rows = []
            for s in shapes:
                naive, cublas = ds.baseline(prec, s)
                rows.append([shape_label(s)] + [fmt_gflops(ds.result(n, v, prec).gflops(s)) for n, v, _ in columns] +
                            ([fmt_gflops(naive)] if with_naive else []) + [fmt_gflops(cublas)])
            tables.append(f"**{PREC_NAME[prec]}, GFLOPS, {what}.**\n")
            tables.append(table(header, rows, "l" + "r" * (len(header) - 1), min_widths={0: 16}))
        if not tables and any(ds.baseline(prec, s)[1] for s in shapes):
            rows = [[shape_label(s), fmt_gflops(ds.baseline(prec, s)[0]), fmt_gflops(ds.baseline(prec, s)[1])]
                    for s in shapes]
            tables = [f"**{PREC_NAME[prec]}, GFLOPS.**\n", table(["M×N×K", "naive (ref.)", "cuBLAS"], rows, "lrr")]
        out += tables or [notice(f"{PREC_NAME[prec]}: no measurements yet.")]
    return "\n".join(out)


def _worst_error(result):
    """(worst verified error, bound) over the timed shapes of a result, in u·G; None where unknown."""
    pts = [p for p in result.points.values() if p.disposition == "passed"] if result else []
    errors = [p.max_error_ratio for p in pts if p.max_error_ratio is not None]
    bounds = [p.error_bound for p in pts if p.error_bound]
    return (max(errors) if errors else None), (max(bounds) if bounds else None)


def fmt_ratio(v):
    return "—" if v is None else (f"{v:.3g}" if v < 1000 else f"{v:,.0f}")


def fmt_error(v):
    """A worst error; exactly 0 (C equal to the reference in every element) reads "0 (exact)"."""
    return "0 (exact)" if v == 0 else fmt_ratio(v)


# Under a table with an exact worst error: what it means. A difference of exactly 0 (error_ratio in
# grader/src/common/bound.h returns 0 only then), not a rounding of the printed number.
EXACT_NOTE = ("*0 (exact)*: every verified element of C equalled the FP64 cuBLAS reference bit for bit — a "
              "difference of 0, not a small error rounded away. Timed calls use $\\alpha = 1$, $\\beta = 0$; "
              "`make check`, whose cases also use $\\alpha = 1.5$, $\\beta = -0.75$, shows FP64 errors of "
              "a few $u \\cdot G$.\n")


def block_tensor(ds, rs):
    """The tensor-core section: speed per variant and precision beside cuBLAS in the same precision and
    true-FP32/FP64 cuBLAS, and the worst error of every stage per precision against its bound."""
    names = ds.tensor_stages()
    if not names:
        return notice("The registry has no stage that uses the tensor cores.")
    n = rs.headline_size
    shape = (n, n, n)
    out = []
    if any(r.placeholder for (stage, _, _), r in ds.results.items() if stage in names):
        out.append(notice("Placeholder numbers for the tensor stage (synthesized, not measured): "
                          "replace them with a GPU run (tests/fixtures/report/README.md)."))
    header = ["Variant", "Output", "A, B as", f"GFLOPS at {n}³", "% cuBLAS same precision",
              "% cuBLAS FP32/FP64", "worst error (u·G)", "bound (u·G)"]
    rows = []
    for name in names:
        for prec in rs.precisions:
            for v, label in shown_variants(ds, name, prec):
                r = ds.result(name, v, prec)
                info = ds.variant_info(name, v)
                inputs = (info.get("inputs") or {}).get(prec, "")
                p = r.points.get(shape) if r else None
                worst, bound = _worst_error(r)
                if bound is None:
                    bound = (info.get("error_bound") or {}).get(prec)
                if not r or not p or p.disposition != "passed" or not p.gflops:
                    why = r.disposition.replace("_", " ") if r else "not measured"
                    rows.append([md_escape(label), PREC_NAME[prec], inputs, f"*{md_escape(why)}*", "", "",
                                 fmt_error(worst), fmt_ratio(bound)])
                    continue
                own = p.cublas_item or "cublas"
                own_name = {"cublas": "FP32" if prec == "float" else "FP64", "cublas/tf32": "TF32",
                            "cublas/fp16": "FP16"}.get(own, own)
                rows.append([md_escape(label), PREC_NAME[prec], inputs, fmt_gflops(p.gflops),
                             f"{fmt_pct(p.pct_cublas)} (of {own_name})", fmt_pct(p.pct_cublas_fp32 or p.pct_cublas),
                             fmt_error(worst), fmt_ratio(bound)])
        for prec in rs.precisions:
            items = [("cublas/fp16", "cuBLAS FP16 (FAST\\_16F)"), ("cublas/tf32", "cuBLAS TF32 (FAST\\_TF32)"),
                     ("cublas", "cuBLAS FP32 (SGEMM)")] if prec == "float" else [("cublas", "cuBLAS FP64 (DGEMM)")]
            for item, label in items:
                g = ds.cublas_gflops(prec, shape, item)
                if g:
                    fp = ds.cublas_gflops(prec, shape, "cublas")
                    rows.append([label, PREC_NAME[prec], "", fmt_gflops(g), "100.0", fmt_pct(100.0 * g / fp) if fp else "—",
                                 "", ""])
    out.append(f"**Speed at {n}³.** Each variant beside cuBLAS in the precision it declares (the same "
               "input rounding, timed in the same run) and beside true-FP32/FP64 cuBLAS; errors are the "
               "worst of the verified timed calls over the report set.\n")
    out.append(table(header, rows, "llllrrrr"))
    if any(r[6] == "0 (exact)" for r in rows):
        out.append(EXACT_NOTE)
    # Error per precision: every stage, so the FP32-accurate variant stands beside plain FP32 kernels.
    erows = []
    for name in ds.stage_names():
        for v in ds.variants(name):
            for prec in rs.precisions:
                label = dict(shown_variants(ds, name, prec)).get(v)
                r = ds.result(name, v, prec)
                worst, bound = _worst_error(r)
                if label is None or worst is None:
                    continue
                info = ds.variant_info(name, v)
                inputs = (info.get("inputs") or {}).get(prec, "")
                if bound is None:
                    bound = (info.get("error_bound") or {}).get(prec)
                erows.append([md_escape(label), PREC_NAME[prec], inputs or PREC_NAME[prec].lower(),
                              fmt_error(worst), fmt_ratio(bound)])
    if erows:
        out.append("\n**Error per precision.** The worst verified error of every stage over the report set, in "
                   "units of the output's $u \\cdot G$ ($u = 2^{-24}$ for FP32, $2^{-53}$ for FP64), against "
                   "the bound its declared inputs allow (docs/correctness.md).\n")
        out.append(table(["Stage", "Output", "A, B as", "worst error (u·G)", "bound (u·G)"], erows, "lllrr"))
        if any(r[3] == "0 (exact)" for r in erows):
            out.append(EXACT_NOTE)
    return "\n".join(out)


def block_figure(fig):
    """A figure with its caption, or a note where it cannot be drawn; then what is missing."""
    out = []
    if fig.path:
        out.append(f"![{fig.caption}](figures/{fig.path.name}){{width=100%}}\n")
    else:
        out.append(notice(f"Figure not drawn: {md_escape('; '.join(fig.missing) or NOT_IMPLEMENTED)}."))
        return "\n".join(out)
    if fig.missing:
        out.append("*Not in this figure:* " + md_escape("; ".join(fig.missing)) + ".\n")
    return "\n".join(out)


def generated_blocks(ds, rs, figures, pitched_pairs):
    blocks = {
        "environment": block_environment(ds, rs),
        "summary": block_summary(ds, rs),
        "scores": block_scores(ds, rs),
        "table-pitched": block_pitched(ds, rs, pitched_pairs),
        "results-all": block_results_all(ds, rs),
        "tensor": block_tensor(ds, rs),
    }
    for fig in figures:
        blocks[fig.name] = block_figure(fig)
    for name in ds.stage_names():
        blocks[f"stage-{name}"] = block_stage(ds, rs, name)
    return blocks
