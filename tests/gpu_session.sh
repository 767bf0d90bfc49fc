#!/usr/bin/env bash
# gpu_session.sh — every GPU-only verification of GEMM Lab, in phases that each fit one session on
# a lent GPU machine (no package installs there: carry .deps, see docs/developing.md, "Developing on
# a lent GPU"). Logs go to $OUT (or build/gpu-session) so they come back from the machine.
#
#   bash tests/gpu_session.sh boundary  build; GPU unit tests; grade the reference (timed) and the
#                                       stubs; the trust-boundary gallery entries (GALLERY= to change)
#   bash tests/gpu_session.sh core      build; GPU unit tests; grade the reference and the stubs;
#                                       timed full check; 3 benches at 4096^3; broken kernels
#   bash tests/gpu_session.sh report    the report's measurements of the reference (fixture source)
#   bash tests/gpu_session.sh gallery   the gallery of hostile submissions (GALLERY=a,b for a subset)
#   bash tests/gpu_session.sh extras    local-path class grading (cluster) and the handout on a GPU
#   bash tests/gpu_session.sh cluster   the cluster's batch scripts on the GPUs with a stand-in Slurm:
#                                       a mixed class, throughput, two jobs at once on two GPUs
#                                       (tests/gpu_session/cluster_gpu_jobs.sh; CLUSTER_JOBS_ARGS=class|pair)
#   bash tests/gpu_session.sh grading   the grade/bench tests (tests/py/submissions/test_grade_gpu.py)
#   bash tests/gpu_session.sh tune      the reference ladder with every tuning candidate (TUNE_ARGS=...)
#   bash tests/gpu_session.sh sandbox   which files CUDA touches under the child sandbox (fs_trace.so)
#   bash tests/gpu_session.sh tensor    the tensor stage: tests/gpu_session/gpu_tensor.sh (its own logs and summary)
#   bash tests/gpu_session.sh host-noise  one GPU, a loaded host: the reference graded alone and beside
#                                       copy loops on the other cores (tests/gpu_session/gpu_host_noise.py)
#   bash tests/gpu_session.sh suite     `make test` itself, timed: from an empty build, then again
#   bash tests/gpu_session.sh archs     for each ARCHS (default sm_75 sm_80 sm_86 sm_89 sm_90): build, grade
#                                       the reference and check the stubs on this GPU (older archs run
#                                       as PTX the driver compiles); CUDA_HOMES adds toolkits
#                                       (tests/gpu_session/gpu_archs.py: the table)
#   bash tests/gpu_session.sh rehearsal the dry run of a term (tests/semester_rehearsal.py) graded on this
#                                       GPU: real grades for the class, the gradebook and the decision log
#   bash tests/gpu_session.sh judge     build; GPU unit tests; grade the reference JUDGE_GRADES times
#                                       (default 1) and the stubs; the judge's clock against the
#                                       runners' events (tests/gpu_session/judge_agreement.py)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-build/gpu-session}
mkdir -p "$OUT"
# .deps on the paths (headers, pytest-xdist, ccache), where nothing can be installed
[ -d .deps ] && source tests/gpu_session/deps_env.sh
export NO_COLOR=1 PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
JOBS=${JOBS:-16}
status=0

step() {  # step NAME COMMAND...: runs, logs to $OUT/NAME.log, prints wall time and exit status
    local name=$1; shift
    local t0=$(date +%s.%N)
    echo "== $name: $*"
    "$@" > "$OUT/$name.log" 2>&1
    local rc=$?
    local t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
    echo "   -> exit $rc in ${t}s (log: $name.log)"
    [ $rc -eq 0 ] || status=1
    return $rc
}

