#!/usr/bin/env bash
# gpu_tensor.sh — the tensor stage on a GPU, in one session (H100 with CUDA 13, no package installs:
# carry .deps; see docs/developing.md, "Developing on a lent GPU"). About 5 minutes on 16 cores. Logs
# and JSON go to $OUT (or build/gpu-tensor); the last lines it prints are tensor-summary.md, for
# docs/performance-log.md.
#
#   bash tests/gpu_session/gpu_tensor.sh             everything below
#   TENSOR_TUNE=0 bash tests/gpu_session/gpu_tensor.sh        without the tuning ladder (saves about a minute)
#   TENSOR_SANITIZE=0 ...                         without compute-sanitizer
#
# What it proves (tests/gpu_session/gpu_tensor_summary.py prints each as PASS or FAIL):
#   1. the reference's variants pass their bounds on the full shape set, float and double
#      (make SUBMISSION=reference check FULL=1 STAGE=tensor), and the error of 3xTF32 beside plain
#      FP32 (the reuse stage, same seed, same data);
#   2. the stub reports not_implemented (make check STAGE=tensor);
#   3. an FP16 kernel handed in as tensor/3xtf32 fails with the bound and the hint in its message,
#      and passes as tensor/fp16 and tensor/tf32 (tests/broken/wrong_values/tensor.cu);
#   4. the speed table from one run: gemmlab bench --stage tensor --reference at 4096³ and 2048³,
#      every variant beside cuBLAS in its own precision (FP16, TF32 via cublasGemmEx) and true FP32,
#      and 3xTF32 at 4096³ against 2x cuBLAS SGEMM;
#   plus the GPU unit tests of the tensor stage, compute-sanitizer (memcheck on one small odd case
#   per kernel, racecheck on the 3xTF32 pipeline), and the tuning ladder's tensor candidates
#   (reference/tuning, checked then timed at 4096³ and 8192³).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OUT=${OUT:-build/gpu-tensor}
mkdir -p "$OUT"
[ -d .deps/include ] && export CPATH=$PWD/.deps/include
export NO_COLOR=1 PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
JOBS=${JOBS:-16}
SEED=${SEED:-20261122}
SHAPES=${SHAPES:-4096x4096x4096,2048x2048x2048}
status=0
T0=$(date +%s)

step() {  # step NAME COMMAND...: runs, logs to $OUT/NAME.log, prints wall time and exit status
    local name=$1; shift
    local t0=$(date +%s.%N)
    echo "== $name: $*"
    "$@" > "$OUT/$name.log" 2>&1
    local rc=$?
    local t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
    echo "   -> exit $rc in ${t}s (log: $name.log)"
    return $rc
}
must() { step "$@" || status=1; }

nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv | tee "$OUT/gpu.txt"

# The tuning ladder builds in the background (every reference file with its candidates) while the
# grader builds and the checks run.
if [ "${TENSOR_TUNE:-1}" = 1 ]; then
    (BUILD_ONLY=1 OUT_DIR=build/ladder-tensor nice reference/tuning/run.sh --tune > "$OUT/ladder-build.log" 2>&1;
     echo "exit $?" >> "$OUT/ladder-build.log") &
    LADDER_PID=$!
fi

must build make -j"$JOBS" PYTHON="$PY" test-build
must build-reference make -j"$JOBS" PYTHON="$PY" SUBMISSION=reference grader
must build-broken make -j"$JOBS" PYTHON="$PY" SUBMISSION=tests/broken/wrong_values grader

