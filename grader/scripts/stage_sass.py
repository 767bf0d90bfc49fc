#!/usr/bin/env python3
"""stage_sass.py — `make sass`: the machine code (SASS) of a stage's kernels, with what the lessons look
for counted and marked; and the reading of that code the build's tensor-core check uses.

  make sass STAGE=reuse [PREC=float] [SUBMISSION=reference] [ARCH=sm_80]
  make sass STAGE=tiled/16 PREC=double     one variant: the kernels whose template arguments name it

No GPU is needed. It disassembles the stage's object as the Makefile builds it for the build's ARCH
(`cuobjdump -sass`), and prints per kernel, with the names you wrote (fp16/tf32/3xtf32, not
`(gemmlab::InputPrecision)0`):

  global memory   LDG/STG by width: LDG.128 is a 16-byte vector load (float4, double2); the listing
                  spells it LDG.E.128 (and LDG.E.128.CONSTANT for read-only data) on sm_70 and later
  shared memory   LDS/STS by width (LDS.128: four floats or two doubles in one instruction), LDSM
                  (ldmatrix), LDGSTS (cp.async: global to shared without registers)
  arithmetic      FFMA (float), DFMA (double), HFMA2
  tensor cores    HMMA (FP16/BF16/TF32), IMMA (integers), DMMA (FP64), HGMMA (Hopper's wgmma), ...
  local memory    LDL/STL: spilled registers or an array the compiler could not keep in registers
  loops           every loop (a backward branch and the code it jumps back over) with its FMAs and
                  loads: the main loop is the one with the most FMAs; "FFMA per shared load" is what
                  register blocking raises

and writes the annotated listing of each kernel (every instruction, the marks in the margin) to
results/<submission>/sass/<stage>-<arch>.sass.

The same reading serves the build (scan_symbols.py): tensor_core_kernels() finds the kernels of an
object that run tensor-core instructions other than FP64 (DMMA), in the SASS of every architecture
the object holds and, as a second signal, in its PTX (mma, wmma, wgmma, tcgen05).

cuobjdump comes with every CUDA toolkit (<toolkit>/bin); a toolkit installed without it gets NVIDIA's
wheels of cuobjdump and nvdisasm from `make setup` (grader/scripts/requirements-disassembler.txt).
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kernel_names  # noqa: E402  (demangled and short names; the kernels of a variant, make resources' too)
import registry  # noqa: E402  (the stages' variants; the tensor stage's input precisions)

# ---- finding the disassembler --------------------------------------------------------------------


def find_cuobjdump(explicit=None, cuda_home=None):
    """The cuobjdump to run: the one named, the toolkit's (<cuda_home>/bin), the one on PATH, or NVIDIA's
    wheel installed by `make setup` (nvidia/cu*/bin in this Python's site-packages); None without one."""
    if explicit:
        return explicit if Path(explicit).is_file() else shutil.which(explicit)
    if cuda_home and (Path(cuda_home) / "bin" / "cuobjdump").is_file():
        return str(Path(cuda_home) / "bin" / "cuobjdump")
    if shutil.which("cuobjdump"):
        return shutil.which("cuobjdump")
    for entry in sys.path:
        found = sorted(glob.glob(os.path.join(entry or ".", "nvidia", "cu*", "bin", "cuobjdump")), reverse=True)
        if found:
            return found[0]
    return None


def disassemble(obj, cuobjdump, what="-sass"):
    """cuobjdump's listing of an object (what: -sass or -ptx); "" when the object holds no device code
    of that kind. nvdisasm is looked for beside cuobjdump too (NVIDIA's wheels put it there)."""
    env = dict(os.environ)
    beside = Path(cuobjdump).parent
    env["NVDISASM_PATH"] = os.pathsep.join(p for p in (env.get("NVDISASM_PATH", ""), str(beside)) if p)
    env["PATH"] = os.pathsep.join((env.get("PATH", ""), str(beside)))
    proc = subprocess.run([cuobjdump, what, str(obj)], capture_output=True, text=True, errors="replace", env=env)
    if proc.returncode != 0:
        if "does not contain device code" in proc.stdout + proc.stderr:
            return ""
        raise RuntimeError(f"{Path(cuobjdump).name} {what} {obj}: " +
                           (proc.stderr.strip() or proc.stdout.strip() or f"exit status {proc.returncode}"))
    return proc.stdout


# ---- reading a SASS listing ------------------------------------------------------------------------

INSTR = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
PREDICATE = re.compile(r"^@!?U?P(?:T|\d+)\s+")


@dataclass
class Function:
    name: str                      # mangled, as cuobjdump prints it
    arch: str                      # "sm_90a"
    instrs: list = field(default_factory=list)  # [(address, text)]


def parse_listing(listing):
    """[Function] of a `cuobjdump -sass` listing, in its order (one per kernel and architecture)."""
    out, arch, current = [], "", None
    for line in listing.splitlines():
        m = re.search(r"^\s*arch = (sm_\w+)", line)
        if m:
            arch = m.group(1)
            continue
        m = re.search(r"Function : (\S+)", line)
        if m:
            current = Function(m.group(1), arch)
            out.append(current)
            continue
        m = INSTR.search(line)
        if current is not None and m:
            current.instrs.append((int(m.group(1), 16), m.group(2)))
    return out


def opcode(text):
    """"@!P0 LDG.E.128.CONSTANT R4, desc[UR6][R2.64]" -> "LDG.E.128.CONSTANT"."""
    parts = PREDICATE.sub("", text.strip()).split()
    return parts[0] if parts else ""


def base(op):
    return op.split(".")[0]


WIDTH = re.compile(r"\.(128|64|32|U8|S8|U16|S16)(?=\.|$)")
WIDTH_BITS = {"128": 128, "64": 64, "32": 32, "U8": 8, "S8": 8, "U16": 16, "S16": 16}
MEMORY = {"LDG": "global load", "STG": "global store", "LD": "generic load", "ST": "generic store",
          "LDS": "shared load", "STS": "shared store", "LDL": "local load", "STL": "local store",
          "LDGSTS": "global to shared copy"}
# (HFMA2 is left out: the compiler uses `HFMA2.MMA R, -RZ, RZ, ...` to move constants.)
ARITH = ("FFMA", "FFMA2", "DFMA", "FMUL", "FADD", "DMUL", "DADD")
TENSOR = re.compile(r"^(?:UTC)?[A-Z]*MMA$")  # HMMA IMMA BMMA DMMA QMMA OMMA HGMMA IGMMA QGMMA UTCHMMA ...
# What each tensor-core instruction family multiplies (the PTX instructions behind them: mma.sync,
# wmma, wgmma on sm_90a, tcgen05 on sm_100).
TENSOR_KIND = {"HMMA": "FP16/BF16/TF32", "HGMMA": "FP16/BF16/TF32", "UTCHMMA": "FP16/BF16/TF32",
               "IMMA": "INT8/INT4", "IGMMA": "INT8", "UTCIMMA": "INT8", "BMMA": "binary", "BGMMA": "binary",
               "QMMA": "FP8", "QGMMA": "FP8", "UTCQMMA": "FP8", "OMMA": "FP4", "UTCOMMA": "FP4",
               "DMMA": "FP64"}
FP64_TENSOR = {"DMMA"}


def width_bits(op):
    """The bits each thread moves: LDS.128 -> 128, LDG.E.64 -> 64, LDS.U8 -> 8, LDG.E -> 32."""
    m = WIDTH.search(op[len(base(op)):])
    return WIDTH_BITS[m.group(1)] if m else 32


def memory_label(op):
    """"LDG.E.128.CONSTANT" -> "LDG.128"; "LDS.U" -> "LDS"; "LDSM.16.M88.4" -> "LDSM"."""
    b = base(op)
    if b not in MEMORY:
        return b
    w = width_bits(op)
    return b if w == 32 else f"{b}.{w}"


def is_tensor(op):
    return bool(TENSOR.match(base(op)))


def branch_target(text, labels=None):
    """The address a BRA jumps to, or None (not a branch, or an indirect one)."""
    op = opcode(text)
    if base(op) != "BRA":
        return None
    m = re.search(r"\b0x([0-9a-f]+)\b", text[text.find(op) + len(op):])
    if m:
        return int(m.group(1), 16)
    m = re.search(r"`\((\.L_\w+)\)", text)
    return (labels or {}).get(m.group(1)) if m else None


@dataclass
class Loop:
    start: int   # address of the first instruction (the backward branch's target)
    end: int     # address of the backward branch
    instrs: list
    innermost: bool = True


def loops(fn):
    """Every loop of a function: the span from a backward branch's target through the branch, outermost
    spans first; `innermost` is set on those that hold no other loop."""
    index = {a: i for i, (a, _) in enumerate(fn.instrs)}
    found = []
    for i, (a, t) in enumerate(fn.instrs):
        target = branch_target(t)
        if target is not None and target < a and target in index:  # (a BRA to itself pads the end)
            found.append(Loop(target, a, fn.instrs[index[target]: i + 1]))
    # one loop per span (a loop with several back edges has one span per edge: keep the widest)
    by_start = {}
    for lp in found:
        if lp.start not in by_start or lp.end > by_start[lp.start].end:
            by_start[lp.start] = lp
    spans = sorted(by_start.values(), key=lambda lp: (lp.start, -lp.end))
    for lp in spans:
        lp.innermost = not any(o is not lp and lp.start <= o.start and o.end <= lp.end for o in spans)
    return spans


def mix(instrs):
    """Counter of the instruction classes the lessons read: memory by width label, FMAs, tensor, ..."""
    c = Counter()
    for _a, t in instrs:
        op = opcode(t)
        b = base(op)
        if b in MEMORY or b in ("LDSM", "ATOMS", "ATOMG", "RED"):
            c[memory_label(op)] += 1
        elif b in ARITH or is_tensor(op) or b in ("BAR", "EXIT"):
            c[b] += 1
        c["instructions"] += 1
    return c


def fmas(c):
    return c["FFMA"] + c["DFMA"] + c["FFMA2"]


def global_loads(c):
    return sum(n for k, n in c.items() if base(k) in ("LDG", "LD"))


def shared_loads(c):
    return sum(n for k, n in c.items() if base(k) in ("LDS", "LDSM"))


@dataclass
class KernelReport:
    name: str            # mangled
    full: str            # demangled
    short: str           # as the student wrote it
    arch: str
    counts: Counter
    loops: list
    tensor: dict         # {opcode: count} of tensor-core instructions (DMMA included)

    @property
    def main_loop(self):
        """The loop with the most FMAs (tensor-core instructions counted too), innermost preferred."""
        best = None
        for lp in self.loops:
            c = mix(lp.instrs)
            key = (fmas(c) + sum(n for k, n in c.items() if TENSOR.match(k)), lp.innermost, len(lp.instrs))
            if key[0] and (best is None or key > best[0]):
                best = (key, lp)
        return best[1] if best else None

    @property
    def empty(self):
        """Nothing but set-up and EXIT: a stub's kernel whose body is not written."""
        c = self.counts
        return not any(base(k) in MEMORY or k in ARITH or TENSOR.match(k) for k in c if k != "instructions")


def kernel_reports(listing):
    """[KernelReport] of a listing, names demangled."""
    fns = parse_listing(listing)
    mangled = sorted({f.name for f in fns})
    names, labels = dict(zip(mangled, kernel_names.demangle(mangled))), registry.precision_labels()
    out = []
    for f in fns:
        full = names[f.name]
        counts = mix(f.instrs)
        tensor = {}
        for _a, t in f.instrs:
            op = opcode(t)
            if is_tensor(op):
                tensor[op] = tensor.get(op, 0) + 1
        out.append(KernelReport(f.name, full, kernel_names.short_name(full, labels), f.arch, counts, loops(f), tensor))
    return out


# ---- the tensor-core check of the build ----------------------------------------------------------

PTX_ENTRY = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)?\.(entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)")
PTX_TENSOR = re.compile(r"^\s*(?:@!?%\w+\s+)?((?:mma|wmma\.mma|wgmma\.mma_async|tcgen05\.mma)[\w.:]*)")


