#!/usr/bin/env python3
"""gpu_host_noise.py — one GPU, a busy host: does a grade's timing move when the rest of the machine
is loaded?

Two grading jobs on one node, each on its own GPU, still share the host: its cores, its memory
bandwidth, the driver. tests/gpu_session/cluster_gpu_jobs.sh pair measures that on two GPUs. This is the part of
it one GPU can show: the reference is graded at course.toml's settings, bound to the first half of
the cores — once to warm the GPU (not compared), alone, beside memory-bound copy loops on the other
half of the cores, and alone again — and every timed item of each grade is compared with the first
lone grade: how many stay within ±2%. The same comparison of the events' times (the clock a stage's
time rested on before the GPU's record did, docs/timing.md) shows what the load did to the host's
part of each call.

  python3 tests/gpu_session/gpu_host_noise.py --grader build/sm_90/sub-reference-<hash>/gemmlab --out DIR

Writes DIR/<role>/results.json and DIR/host-noise.json, prints a table; exit status 0 when every
item of the loaded grade is within ±2% of the lone one.
"""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOLERANCE_PCT = 2.0
NOISE = "b = bytearray(1 << 28)\nwhile True:\n    c = bytes(b)\n"  # 256 MB copies, forever


def clocks(results: dict) -> dict:
    """(item, precision, shape) -> (time_ms, event_ms) of every timed item of a grade."""
    out = {}

    def shape(b):
        s = b["shape"]
        return f"{s['M']}x{s['N']}x{s['K']}"

    for side, prefix in (("results", ""), ("reference", "ref ")):
        for r in results.get(side, []):
            for b in r.get("bench", []):
                if b.get("time_ms"):
                    name = prefix + r["stage"] + (f"/{r['variant']}" if r.get("variant") else "")
                    out[(name, r["precision"], shape(b))] = (b["time_ms"], b["event_ms"])
    for prec, rows in (results.get("baselines") or {}).items():
        for b in rows:
            for what in ("naive", "cublas"):
                t = b.get(f"{what}_timing") or {}
                if t.get("time_ms"):
                    out[(f"[{what}]", prec, shape(b))] = (t["time_ms"], t["event_ms"])
    return out


def grade(grader: Path, out: Path, cores: list[int]) -> tuple[dict, float]:
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    proc = subprocess.run([str(grader), "grade", "--config", str(ROOT / "course.toml"), "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, preexec_fn=lambda: os.sched_setaffinity(0, cores))
    (out / "grade.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        sys.exit(f"grade failed ({proc.returncode}): see {out / 'grade.log'}")
    return json.loads((out / "results.json").read_text()), time.time() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--grader", required=True, type=Path, help="the reference's gemmlab binary")
    ap.add_argument("--out", required=True, type=Path)
    a = ap.parse_args()
    cores = sorted(os.sched_getaffinity(0))
    mine, theirs = cores[: len(cores) // 2], cores[len(cores) // 2:]
    print(f"grades on cores {mine[0]}-{mine[-1]}; load on cores {theirs[0]}-{theirs[-1]} "
          f"({len(theirs)} copy loops of 256 MB)", flush=True)
    grade(a.grader, a.out / "warm", mine)
    lone, t_lone = grade(a.grader, a.out / "lone", mine)
    noise = [subprocess.Popen([sys.executable, "-c", NOISE], preexec_fn=lambda c=c: os.sched_setaffinity(0, [c]))
             for c in theirs]
    try:
        time.sleep(2)
        loaded, t_loaded = grade(a.grader, a.out / "loaded", mine)
    finally:
        for p in noise:
            p.kill()
    again, t_again = grade(a.grader, a.out / "again", mine)

    base = clocks(lone)
    report = {"cores": {"grade": mine, "load": theirs}, "seconds": {"lone": t_lone, "loaded": t_loaded,
                                                                      "again": t_again}, "items": []}
    summary = {}
    for role, res in (("loaded", loaded), ("again", again)):
        other = clocks(res)
        deltas, event_deltas = [], []
        for key, (t, e) in sorted(base.items()):
            if key not in other:
                continue
            t2, e2 = other[key]
            d, de = 100 * (t2 - t) / t, 100 * (e2 - e) / e
            deltas.append(d)
            event_deltas.append(de)
            report["items"].append({"item": key[0], "precision": key[1], "shape": key[2], "grade": role,
                                    "time_ms": [t, t2], "delta_pct": round(d, 3),
                                    "event_ms": [e, e2], "event_delta_pct": round(de, 3)})
        summary[role] = {
            "items": len(deltas),
            "within": sum(abs(d) <= TOLERANCE_PCT for d in deltas),
            "worst_pct": max(deltas, key=abs) if deltas else None,
            "events_within": sum(abs(d) <= TOLERANCE_PCT for d in event_deltas),
            "events_worst_pct": max(event_deltas, key=abs) if event_deltas else None,
        }
    report["summary"] = summary
    (a.out / "host-noise.json").write_text(json.dumps(report, indent=1))
    print("| against the lone grade | items | time within ±2% | worst | events within ±2% | events' worst |")
    print("|---|---:|---:|---:|---:|---:|")
    for role, s in summary.items():
        print(f"| {role} | {s['items']} | {s['within']} | {s['worst_pct']:+.2f}% | {s['events_within']} | "
              f"{s['events_worst_pct']:+.2f}% |")
    worst = sorted((i for i in report["items"] if i["grade"] == "loaded"), key=lambda i: -abs(i["delta_pct"]))[:5]
    for i in worst:
        print(f"  loaded, worst: {i['item']} {i['precision']} {i['shape']}: {i['time_ms'][0]:.4f} -> "
              f"{i['time_ms'][1]:.4f} ms ({i['delta_pct']:+.2f}%), events {i['event_delta_pct']:+.2f}%")
    s = summary["loaded"]
    return 0 if s["items"] and s["within"] == s["items"] else 1


if __name__ == "__main__":
    sys.exit(main())