case "${1:-core}" in
judge-clock)
    # The judge's clock against the runners' own events over JUDGE_GRADES grades of the reference.
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv | tee "$OUT/gpu.txt"
    step build make -j"$JOBS" PYTHON="$PY" test-build
    step build-reference make -j"$JOBS" PYTHON="$PY" SUBMISSION=reference
    step gpu-unit "$(ls build/sm_*/sub-student-*/gpu_tests | head -n1)"
    grep -E "test cases" "$OUT/gpu-unit.log"
    mkdir -p build/judge-clock
    files=()
    for i in $(seq 1 "${JUDGE_GRADES:-3}"); do
        step "grade-$i" make PYTHON="$PY" SUBMISSION=reference grade
        cp results/reference/results.json "build/judge-clock/grade-$i.json" && files+=("build/judge-clock/grade-$i.json")
    done
    "$PY" tests/gpu_session/judge_agreement.py "${files[@]}" > "$OUT/agreement.txt"
    cp "$OUT"/*.log build/judge-clock/ 2>/dev/null
    tar -czf "$OUT/judge-clock.tar.gz" -C build judge-clock && rm -f "$OUT"/*.log
    for f in "${files[@]}"; do "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1], "score", d["score"]["total"], "of", d["score"]["max"], "in", round(d["seconds"], 1), "s")' "$f"; done
    cat "$OUT"/agreement.txt
    ;;
judge-gallery)
    # The judge's gallery entries and the ones whose verdicts it changed, then grades for the clock.
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv | tee "$OUT/gpu.txt"
    step build make -j"$JOBS" PYTHON="$PY" test-build
    step build-reference make -j"$JOBS" PYTHON="$PY" SUBMISSION=reference
    step gpu-unit "$(ls build/sm_*/sub-student-*/gpu_tests | head -n1)"
    GALLERY=${GALLERY:-well_behaved,reads_answer,takes_report_fd,forges_keyed_reports,patches_timing,signals_done_early,writes_after_return,fills_c_first,computes_next_call,persisting_l2,hidden_cublas,side_stream,forges_clock_memory,cached_answer,host_side_work,gpu_memory_hog,raw_syscalls}
    step gallery-build "$PY" tests/gallery/run_gallery.py --phase build --jobs "$JOBS" --only "$GALLERY"
    step gallery-run "$PY" tests/gallery/run_gallery.py --phase run --only "$GALLERY" ${GALLERY_ARGS:-}
    cp build/gallery/results/summary.md "$OUT/gallery-summary.md" 2>/dev/null
    step grade-reference make PYTHON="$PY" SUBMISSION=reference grade
    cp results/reference/results.json "$OUT/grade-reference.json" 2>/dev/null
    "$PY" tests/gpu_session/judge_agreement.py "$OUT/grade-reference.json" > "$OUT/agreement.txt"
    tail -n 30 "$OUT/gallery-run.log"; grep -E "test cases" "$OUT/gpu-unit.log"; grep -E "largest" "$OUT/agreement.txt"
    ;;
judge)
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv | tee "$OUT/gpu.txt"
    step build make -j"$JOBS" PYTHON="$PY" test-build
    step build-reference make -j"$JOBS" PYTHON="$PY" SUBMISSION=reference
    step gpu-unit "$(ls build/sm_*/sub-student-*/gpu_tests | head -n1)" -s
    grades=()
    for i in $(seq 1 "${JUDGE_GRADES:-1}"); do
        step "grade-reference-$i" make PYTHON="$PY" SUBMISSION=reference grade
        cp results/reference/results.json "$OUT/grade-reference-$i.json" 2>/dev/null && grades+=("$OUT/grade-reference-$i.json")
    done
    step grade-student make PYTHON="$PY" grade
    cp results/student/results.json "$OUT/grade-student.json" 2>/dev/null
    [ ${#grades[@]} -gt 0 ] && "$PY" tests/gpu_session/judge_agreement.py "${grades[@]}" | tee "$OUT/agreement.txt"
    grep -E "test cases|Status" "$OUT/gpu-unit.log"; grep -E "total:|seconds|error" "$OUT"/grade-*.log | tail -n 8
    ;;
rehearsal)
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv | tee "$OUT/gpu.txt"
    step rehearsal "$PY" tests/semester_rehearsal.py --scheduler local --work /tmp/gemmlab-rehearsal-gpu --keep
    tail -n 40 "$OUT/rehearsal.log"
    cp /tmp/gemmlab-rehearsal-gpu/sweeps/final/gradebook.csv "$OUT/rehearsal-gradebook.csv" 2>/dev/null
    cp /tmp/gemmlab-rehearsal-gpu/sweeps/.course/decisions.jsonl "$OUT/rehearsal-decisions.jsonl" 2>/dev/null
    ;;
suite)
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv | tee "$OUT/gpu.txt"
    echo "cores: $(nproc); ccache: $(command -v ccache || echo none); xdist: $("$PY" -c 'import xdist; print(xdist.__version__)' 2>&1 | tail -n1)"
    step suite-first make PYTHON="$PY" test
    cp build/pytest-timeline.tsv "$OUT/suite-first-timeline.tsv" 2>/dev/null
    grep -E "^== |^[0-9.]+s (call|setup)|passed|failed|^critical path|^worker-seconds" "$OUT/suite-first.log" | tail -n 47
    if [ -z "${SUITE_ONCE:-}" ]; then
        step suite-again make PYTHON="$PY" test
        tail -n 1 "$OUT/suite-again.log"
    fi
    ;;