def ptx_tensor_instructions(ptx):
    """{entry or function name: {instruction: count}} of the tensor-core instructions of a PTX listing
    that multiply anything but FP64 (an all-f64 mma/wmma is DMMA)."""
    out, current = {}, None
    for line in ptx.splitlines():
        m = PTX_ENTRY.match(line)
        if m:
            current = m.group(2)
            continue
        m = PTX_TENSOR.match(line)
        if m and current:
            instr = m.group(1)
            types = re.findall(r"\.(f64|f32|f16|bf16|tf32|s8|u8|s4|u4|b1|e4m3|e5m2|e2m1|e3m2|e2m3)\b", instr)
            if types and all(t == "f64" for t in types):
                continue
            out.setdefault(current, {})
            out[current][instr] = out[current].get(instr, 0) + 1
    return out


def tensor_core_kernels(obj, cuobjdump):
    """The kernels (and device functions) of an object that run tensor-core instructions other than FP64
    (DMMA): [{"kernel" (mangled), "arch", "instructions": {opcode: count}, "signal": "sass"|"ptx"}], in
    the SASS of every architecture the object holds and in its PTX."""
    found = []
    for f in parse_listing(disassemble(obj, cuobjdump, "-sass")):
        ops = Counter(opcode(t) for _a, t in f.instrs)
        bad = {op: n for op, n in sorted(ops.items()) if is_tensor(op) and base(op) not in FP64_TENSOR}
        if bad:
            found.append({"kernel": f.name, "arch": f.arch, "instructions": bad, "signal": "sass"})
    seen = {k["kernel"] for k in found}
    ptx = disassemble(obj, cuobjdump, "-ptx")
    arch = (re.findall(r"^\s*\.target\s+(\w+)", ptx, flags=re.M) or [""])[0]
    for name, instrs in sorted(ptx_tensor_instructions(ptx).items()):
        if name not in seen:
            found.append({"kernel": name, "arch": arch.replace("sm_", "compute_"), "instructions": instrs,
                          "signal": "ptx"})
    return found


