#!/usr/bin/env bash
# gpu_profile_padding.sh — the bank-conflict lesson on a GPU, in one command: `make profile` of a tiled
# kernel whose A tile is stored transposed in shared memory, without padding (PAD_A = 0: a 32-way bank
# conflict on every store at TILE = 32) and with it (PAD_A = 1: none), and of the reference's tiled/16
# (the example report's profile, measured again with every counter make profile asks for).
# H100 with CUDA 13 and ncu, no package installs: carry .deps (docs/developing.md, "Developing on a lent GPU").
# About 5 minutes on 16 cores from an empty build (the grader builds once for all three).
#
#   bash tests/gpu_session/gpu_profile_padding.sh          writes into $OUT (default build/gpu-profile-padding/out)
#
# The kernel is tests/profile_padding/tiled.cu (the stub's structure, A transposed); each variant is a
# copy of student/ with it as tiled.cu, checked (make check STAGE=tiled PREC=float) before it is
# profiled. $OUT receives at most 8 files:
#   nopad-tiled-32-float.{csv,json}   ncu's raw CSV and make profile's summary, PAD_A = 0
#   pad-tiled-32-float.{csv,json}     the same, PAD_A = 1
#   reference-tiled-16-float.{csv,json}   the reference's tiled/16: the fixtures' replacement
#                                     (tests/fixtures/profile/README.md, "Replacing them")
#   profiles.md                       the lab report's Profiles section of the three (report_profile.py)
#   profiles.pdf                      the same rendered, where pandoc and xelatex are installed
# and it prints the bank conflicts and wavefronts per shared store before and after.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OUT=${OUT:-build/gpu-profile-padding/out}
WORK=${WORK:-build/gpu-profile-padding}
mkdir -p "$OUT" "$WORK"
[ -d .deps/include ] && export CPATH=$PWD/.deps/include
export NO_COLOR=1 PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
JOBS=${JOBS:-16}
STAGE=${STAGE:-tiled/32}
status=0

step() {  # step NAME COMMAND...: runs, logs to $WORK/NAME.log, prints the wall time and exit status
    local name=$1; shift
    local t0=$(date +%s.%N)
    echo "== $name: $*"
    "$@" > "$WORK/$name.log" 2>&1
    local rc=$?
    local t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
    echo "   -> exit $rc in ${t}s (log: $WORK/$name.log)"
    [ $rc = 0 ] || tail -n 15 "$WORK/$name.log"
    return $rc
}

nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv

# The two submissions: student/ with the transposed-A tiled kernel, PAD_A = 1 and PAD_A = 0.
for variant in pad nopad; do
    sub="$WORK/$variant"
    rm -rf "$sub"
    mkdir -p "$sub"
    cp student/*.cu "$sub/"
    pad=$([ $variant = pad ] && echo 1 || echo 0)
    sed "s/^constexpr int PAD_A = 1;/constexpr int PAD_A = $pad;/" tests/profile_padding/tiled.cu > "$sub/tiled.cu"
    grep -q "^constexpr int PAD_A = $pad;" "$sub/tiled.cu" || { echo "could not set PAD_A = $pad"; exit 1; }
done

step build make -j"$JOBS" PYTHON="$PY" SUBMISSION="$WORK/pad" grader || exit 1
for variant in pad nopad; do
    step "check-$variant" make -j"$JOBS" PYTHON="$PY" SUBMISSION="$WORK/$variant" check STAGE=tiled PREC=float \
        || status=1
    step "profile-$variant" make -j"$JOBS" PYTHON="$PY" SUBMISSION="$WORK/$variant" RESULTS="$WORK/results-$variant" \
        profile STAGE="$STAGE" PREC=float || status=1
done
step profile-reference make -j"$JOBS" PYTHON="$PY" SUBMISSION=reference RESULTS="$WORK/results-reference" \
    profile STAGE=tiled/16 PREC=float || status=1

# The deliverables, the Profiles section of the three, and the numbers before and after.
"$PY" - "$WORK" "$OUT" "$STAGE" <<'EOF' || status=1
import json, shutil, sys
from pathlib import Path
work, out, stage = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
sys.path.insert(0, "report")
import report_profile  # noqa: E402
stem = stage.replace("/", "-") + "-float"
render = work / "render"
shutil.rmtree(render, ignore_errors=True)
render.mkdir()
found = {}
for name, folder, file_stem, label in (("nopad", "results-nopad", stem, f"{stage} (PAD_A = 0)"),
                                       ("pad", "results-pad", stem, f"{stage} (PAD_A = 1)"),
                                       ("reference", "results-reference", "tiled-16-float", "tiled/16 (the reference)")):
    src = work / folder / "profile"
    if not (src / f"{file_stem}.json").is_file():
        print(f"no profile for {name} ({src / (file_stem + '.json')})")
        continue
    out_stem = f"{name}-{file_stem}"
    shutil.copyfile(src / f"{file_stem}.csv", out / f"{out_stem}.csv")
    shutil.copyfile(src / f"{file_stem}.json", out / f"{out_stem}.json")
    doc = json.loads((src / f"{file_stem}.json").read_text())
    found[name] = doc
    doc = dict(doc, label=label, stage_file={})
    (render / f"{out_stem}.json").write_text(json.dumps(doc))
docs = report_profile.load_profiles(render)
block = "# Profiles\n\n" + report_profile.profiles_block(docs, ["tiled"], str(render))
(out / "profiles.md").write_text(block)
import report_render  # noqa: E402  (the lab report's own Pandoc and xelatex recipe)
try:
    report_render.render(out / "profiles.md", render, work / "render-tex", out / "profiles.pdf", Path.cwd(),
                         "make profile: the bank-conflict experiment", {})
except Exception as e:  # noqa: BLE001  (no pandoc on the GPU machine: render profiles.md elsewhere)
    print(f"profiles.pdf not rendered here ({e}); here: make it from profiles.md with report/report_render.py")
print()
print("shared stores of the tiled kernel (the transposed A tile):")
for name in ("nopad", "pad"):
    for k in found.get(name, {}).get("kernels", []):
        print(f"  PAD_A = {0 if name == 'nopad' else 1}: {k['name']}: "
              f"{k.get('shared_st_wavefronts_per_instruction')} wavefronts per store instruction, "
              f"{k.get('shared_st_bank_conflicts')} bank conflicts on stores, "
              f"{k.get('shared_ld_bank_conflicts')} on loads; {k.get('duration_us')} us; "
              f"top stalls {[s['reason'] for s in k.get('stalls', [])]}")
for k in found.get("reference", {}).get("kernels", []):
    print(f"  reference tiled/16: {k['name']}: AI {k.get('arithmetic_intensity')} flop/byte, "
          f"roofline {k.get('roofline')}, missing {found['reference'].get('missing_metrics')}")
EOF
ls -la "$OUT"
echo "gpu_profile_padding: $([ $status = 0 ] && echo PASS || echo FAIL)"
exit $status
