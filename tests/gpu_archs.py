#!/usr/bin/env python3
"""gpu_archs.py DIR... — one Markdown table from the per-arch grades of tests/gpu_session.sh archs.

Each DIR holds what the phase left for one build (ARCH, toolkit): reference/results.json (a grade of
the reference), student/check.json (a check of the stubs) and build.txt (arch, toolkit, build
seconds). The table: arch, toolkit, stages passed (of those the build can run), unsupported,
reference score, grade time, and whether the stubs reported not_implemented."""
import json
import sys
from pathlib import Path


def row(d: Path) -> str:
    info = dict(line.split("=", 1) for line in (d / "build.txt").read_text().split() if "=" in line)
    ref, stubs = d / "reference" / "results.json", d / "student" / "check.json"
    if not ref.exists():
        return f"| {info.get('arch')} | {info.get('toolkit')} | no grade | | | | |"
    res = json.loads(ref.read_text())
    runs = res["results"]
    unsupported = sorted({f"{r['stage']}/{r['variant']} {r['precision']}".replace("/ ", " ")
                          for r in runs if r["disposition"] == "unsupported"})
    counted = [r for r in runs if r["disposition"] != "unsupported"]
    passed = sum(r["disposition"] == "passed" for r in counted)
    failed = [f"{r['stage']}/{r['variant']} {r['precision']}: {r['disposition']}" for r in counted
              if r["disposition"] != "passed"]
    score = res["score"]
    stub_text = "-"
    if stubs.exists():
        ds = [(r["stage"], r["disposition"]) for r in json.loads(stubs.read_text())["results"]]
        ok = all(d == ("passed" if s == "naive" else "not_implemented") or d == "unsupported" for s, d in ds)
        stub_text = "naive passed, others not_implemented" if ok else "; ".join(f"{s}: {d}" for s, d in ds)
    targets = res.get("targets", {})
    return (f"| {info.get('arch')} (build sm_{targets.get('build_arch', '?').removeprefix('sm_')}) | "
            f"{info.get('toolkit')} | {passed} of {len(counted)}" + (f" ({'; '.join(failed)})" if failed else "")
            + f" | {', '.join(unsupported) or 'none'} | {score['total']:.1f} / {score['max']:.0f} | "
            f"{res.get('seconds', 0):.1f} s | {stub_text} |")


def main(dirs):
    print("| arch | toolkit | stage runs passed | unsupported (not run, not scored) | reference score | grade time | stubs |")
    print("|---|---|---|---|---|---|---|")
    for d in dirs:
        print(row(Path(d)))


if __name__ == "__main__":
    main(sys.argv[1:])
