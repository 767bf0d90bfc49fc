"""A CUDA 12 build that carries its own CUDA libraries (make CUDA_LIBS=pruned; tests/gpu_session/gpu_cuda12.sh takes
such builds to a GPU machine that has CUDA 13 only). No GPU needed.

- the build for sm_80 with CUDA 12.5, its cuBLAS/cuRAND cut to sm_90, loads nothing of a toolkit: every
  binary needs only libcublas-pruned.so and the CUDA 12 runtime from its own cuda-libs/ (run path
  $ORIGIN/../cuda-libs) and the C/C++ runtime, never libcublas.so*/libcurand.so*/libcudart of another
  release (tests/gpu_session/cuda_bundle_check.py), and the pruned library holds sm_90 machine code;
- the check fails a library that needs the toolkit's libcurand through an absolute run path;
- the grades' summary (tests/gpu_session/gpu_archs.py --expect) holds a reference grade to full marks and the
  registry's unsupported runs, the stubs to not_implemented and 0 points, and both to the CUDA 12
  libraries having been the ones loaded.

The build needs CUDA 12 with its static archives (`make setup-cuda12 CUDA12_STATIC=1`, which .ci/run
does); without them the build test is skipped, with the reason shown. From ccache its compiles are hits
(make arch-matrix builds the same objects); cutting and linking the libraries takes about 30 s.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.paths import ROOT

CUDA12 = Path(os.environ.get("CUDA12_HOME") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
              / "gemmlab/cuda-12.5")
STATIC = ["libcublas_static.a", "libcublasLt_static.a", "libcurand_static.a"]
CHECK = ROOT / "tests/gpu_session/cuda_bundle_check.py"


def cuda12_missing():
    if not (CUDA12 / "bin/nvcc").exists():
        return f"CUDA 12 is not installed in {CUDA12} (make setup-cuda12 CUDA12_STATIC=1)"
    missing = [a for a in STATIC if not (CUDA12 / "lib64" / a).exists()]
    return f"{', '.join(missing)} not in {CUDA12}/lib64 (make setup-cuda12 CUDA12_STATIC=1)" if missing else ""


@pytest.fixture(scope="module")
def pruned_build():
    why = cuda12_missing()
    if why:
        pytest.skip(why)
    proc = subprocess.run(["make", "--no-print-directory", f"-j{os.cpu_count() or 2}", f"CUDA_HOME={CUDA12}", "ARCH=sm_80",
                           "CUDA_LIBS=pruned", "CUDA_LIBS_ARCHS=sm_90", "SUBMISSION=student", "grader"], cwd=ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace", timeout=3600)
    assert proc.returncode == 0, proc.stdout[-4000:]
    builds = sorted(ROOT.glob("build/sm_80-cuda12*-pruned-sm_90"))
    assert builds, "no build/sm_80-cuda12.*-pruned-sm_90"
    return builds[-1]


def check(*args):
    return subprocess.run([sys.executable, str(CHECK), *map(str, args)], capture_output=True, text=True)


def test_the_pruned_cuda12_build_loads_only_what_it_carries(pruned_build):
    out = check("--cuda-major", 12, "--gpu", "sm_90", pruned_build)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr
    assert "every check passed" in out.stdout
    # what the check saw: the three binaries and the submission's libraries, each on the build's own libraries
    for name in ("gemmlab", "gemmlab-baselines", "gemmlab-stages", "libgemmlab-submission-tiled.so"):
        assert f"/{name}: ldd finds every library" in out.stdout, name
    assert "libcublas-pruned.so: machine code for sm_90" in out.stdout
    assert "gemmlab: device code for sm_80" in out.stdout
    # the runner of submission code does not load cuBLAS, not even the build's own
    stages = next(line for line in out.stdout.splitlines() if "/gemmlab-stages: needs" in line)
    assert "libcublas" not in stages, stages


def test_the_check_refuses_a_toolkit_library_behind_an_absolute_run_path(pruned_build, tmp_path):
    build = tmp_path / "sm_80-cuda12.5-pruned-sm_90"
    (build / "cuda-libs").mkdir(parents=True)
    for lib in (pruned_build / "cuda-libs").glob("lib*.so*"):
        (build / "cuda-libs" / lib.name).symlink_to(lib.resolve())
    (build / "sub-bad").mkdir()
    src = tmp_path / "bad.c"
    src.write_text("int bad(void) { return 0; }\n")
    lib64 = (CUDA12 / "lib64").resolve()
    subprocess.run(["cc", "-shared", "-fPIC", "-o", build / "sub-bad/libbad.so", src, f"-L{lib64}", "-Wl,--no-as-needed",
                    "-lcurand", f"-Wl,-rpath,{lib64}"], check=True)
    out = check("--cuda-major", 12, "--gpu", "sm_90", build)
    assert out.returncode == 1, out.stdout
    assert "FAIL sub-bad/libbad.so: needs libcurand.so.10" in out.stdout and "not carried: libcurand.so.10" in out.stdout
    assert f"FAIL sub-bad/libbad.so: run path ['{lib64}']" in out.stdout
    assert "(a CUDA toolkit's directory)" in out.stdout


# ---- the summary of the grades on the GPU machine (no GPU: results made up as a grade writes them) ----

LISTING = {"stages": [
    {"name": "naive", "variant_info": [{"label": "", "min_arch": {"float": 0, "double": 0}}]},
    {"name": "reuse", "variant_info": [{"label": "", "min_arch": {"float": 0, "double": 0}}]},
    {"name": "tensor", "variant_info": [{"label": "fp16", "min_arch": {"float": 75, "double": 80}},
                                        {"label": "tf32", "min_arch": {"float": 80, "double": 80}}]},
]}


def grade(build_arch, submission):
    runs = [(s, v, p) for s, v in (("naive", ""), ("reuse", ""), ("tensor", "fp16"), ("tensor", "tf32"))
            for p in ("float", "double")]
    arch = int(build_arch[3:])
    need = {("tensor", "fp16", "float"): 75}

    def disposition(s, v, p):
        if s == "tensor" and need.get((s, v, p), 80) > arch:
            return "unsupported"
        return "passed" if submission == "reference" or s == "naive" else "not_implemented"

    results = [{"stage": s, "variant": v, "precision": p, "disposition": disposition(s, v, p), "problem": ""}
               for s, v, p in runs]
    points = 10 if submission == "reference" else 0
    rows = [{"stage": s, "precision": p, "correctness": points if s != "naive" else 0, "correctness_max": 10 if s != "naive" else 0,
             "performance": 0, "performance_max": 0, "note": ""} for s in ("naive", "reuse") for p in ("float", "double")]
    return {"status": "graded", "results": results, "seconds": 90.0,
            "score": {"total": sum(r["correctness"] for r in rows), "max": 40, "stages": rows},
            "targets": {"build_arch": build_arch, "gpu_arch": "sm_90"},
            "environment": {"cuda_runtime": "12.5", "cublas": "12.5.2", "curand": "10.3.6"}}


def arch_dir(tmp_path, arch, edit=None):
    d = tmp_path / arch
    for sub in ("reference", "student"):
        (d / sub).mkdir(parents=True)
        res = grade(arch, sub)
        if edit:
            edit(sub, res)
        (d / sub / "results.json").write_text(json.dumps(res))
    (d / "build.txt").write_text(f"arch={arch} toolkit=12.5\n")
    (d / "listing.json").write_text(json.dumps(LISTING))
    return d


def summary(*dirs):
    return subprocess.run([sys.executable, str(ROOT / "tests/gpu_session/gpu_archs.py"), "--expect", *map(str, dirs)],
                          capture_output=True, text=True)


def test_the_summary_accepts_what_the_cuda12_grades_must_show(tmp_path):
    out = summary(arch_dir(tmp_path, "sm_70"), arch_dir(tmp_path, "sm_80"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "| sm_70 (build sm_70) | 12.5 (runtime 12.5, cublas 12.5.2, curand 10.3.6) |" in out.stdout
    assert "tensor/fp16 float" in out.stdout.splitlines()[2]  # unsupported on sm_70
    assert out.stdout.count("as expected") == 2


def test_the_summary_names_what_a_cuda12_grade_got_wrong(tmp_path):
    def wrong(sub, res):
        if sub == "reference":
            res["environment"]["cublas"] = "13.1.0"           # the machine's own cuBLAS was loaded
            res["results"][2]["disposition"] = "failed"       # reuse float
            res["results"][4]["disposition"] = "passed"       # tensor fp16 float ran on an sm_70 build
            res["score"]["stages"][2]["correctness"] = 0
        else:
            res["score"]["total"] = 5
    out = summary(arch_dir(tmp_path, "sm_70", wrong))
    assert out.returncode == 1, out.stdout
    text = out.stdout
    assert "reference reuse float: failed, expected passed" in text
    assert "reference tensor/fp16 float: passed, expected unsupported" in text
    assert "reference reuse float: 0 of 10 points" in text
    assert "cublas 13.1.0 loaded, expected 12.x" in text
    assert "student: 5 points, expected 0" in text