def describe_tensor_use(instructions):
    """{"HMMA.1684.F32.TF32": 48} -> "HMMA.1684.F32.TF32 ×48 (FP16/BF16/TF32)"."""
    parts = []
    for op, n in sorted(instructions.items(), key=lambda kv: -kv[1]):
        kind = TENSOR_KIND.get(base(op))
        parts.append(f"{op} ×{n}" + (f" ({kind})" if kind else ""))
    return ", ".join(parts)


# ---- make sass: the summary and the listing ------------------------------------------------------

def fmt_counts(c, keys):
    shown = [(k, c[k]) for k in keys if c.get(k)]
    return "  ".join(f"{k} ×{n:,}" for k, n in shown) if shown else "none"


def ordered(c, bases):
    """The width labels of c whose base is in bases, widest first."""
    keys = [k for k in c if k != "instructions" and base(k) in bases]
    return sorted(keys, key=lambda k: (bases.index(base(k)), -width_bits(k if "." in k else k + ".32")))


def loop_line(lp, where=True):
    c = mix(lp.instrs)
    loads = shared_loads(c)
    parts = ([f"{lp.start:#06x}-{lp.end:#06x}"] if where else []) + [f"{c['instructions']:,} instructions"]
    for k in ("FFMA", "FFMA2", "DFMA"):
        if c.get(k):
            parts.append(f"{k} ×{c[k]:,}")
    tensor = {k: n for k, n in c.items() if TENSOR.match(k)}
    parts += [f"{k} ×{n:,}" for k, n in sorted(tensor.items())]
    for k in ordered(c, ["LDS", "LDSM", "LDG", "LDGSTS"]):
        parts.append(f"{k} ×{c[k]:,}")
    if c.get("BAR"):
        parts.append(f"BAR ×{c['BAR']}")
    if fmas(c) and loads:
        parts.append(f"{fmas(c) / loads:.1f} FMA per shared load")
    elif fmas(c) and global_loads(c):
        parts.append(f"{fmas(c) / global_loads(c):.1f} FMA per global load")
    return "  ".join(parts)