core)
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv | tee "$OUT/gpu.txt"
    step build make -j"$JOBS" PYTHON="$PY" test-build
    step build-reference make -j"$JOBS" PYTHON="$PY" SUBMISSION=reference
    step gpu-unit "$(ls build/sm_*/sub-student-*/gpu_tests | head -n1)"
    step check-full-reference make PYTHON="$PY" SUBMISSION=reference check FULL=1
    step grade-reference make PYTHON="$PY" SUBMISSION=reference grade
    cp results/reference/results.json "$OUT/grade-reference.json" 2>/dev/null
    step grade-student make PYTHON="$PY" grade
    cp results/student/results.json "$OUT/grade-student.json" 2>/dev/null
    for i in 1 2 3; do
        step "bench-$i" make PYTHON="$PY" SUBMISSION=reference bench STAGE=reuse SHAPES=4096x4096x4096
        cp results/reference/bench.json "$OUT/bench-$i.json" 2>/dev/null
    done
    step pytest-gpu "$PY" -m pytest -q -rs tests/py/grader/test_grader_cli.py tests/py/submissions/test_broken_gpu.py ${CORE_PYTEST:-}
    tail -n 3 "$OUT"/*.log
    ;;
boundary)
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv | tee "$OUT/gpu.txt"
    step build make -j"$JOBS" PYTHON="$PY" test-build
    step build-reference make -j"$JOBS" PYTHON="$PY" SUBMISSION=reference
    step gpu-unit "$(ls build/sm_*/sub-student-*/gpu_tests | head -n1)"
    step grade-reference make PYTHON="$PY" SUBMISSION=reference grade
    cp results/reference/results.json "$OUT/grade-reference.json" 2>/dev/null
    step grade-student make PYTHON="$PY" grade
    cp results/student/results.json "$OUT/grade-student.json" 2>/dev/null
    step agreement "$PY" tests/gpu_session/judge_agreement.py results/reference/results.json
    GALLERY=${GALLERY:-well_behaved,calls_grader,library_gemm_alias,defines_clock,defines_cuda_event,defines_nvml,defines_malloc,defines_curand,weak_definition,raw_syscalls,static_constructor,side_stream}
    step gallery-build "$PY" tests/gallery/run_gallery.py --phase build --jobs "$JOBS" --only "$GALLERY"
    step gallery-run "$PY" tests/gallery/run_gallery.py --phase run --only "$GALLERY" ${GALLERY_ARGS:-}
    cp build/gallery/results/summary.md "$OUT/gallery-summary.md" 2>/dev/null
    tail -n 3 "$OUT"/*.log
    ;;
report)
    step report make PYTHON="$PY" SUBMISSION=reference BUILD=build/fixture report
    cp report/build/results/*.json "$OUT/" 2>/dev/null
    ;;
gallery)
    [ -n "${GALLERY_BUILT:-}" ] || step gallery-build "$PY" tests/gallery/run_gallery.py --phase build --jobs "$JOBS" ${GALLERY:+--only $GALLERY}
    step gallery-run "$PY" tests/gallery/run_gallery.py --phase run ${GALLERY:+--only $GALLERY} ${GALLERY_ARGS:-}
    cp build/gallery/results/summary.md "$OUT/gallery-summary${GALLERY_PART:-}.md" 2>/dev/null
    tar -czf "$OUT/gallery-results${GALLERY_PART:-}.tar.gz" -C build/gallery results 2>/dev/null
    grep -E "^FAILED|passed|failed" "$OUT/gallery-run.log" | tail -n 15
    ;;
extras)
    step cluster-demo bash tests/gpu_session/cluster_gpu_demo.sh
    # The GPU tests of test_handout.py (their names do not contain "gpu"; they skip without one).
    step handout-gpu "$PY" -m pytest -q -rs -k "handout_checks_stubs or reference_sources" tests/py/handout/test_handout.py
    ;;
cluster)
    nvidia-smi --query-gpu=index,name,uuid,clocks.sm,clocks.max.sm,driver_version --format=csv | tee "$OUT/gpu.txt"
    step cluster-jobs env OUT="$OUT/cluster-jobs" bash tests/gpu_session/cluster_gpu_jobs.sh ${CLUSTER_JOBS_ARGS:-all}
    tail -n 40 "$OUT/cluster-jobs.log"
    ;;
grading)
    step build make -j"$JOBS" PYTHON="$PY" test-build
    GEMMLAB_GRADER=$ROOT/$(ls -d build/sm_*/sub-student-*/gemmlab | head -n1) \
        step pytest-grading "$PY" -m pytest -q -rs tests/py/submissions/test_grade_gpu.py
    ;;
tune)
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv | tee "$OUT/gpu.txt"
    step ladder reference/tuning/run.sh --tune ${TUNE_ARGS:-}
    cp build/ladder-ref/resources-tune.txt "$OUT/" 2>/dev/null
    ;;
