#!/usr/bin/env bash
# gpu_student_week.sh — on a GPU machine: make profile on two stages of the reference (Nsight
# Compute), make resources, a grade of a tree whose tiled.cu does not compile (every other stage
# graded), and the class demo (tests/gpu_session/cluster_gpu_demo.sh). Logs and results go to $OUT.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OUT=${OUT:-build/gpu-student-week}
mkdir -p "$OUT"
[ -d .deps/include ] && export CPATH=$PWD/.deps/include
[ -d .deps/python ] && export PYTHONPATH=$PWD/.deps/python${PYTHONPATH:+:$PYTHONPATH}
[ -x .deps/bin/ccache ] && export PATH=$PWD/.deps/bin:$PATH LD_LIBRARY_PATH=$PWD/.deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NO_COLOR=1 PYTHONUNBUFFERED=1
keep=build/student-week
mkdir -p "$keep"
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv > "$keep/gpu.txt"

# 1. Profiles
mkdir -p results/reference/profile
{ make -j16 SUBMISSION=reference profile STAGE=tiled/16 PREC=float && make SUBMISSION=reference profile STAGE=reuse PREC=double; } \
    > "$keep/profile.log" 2>&1; echo "profile rc=$?" | tee -a "$keep/summary.txt"
make SUBMISSION=reference resources STAGE=tiled > "$keep/resources-tiled.txt" 2>&1
cp -r results/reference/profile "$keep/" 2>/dev/null

# 2. One stage file that does not compile: the others are graded
tree=build/isolation-tree
rm -rf "$tree" && mkdir -p "$tree" && cp reference/*.cu reference/*.h "$tree/"
sed -i '0,/return Status::ok;/s//return Status::ok  \/\/ BROKEN: the ; is missing/' "$tree/tiled.cu"
t0=$(date +%s)
make -j16 SUBMISSION="$tree" RESULTS="$keep/isolation" grade > "$keep/isolation.log" 2>&1
echo "isolation grade rc=$? in $(( $(date +%s) - t0 )) s" | tee -a "$keep/summary.txt"
python3 - "$keep/isolation/results.json" <<'PY' | tee -a "$keep/summary.txt"
import json, sys
r = json.load(open(sys.argv[1]))
print(f"score {r['score']['total']} / {r['score']['max']}")
for row in r["score"]["stages"]:
    print(f"  {row['stage']:<9}{row['precision']:<7}{row['disposition']:<12}{row['correctness'] + row['performance']:6.2f} / "
          f"{row['correctness_max'] + row['performance_max']:<6.2f} {row['note'][:120]}")
PY

# 3. The class demo: a small class swept on the local path, with the course's own rubric
timeout "${DEMO_SECONDS:-300}" bash tests/gpu_session/cluster_gpu_demo.sh > "$keep/demo.log" 2>&1
echo "demo rc=$?" | tee -a "$keep/summary.txt"
tail -40 "$keep/demo.log"
tar -czf "$OUT/student-week.tar.gz" "$keep"
cp "$keep/summary.txt" "$OUT/"
