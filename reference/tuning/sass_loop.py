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
  (docs/reference-kernels.md): a screen that costs no GPU time, not a substitute for timing.
"""
import argparse
import re
import shutil
import subprocess
import sys
from collections import Counter

INSTR = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")


def kernels(listing):
    """{mangled name: [(address, instruction text)]} of a cuobjdump -sass listing."""
    out, name = {}, None
    for line in listing.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            name = m.group(1)
            out[name] = []
            continue
        m = INSTR.search(line)
        if name and m:
            out[name].append((int(m.group(1), 16), m.group(2)))
    return out


def opcode(text):
    return re.sub(r"^@!?U?P\w+\s+", "", text).split()[0]


def loops(instrs, min_instructions=256):
    """Each span from a backward branch's target through the branch, of at least that many instructions."""
    index = {a: i for i, (a, _) in enumerate(instrs)}
    out = []
    for i, (a, t) in enumerate(instrs):
        m = re.search(r"\bBRA\b.*?0x([0-9a-f]+)", t)
        if m and int(m.group(1), 16) < a and int(m.group(1), 16) in index:
            body = instrs[index[int(m.group(1), 16)]: i + 1]
            if len(body) >= min_instructions:
                out.append([t for _, t in body])
    return out


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
    elif shutil.which("cuobjdump") is None:
        sys.exit("sass_loop.py: cuobjdump not found (it comes with the CUDA toolkit); "
                 "or pipe a listing in: cuobjdump -sass FILE | sass_loop.py - REGEX")
    else:
        listing = subprocess.run(["cuobjdump", "-sass", args.binary], check=True, capture_output=True, text=True).stdout
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
