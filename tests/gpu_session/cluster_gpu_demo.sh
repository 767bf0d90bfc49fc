#!/usr/bin/env bash
# cluster_gpu_demo.sh — grades a small class end to end on the LOCAL path (no Slurm) and prints the
# gradebook: on a GPU machine this shows real per-stage points flowing from `gemmlab grade` into
# gradebook.csv, scored with course.toml's own rubric (targets from the reference, timed in each grade). The class: reference/ (full solutions), student/ (stubs: naive only), one broken
# hand-in (does not compile), one late hand-in of the reference, and one student on the roster who
# handed in nothing.
#
#   bash tests/gpu_session/cluster_gpu_demo.sh            (from the repository root; KEEP=1 keeps the course dir)
#
# Everything goes to a temporary course directory; the grader is built from this tree (trusted
# libraries cached in build/cluster-tests/cache).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
PY=${PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
BASE=$(mktemp -d /tmp/gemmlab-gpu-demo.XXXX)
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$BASE"' EXIT
mkdir -p build/cluster-tests/cache
"$PY" - "$BASE" <<'PYEOF'
import datetime as dt, sys
from pathlib import Path
sys.path.insert(0, "tests/py")
import time
from support.cluster_helpers import config, dropbox, hand_in_dir, write_config
base = Path(sys.argv[1])
# The deadline is a few seconds ahead: the on-time hand-ins go in before it, the late one after it
# (the drop box's clock stamps every attempt), and the sweep runs after it, as a final sweep does.
due = dt.datetime.now(dt.timezone.utc).replace(microsecond=0) + dt.timedelta(seconds=8)
cfg = config.load(write_config(base, "local", due, course_timing=True))  # the real rubric and targets
class_ = {"ref": "reference", "stubs": "stub", "broken": "broken", "late": "reference"}
dirs = {kind: hand_in_dir(base / "src" / kind, kind) for kind in set(class_.values())}
for student, kind in class_.items():
    if student != "late":
        dropbox.store_attempt(cfg, student, dropbox.collect(cfg, dirs[kind], None))
time.sleep(max(0.0, (due - dt.datetime.now(dt.timezone.utc)).total_seconds()) + 1.5)
dropbox.store_attempt(cfg, "late", dropbox.collect(cfg, dirs["reference"], None))
(base / "roster.txt").write_text("\n".join([*class_, "absent"]) + "\n")
print(f"demo class of {len(class_) + 1} in {base}")
PYEOF
"$PY" cluster/gemmlab_cluster.py --config "$BASE/course.toml" sweep --name demo
echo "== $BASE/sweeps/demo/gradebook.csv"
if command -v column >/dev/null; then column -s, -t < "$BASE/sweeps/demo/gradebook.csv" | cut -c1-220; else cat "$BASE/sweeps/demo/gradebook.csv"; fi
# What each hand-in's grade said, stage by stage (the broken hand-in: its tiled.cu does not compile,
# so tiled is rejected with the compiler's first error and every other stage is graded).
"$PY" - "$BASE" <<'PYEOF'
import json, sys
from pathlib import Path
sweep = Path(sys.argv[1]) / "sweeps" / "demo"
for res in sorted(sweep.rglob("results.json")):
    doc = json.loads(res.read_text())
    sc = doc.get("score", {})
    print(f"== {res.parent.relative_to(sweep)}: {sc.get('total')} / {sc.get('max')} ({doc.get('status')})")
    for row in sc.get("stages", []):
        print(f"   {row['stage']:<9}{row['precision']:<7}{row['disposition']:<16}"
              f"{row['correctness'] + row['performance']:>6.2f} / {row['correctness_max'] + row['performance_max']:<6.2f} {row['note'][:110]}")
PYEOF
