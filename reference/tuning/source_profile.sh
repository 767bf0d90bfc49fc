#!/usr/bin/env bash
# reference/tuning/source_profile.sh — where one reference kernel's warps stall, instruction by
# instruction (instructor tool).
#
#   reference/tuning/source_profile.sh 'reuse_ffma_kernel' reuse f32 [4096x4096x4096] [OUT]
#
# Runs the tuning ladder (built by run.sh --tune if needed) under `ncu` for ONE launch of the
# first kernel whose demangled name matches the regular expression, with Nsight Compute's warp
# state sampling, and writes OUT.ncu-rep (default build/ladder-ref/source) and OUT.csv: one row
# per SASS instruction with its samples by stall reason (dispatch, wait, short scoreboard, ...).
# The cuBLAS kernel the ladder runs beside it can be sampled the same way, e.g. with the regex
# 'sm80_xmma_gemm_f32f32'. Arguments as for profile.sh; OUT_DIR as for run.sh; LADDER_ARGS adds
# ladder options (e.g. "--only order2" to run one candidate).
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ $# -ge 3 ]] || { sed -n 2,13p "$0" >&2; exit 2; }
kernel=$1 stage=$2 prec=$3 shape=${4:-4096x4096x4096}
OUT_DIR=${OUT_DIR:-build/ladder-ref}
out=${5:-$OUT_DIR/source}
bin=$OUT_DIR/ladder-tune
[[ -x $bin ]] || BUILD_ONLY=1 OUT_DIR=$OUT_DIR reference/tuning/run.sh --tune
command -v ncu >/dev/null || { echo "source_profile.sh: ncu not found (it comes with the CUDA toolkit)" >&2; exit 1; }
ncu --target-processes all --kernel-name-base demangled -k "regex:$kernel" --launch-count 1 \
    --section SourceCounters --section WarpStateStats --section SchedulerStats \
    --import-source no -f -o "$out" \
    "$bin" --no-check --tune --stages "$stage" --prec "$prec" --shapes "$shape" --reps 10 --warmups 0 \
    ${LADDER_ARGS:-}
ncu -i "$out.ncu-rep" --page source --csv --print-source sass >"$out.csv"
ncu -i "$out.ncu-rep" --page details --section WarpStateStats --section SchedulerStats >"$out.txt"
echo "wrote $out.ncu-rep, $out.csv (per-instruction samples) and $out.txt (summary)" >&2
