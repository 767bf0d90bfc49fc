#!/usr/bin/env bash
# Builds and runs tests/probes/judge_probe.cu on this machine's GPU (about two minutes).
set -u
cd "$(dirname "$0")"
OUTDIR=${OUT:-.}
nvcc -std=c++17 -O2 -arch=native -o "$OUTDIR/judge_probe" judge_probe.cu -lcublas || exit 1
P="$OUTDIR/judge_probe"
nvidia-smi --query-gpu=name,clocks.sm,driver_version,compute_mode --format=csv,noheader
timeout 60 "$P" ipc
timeout 60 "$P" l2 40
for wait in gpu hosthost; do
  for n in 4096 2048 1024; do
    for stage in sgemm empty; do timeout 30 "$P" clock $n 60 1 $wait $stage; done
  done
done
for b in 4 16; do
  for stage in sgemm empty; do timeout 30 "$P" clock 1024 40 $b hosthost $stage; done
done
