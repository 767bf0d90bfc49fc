#!/usr/bin/env python3
"""The tensor stage's verdicts and tables from one GPU run of tests/gpu_session/gpu_tensor.sh (standard library only).

Reads the JSON the grader wrote (docs/results-schema.md) and prints Markdown for docs/performance-log.md:

  - the speed table: every reference variant (from `gemmlab bench --reference`), GFLOPS, % of cuBLAS in
    the same precision, % of true-FP32/FP64 cuBLAS, worst verified error and its bound (u·G);
  - the error table: worst error per shape of the full check, 3xTF32 beside plain FP32 (reuse) and the
    11-bit-input variants, in units of FP32's u·G;
  - the done criteria, each PASS or FAIL; the exit status is 1 when one fails.

  tests/gpu_session/gpu_tensor_summary.py --bench B.json --check C.json --check-fp32 R.json --stub S.json \\
      --broken W.json --broken-log W.log [--target-x 2.0]
"""
import argparse
import json
import sys
from pathlib import Path

HEADLINE = (4096, 4096, 4096)


def load(path):
    return json.loads(Path(path).read_text()) if path and Path(path).exists() else None


def shape_of(b):
    s = b["shape"]
    return s["M"], s["N"], s["K"]


def num(v):
    return v if isinstance(v, (int, float)) else float("nan") if v == "nan" else float("inf")


def fmt(v, digits=1):
    return "—" if v is None else f"{v:,.{digits}f}"


def label(stage, variant):
    return f"{stage}/{variant}" if variant else stage


def speed_table(bench):
    """Markdown rows of the reference's tensor variants and the cuBLAS baselines, per precision and shape."""
    out = ["| variant | precision | shape | GFLOPS | % cuBLAS same precision | % cuBLAS FP32/FP64 | "
           "max error (u·G) | bound (u·G) |", "|---|---|---|---:|---:|---:|---:|---:|"]
    rows = {}
    for r in bench.get("reference", []):
        if r["stage"] != "tensor":
            continue
        for b in r["bench"]:
            own = {"cublas": "FP32" if r["precision"] == "float" else "FP64", "cublas/tf32": "TF32",
                   "cublas/fp16": "FP16"}.get(b.get("cublas_item", ""), b.get("cublas_item", ""))
            shape = "x".join(map(str, shape_of(b)))
            if b["disposition"] != "passed":
                out.append(f"| {label(r['stage'], r['variant'])} | {r['precision']} | {shape} | "
                           f"{b['disposition']}: {b.get('problem', '')} | | | | |")
                continue
            rows[(r["variant"], r["precision"], shape_of(b))] = b
            out.append(f"| {label(r['stage'], r['variant'])} | {r['precision']} | {shape} | {fmt(b['gflops'], 0)} | "
                       f"{fmt(b['pct_cublas'])} (of {own}) | {fmt(b.get('pct_cublas_fp32'))} | "
                       f"{fmt(num(b.get('max_error_ratio', 0)), 2)} | {fmt(b.get('error_bound'), 0)} |")
    for prec, base in bench.get("baselines", {}).items():
        for row in base:
            shape = "x".join(str(row["shape"][k]) for k in "MNK")
            for key, name in (("cublas", "cuBLAS (SGEMM/DGEMM, true FP32/FP64)"), ("cublas_tf32", "cuBLAS TF32"),
                              ("cublas_fp16", "cuBLAS FP16")):
                if f"{key}_gflops" in row:
                    out.append(f"| {name} | {prec} | {shape} | {fmt(row[f'{key}_gflops'], 0)} | | | | |")
    return out, rows


def worst_by_shape(check, stage, variant, precision):
    """{(M, N, K, why): worst error ratio over the cases of that shape} of one stage run, and the run."""
    for r in check.get("results", []) if check else []:
        if (r["stage"], r["variant"], r["precision"]) == (stage, variant, precision):
            worst = {}
            for c in r["cases"]:
                key = (c["shape"]["M"], c["shape"]["N"], c["shape"]["K"], c["shape"].get("why", ""))
                worst[key] = max(worst.get(key, 0.0), num(c.get("max_error_ratio", 0)))
            return worst, r
    return {}, None


