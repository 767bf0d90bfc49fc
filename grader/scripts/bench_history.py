#!/usr/bin/env python3
"""bench_history.py — the tuning history: every successful `make bench` adds one line to
results/<submission>/bench-history.jsonl, and `make report` turns a stage's lines into the table and
figure of its tuning (configuration against GFLOPS; report/report_history.py).

One JSON object per line (schema gemmlab.bench-history/1):

  time        when the bench ran (its bench.json `created`)
  tag         the label the student gave the run (`make bench TAG=bm128-bk8`), "" if none
  gpu         {name, uuid} of the GPU it ran on
  submission  {name, fingerprint} of the stage files (grader/scripts/fingerprint.py)
  files       stage file -> "sha256:..." of the file of every stage that was timed (<stage>.cu)
  seed        the bench's seed (make bench SEED= replays its data)
  results     one object per stage × variant × precision × shape: stage, variant, precision,
              shape ("MxNxK"), disposition, gflops, pct_cublas, x_naive (null where not timed)

  make bench TAG=bm128-bk8                    what the Makefile runs after `gemmlab bench`:
  bench_history.py append --bench results/student/bench.json --submission student \\
      --history results/student/bench-history.jsonl --tag bm128-bk8

A bench that failed (make stops at its exit status) appends nothing; appending the same bench.json
twice adds it once.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fingerprint  # noqa: E402

SCHEMA = "gemmlab.bench-history/1"
FILE = "bench-history.jsonl"


class HistoryError(Exception):
    """A problem the user can fix; printed as one message."""


def _shape(obj):
    if isinstance(obj, dict):
        return f"{obj['M']}x{obj['N']}x{obj['K']}"
    return str(obj)


def entry_of(bench: dict, submission, tag: str = "") -> dict:
    """The history line of one bench.json (kind "bench") of the submission directory given."""
    if bench.get("kind") != "bench":
        raise HistoryError(f"not a bench result (kind {bench.get('kind')!r})")
    fp = fingerprint.of_directory(submission)
    results, timed = [], set()
    for r in bench.get("results", []):
        if r.get("side", "submission") != "submission":
            continue
        for b in r.get("bench") or []:
            row = {"stage": r["stage"], "variant": r.get("variant", ""), "precision": r["precision"],
                   "shape": _shape(b["shape"]), "disposition": b.get("disposition", ""),
                   "gflops": b.get("gflops"), "pct_cublas": b.get("pct_cublas"), "x_naive": b.get("x_naive")}
            results.append(row)
            if row["disposition"] == "passed" and row["gflops"]:
                timed.add(r["stage"])
    gpu = (bench.get("environment") or {}).get("gpu") or {}
    files = {f"{s}.cu": fp["files"][f"{s}.cu"] for s in sorted(timed) if f"{s}.cu" in fp["files"]}
    return {"schema": SCHEMA, "time": bench.get("created", ""), "tag": tag or "",
            "gpu": {"name": gpu.get("name", ""), "uuid": gpu.get("uuid", "")},
            "submission": {"name": fp["name"], "fingerprint": fp["fingerprint"]},
            "files": files, "seed": bench.get("seed"), "results": results}


def load(path) -> list[dict]:
    """The entries of a history file, oldest first ([] when there is none). A damaged line is an error
    that names it (the file is the student's to mend or delete)."""
    path = Path(path)
    if not path.exists():
        return []
    entries = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            e = json.loads(line)
        except json.JSONDecodeError as err:
            raise HistoryError(f"{path}:{number}: not a JSON line ({err}); delete that line") from None
        if not isinstance(e, dict) or e.get("schema") != SCHEMA:
            raise HistoryError(f"{path}:{number}: not a {SCHEMA} entry; delete that line")
        entries.append(e)
    return entries


def append(path, entry: dict) -> bool:
    """Adds entry as one line (one write, O_APPEND); False when that bench is in the history already."""
    path = Path(path)
    same = [e for e in load(path) if (e.get("time"), e.get("seed")) == (entry["time"], entry["seed"])]
    if same:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(entry, separators=(",", ":")) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)
    return True


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0].split("— ", 1)[-1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[1:]))
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("append", help="add a bench.json to the history")
    p.add_argument("--bench", required=True, help="the bench.json `gemmlab bench` just wrote")
    p.add_argument("--submission", required=True, help="the submission directory it timed")
    p.add_argument("--history", required=True, help=f"the history file (results/<submission>/{FILE})")
    p.add_argument("--tag", default="", help="the run's label (make bench TAG=...)")
    args = ap.parse_args(argv)
    try:
        bench = json.loads(Path(args.bench).read_text(encoding="utf-8"))
        entry = entry_of(bench, args.submission, args.tag)
        if not entry["results"]:
            print(f"bench history: nothing was timed; {args.history} unchanged")
        elif append(args.history, entry):
            stages = sorted({r["stage"] for r in entry["results"] if r["disposition"] == "passed"})
            print(f"bench history: run {len(load(args.history))}"
                  f"{' ' + repr(args.tag) if args.tag else ''} ({', '.join(stages) or 'no stage passed'}) "
                  f"added to {args.history}")
        else:
            print(f"bench history: this bench is in {args.history} already")
        return 0
    except (OSError, json.JSONDecodeError, HistoryError, FileNotFoundError) as e:
        print(f"bench history: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