def summary(k, source=""):
    """The lines a student reads for one kernel."""
    c = k.counts
    lines = [f"{k.short}   [{k.arch}, {c['instructions']:,} instructions]"]
    if k.empty:
        where = f" (TODO(student) in {source})" if source else ""
        lines.append(f"  no kernel work: set-up and EXIT only — the body is not written yet{where}")
        return lines
    rows = [
        ("global memory", fmt_counts(c, ordered(c, ["LDG", "STG", "LD", "ST", "ATOMG", "RED"]))),
        ("shared memory", fmt_counts(c, ordered(c, ["LDS", "LDSM", "STS", "LDGSTS", "ATOMS"]))),
        ("arithmetic", fmt_counts(c, [a for a in ARITH])),
        ("tensor cores", describe_tensor_use(k.tensor) if k.tensor else "none"),
        ("local memory", fmt_counts(c, ordered(c, ["LDL", "STL"])) + "   <- spills or a local array: see make resources"
         if any(base(x) in ("LDL", "STL") for x in c) else "none (no LDL/STL: nothing spilled)"),
        ("barriers", f"BAR ×{c['BAR']}" if c.get("BAR") else "none"),
    ]
    for label, text in rows:
        lines.append(f"  {label:<14} {text}")
    vec = [x for x in c if base(x) in ("LDG", "LDS", "STS", "STG", "LDGSTS") and width_bits(x) == 128]
    lines.append(f"  {'vector (16 B)':<14} " + (", ".join(f"{x} ×{c[x]:,}" for x in vec) if vec else
                                                 "none: every load and store moves 4 or 8 bytes a thread"))
    main = k.main_loop
    if not k.loops:
        lines.append(f"  {'loops':<14} none (straight-line code: every loop fully unrolled, or no loop)")
    # The loops that compute (FMAs or tensor-core instructions), at most SHOWN_LOOPS of them; the
    # others (copies, edge handling) are counted.
    working = [lp for lp in k.loops if lp is main or fmas(mix(lp.instrs)) or
               any(TENSOR.match(x) for x in mix(lp.instrs))]
    for lp in working[:SHOWN_LOOPS]:
        mark = "   <- main loop" if lp is main else ("" if lp.innermost else "   (holds another loop)")
        lines.append(f"  {'loop':<14} {loop_line(lp)}{mark}")
    rest = len(k.loops) - min(len(working), SHOWN_LOOPS)
    if rest > 0:
        lines.append(f"  {'':<14} and {rest} more loop(s)" +
                     (" without FMAs (copies, edges)" if len(working) <= SHOWN_LOOPS else "") +
                     ": the listing shows them all")
    return lines


