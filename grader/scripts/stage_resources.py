#!/usr/bin/env python3
"""stage_resources.py — `make resources`: what each kernel of each stage file costs the GPU, read from
the compiler, with no GPU and no cuobjdump: registers per thread, static shared memory per block,
local memory (the stack frame) and the bytes spilled to it.

  make resources [STAGE=tiled[/16]] [SUBMISSION=reference] [ARCH=sm_80]

Each stage file is compiled again for the build's architecture, with the build's flags, into a
temporary folder (as a cubin: no host code, nothing linked), with ptxas's report turned on
(-Xptxas -v); its lines

  ptxas info    : Compiling entry function '_ZN7gemmlab...' for 'sm_90a'
  ptxas info    : Function properties for _ZN7gemmlab...
      0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  ptxas info    : Used 32 registers, used 1 barriers, 4096 bytes smem, 400 bytes cmem[0]

become one row per kernel (names demangled with c++filt). Dynamic shared memory is not in the file:
it is chosen at launch (make profile reports it). A kernel that spills is marked: its spilled values
go through local memory (L1, then L2 and DRAM) instead of registers. STAGE=<stage>/<variant> (tiled/16,
tensor/fp16) keeps the kernels of that variant: those whose template arguments name it
(tiled_kernel<float, 16>) and those that name no variant of the stage (kernel_names.of_variant; make sass
does the same).

  stage_resources.py --nvcc /usr/local/cuda/bin/nvcc --flags "<nvcc flags>" student/tiled.cu ...
"""
from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kernel_names  # noqa: E402  (demangled and short names; the kernels of a variant)
import registry  # noqa: E402  (the stages' variants)

ENTRY = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")
PROPERTIES = re.compile(r"Function properties for (\S+)")
FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
USED = re.compile(r"Used (\d+) registers")
SMEM = re.compile(r"(\d+) bytes smem")
LMEM = re.compile(r"(\d+) bytes lmem")
BARRIERS = re.compile(r"used (\d+) barriers")


def parse_ptxas(text):
    """ptxas -v output -> [{"name" (mangled), "arch", "registers", "smem_bytes", "stack_bytes",
    "spill_stores", "spill_loads", "barriers"}], one per kernel (entry function), in ptxas's order."""
    kernels, by_name, props_of = [], {}, None
    for line in text.splitlines():
        m = ENTRY.search(line)
        if m:
            k = {"name": m.group(1), "arch": m.group(2), "registers": None, "smem_bytes": 0, "stack_bytes": 0,
                 "spill_stores": 0, "spill_loads": 0, "barriers": 0}
            kernels.append(k)
            by_name[k["name"]] = k
            props_of = k
            continue
        m = PROPERTIES.search(line)
        if m:
            props_of = by_name.get(m.group(1))  # a device function's properties are not a kernel's
            continue
        m = FRAME.search(line)
        if m and props_of is not None:
            props_of["stack_bytes"], props_of["spill_stores"], props_of["spill_loads"] = map(int, m.groups())
            continue
        m = USED.search(line)
        if m and kernels:
            k = kernels[-1]
            k["registers"] = int(m.group(1))
            if SMEM.search(line):
                k["smem_bytes"] = int(SMEM.search(line).group(1))
            if LMEM.search(line):  # older ptxas reports local memory here
                k["stack_bytes"] = max(k["stack_bytes"], int(LMEM.search(line).group(1)))
            if BARRIERS.search(line):
                k["barriers"] = int(BARRIERS.search(line).group(1))
    return kernels


def compile_file(nvcc, flags, source, workdir):
    """(kernels, error text or None) of one stage file."""
    cubin = Path(workdir) / (Path(source).stem + ".cubin")
    cmd = [*shlex.split(nvcc), *shlex.split(flags), "-Xptxas", "-v", "-cubin", "-o", str(cubin), str(source)]
    proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    text = proc.stdout + proc.stderr
    if proc.returncode != 0:
        errors = [l for l in text.splitlines() if "error" in l.lower()] or text.strip().splitlines()
        return [], "\n".join(errors[:5]) or f"nvcc exited with status {proc.returncode}"
    return parse_ptxas(text), None


def fmt_bytes(n):
    return f"{n:,} B"


def table(rows):
    header = ["kernel", "registers", "smem (static)", "local (stack)", "spill stores", "spill loads"]
    cells = [header] + [[r["short"], str(r["registers"] if r["registers"] is not None else "?"),
                         fmt_bytes(r["smem_bytes"]), fmt_bytes(r["stack_bytes"]), fmt_bytes(r["spill_stores"]),
                         fmt_bytes(r["spill_loads"])] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(header))]
    out = []
    for j, c in enumerate(cells):
        line = "  " + c[0].ljust(widths[0]) + "".join("  " + c[i].rjust(widths[i]) for i in range(1, len(c)))
        if j and (rows[j - 1]["spill_stores"] or rows[j - 1]["spill_loads"]):
            line += "   <- spills to local memory"
        out.append(line.rstrip() if j else line)
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0].split("— ", 1)[-1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[1:]))
    ap.add_argument("--nvcc", default="nvcc", help="the compiler (the Makefile's NVCC)")
    ap.add_argument("--flags", default="", help="nvcc flags: the build's stage-file flags and architecture")
    ap.add_argument("--jobs", type=int, default=2, help="files compiled at once")
    ap.add_argument("--stage", default="", help="<stage>/<variant>: only the kernels of that variant (make's STAGE=)")
    ap.add_argument("sources", nargs="+", help="stage files (.cu)")
    args = ap.parse_args(argv)
    problem = registry.variant_problem(args.stage)
    if problem:
        print(f"resources: error: {problem} (STAGE={args.stage})", file=sys.stderr)
        return 2
    missing = [s for s in args.sources if not Path(s).is_file()]
    if missing:
        print(f"resources: error: no such stage file: {', '.join(missing)}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="gemmlab-resources-") as work:
        print(f"resources: compiling {len(args.sources)} stage file(s) with ptxas -v (no GPU needed) ...", flush=True)
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = list(pool.map(lambda s: compile_file(args.nvcc, args.flags, s, work), args.sources))
    status = 0
    mangled = [k["name"] for kernels, _ in results for k in kernels]
    names = dict(zip(mangled, kernel_names.demangle(mangled)))
    labels = registry.precision_labels()
    stage, _, variant = args.stage.partition("/")
    variants = registry.variants(stage)
    for source, (kernels, error) in zip(args.sources, results):
        print()
        if error:
            status = 1
            print(f"{source}: does not compile:\n" + "\n".join("  " + l for l in error.splitlines()))
            continue
        if not kernels:
            print(f"{source}: no kernels")
            continue
        for k in kernels:
            k["full"] = names.get(k["name"], k["name"])
            k["short"] = kernel_names.short_name(k["full"], labels)
        arch = kernels[0]["arch"]
        kernels = [k for k in kernels if kernel_names.of_variant(k["short"], variant, variants)]
        if not kernels:
            print(f"{source}: no kernels of {args.stage}")
            continue
        print(f"{source} ({arch}" + (f"; the kernels of {args.stage}" if "/" in args.stage else "") + ")")
        print(table(kernels))
    print("\nregisters per thread and static shared memory per block limit how many blocks fit on an SM "
          "(occupancy); local memory is per thread. Dynamic shared memory is set at launch: make profile shows it.")
    return status


if __name__ == "__main__":
    sys.exit(main())
