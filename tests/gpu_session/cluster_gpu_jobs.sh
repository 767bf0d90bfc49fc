#!/usr/bin/env bash
# cluster_gpu_jobs.sh — the cluster's own batch scripts (grade-attempt and sweep-array, rendered by
# `make submit` and `make sweep` from cluster/templates/) on the GPUs of a machine without Slurm:
# a stand-in sbatch queues them and tests/slurm/fake_slurm.py runs them with the environment Slurm
# gives a job (SLURM_JOB_ID, SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID, CUDA_VISIBLE_DEVICES,
# SLURM_JOB_NODELIST, SLURM_CPUS_PER_TASK, ...), one GPU per job. tests/gpu_session/cluster_gpu_jobs.py says
# what each phase checks; no package installs, nothing but this tree and the CUDA toolkit.
#
#   bash tests/gpu_session/cluster_gpu_jobs.sh [all|class|pair] [--gpus 0,1] [--class full|mini] [--keep]
#     class  a class of 14 mixed hand-ins + 1 absent, one sweep array over every GPU and one
#            submit job: every status, each grade on the GPU its job was given, grades per GPU-hour
#     pair   (2 GPUs) two grading jobs at once on GPU 0 and GPU 1 against each GPU alone: which GPU
#            each job used (results.json UUID, nvidia-smi processes), timings within ±2%
#
# Logs, tables and the JSON summary go to $OUT (default build/cluster-gpu-jobs). Without a GPU it
# is a dry run (every grade no_gpu, nothing timed) on GPU indices 0,1. Exit 0: every check passed.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OUT=${OUT:-$ROOT/build/cluster-gpu-jobs}
mkdir -p "$OUT"
[ -d .deps/include ] && export CPATH=$PWD/.deps/include${CPATH:+:$CPATH}
export NO_COLOR=1 PYTHONUNBUFFERED=1
PY=${PYTHON:-$(command -v python3)}
"$PY" -c 'import tomllib' 2>/dev/null || { echo "cluster_gpu_jobs: $PY has no tomllib (Python 3.11+ needed)" >&2; exit 2; }
{ nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,clocks.sm,clocks.max.sm,driver_version --format=csv 2>&1 || true
  echo "cores: $(nproc)"; command -v nvcc >/dev/null && nvcc --version | tail -n 2; } > "$OUT/machine.txt"
OUT=$OUT "$PY" tests/gpu_session/cluster_gpu_jobs.py --out "$OUT" "$@" 2>&1 | tee "$OUT/cluster-gpu-jobs.log"
exit "${PIPESTATUS[0]}"