def error_table(check, check_fp32):
    cols = [("tensor", "3xtf32", check), ("reuse", "", check_fp32), ("tensor", "tf32", check), ("tensor", "fp16", check)]
    data = [worst_by_shape(src, s, v, "float")[0] for s, v, src in cols]
    shapes = sorted(set().union(*[set(d) for d in data]), key=lambda s: (s[2], s[0] * s[1]))
    out = ["| M×N×K | why in the set | 3xTF32 | plain FP32 (reuse) | TF32 inputs | FP16 inputs |",
           "|---|---|---:|---:|---:|---:|"]
    for s in shapes:
        out.append(f"| {s[0]}×{s[1]}×{s[2]} | {s[3]} | " + " | ".join(fmt(d.get(s), 2) for d in data) + " |")
    worst = [max(d.values()) if d else None for d in data]
    out.append("| **worst** | | " + " | ".join(f"**{fmt(w, 2)}**" for w in worst) + " |")
    return out, worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", required=True)
    ap.add_argument("--check", required=True, help="check --full of the reference's tensor stage")
    ap.add_argument("--check-fp32", help="check --full of the reference's reuse stage in float (same seed)")
    ap.add_argument("--stub", help="check of the stub's tensor stage")
    ap.add_argument("--broken", help="check of tests/broken/wrong_values' tensor stage")
    ap.add_argument("--broken-log", help="its printed report")
    ap.add_argument("--target-x", type=float, default=2.0, help="3xtf32 must run this many times cuBLAS SGEMM")
    args = ap.parse_args()
    bench, check, check_fp32 = load(args.bench), load(args.check), load(args.check_fp32)
    stub, broken = load(args.stub), load(args.broken)
    verdicts = []

    def verdict(ok, what):
        verdicts.append(("PASS" if ok else "FAIL", what))

    print("## Tensor stage: speed (reference variants, one `gemmlab bench --reference` run)\n")
    rows_md, rows = speed_table(bench or {})
    print("\n".join(rows_md))
    print("\n## Tensor stage: worst error per shape of the full check (u·G, u = 2^-24)\n")
    err_md, worst = error_table(check, check_fp32)
    print("\n".join(err_md))

    for r in (check or {}).get("results", []):
        if r["stage"] == "tensor":
            bound = r.get("error_bound", {}).get("threshold")
            cases = [num(c.get("max_error_ratio", 0)) for c in r["cases"]]
            verdict(r["disposition"] == "passed",
                    f"reference {label(r['stage'], r['variant'])} {r['precision']} passes the full set "
                    f"({len(r['cases'])} cases, worst {fmt(max(cases) if cases else None, 2)} u·G, bound {bound}): "
                    f"{r['disposition']} {r.get('problem', '')}".rstrip())
    if stub:
        tensor = [r for r in stub["results"] if r["stage"] == "tensor"]
        verdict(tensor and all(r["disposition"] == "not_implemented" for r in tensor),
                "the stub reports not_implemented for every variant and precision: " +
                ", ".join(f"{label(r['stage'], r['variant'])} {r['precision']} {r['disposition']}" for r in tensor))
    if broken:
        res = {(r["variant"], r["precision"]): r for r in broken["results"] if r["stage"] == "tensor"}
        split = res.get(("3xtf32", "float"))
        log = Path(args.broken_log).read_text() if args.broken_log and Path(args.broken_log).exists() else ""
        ok = bool(split) and split["disposition"] == "failed" and split["problem"] == "wrong values" and \
            split.get("error_bound", {}).get("threshold") == 32 and "bound 32 u·G)" in log and \
            "splits each operand into a high and a low TF32 part" in log
        verdict(ok, "an FP16 kernel handed in as tensor/3xtf32 fails its bound with the message: " +
                (f"{split['disposition']}, problem '{split['problem']}'" if split else "no result"))
        for v in ("fp16", "tf32"):
            r = res.get((v, "float"))
            verdict(bool(r) and r["disposition"] == "passed",
                    f"the same FP16 kernel passes as tensor/{v} (its declared inputs): {r and r['disposition']}")
    b = rows.get(("3xtf32", "float", HEADLINE))
    x = (b["pct_cublas_fp32"] / 100.0) if b else None
    verdict(x is not None and x >= args.target_x,
            f"tensor/3xtf32 at 4096³ runs {fmt(x, 2)}× cuBLAS SGEMM (target {args.target_x}×)")
    if worst[0] is not None:
        verdict(worst[0] <= 32, f"3xTF32's worst error over the full set is {fmt(worst[0], 2)} u·G "
                                f"(plain FP32, reuse: {fmt(worst[1], 2)} u·G; bound 32)")

    print("\n## Done criteria\n")
    for v, what in verdicts:
        print(f"- **{v}** {what}")
    return 0 if verdicts and all(v == "PASS" for v, _ in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
