#!/usr/bin/env python3
"""gpu_archs.py [--expect] DIR... — one Markdown table from per-arch grades (tests/gpu_session.sh archs,
tests/gpu_session/gpu_cuda12.sh grade).

Each DIR holds what was left for one build (ARCH, toolkit): reference/results.json (a grade of the
reference), student/results.json (a grade of the stubs) or student/check.json (a check of them), and
build.txt (arch, toolkit, build seconds). The table: arch, toolkit (and the CUDA runtime, cuBLAS and
cuRAND the grade loaded, when its results say), stages passed (of those the build can run),
unsupported, reference score, grade time, and what the stubs reported.

--expect also holds each DIR to what it must show, and exits 1 when one does not: its listing.json
(`gemmlab list --json` of that build) says which variants need a newer architecture than the build's
or the GPU's (`min_arch`): those are `unsupported` and every other run of the reference `passed`, with
full marks in every scored stage; the stubs' naive stage passed and every other run is
`not_implemented` (or `unsupported`), 0 points; and the grade loaded the toolkit's release of the CUDA
runtime, cuBLAS and cuRAND (a build that carries its own, tests/gpu_session/gpu_cuda12.sh)."""
import json
import sys
from pathlib import Path


def run_name(r):
    return f"{r['stage']}/{r['variant']} {r['precision']}".replace("/ ", " ")


def libraries(res):
    env = res.get("environment", {})
    parts = [f"{k} {env[k]}" for k in ("cuda_runtime", "cublas", "curand") if env.get(k)]
    return f" ({', '.join(parts).replace('cuda_runtime', 'runtime')})" if parts else ""


def row(d: Path) -> str:
    info = dict(line.split("=", 1) for line in (d / "build.txt").read_text().split() if "=" in line)
    ref = d / "reference" / "results.json"
    if not ref.exists():
        return f"| {info.get('arch')} | {info.get('toolkit')} | no grade | | | | |"
    res = json.loads(ref.read_text())
    runs = res["results"]
    unsupported = sorted({run_name(r) for r in runs if r["disposition"] == "unsupported"})
    counted = [r for r in runs if r["disposition"] != "unsupported"]
    passed = sum(r["disposition"] == "passed" for r in counted)
    failed = [f"{run_name(r)}: {r['disposition']}" for r in counted if r["disposition"] != "passed"]
    score = res["score"]
    stub_text = "-"
    stubs = next((p for p in (d / "student" / "results.json", d / "student" / "check.json") if p.exists()), None)
    if stubs:
        sres = json.loads(stubs.read_text())
        ds = [(r["stage"], r["disposition"]) for r in sres["results"]]
        ok = all(d == ("passed" if s == "naive" else "not_implemented") or d == "unsupported" for s, d in ds)
        stub_text = "naive passed, others not_implemented" if ok else "; ".join(f"{s}: {d}" for s, d in ds)
        if "score" in sres:
            stub_text += f" ({sres['score']['total']:g} points)"
    targets = res.get("targets", {})
    return (f"| {info.get('arch')} (build sm_{targets.get('build_arch', '?').removeprefix('sm_')}) | "
            f"{info.get('toolkit')}{libraries(res)} | {passed} of {len(counted)}" + (f" ({'; '.join(failed)})" if failed else "")
            + f" | {', '.join(unsupported) or 'none'} | {score['total']:.1f} / {score['max']:.0f} | "
            f"{res.get('seconds', 0):.1f} s | {stub_text} |")


def min_arch(listing, stage, variant, precision):
    for s in listing["stages"]:
        if s["name"] == stage:
            for v in s["variant_info"]:
                if v["label"] == variant:
                    return v.get("min_arch", {}).get(precision, 0)
    return None


def expectations(d: Path):
    """What DIR fails to show (empty: all it must)."""
    problems = []
    info = dict(line.split("=", 1) for line in (d / "build.txt").read_text().split() if "=" in line)
    listing_path, ref = d / "listing.json", d / "reference" / "results.json"
    if not listing_path.exists() or not ref.exists():
        return [f"{d}: no {'listing.json' if not listing_path.exists() else 'reference grade'}"]
    listing = json.loads(listing_path.read_text())
    res = json.loads(ref.read_text())
    targets = res.get("targets", {})
    arch = min(int(targets.get("build_arch", "sm_0")[3:]), int(targets.get("gpu_arch", "sm_0")[3:]))

    def want(r, otherwise):
        need = min_arch(listing, r["stage"], r["variant"], r["precision"])
        if need is None:
            return "not in the registry"
        return "unsupported" if need > arch else otherwise

    if res.get("status") != "graded":
        problems.append(f"reference: status {res.get('status')}")
    for r in res["results"]:
        w = want(r, "passed")
        if r["disposition"] != w:
            problems.append(f"reference {run_name(r)}: {r['disposition']}, expected {w} ({r.get('problem', '')[:200]})")
    for s in res["score"]["stages"]:
        if s["correctness"] + s["performance"] != s["correctness_max"] + s["performance_max"]:
            problems.append(f"reference {s['stage']} {s['precision']}: {s['correctness'] + s['performance']:g} of "
                            f"{s['correctness_max'] + s['performance_max']:g} points ({s.get('note', '')})")
    toolkit = info.get("toolkit", "")
    env = res.get("environment", {})
    for key, major in (("cuda_runtime", toolkit.split(".")[0]), ("cublas", toolkit.split(".")[0])):
        if major and not str(env.get(key, "")).startswith(major + "."):
            problems.append(f"reference: {key} {env.get(key)} loaded, expected {major}.x (the build's own)")
    stubs = d / "student" / "results.json"
    if not stubs.exists():
        problems.append("student: no grade")
    else:
        sres = json.loads(stubs.read_text())
        for r in sres["results"]:
            w = want(r, "passed" if r["stage"] == "naive" else "not_implemented")
            if r["disposition"] != w:
                problems.append(f"student {run_name(r)}: {r['disposition']}, expected {w}")
        if sres.get("score", {}).get("total") != 0:
            problems.append(f"student: {sres.get('score', {}).get('total')} points, expected 0")
    return problems


def main(argv):
    expect = "--expect" in argv
    dirs = [Path(a) for a in argv if a != "--expect"]
    print("| arch | toolkit | stage runs passed | unsupported (not run, not scored) | reference score | grade time | stubs |")
    print("|---|---|---|---|---|---|---|")
    for d in dirs:
        print(row(d))
    if not expect:
        return 0
    failed = 0
    print()
    for d in dirs:
        problems = expectations(d)
        failed += bool(problems)
        name = (d / "build.txt").read_text().split()[0] if (d / "build.txt").exists() else str(d)
        print(f"- {name}: " + ("as expected (supported runs passed, full marks; stubs not_implemented, 0 points)"
                               if not problems else "NOT as expected:\n  - " + "\n  - ".join(problems)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
