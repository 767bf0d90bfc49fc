#!/usr/bin/env bash
# gpu_cuda12.sh — the reference and the stubs graded by CUDA 12 builds (ARCH=sm_70: the V100 path, its PTX
# JIT-compiled by the driver; and sm_80) on a lent GPU machine that has CUDA 13 only and takes at most
# 64 MiB of files per call.
#
# The builds carry their own CUDA 12 libraries (make CUDA_LIBS=pruned, docs in the Makefile): cuBLAS,
# cuBLASLt and cuRAND linked from CUDA 12.5's static archives into one library whose device code is cut
# to the GPU that grades them (GPU, default sm_90: an H100 or H200), and the CUDA 12 runtime, both in
# the build's cuda-libs/, where the binaries look first ($ORIGIN/../cuda-libs). One copy of them serves
# both archs and both submissions; still, cuBLASLt's heuristics tables and kernels for one GPU are over
# 64 MiB packed, so the pack travels in a few parts (the pack step prints how many), one call each.
#
#   here:   make setup-cuda12 CUDA12_STATIC=1           once: CUDA 12.5 with its static archives
#   here:   bash tests/gpu_session/gpu_cuda12.sh pack [GPU]          build (every arch of ARCHS_CUDA12, reference/ and student/),
#                                                        check what they load (tests/gpu_session/cuda_bundle_check.py), pack
#                                                        (xz) into build/gpu-cuda12/part-1 .. part-N, each of which
#                                                        fits one call's carry; it prints the calls to make
#   there:  bash tests/gpu_session/gpu_cuda12.sh receive build/gpu-cuda12/part-K   one call per part but the last, carrying it
#   there:  bash tests/gpu_session/gpu_cuda12.sh grade build/gpu-cuda12/part-N     the last part, carried; then: unpack, check again,
#                                                        and for each arch grade the reference and the stubs;
#                                                        into $OUT: summary.md (tests/gpu_session/gpu_archs.py --expect),
#                                                        verify.txt, cu12.log, <arch>-<submission>-results.json
#   there:  bash tests/gpu_session/gpu_cuda12.sh grade - sm_80       grade again (or only some archs) with what is there
#   here:   bash tests/gpu_session/gpu_cuda12.sh build [GPU] | verify [GPU] | split [GPU]    one step of pack alone
#
# The calls must come back to back: the machine keeps /tmp only while it is held (30 s idle).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
PARTS=${GEMMLAB_CU12_PARTS:-/tmp/gemmlab-cu12}   # where the parts collect on the GPU machine
CARRY_LIMIT=$((64 * 1024 * 1024))
HOME12=${CUDA12_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/gemmlab/cuda-12.5}
ARCHS=$(sed -n 's/^ARCHS_CUDA12 := //p' Makefile)
SUBMISSIONS="reference student"
PY=$(command -v /usr/bin/python3 || command -v python3)

