#!/usr/bin/env python3
"""How far the three clocks of the benchmark lie apart in an honest run (docs/timing.md, "Three
clocks"): per timed item of a results or bench JSON, the event, wall and GPU-record times (interquartile means) and
their ratios, and the smallest margin to the rejection rules. Used on a GPU to measure the margins
the tolerances in grader/src/child/bench.cu must leave.

    python3 tests/gallery/clock_margins.py results/reference/results.json
"""
import json
import sys


def rows(doc):
    for r in doc.get("results", []):
        label = "/".join(x for x in (r.get("stage"), r.get("variant"), r.get("precision")) if x)
        for b in r.get("bench", []):
            yield label, b
    for side in ("baselines",):
        for name, per in (doc.get(side) or {}).items():
            for b in per if isinstance(per, list) else []:
                yield name, b


def main():
    doc = json.load(open(sys.argv[1]))
    print(f"{'item':28} {'shape':>16} {'event ms':>10} {'wall ms':>10} {'gpu ms':>10} {'gpu/wall':>9} "
          f"{'event/wall':>10}  record")
    worst = 0.0
    for label, b in rows(doc):
        s = b.get("shape", {})
        shape = f"{s.get('M')}x{s.get('N')}x{s.get('K')}"
        ev, wall, gpu = b.get("event_ms", 0), b.get("wall_ms", 0), b.get("gpu_ms", 0)
        if not wall:
            continue
        worst = max(worst, gpu / wall, ev / wall)
        print(f"{label:28} {shape:>16} {ev:10.4f} {wall:10.4f} {gpu:10.4f} {gpu / wall:9.4f} {ev / wall:10.4f}  "
              f"{b.get('gpu_record', '?')}")
    print(f"largest ratio of event or GPU time to wall time: {worst:.4f} (the rule rejects above 1.01 + 0.02 ms)")


if __name__ == "__main__":
    main()