SHOWN_LOOPS = 4


MARKS = (
    (lambda op: is_tensor(op) and base(op) not in FP64_TENSOR, "tensor core"),
    (lambda op: base(op) in FP64_TENSOR, "tensor core (FP64)"),
    (lambda op: base(op) in ("LDL", "STL"), "local memory: spill or local array"),
    (lambda op: base(op) in ("LDG", "LDS", "STS", "STG", "LDGSTS") and width_bits(op) == 128, "16-byte vector"),
    (lambda op: base(op) == "BAR", "barrier"),
)


def annotated(k, fn):
    """The listing of one kernel, with the marks in the margin and the loops bracketed."""
    starts = {lp.start: lp for lp in k.loops}
    ends = {lp.end: lp for lp in k.loops}
    out = [f"// {k.full}", f"// {k.name} ({k.arch})"]
    for a, t in fn.instrs:
        if a in starts:
            out.append(f"        // ---- loop {a:#06x}-{starts[a].end:#06x}: {loop_line(starts[a], where=False)}")
        op = opcode(t)
        notes = [text for test, text in MARKS if test(op)]
        line = f"  /*{a:04x}*/  {t} ;"
        if notes:
            line = f"{line:<72} <- {', '.join(notes)}"
        out.append(line)
        if a in ends:
            out.append(f"        // ---- back to {ends[a].start:#06x}")
    return "\n".join(out) + "\n"


