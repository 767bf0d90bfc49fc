"""Every architecture builds: `make arch-matrix` (grader/scripts/arch_matrix.py).

The CUDA 13 part compiles every .cu file of the kit — the grader, its tests, the reference, the stubs
— for every architecture of ARCHS_CUDA13 (no GPU needed; ccache makes a run on unchanged sources
quick); a failure names the file, the architecture and the first compiler error. The test
submissions' own files (tests/broken, tests/gallery) compile for every architecture where they hold
architecture-dependent device code, else for the tests' architecture only, shared with the gallery's
and the broken submissions' builds through the object cache. The CUDA 12 part builds and links the
grader for each architecture of ARCHS_CUDA12 with the toolkit `make setup-cuda12` installs, and is
skipped, with the reason shown, where that toolkit is not installed; it is a group of its own, so
that it runs beside the CUDA 13 part rather than after it.
"""
import re
import subprocess
import sys

import pytest

from support.paths import ROOT

sys.path.insert(0, str(ROOT / "grader" / "scripts"))
import arch_matrix as matrix_script  # noqa: E402

def arch_matrix(part):
    # At a low priority: from an empty ccache the matrix is the suite's largest compile, and the tests
    # beside it (builds the GPU tests wait for, sweeps on a test cluster with time limits) go first; it
    # takes the cores they leave idle. tests/run_tests.py gives the suite one worker more than cores.
    proc = subprocess.run(["nice", "-n", "10", "make", "--no-print-directory", "arch-matrix", f"MATRIX_PART={part}"], cwd=ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    print(proc.stdout)
    return proc


def failures(output):
    return "\n".join(line for line in output.splitlines() if line.startswith("FAIL")) or output[-3000:]


def test_every_file_compiles_for_every_cuda13_arch():
    proc = arch_matrix("cuda13")
    assert proc.returncode == 0, f"some file does not compile for some architecture:\n{failures(proc.stdout)}"


@pytest.mark.xdist_group("arch-matrix-cuda12")
def test_cuda12_builds_and_links_for_its_archs():
    proc = arch_matrix("cuda12")
    skipped = [line for line in proc.stdout.splitlines() if line.startswith("arch-matrix: SKIPPED ")]
    if proc.returncode == 0 and skipped:
        pytest.skip(skipped[0].split("SKIPPED ", 1)[1])
    assert proc.returncode == 0, f"a CUDA 12 build failed:\n{failures(proc.stdout)}"


def test_the_grader_and_its_tests_keep_device_code_only_in_cu_files():
    """A .cu file of the grader or its GPU tests holds device code (a kernel, a device function, a
    launch); host code that calls CUDA is a .cpp: nvcc would parse it once per architecture in the
    matrix (a front end each), and g++ once."""
    device = re.compile(r"__global__|__device__|<<<")
    host_only = [str(p.relative_to(ROOT)) for d in ("grader/src", "tests/gpu") for p in sorted((ROOT / d).rglob("*.cu"))
                 if not device.search(p.read_text())]
    assert not host_only, f"no device code: make these .cpp files: {host_only}"


def test_what_compiles_for_every_arch_and_what_for_one():
    """Every file of the kit, for every architecture; a test submission's file for one architecture
    only where the rule finds no architecture-dependent device code — the rule that finds the kit's
    own (the tensor stages, the reference's __CUDA_ARCH__ paths); stubs copied into a test submission
    are the stubs."""
    units = {u.source: u for u in matrix_script.units()}
    tests = ("tests/broken/", "tests/gallery/", "tests/profile_padding/")
    kit = [s for s in units if not s.startswith(tests)]
    assert {"grader/src/judge/device_ops.cu", "grader/src/runner/runner.cu", "reference/reuse.cu", "student/tiled.cu",
            "reference/tuning/ladder.cu"} <= set(kit)
    assert all(units[s].archs == "all" for s in kit), [s for s in kit if units[s].archs != "all"]
    dependent = {p: matrix_script.arch_dependent(ROOT / p) for p in
                 ("reference/tensor.cu", "reference/reuse.cu", "reference/pitched.cu", "student/tensor.cu")}
    assert all(dependent.values()), dependent  # what the rule sees in the kit's own kernels
    assert not matrix_script.arch_dependent(ROOT / "student/tiled.cu")
    # host assembly (a raw syscall, a symbol's asm name) is not device code; inline PTX and half
    # arithmetic are
    assert units["tests/gallery/forges_clock_memory/unrolled.cu"].archs == "one"
    assert units["tests/gallery/defines_malloc/unrolled.cu"].archs == "one"
    assert units["tests/gallery/computes_next_call/unrolled.cu"].archs == "all"
    assert units["tests/gallery/lower_precision/unrolled.cu"].archs == "all"
    # copies of a stub (host_side_work's naive.cu, pitched.cu, tensor.cu) and links to one are the stub
    assert not [s for s in units if s.startswith("tests/gallery/host_side_work/")
                and s.rsplit("/", 1)[1] in ("naive.cu", "pitched.cu", "tensor.cu")]
    assert "tests/gallery/sleeps/tiled.cu" not in units
    assert units["tests/profile_padding/tiled.cu"].archs == "one"  # the bank-conflict experiment's plain kernel
    for s, u in units.items():
        if s.startswith(tests):
            assert u.archs == ("all" if matrix_script.arch_dependent(ROOT / s) else "one"), s


def test_an_object_of_the_build_counts_only_while_up_to_date(tmp_path):
    """The build's own object stands for ARCH while it is newer than its source and every header its
    dependency file names (nvcc -MMD's "<obj> : <deps>", -MP's empty rules after it), as make judges."""
    import os
    src, header, obj = tmp_path / "k.cu", tmp_path / "k.h", tmp_path / "k.cu.o"
    for p in (src, header, obj):
        p.write_text("x")
    obj.with_suffix(".d").write_text(f"{obj} : {src} \\\n    {header}\n\n{header}:\n")
    for p, t in ((src, 100), (header, 100), (obj, 200)):
        os.utime(p, (t, t))
    assert matrix_script.up_to_date(obj, src)
    os.utime(header, (300, 300))
    assert not matrix_script.up_to_date(obj, src)  # a header changed since
    os.utime(header, (100, 100))
    obj.with_suffix(".d").unlink()
    assert not matrix_script.up_to_date(obj, src)  # no dependency file: make would compile


def _nvcc():
    import shutil
    from pathlib import Path
    found = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not Path(found).exists():
        pytest.skip("needs nvcc (the CUDA toolkit)")
    return found


def _matrix(tmp_path, archs):
    import argparse
    args = argparse.Namespace(nvcc=_nvcc(), nvcc_opts="-std=c++17 -O3", arch=[f"{a}=-arch={a}" for a in archs],
                              out=str(tmp_path / "out"), jobs=1, only="", one_arch="", stage_compile="",
                              object_cache="", device_cache="", stage_api="", built="")
    return matrix_script.Matrix(args)


KERNEL = "__global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }\n"


def test_architectures_of_the_same_device_source_share_a_front_end_and_each_gets_its_own_ptxas(tmp_path):
    """sm_80, sm_86 and sm_89 preprocess to the same device source for a plain kernel: one front end
    (compute_80) and a ptxas for each (code=[sm_80,sm_86,sm_89]); a kernel that tells sm_86 from sm_80
    gets a front end for each of the two, sm_89 sharing sm_86's; sm_90a keeps its own target."""
    archs = ["sm_80", "sm_86", "sm_89"]
    m = _matrix(tmp_path, archs)
    plain = tmp_path / "plain.cu"
    plain.write_text(KERNEL)
    unit = matrix_script.Unit(str(plain), "", [])
    words, shared = m.front_ends(unit, m.archs)
    assert words == ["-gencode", "arch=compute_80,code=[sm_80,sm_86,sm_89]"], words
    assert shared == [("sm_86", "sm_80"), ("sm_89", "sm_80")]
    hopper = m.front_ends(unit, [*m.archs, ("sm_90", matrix_script.gencode("-gencode arch=compute_90a,code=sm_90a"))])[0]
    assert hopper == ["-gencode", "arch=compute_90a,code=sm_90a", "-gencode", "arch=compute_80,code=[sm_80,sm_86,sm_89]"], hopper
    ok, out, _ = m.compile(unit, m.archs, share=True)
    assert ok, out

    tells = tmp_path / "tells.cu"
    tells.write_text("#if __CUDA_ARCH__ >= 860\n__device__ int sm86_on;\n#endif\n" + KERNEL)
    words, shared = m.front_ends(matrix_script.Unit(str(tells), "", []), m.archs)
    assert words == ["-gencode", "arch=compute_80,code=[sm_80]", "-gencode", "arch=compute_86,code=[sm_86,sm_89]"], words
    assert shared == [("sm_89", "sm_86")]

    # a pragma is the source too (only the preprocessor's line markers are left out of the comparison)
    unrolls = tmp_path / "unrolls.cu"
    unrolls.write_text("__global__ void k(float *x) {\n#if __CUDA_ARCH__ >= 890\n#pragma unroll 4\n#else\n"
                       "#pragma unroll 8\n#endif\n  for (int i = 0; i < 64; ++i) x[i] += 1.0f;\n}\n")
    words, shared = m.front_ends(matrix_script.Unit(str(unrolls), "", []), m.archs)
    assert words == ["-gencode", "arch=compute_80,code=[sm_80,sm_86]", "-gencode", "arch=compute_89,code=[sm_89]"], words


def test_a_file_that_breaks_on_one_architecture_is_named_for_that_one_with_its_own_front_end(tmp_path):
    """Where the shared compile fails, each architecture is compiled again with its own front end: the
    failure names sm_86 alone, and the architectures around it are fine."""
    m = _matrix(tmp_path, ["sm_80", "sm_86", "sm_89"])
    bad = tmp_path / "bad.cu"
    bad.write_text("#if __CUDA_ARCH__ == 860\n#error this kernel is not ready for sm_86\n#endif\n" + KERNEL)
    broken, _ = m.check(matrix_script.Unit(str(bad), "", []))
    assert [a for a, _ in broken] == ["sm_86"], broken
    assert "not ready for sm_86" in broken[0][1], broken


def test_a_file_the_build_compiled_gets_only_its_device_code_for_the_other_architectures(tmp_path):
    """Where the build's object for ARCH is up to date, the host side (the same for every architecture)
    is the build's: the others get nvcc -fatbin, kept in the device cache (ccache keeps no -fatbin), and
    a device-side error is still named for its architecture."""
    import argparse
    import os
    src = tmp_path / "k.cu"
    src.write_text("#if __CUDA_ARCH__ == 860\n#error not ready for sm_86\n#endif\n" + KERNEL)
    built = tmp_path / "built" / "k.o"
    built.parent.mkdir()
    built.write_text("the build's object")
    built.with_suffix(".d").write_text(f"{built} : {src}\n")
    os.utime(src, (100, 100))
    args = argparse.Namespace(nvcc=_nvcc(), nvcc_opts="-std=c++17 -O3", arch=[f"{a}=-arch={a}" for a in ("sm_80", "sm_86", "sm_89")],
                              out=str(tmp_path / "out"), jobs=1, only="", one_arch="sm_89", stage_compile="",
                              object_cache=str(tmp_path / "objects"), device_cache=str(tmp_path / "device"),
                              stage_api="", built=f"{src}={built}")
    m = matrix_script.Matrix(args)
    broken, note = m.check(matrix_script.Unit(str(src), "", []))
    assert [a for a, _ in broken] == ["sm_86"], broken
    assert "sm_89: compiled by the build" in note
    src.write_text(KERNEL)
    os.utime(src, (100, 100))
    broken, note = m.check(matrix_script.Unit(str(src), "", []))
    assert broken == [], broken
    made = sorted(p.name for p in tmp_path.glob("k.cu.*") if p.suffix in (".o", ".fatbin"))
    assert made and all(n.endswith(".fatbin") for n in made), made  # no host object compiled
    assert list((tmp_path / "device").rglob("*.o")), "the device code was not kept in the device cache"
    assert not list((tmp_path / "objects").rglob("*.o")), "the device code went to the stage object cache"
    stored = next((tmp_path / "device").rglob("*.o"))
    os.utime(stored, (0, 0))  # stored long ago and not stored again since: removed after a run
    matrix_script.prune(str(tmp_path / "device"), matrix_script.DEVICE_CACHE_DAYS)
    assert not stored.exists()
