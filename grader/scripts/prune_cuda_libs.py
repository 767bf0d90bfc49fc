#!/usr/bin/env python3
"""prune_cuda_libs.py — the CUDA libraries of a build that carries its own (`make CUDA_LIBS=pruned`).

The grader calls a handful of cuBLAS and cuRAND functions; the toolkit's shared libraries hold code for
every GPU generation (CUDA 12.5: libcublasLt.so.12 alone is 447 MB). This makes, in --out:

  libcublas-pruned.so   cuBLAS, cuBLASLt and cuRAND in one shared library, linked from the toolkit's
                        static archives after `nvprune` cut their device code to the GPUs of --archs; it
                        exports exactly the cublas*/curand* functions the given objects call (nothing
                        else is reachable), and needs only the CUDA runtime and the C/C++ runtime
  libcudart.so.<N>      a copy of the toolkit's CUDA runtime (the grader and the submission's library
                        share one runtime: it stays a shared library)

The Makefile links the grader against them with the run path $ORIGIN/../cuda-libs, so a build directory
runs wherever it is copied, on the driver alone (tests/gpu_session/gpu_cuda12.sh takes CUDA 12 builds to a machine
that has CUDA 13 only). The library's name starts with "libcublas": the sandbox keeps it from a runner of
submission code like any GEMM library (grader/src/judge/sandbox.cpp).

Each GPU of --archs gets the archives' machine code for exactly that architecture, or else the newest of
the same major version below it (binary compatible: sm_86 code runs on sm_89); an architecture no archive
can serve is an error. The pruned archives are intermediate and removed.

  prune_cuda_libs.py --cuda-home DIR --cuda-lib DIR --archs "sm_90" --out DIR OBJECT...
"""
import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

ARCHIVES = ["libcublas_static.a", "libcublasLt_static.a", "libcurand_static.a"]
LIBRARY = "libcublas-pruned.so"
API = re.compile(r"^(cublas|curand)\w*$")


def run(cmd, **kw):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, errors="replace", **kw)
    if p.returncode != 0:
        sys.exit(f"prune_cuda_libs: {' '.join(map(str, cmd[:3]))} ... failed:\n{(p.stdout + p.stderr)[-3000:]}")
    return p.stdout + p.stderr


def arch_number(arch):
    m = re.fullmatch(r"sm_(\d+)a?", arch)
    if not m:
        sys.exit(f"prune_cuda_libs: '{arch}' is not an architecture like sm_90")
    return int(m.group(1))


def machine_code(cuobjdump, archive):
    """The architectures an archive holds machine code (SASS) for, as numbers."""
    return {int(n) for n in re.findall(r"\.sm_(\d+)\.cubin", run([cuobjdump, "--list-elf", archive]))}


def codes_for(wanted, have, archive):
    """For each wanted architecture, the code that serves it: its own, or the newest of its major below it."""
    keep = set()
    for w in wanted:
        usable = [h for h in have if h // 10 == w // 10 and h <= w]
        if not usable:
            sys.exit(f"prune_cuda_libs: {archive} has no machine code that runs on sm_{w} "
                     f"(it has {', '.join(f'sm_{h}' for h in sorted(have))})")
        keep.add(max(usable))
    return sorted(keep)


def api_calls(objects):
    """The cublas*/curand* functions the objects (or archives) leave undefined."""
    names = set()
    for line in run(["nm", "-u", "--format=posix", *objects]).splitlines():
        name = line.split()[0] if line.split() else ""
        if API.match(name):
            names.add(name)
    if not names:
        sys.exit("prune_cuda_libs: the objects call no cuBLAS or cuRAND function: nothing to link")
    return sorted(names)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cuda-home", required=True, help="the toolkit (bin/nvprune, bin/cuobjdump)")
    ap.add_argument("--cuda-lib", required=True, help="its library directory (the static archives, libcudart.so)")
    ap.add_argument("--archs", required=True, help="the GPUs the library must run on, e.g. 'sm_90' or 'sm_70 sm_90'")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--cxx", default="g++")
    ap.add_argument("objects", nargs="+", help="the objects and archives whose cuBLAS/cuRAND calls the library serves")
    args = ap.parse_args()

    home, lib = Path(args.cuda_home), Path(args.cuda_lib)
    nvprune, cuobjdump = home / "bin/nvprune", home / "bin/cuobjdump"
    missing = [a for a in ARCHIVES + ["libculibos.a"] if not (lib / a).exists()]
    if missing:
        sys.exit(f"prune_cuda_libs: {', '.join(missing)} not in {lib}: CUDA_LIBS=pruned links the toolkit's static "
                 "archives. For the CUDA 12 of `make setup-cuda12`, run `make setup-cuda12 CUDA12_STATIC=1` once; "
                 "NVIDIA's own toolkit ships them (the cuda-libraries-dev packages).")
    for tool in (nvprune, cuobjdump):
        if not tool.exists():
            sys.exit(f"prune_cuda_libs: {tool} is missing: the toolkit's nvprune and cuobjdump are needed")
    wanted = sorted({arch_number(a) for a in args.archs.split()})
    if not wanted:
        sys.exit("prune_cuda_libs: no architecture given (CUDA_LIBS_ARCHS)")
    out = args.out
    out.mkdir(parents=True, exist_ok=True)

    pruned = out / "pruned"
    pruned.mkdir(exist_ok=True)
    kept = {}
    for archive in ARCHIVES:
        codes = codes_for(wanted, machine_code(cuobjdump, lib / archive), archive)
        kept[archive] = codes
        gencodes = [f"-gencode=arch=compute_{c},code=sm_{c}" for c in codes]
        run([nvprune, *gencodes, lib / archive, "-o", pruned / archive])

    calls = api_calls(args.objects)
    exports = out / "exports.map"
    exports.write_text("{\n  global:\n" + "".join(f"    {c};\n" for c in calls) + "  local: *;\n};\n")
    target = out / LIBRARY
    run([args.cxx, "-shared", "-o", target, f"-Wl,-soname,{LIBRARY}", f"-Wl,--version-script={exports}",
         "-Wl,-z,defs", "-Wl,-s", "-Wl,-rpath,$ORIGIN", *[f"-Wl,-u,{c}" for c in calls],
         f"-L{pruned}", "-lcublas_static", "-lcublasLt_static", "-lcurand_static",
         f"-L{lib}", "-lculibos", "-lcudart", "-ldl", "-lpthread", "-lrt"])
    shutil.rmtree(pruned)

    # The CUDA runtime the library and the grader share, under its soname.
    soname = re.search(r"\(SONAME\).*\[(.+)\]", run(["readelf", "-d", lib / "libcudart.so"]))
    if not soname:
        sys.exit(f"prune_cuda_libs: {lib / 'libcudart.so'} names no SONAME")
    cudart = out / soname.group(1)
    cudart.unlink(missing_ok=True)
    shutil.copy2((lib / soname.group(1)).resolve(), cudart)

    # What came out: machine code for every wanted GPU, and nothing undefined but the runtimes'.
    have = machine_code(cuobjdump, target)
    for archive, codes in kept.items():
        lost = [c for c in codes if c not in have]
        if lost:
            sys.exit(f"prune_cuda_libs: {target} lost the sm_{lost[0]} code of {archive}")
    mib = target.stat().st_size / 2**20
    print(f"prune_cuda_libs: {target} ({mib:.0f} MiB; machine code for "
          f"{', '.join(f'sm_{c}' for c in sorted(have))}; {len(calls)} functions) and {cudart.name}")


if __name__ == "__main__":
    main()