def precision_of(k):
    """"float" or "double" when a kernel's parameters (else its template arguments, else its arithmetic)
    are of one of them only, else None (shown in either precision)."""
    full = k.full
    params = full[full.rfind("("):] if full.endswith(")") else ""
    for text in (params, k.short[k.short.find("<"):] if "<" in k.short else ""):
        has_f = re.search(r"\bfloat\b|\bfp16\b|\btf32\b|3xtf32", text)
        has_d = re.search(r"\bdouble\b|\bfp64\b", text)
        if has_f and not has_d:
            return "float"
        if has_d and not has_f:
            return "double"
    c = k.counts  # a configuration type (Cfg::Elem) hides it: the arithmetic says it
    single, double = c["FFMA"] + c["FFMA2"] + c["HMMA"] + c["HGMMA"], c["DFMA"] + c["DMMA"]
    return "float" if single and not double else "double" if double and not single else None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0].split("— ", 1)[-1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[1:]))
    ap.add_argument("--object", required=True, help="the stage's object as the build made it")
    ap.add_argument("--source", default="", help="the stage file (shown, and named in the messages)")
    ap.add_argument("--prec", choices=("float", "double"), help="only the kernels of this precision")
    ap.add_argument("--stage", default="", help="<stage>/<variant>: only the kernels of that variant (make's STAGE=)")
    ap.add_argument("--cuobjdump", default=None, help="the disassembler (default: the toolkit's, PATH's, or make setup's)")
    ap.add_argument("--cuda-home", default=None)
    ap.add_argument("--listing", help="write the annotated listing here")
    ap.add_argument("--json", help="write the counts here (for tests and scripts)")
    args = ap.parse_args(argv)
    obj, source = Path(args.object), args.source or args.object
    problem = registry.variant_problem(args.stage)
    if problem:
        print(f"sass: error: {problem} (STAGE={args.stage})", file=sys.stderr)
        return 2
    if not obj.is_file():
        failed = Path(f"{obj}.failed")
        if failed.is_file():
            verdict = json.loads(failed.read_text())
            print(f"sass: {source} does not compile, so it has no machine code: "
                  f"{verdict.get('first_error', '')}", file=sys.stderr)
        else:
            print(f"sass: {obj} is not built", file=sys.stderr)
        return 1
    tool = find_cuobjdump(args.cuobjdump, args.cuda_home)
    if not tool:
        print("sass: cuobjdump not found: it comes with the CUDA toolkit (<toolkit>/bin/cuobjdump, with nvdisasm "
              "beside it); `make setup` installs NVIDIA's own copy where the toolkit lacks it. CUOBJDUMP=<path> "
              "names one.", file=sys.stderr)
        return 4
    try:
        listing = disassemble(obj, tool, "-sass")
    except RuntimeError as e:
        print(f"sass: error: {e}", file=sys.stderr)
        return 1
    reports = kernel_reports(listing)
    fns = {(f.name, f.arch): f for f in parse_listing(listing)}
    if args.prec:
        reports = [k for k in reports if precision_of(k) in (args.prec, None)]
    stage, _, variant = args.stage.partition("/")
    reports = [k for k in reports if kernel_names.of_variant(k.short, variant, registry.variants(stage))]
    archs = sorted({k.arch for k in reports}) or ["?"]
    only = [f"variant {args.stage.partition('/')[2]}"] * ("/" in args.stage) + [f"precision {args.prec}"] * bool(args.prec)
    print(f"sass: {source} for {', '.join(archs)}" + (f", {' and '.join(only)} only" if only else "")
          + f" (cuobjdump -sass {obj})")
    if not reports:
        print("\n  no kernels" + (f" of {' and '.join(only)}" if only else ""))
    for k in reports:
        print()
        print("\n".join(summary(k, source)))
    if args.listing and reports:
        path = Path(args.listing)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"// {source}: cuobjdump -sass {obj}\n// marks: " +
                        "; ".join(text for _t, text in MARKS) + "\n\n" +
                        "\n".join(annotated(k, fns[(k.name, k.arch)]) for k in reports))
        print(f"\nsass: the whole listing, marked, is in {path}")
    if args.json:
        Path(args.json).write_text(json.dumps([
            {"name": k.name, "short": k.short, "arch": k.arch, "counts": dict(k.counts), "tensor": k.tensor,
             "empty": k.empty,
             "loops": [{"start": lp.start, "end": lp.end, "innermost": lp.innermost, "counts": dict(mix(lp.instrs)),
                        "main": lp is k.main_loop} for lp in k.loops]} for k in reports], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
