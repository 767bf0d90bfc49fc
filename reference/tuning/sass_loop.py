#!/usr/bin/env python3
"""reference/tuning/sass_loop.py — what the compiler made of a kernel's main loop (instructor tool).

    reference/tuning/sass_loop.py build/ladder-ref/obj-tune/reuse.o 'reuse_ffma_kernel.*Li102E'
    cuobjdump -sass x.cubin | reference/tuning/sass_loop.py - 'reuse_ffma_kernel'

Disassembles the object or cubin with `cuobjdump -sass` (or reads a listing from standard input
with '-'), takes the first kernel whose mangled name matches the regular expression, finds its
loops of at least 256 instructions (spans from a backward branch's target through the branch;
a kernel with edge and interior paths has one of each) and prints for each:

- the instruction mix of the loop;
- register reads per FFMA: source registers not served by the operand reuse cache, modelled as
  one entry per operand slot and register bank (bank = register number mod 2), filled by `.reuse`;
- how soon each LDS.128 is consumed: the distance, in instructions, from the load to the first
  instruction that reads one of its registers. Loads used sooner than 40 instructions later make
  the warps wait on shared memory (short scoreboard). On the H100, float reuse variants with 30 or
  more such loads per slab were all slow; few of them did not make a variant fast
  (docs/performance-log/2026-11-24.md): a screen that costs no GPU time, not a substitute for timing.
"""
import argparse
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "grader" / "scripts"))
import stage_sass  # noqa: E402  (the reading of a listing that make sass and the build use)


def kernels(listing):
    """{mangled name: [(address, instruction text)]} of a cuobjdump -sass listing."""
    return {f.name: f.instrs for f in stage_sass.parse_listing(listing)}


opcode = stage_sass.opcode


def loops(instrs, min_instructions=256):
    """Each span from a backward branch's target through the branch, of at least that many instructions."""
    fn = stage_sass.Function("", "", list(instrs))
    return [[t for _, t in lp.instrs] for lp in stage_sass.loops(fn) if len(lp.instrs) >= min_instructions]


def operands(text):
    return [x.strip() for x in re.sub(r"^(@!?U?P\w+\s+)?\S+\s*", "", text).split(",")]


def register_reads(loop):
    """Source-register reads per FFMA that the reuse cache (slot × bank) does not serve."""
    cache = [{}, {}, {}]
    reads = ffmas = 0
    for t in loop:
        if opcode(t) != "FFMA":
            continue
        ffmas += 1
        for slot, x in enumerate(operands(t)[1:4]):
            m = re.match(r"-?R(\d+)(\.reuse)?", x)
            if not m:
                continue
            reg, bank = int(m.group(1)), int(m.group(1)) % 2
            if cache[slot].get(bank) != reg:
                reads += 1
            if m.group(2):
                cache[slot][bank] = reg
            else:
                cache[slot].pop(bank, None)
    return reads / ffmas if ffmas else 0.0


def lds_distances(loop):
    """For each LDS.128 of the loop: instructions until the first one that reads its registers."""
    pending, dist = {}, []
    for k, t in enumerate(loop):
        ops = operands(t)
        srcs = ops[1:] if not opcode(t).startswith(("ST", "LDGSTS")) else ops
        for reg in {int(r) for s in srcs for r in re.findall(r"\bR(\d+)", s)}:
            if reg in pending:
                start = pending[reg]
                dist.append(k - start)
                pending = {r: s for r, s in pending.items() if s != start}
        if opcode(t).startswith("LDS.128"):
            first = int(re.match(r"R(\d+)", ops[0]).group(1))
            for r in range(first, first + 4):
                pending[r] = k
    return sorted(dist)


def report(loop):
    mix = Counter(opcode(t) for t in loop)
    dist = lds_distances(loop)
    lines = [f"loop: {len(loop)} instructions; " + ", ".join(f"{op} {n}" for op, n in mix.most_common(8)),
             f"register reads per FFMA (reuse cache per slot and bank): {register_reads(loop):.3f}"]
    if dist:
        lines.append(f"LDS.128 to first use, instructions: min {dist[0]}, 10th percentile {dist[len(dist) // 10]}, "
                     f"median {dist[len(dist) // 2]}; used within 40: {sum(d < 40 for d in dist)} of {len(dist)}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary", help="object file or cubin, or - for a cuobjdump -sass listing on stdin")
    ap.add_argument("kernel", help="regular expression matched against the mangled kernel names")
    args = ap.parse_args(argv)
    if args.binary == "-":
        listing = sys.stdin.read()
    elif stage_sass.find_cuobjdump() is None:
        sys.exit("sass_loop.py: cuobjdump not found (it comes with the CUDA toolkit; make setup installs it "
                 "where the toolkit lacks it); or pipe a listing in: cuobjdump -sass FILE | sass_loop.py - REGEX")
    else:
        listing = stage_sass.disassemble(args.binary, stage_sass.find_cuobjdump())
    found = [n for n in kernels(listing) if re.search(args.kernel, n)]
    if not found:
        sys.exit(f"sass_loop.py: no kernel matches {args.kernel!r}")
    print(found[0])
    found_loops = loops(kernels(listing)[found[0]])
    if not found_loops:
        sys.exit("sass_loop.py: no loop of 256 instructions or more in it")
    for loop in found_loops:
        print(report(loop))


if __name__ == "__main__":
    main()