sandbox)
    { uname -a; ls -l /dev/nvidia* /dev/dri 2>&1; grep -E 'nvidia|/dev|/proc' /proc/self/mountinfo;
      cat /sys/kernel/security/lsm 2>&1; } > "$OUT/machine.txt"
    step build make -j"$JOBS" PYTHON="$PY" grader
    step fs-trace make fs-trace
    rm -f /dev/shm/gemmlab-fs-trace.*
    grader=$(ls -d build/sm_*/sub-student-*/gemmlab | head -n1)
    GEMMLAB_SANDBOX=on GEMMLAB_SANDBOX_READ=$ROOT/build/tools GEMMLAB_SANDBOX_WRITE=/dev/shm \
        LD_PRELOAD=$ROOT/build/tools/fs_trace.so step sandbox-on "$grader" check --stage naive --prec float
    GEMMLAB_SANDBOX=on step sandbox-plain "$grader" check --stage naive
    for f in /dev/shm/gemmlab-fs-trace.*; do echo "### $f"; cat "$f"; done > "$OUT/fs-trace.txt" 2>&1
    rm -f /dev/shm/gemmlab-fs-trace.*
    ;;
tensor)
    OUT="$OUT" bash tests/gpu_session/gpu_tensor.sh || status=1
    ;;
archs)
    # Each arch's build graded on this GPU: the driver JIT-compiles an older arch's PTX, so that
    # arch's code paths really run here. Builds go in parallel; grades one at a time.
    nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv | tee "$OUT/gpu.txt"
    ARCHS=${ARCHS:-sm_75 sm_80 sm_86 sm_89 sm_90}
    toolkits=${CUDA_HOMES:-$(dirname "$(dirname "$(command -v nvcc)")")}
    dirs=()
    for cuda in $toolkits; do
        ver=$("$cuda/bin/nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')
        for arch in $ARCHS; do
            d=build/archs/$arch-cuda$ver
            mkdir -p "$d" && dirs+=("$d")
            echo "arch=$arch toolkit=$ver" > "$d/build.txt"
            ( t0=$(date +%s); make -j"$JOBS" PYTHON="$PY" CUDA_HOME="$cuda" ARCH=$arch SUBMISSION=reference grader \
                  > "$d/build.log" 2>&1 && make -j"$JOBS" PYTHON="$PY" CUDA_HOME="$cuda" ARCH=$arch SUBMISSION=student \
                  grader >> "$d/build.log" 2>&1; echo "rc=$? build_s=$(( $(date +%s) - t0 ))" >> "$d/build.txt" ) &
        done
    done
    wait
    for d in "${dirs[@]}"; do
        arch=$(sed -n 's/.*arch=\([^ ]*\).*/\1/p' "$d/build.txt" | head -n1)
        ver=$(sed -n 's/.*toolkit=\([^ ]*\).*/\1/p' "$d/build.txt" | head -n1)
        cuda=$(for c in $toolkits; do "$c/bin/nvcc" --version | grep -q "release $ver" && echo "$c"; done | head -n1)
        grep -q "rc=0" "$d/build.txt" || { echo "== $d: build failed (tail of build.log)"; tail -5 "$d/build.log"; status=1; continue; }
        step "grade-$(basename "$d")" make PYTHON="$PY" CUDA_HOME="$cuda" ARCH="$arch" SUBMISSION=reference \
            RESULTS="$d/reference" grade
        cp "$OUT/grade-$(basename "$d").log" "$d/" 2>/dev/null
        step "stubs-$(basename "$d")" make PYTHON="$PY" CUDA_HOME="$cuda" ARCH="$arch" SUBMISSION=student \
            RESULTS="$d/student" check
        cp "$OUT/stubs-$(basename "$d").log" "$d/" 2>/dev/null
    done
    "$PY" tests/gpu_session/gpu_archs.py "${dirs[@]}" | tee "$OUT/archs.md"
    tar -czf "$OUT/archs.tar.gz" build/archs && rm -f "$OUT"/grade-*.log "$OUT"/stubs-*.log
    ;;
host-noise)
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv | tee "$OUT/gpu.txt"
    step build-reference make -j"$JOBS" PYTHON="$PY" SUBMISSION=reference grader
    step host-noise "$PY" tests/gpu_session/gpu_host_noise.py --grader "$(ls -d build/sm_*/sub-reference-*/gemmlab | head -n1)" \
        --out "$OUT/host-noise"
    sed -n '/^| against/,$p' "$OUT/host-noise.log"
    ;;
*)
    echo "usage: $0 boundary|core|report|gallery|extras|cluster|grading|tune|sandbox|tensor|host-noise|suite|judge|archs" >&2
    exit 2
    ;;
esac
exit $status