release() { "$HOME12/bin/nvcc" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p'; }
build_dir() { echo "build/$1-cuda$(release)-pruned-$2"; }   # ARCH GPU, as the Makefile names it

build() {
    local gpu=$1 log=build/gpu-cuda12/build.log
    [ -x "$HOME12/bin/nvcc" ] || { echo "gpu_cuda12: no CUDA 12 in $HOME12: make setup-cuda12 CUDA12_STATIC=1 first" >&2; exit 1; }
    mkdir -p "$(dirname "$log")"; : >"$log"
    for arch in $ARCHS; do
        for sub in $SUBMISSIONS; do
            echo "gpu_cuda12: building $sub for $arch with CUDA $(release), its libraries for $gpu ..."
            make --no-print-directory -j"$(nproc)" CUDA_HOME="$HOME12" ARCH="$arch" CUDA_LIBS=pruned CUDA_LIBS_ARCHS="$gpu" \
                SUBMISSION="$sub" grader >>"$log" 2>&1 || { tail -n 30 "$log"; echo "gpu_cuda12: the build failed ($log)" >&2; exit 1; }
        done
    done
}

verify() {
    local gpu=$1 dirs=()
    for arch in $ARCHS; do dirs+=("$(build_dir "$arch" "$gpu")"); done
    "$PY" tests/gpu_session/cuda_bundle_check.py --cuda-major "$(release | cut -d. -f1)" --gpu "$gpu" "${dirs[@]}"
}

# The size of what travels with every call anyway: tracked files and untracked ones git does not ignore.
tree_bytes() { git ls-files -co --exclude-standard -z | xargs -0 stat -c %s 2>/dev/null | awk '{s += $1} END {print s + 0}'; }

pack() {
    local gpu=$1 stage pack_file
    build "$gpu"
    verify "$gpu" >build/gpu-cuda12/verify.txt || { cat build/gpu-cuda12/verify.txt; exit 1; }
    tail -n 1 build/gpu-cuda12/verify.txt
    stage=$(mktemp -d)
    for arch in $ARCHS; do
        local from to
        from=$(build_dir "$arch" "$gpu"); to="$stage/$(basename "$from")"
        mkdir -p "$to/cuda-libs"
        cp "$from/cuda-libs/libcublas-pruned.so" "$from"/cuda-libs/libcudart.so.* "$to/cuda-libs/"
        for sub in $SUBMISSIONS; do
            local dir
            dir="$from/sub-$sub-$(printf '%s' "$ROOT/$sub" | cksum | cut -d' ' -f1)"   # the Makefile's SUB_BUILD
            mkdir -p "$to/sub-$sub"
            cp "$dir"/gemmlab "$dir"/gemmlab-stages "$dir"/gemmlab-baselines "$dir"/libgemmlab-submission-*.so \
               "$dir"/symbols.json "$to/sub-$sub/"
            strip --strip-debug "$to/sub-$sub"/gemmlab* "$to/sub-$sub"/libgemmlab-submission-*.so
        done
    done
    # One copy of what the builds share (the libraries; the judge and the runners of one arch): hard links.
    (cd "$stage" && find . -type f -exec sha256sum {} + | sort | awk '$1 == last {print first, $2; next} {last = $1; first = $2}' |
        while read -r keep dup; do ln -f "$keep" "$dup"; done)
    printf 'cuda=%s\ngpu=%s\narchs="%s"\n' "$(release)" "$gpu" "$ARCHS" >"$stage/manifest"
    pack_file=build/gpu-cuda12/cu12.tar.xz
    tar -C "$stage" -cf - . | xz -9 -T0 >"$pack_file"
    rm -rf "$stage"
    split_parts "$gpu"
}

# The pack in parts that each fit one call's carry beside the files that travel anyway: folders
# build/gpu-cuda12/part-K (build/ is ignored by git: a part travels only when a call carries it), each
# with the pack's checksum and part count.
split_parts() {
    local gpu=$1 pack_file=build/gpu-cuda12/cu12.tar.xz sum n part_bytes k=0
    rm -rf build/gpu-cuda12/part-* "$pack_file".part-*
    sum=$(sha256sum "$pack_file" | cut -d' ' -f1)
    part_bytes=$((CARRY_LIMIT - $(tree_bytes) - 1024 * 1024))
    split -b "$part_bytes" -d -a 2 "$pack_file" "$pack_file".part-
    n=$(ls "$pack_file".part-* | wc -l)
    for p in "$pack_file".part-*; do
        k=$((k + 1)); mkdir -p "build/gpu-cuda12/part-$k"; mv "$p" "build/gpu-cuda12/part-$k/"
        printf '%s %s\n' "$sum" "$n" >"build/gpu-cuda12/part-$k/expect"
    done
    echo "gpu_cuda12: $(stat -c %s "$pack_file" | awk '{printf "%.1f MiB", $1 / 1048576}') packed (CUDA $(release), $ARCHS, libraries for $gpu)" \
         "in $n part(s) of at most $(awk -v b="$part_bytes" 'BEGIN {printf "%.1f", b / 1048576}') MiB: build/gpu-cuda12/part-1 .. part-$n"
    echo "gpu_cuda12: then, one call each, back to back:"
    for k in $(seq 1 $((n - 1))); do
        echo "  bash tests/gpu_session/gpu_cuda12.sh receive build/gpu-cuda12/part-$k    carry [\"build/gpu-cuda12/part-$k\"]"
    done
    echo "  bash tests/gpu_session/gpu_cuda12.sh grade build/gpu-cuda12/part-$n      carry [\"build/gpu-cuda12/part-$n\"]"
}

receive() {
    local dir=$1 sum n have
    mkdir -p "$PARTS"
    cp "$dir"/* "$PARTS"/
    read -r sum n <"$PARTS/expect"
    have=$(ls "$PARTS"/cu12.tar.xz.part-* 2>/dev/null | wc -l)
    echo "gpu_cuda12: $have of $n part(s) here ($(du -ch "$PARTS"/cu12.tar.xz.part-* | tail -n1 | cut -f1))"
}

unpack() {
    local sum n have
    read -r sum n <"$PARTS/expect"
    have=$(ls "$PARTS"/cu12.tar.xz.part-* 2>/dev/null | wc -l)
    [ "$have" = "$n" ] || { echo "gpu_cuda12: $have of $n parts here: the machine was given back between the calls? Send them again, back to back." >&2; exit 1; }
    if [ ! -f "$PARTS/x/.unpacked-$sum" ]; then
        cat "$PARTS"/cu12.tar.xz.part-* >"$PARTS/all.tar.xz"
        [ "$(sha256sum "$PARTS/all.tar.xz" | cut -d' ' -f1)" = "$sum" ] || { echo "gpu_cuda12: the parts do not add up (sha256)" >&2; exit 1; }
        rm -rf "$PARTS/x"; mkdir -p "$PARTS/x"
        xz -dc "$PARTS/all.tar.xz" | tar -C "$PARTS/x" -xf -
        rm -f "$PARTS/all.tar.xz"; touch "$PARTS/x/.unpacked-$sum"
    fi
}

# grade DIR: the reference (full grade) and the stubs (grade without the reference's timing) of one unpacked build.
grade_arch() {
    local arch=$1 dir=$2 run=$3 cuda=$4 sub t0 status=0
    mkdir -p "$run"
    echo "arch=$arch toolkit=$cuda" >"$run/build.txt"
    "$dir/sub-reference/gemmlab" list --json >"$run/listing.json"
    for sub in $SUBMISSIONS; do
        local extra=() limit=300
        if [ "$sub" = student ]; then extra=(--no-reference); limit=150; fi
        "$PY" grader/scripts/fingerprint.py "$sub" --json "$run/$sub-fingerprint.json"
        rm -rf "$run/$sub"; mkdir -p "$run/$sub"
        echo "== $arch $sub: gemmlab grade ${extra[*]} (CUDA $cuda build)"
        t0=$(date +%s)
        timeout "$limit" "$dir/sub-$sub/gemmlab" grade --config course.toml --submission "$sub" "${extra[@]}" --no-color \
            --fingerprint "$run/$sub-fingerprint.json" --out "$run/$sub" >"$run/$sub.log" 2>&1 || status=$?
        echo "   exit $status after $(( $(date +%s) - t0 )) s; $(tail -n 3 "$run/$sub.log" | tr '\n' ' ' | cut -c1-300)"
        cp "$run/$sub/results.json" "$OUT/$arch-$sub-results.json" 2>/dev/null || true
        status=0
    done
}

grade() {
    local part=${1:--}
    shift || true
    [ "$part" = - ] || receive "$part"
    unpack
    OUT=${OUT:-build/gpu-cuda12/out}; mkdir -p "$OUT"
    set -o pipefail
    grade_all "$@" 2>&1 | tee -a "$OUT/cu12.log"
}

grade_all() {
    local cuda gpu archs runs=() arch dirs=() d
    . "$PARTS/x/manifest"   # cuda, gpu, archs of the pack
    archs=${*:-$archs}
    nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader || echo "gpu_cuda12: nvidia-smi: no GPU here"
    echo "gpu_cuda12: CUDA $cuda builds for $archs, their libraries for $gpu"
    for arch in $archs; do dirs+=("$PARTS/x/$arch-cuda$cuda-pruned-$gpu"); done
    if ! "$PY" tests/gpu_session/cuda_bundle_check.py --cuda-major "${cuda%%.*}" --gpu "$gpu" "${dirs[@]}" >"$OUT/verify.txt"; then
        grep -v '^ok' "$OUT/verify.txt"; return 1
    fi
    tail -n 1 "$OUT/verify.txt"
    for arch in $archs; do
        d="$PARTS/x/$arch-cuda$cuda-pruned-$gpu"
        grade_arch "$arch" "$d" "$PARTS/run/$arch" "$cuda"
        runs+=("$PARTS/run/$arch")
        "$PY" tests/gpu_session/gpu_archs.py --expect "${runs[@]}" >"$OUT/summary.md" || true   # after each arch: kept if time runs out
    done
    cat "$OUT/summary.md"
    "$PY" tests/gpu_session/gpu_archs.py --expect "${runs[@]}" >/dev/null
}

case "${1:-}" in
build) build "${2:-sm_90}" ;;
verify) verify "${2:-sm_90}" ;;
pack) pack "${2:-sm_90}" ;;
split) split_parts "${2:-sm_90}" ;;
receive) receive "${2:?which part (build/gpu-cuda12/part-K)}" ;;
grade) shift; grade "$@" ;;
*)
    sed -n '2,28p' "$0"
    exit 2
    ;;
esac
