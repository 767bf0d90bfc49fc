#!/usr/bin/env bash
# reference/tuning/run.sh — build the instructor ladder and run it (see README.md beside this).
#
#   reference/tuning/run.sh                    check + time every registry stage, f32 and f64
#   reference/tuning/run.sh --tune             ... plus the tuning candidates (-DGEMMLAB_TUNE build)
#   reference/tuning/run.sh --stages reuse --prec f32 --shapes 4096x4096x4096 --tune
#   BUILD_ONLY=1 reference/tuning/run.sh --tune    compile only (works without a GPU)
#
# Environment: ARCH (default sm_90), OUT_DIR (default build/ladder-ref), NVCC (default nvcc),
# LADDER_BIN (run this prebuilt binary instead of building). The ptxas resource report
# (registers, shared memory, spills of every kernel) is written to $OUT_DIR/resources*.txt.
set -euo pipefail
cd "$(dirname "$0")/../.."

ARCH=${ARCH:-sm_90}
NVCC=${NVCC:-nvcc}
OUT_DIR=${OUT_DIR:-build/ladder-ref}
tune=0
for a in "$@"; do [[ "$a" == "--tune" ]] && tune=1; done
suffix=$([[ $tune == 1 ]] && echo "-tune" || echo "")
bin=${LADDER_BIN:-$OUT_DIR/ladder$suffix}

if [[ -z "${LADDER_BIN:-}" ]]; then
    mkdir -p "$OUT_DIR/obj$suffix"
    # grader/src for common/bound.h: the ladder judges every variant by the grader's own bound.
    # Hopper builds for sm_90a, as the Makefile does (the tensor stage's wgmma kernel needs it).
    case "$ARCH" in sm_90 | sm_90a) arch_flags=(-gencode arch=compute_90a,code=sm_90a) ;; *) arch_flags=(-arch="$ARCH") ;; esac
    flags=(-std=c++17 -O3 "${arch_flags[@]}" -Igrader/include -Igrader/src -Xcompiler -Wall,-Wextra -Xptxas -v)
    [[ $tune == 1 ]] && flags+=(-DGEMMLAB_TUNE)
    # One nvcc per file, in parallel: the template instantiations make the reuse stage slow to build.
    pids=()
    objs=()
    for src in reference/*.cu reference/tuning/ladder.cu; do
        obj="$OUT_DIR/obj$suffix/$(basename "$src" .cu).o"
        objs+=("$obj")
        "$NVCC" "${flags[@]}" -c "$src" -o "$obj" >"$obj.log" 2>&1 &
        pids+=($!)
    done
    status=0
    for i in "${!pids[@]}"; do
        if ! wait "${pids[$i]}"; then
            status=1
            echo "build failed: ${objs[$i]}" >&2
            cat "${objs[$i]}.log" >&2
        fi
    done
    [[ $status == 0 ]] || exit 1
    cat "$OUT_DIR/obj$suffix"/*.o.log >"$OUT_DIR/resources$suffix.txt"
    if grep -E "warning|[1-9][0-9]* bytes spill" "$OUT_DIR/resources$suffix.txt" >&2; then
        echo "note: warnings or spills above (full report: $OUT_DIR/resources$suffix.txt)" >&2
    fi
    "$NVCC" "${arch_flags[@]}" "${objs[@]}" -lcublas -o "$bin"
    echo "built $bin (resource report: $OUT_DIR/resources$suffix.txt)" >&2
fi
[[ -n "${BUILD_ONLY:-}" ]] && exit 0
exec "$bin" "$@"
