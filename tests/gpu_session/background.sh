#!/usr/bin/env bash
# background.sh — phases of tests/gpu_session.sh that take longer than one call on a lent GPU machine
# (the whole gallery, the suite and the gallery together): the first call starts them in the
# background, detached from the call, and waits; the next calls, back to back, only wait. Every call
# copies what the run has written so far into its $OUT, so what a run saw comes back even when the
# machine is lost before the end.
#
#   bash tests/gpu_session/background.sh start PHASE [PHASE ...] [-- WAIT_SECONDS]
#   bash tests/gpu_session/background.sh wait [WAIT_SECONDS]          (default 540)
#
# `wait` on a machine where nothing was started (a fresh one: the machine of the earlier calls was
# given back, and its run with it) says so and exits 3 at once, instead of waiting out the call.
# Exit status: 0 every phase done and passed, 1 done with a failure, 2 still running, 3 no run here.
# The run lives in $GPU_BG_DIR (default /tmp/gemmlab-gpu-bg), outside the tree a call replaces.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
BG=${GPU_BG_DIR:-/tmp/gemmlab-gpu-bg}
OUT=${OUT:-build/gpu-session}
SESSION=${GPU_SESSION_SCRIPT:-$ROOT/tests/gpu_session.sh}

usage() { sed -n '8,14p' "$0" >&2; exit 2; }

copy_back() {  # what the run wrote so far, into this call's $OUT
    mkdir -p "$OUT"
    [ -d "$BG/out" ] && tar -czf "$OUT/background.tar.gz" -C "$BG" out progress.txt 2>/dev/null
    cp "$BG/progress.txt" "$OUT/background-progress.txt" 2>/dev/null
    # the gallery's tables as they stand (run_gallery.py writes them after each entry)
    for f in build/gallery/results/summary.md build/gallery/results/summary.json; do
        [ -f "$f" ] && cp "$f" "$OUT/gallery-$(basename "$f")"
    done
    return 0
}

await() {  # await SECONDS
    local limit=$1 t0
    t0=$(date +%s)
    if [ ! -f "$BG/started" ]; then
        echo "background: no run on this machine ($BG/started is missing): it is a fresh machine, and the" \
             "run of the earlier calls went with theirs. Start it again: background.sh start PHASE ..." >&2
        exit 3
    fi
    while [ ! -f "$BG/finished" ] && [ $(( $(date +%s) - t0 )) -lt "$limit" ]; do sleep 1; done
    copy_back
    cat "$BG/progress.txt"
    if [ -f "$BG/finished" ]; then
        [ "$(cat "$BG/finished")" = 0 ] && exit 0 || exit 1
    fi
    echo "background: still running after ${limit} s; call again at once: background.sh wait"
    exit 2
}

case "${1:-}" in
start)
    shift
    phases=()
    limit=540
    while [ $# -gt 0 ]; do
        if [ "$1" = "--" ]; then limit=${2:-540}; break; fi
        phases+=("$1"); shift
    done
    [ ${#phases[@]} -gt 0 ] || usage
    if [ -f "$BG/started" ] && [ ! -f "$BG/finished" ]; then
        echo "background: a run is already going here (since $(cat "$BG/started")); waiting for it" >&2
        await "$limit"
    fi
    rm -rf "$BG"
    mkdir -p "$BG/out"
    date -u +%FT%TZ > "$BG/started"
    # Detached: the run outlives this call (setsid: its own session; nothing reads the call's pipes).
    setsid nohup bash -c '
        bg=$1 session=$2; shift 2
        status=0
        for phase in "$@"; do
            echo "$(date -u +%T) $phase: started" >> "$bg/progress.txt"
            OUT="$bg/out/$phase" bash "$session" "$phase" > "$bg/out/$phase.log" 2>&1
            rc=$?
            [ $rc -eq 0 ] || status=1
            echo "$(date -u +%T) $phase: exit $rc" >> "$bg/progress.txt"
            tail -n 4 "$bg/out/$phase.log" | sed "s/^/    /" >> "$bg/progress.txt"
        done
        echo $status > "$bg/finished"
    ' background "$BG" "$SESSION" "${phases[@]}" < /dev/null > /dev/null 2>&1 &
    sleep 1
    await "$limit"
    ;;
wait)
    await "${2:-540}"
    ;;
*)
    usage
    ;;
esac
