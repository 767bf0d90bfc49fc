#!/usr/bin/env python3
"""judge_agreement.py — how the judge's clock compares with the runners' own CUDA events, from one or
more results.json of `make grade` (docs/timing.md, docs/performance.md).

    python3 tests/gpu_session/judge_agreement.py results/reference/results.json [more.json ...]

For every reference stage and both baselines, each precision and shape: the judge's time per call
and the runner's event time (interquartile means of one grade; the median over the files given), and
the difference in percent, with the calibration per call and the calls per timed interval. With
several files, the median of the differences is what is printed.
"""
import json
import statistics
import sys


def rows(doc):
    for prec, shapes in doc.get("baselines", {}).items():
        for row in shapes:
            dims = "x".join(str(row["shape"][k]) for k in "MNK")
            for name in ("naive", "cublas", "cublas_tf32", "cublas_fp16"):
                t = row.get(f"{name}_timing")
                if t and t.get("disposition") == "passed":
                    yield (name.replace("_", "/"), prec, dims), t
    for r in doc.get("reference", []):
        label = r["stage"] + ("/" + r["variant"] if r["variant"] else "")
        for t in r.get("bench", []):
            if t.get("disposition") == "passed":
                dims = "x".join(str(t["shape"][k]) for k in "MNK")
                yield ("reference " + label, r["precision"], dims), t


def main(paths):
    table = {}
    for p in paths:
        with open(p) as f:
            doc = json.load(f)
        for key, t in rows(doc):
            table.setdefault(key, []).append(t)
    print(f"{'item':<26}{'prec':<8}{'shape':<16}{'judge ms':>10}{'events ms':>11}{'diff %':>9}{'calib ms':>10}"
          f"{'calls':>6}  grades")
    worst = {}
    for key in sorted(table):
        ts = table[key]
        judge = statistics.median(t["time_ms"] for t in ts)
        events = statistics.median(t.get("event_ms", 0) for t in ts)
        diffs = [100.0 * (t["time_ms"] - t["event_ms"]) / t["event_ms"] for t in ts if t.get("event_ms")]
        diff = statistics.median(diffs) if diffs else float("nan")
        calib = statistics.median(t.get("overhead_ms", 0) for t in ts)
        calls = "/".join(sorted({str(t.get("calls_per_interval", 1)) for t in ts}, key=int))
        print(f"{key[0]:<26}{key[1]:<8}{key[2]:<16}{judge:>10.4f}{events:>11.4f}{diff:>+9.2f}{calib:>10.4f}"
              f"{calls:>6}  {len(ts)}")
        worst[key[2]] = max(worst.get(key[2], 0), abs(diff) if diffs else 0)
    for dims, w in sorted(worst.items()):
        print(f"largest |diff| at {dims}: {w:.2f}%")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
