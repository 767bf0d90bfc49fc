#!/usr/bin/env bash
# reference/tuning/profile.sh — Nsight Compute counters of one reference kernel (instructor tool).
#
#   reference/tuning/profile.sh 'tiled_kernel<double, .int.32>' tiled f64 [4096x4096x4096]
#
# Runs the tuning ladder (built by run.sh --tune if needed) under `ncu` for ONE launch of the
# first kernel whose demangled name matches the regular expression, and prints the counters that
# say what limits a GEMM kernel: the L1 data pipe (shared-memory wavefronts, writeback), the
# FP32/FP64 pipes, instruction counts and the warp-stall reasons. Arguments: kernel regex, the
# registry stage to run (--stages), f32|f64, and the shape. Needs `ncu` (CUDA toolkit) and
# permission to read GPU counters. OUT_DIR as for run.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ $# -ge 3 ]] || { sed -n 2,11p "$0" >&2; exit 2; }
kernel=$1 stage=$2 prec=$3 shape=${4:-4096x4096x4096}
OUT_DIR=${OUT_DIR:-build/ladder-ref}
bin=$OUT_DIR/ladder-tune
[[ -x $bin ]] || BUILD_ONLY=1 OUT_DIR=$OUT_DIR reference/tuning/run.sh --tune
command -v ncu >/dev/null || { echo "profile.sh: ncu not found (it comes with the CUDA toolkit)" >&2; exit 1; }
metrics=(
    l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_active
    l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
    l1tex__lsu_writeback_active.avg.pct_of_peak_sustained_active
    smsp__inst_executed_op_shared_ld.sum
    smsp__inst_executed.sum
    sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
    sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active
    sm__cycles_elapsed.avg
    "regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio"
)
ncu --target-processes all --kernel-name-base demangled -k "regex:$kernel" --launch-count 1 \
    --metrics "$(IFS=,; echo "${metrics[*]}")" \
    "$bin" --no-check --tune --stages "$stage" --prec "$prec" --shapes "$shape" --reps 10 --warmups 0
