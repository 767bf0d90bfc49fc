#!/usr/bin/env bash
# gpu_cuda12.sh — a CUDA 12 build of the kit graded on a lent GPU machine that has CUDA 13 only and
# takes at most 64 MiB of files per run: the build and the CUDA 12 libraries it loads (cuBLAS,
# cuBLASLt, cuRAND, the runtime: about 650 MB) travel in parts over consecutive runs.
#
#   here:   bash tests/gpu_cuda12.sh pack [ARCH]   build with the CUDA 12 of `make setup-cuda12` for
#                                                  ARCH (default sm_90: no JIT there), then pack the
#                                                  grader build and those libraries (xz) into parts
#                                                  .cu12-01, .cu12-02, ... of at most 56 MiB each
#   there:  bash tests/gpu_cuda12.sh receive DIR   one run per part, carrying only that part (carry:
#                                                  [".cu12-NN"]); the parts collect in /tmp/gemmlab-cu12
#   there:  bash tests/gpu_cuda12.sh grade         the parts checked and unpacked (the libraries at the
#                                                  build's own run path), the reference graded by the
#                                                  CUDA 12 build's judge; results in $OUT/cu12
# The machine must stay warm between the runs (it keeps /tmp only while it is held).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
PARTS=/tmp/gemmlab-cu12
PART_BYTES=$((56 * 1024 * 1024))

case "${1:-}" in
pack)
    arch=${2:-sm_90}
    home=${CUDA12_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/gemmlab/cuda-12.5}
    [ -x "$home/bin/nvcc" ] || { echo "gpu_cuda12: no CUDA 12 in $home: make setup-cuda12 first" >&2; exit 1; }
    make --no-print-directory -j"$(nproc)" CUDA_HOME="$home" ARCH="$arch" SUBMISSION=reference grader >/tmp/gemmlab-cu12-build.log
    release=$("$home/bin/nvcc" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
    sub=$(ls -d build/"$arch"-cuda"$release"/sub-reference-* | head -n1)
    stage=$(mktemp -d)
    mkdir -p "$stage/build" "$stage/lib"
    cp -r "$sub" "$stage/build/"
    strip --strip-debug "$stage/build/$(basename "$sub")"/gemmlab* 2>/dev/null || true
    # Every CUDA 12 library the binaries load, under its soname, dereferenced.
    for lib in $(ldd "$sub"/gemmlab "$sub"/gemmlab-baselines "$sub"/gemmlab-stages | awk -v h="$home" '$3 ~ h {print $3}' | sort -u); do
        cp -L "$lib" "$stage/lib/$(basename "$lib")"
    done
    runpath=$(readelf -d "$sub/gemmlab" | sed -n 's/.*R\(UN\)\{0,1\}PATH.*\[\(.*\)\]/\2/p' | head -n1)
    printf 'sub=%s\nrunpath=%s\ncuda=%s\narch=%s\n' "build/$(basename "$sub")" "$runpath" "$release" "$arch" >"$stage/manifest"
    rm -rf .cu12-[0-9]*
    tar -C "$stage" -cf - . | xz -6 -T0 >/tmp/gemmlab-cu12.tar.xz
    rm -rf "$stage"
    sum=$(sha256sum /tmp/gemmlab-cu12.tar.xz | cut -d' ' -f1)
    split -b "$PART_BYTES" -d -a 2 /tmp/gemmlab-cu12.tar.xz /tmp/gemmlab-cu12.part-
    n=0
    for p in /tmp/gemmlab-cu12.part-*; do
        n=$((n + 1)); d=$(printf '.cu12-%02d' "$n"); mkdir -p "$d"; mv "$p" "$d/"
        grep -qx "/$d/" .git/info/exclude 2>/dev/null || echo "/$d/" >>.git/info/exclude
    done
    printf '%s %s\n' "$sum" "$n" >.cu12-01/expect
    echo "gpu_cuda12: $(du -h /tmp/gemmlab-cu12.tar.xz | cut -f1) in $n parts (.cu12-01 .. $(printf '.cu12-%02d' "$n")), CUDA $release, $arch"
    echo "then, one run each, back to back: bash tests/gpu_cuda12.sh receive .cu12-NN (carry [\".cu12-NN\"]), and: bash tests/gpu_cuda12.sh grade"
    ;;
receive)
    mkdir -p "$PARTS"
    cp "${2:?which part directory}"/* "$PARTS"/
    ls -l "$PARTS"
    ;;
grade)
    read -r sum n <"$PARTS/expect"
    have=$(ls "$PARTS"/gemmlab-cu12.part-* | wc -l)
    [ "$have" = "$n" ] || { echo "gpu_cuda12: $have of $n parts here" >&2; exit 1; }
    cat "$PARTS"/gemmlab-cu12.part-* >"$PARTS/all.tar.xz"
    [ "$(sha256sum "$PARTS/all.tar.xz" | cut -d' ' -f1)" = "$sum" ] || { echo "gpu_cuda12: the parts do not add up" >&2; exit 1; }
    rm -rf "$PARTS/x"; mkdir -p "$PARTS/x"
    xz -dc "$PARTS/all.tar.xz" | tar -C "$PARTS/x" -xf -
    . "$PARTS/x/manifest"
    mkdir -p "$runpath" "$(dirname "$sub")"
    cp "$PARTS"/x/lib/* "$runpath"/
    rm -rf "$sub"; cp -r "$PARTS/x/$sub" "$sub"
    OUT=${OUT:-build/gpu-session}; mkdir -p "$OUT/cu12"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    echo "CUDA $cuda build for $arch: $sub"
    python3 grader/scripts/fingerprint.py reference --json "$OUT/cu12/fingerprint.json"
    t0=$(date +%s.%N)
    CUDA_HOME=$(dirname "$runpath") "$sub/gemmlab" grade --config course.toml --submission reference \
        --fingerprint "$OUT/cu12/fingerprint.json" --out "$OUT/cu12" >"$OUT/cu12/grade.log" 2>&1 || { tail -n 40 "$OUT/cu12/grade.log"; exit 1; }
    tail -n 30 "$OUT/cu12/grade.log"
    echo "grade wall time: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s"
    python3 tests/judge_agreement.py "$OUT/cu12/results.json" | tail -n 3
    ;;
*)
    sed -n '2,16p' "$0"
    exit 2
    ;;
esac