# 1. the reference, full set, with the same seed for the tensor stage and for plain FP32 (reuse)
step check-reference make PYTHON="$PY" SUBMISSION=reference check FULL=1 STAGE=tensor SEED="$SEED" || status=1
cp results/reference/check.json "$OUT/check-reference-tensor.json" 2>/dev/null
step check-reference-fp32 make PYTHON="$PY" SUBMISSION=reference check FULL=1 STAGE=reuse PREC=float SEED="$SEED" || status=1
cp results/reference/check.json "$OUT/check-reference-reuse-float.json" 2>/dev/null
# 2. the stub (exit 0: not implemented is not a failure)
must check-stub make PYTHON="$PY" check STAGE=tensor SEED="$SEED"
cp results/student/check.json "$OUT/check-stub-tensor.json" 2>/dev/null
# 3. an FP16 kernel handed in as every variant (exit 1 expected: 3xtf32 fails)
step check-fp16-as-3xtf32 make PYTHON="$PY" SUBMISSION=tests/broken/wrong_values check FULL=1 STAGE=tensor SEED="$SEED"
cp results/wrong_values/check.json "$OUT/check-fp16-as-3xtf32.json" 2>/dev/null
# 4. the speed table: the stub's build times the reference's variants beside naive and the cuBLAS items
STUDENT=$(ls -d build/sm_*/sub-student-*/gemmlab | head -n1)
must bench-tensor "$STUDENT" bench --stage tensor --reference --shapes "$SHAPES" --config course.toml \
    --seed "$SEED" --json "$OUT/bench-tensor.json"
# the GPU unit tests of the tensor stage (bench plan with the cuBLAS items; stubs)
must gpu-unit-tensor "$(ls build/sm_*/sub-student-*/gpu_tests | head -n1)" -tc='*tensor*,*stubs*'

if [ "${TENSOR_SANITIZE:-1}" = 1 ] && command -v compute-sanitizer > /dev/null; then
    # memcheck on one small odd case per kernel (odd leading dimensions: the element-wise copies),
    # racecheck on the 3xTF32 pipeline (the make sanitize case: 67x45x37 with lda 40, ldb 48: the
    # 16-byte copies).
    REF_STAGES=$(ls -d build/sm_*/sub-reference-*/gemmlab-stages | head -n1)
    for run in fp16:float tf32:float 3xtf32:float 3xtf32:double; do
        must "memcheck-${run/:/-}" timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 "$REF_STAGES" run \
            --stage "tensor/${run%%:*}" --prec "${run##*:}" --shape 67x45x37:41,50,47
    done
    must racecheck-3xtf32 timeout 120 compute-sanitizer --tool racecheck --error-exitcode 1 "$REF_STAGES" run \
        --stage tensor/3xtf32 --prec float
fi

if [ "${TENSOR_TUNE:-1}" = 1 ]; then
    wait "$LADDER_PID"
    if grep -q "^exit 0" "$OUT/ladder-build.log"; then
        step ladder timeout 120 env LADDER_BIN=build/ladder-tensor/ladder-tune reference/tuning/run.sh --tune \
            --stages tensor --prec f32 --shapes 4096x4096x4096,8192x8192x8192
        cp build/ladder-tensor/resources-tune.txt "$OUT/" 2>/dev/null
    else
        echo "== ladder: the build failed (ladder-build.log)"
    fi
fi

echo
"$PY" tests/gpu_session/gpu_tensor_summary.py --bench "$OUT/bench-tensor.json" --check "$OUT/check-reference-tensor.json" \
    --check-fp32 "$OUT/check-reference-reuse-float.json" --stub "$OUT/check-stub-tensor.json" \
    --broken "$OUT/check-fp16-as-3xtf32.json" --broken-log "$OUT/check-fp16-as-3xtf32.log" \
    > "$OUT/tensor-summary.md"
summary=$?
[ $summary -eq 0 ] || status=1
echo "== speed table (bench-tensor.log)"
sed -n '/^float  4096x4096x4096/,/^$/p;/^double  4096x4096x4096/,/^$/p' "$OUT/bench-tensor.log"
[ -f "$OUT/ladder.log" ] && { echo "== ladder (tensor candidates)"; grep -E "^\| tensor|^\| cuBLAS|FAILED" "$OUT/ladder.log"; }
echo
cat "$OUT/tensor-summary.md"
echo
echo "gpu_tensor.sh: $( [ $status -eq 0 ] && echo "all done criteria met" || echo "something failed (see above)" ) in $(( $(date +%s) - T0 )) s; logs in $OUT"
exit $status
