"""kernel_names.py — a kernel's names: as the compiler and the disassembler write them (mangled), as
c++filt and Nsight Compute print them (demangled), and as a student wrote them (the short name);
and which kernels belong to one variant of a stage (`make sass` and `make resources` with
STAGE=<stage>/<variant>).

  demangle(["_ZN7gemmlab10submission12tiled_kernelILi16EEEvi"])
      -> ["void gemmlab::submission::tiled_kernel<16>(int)"]
  short_name("void gemmlab::submission::(anonymous namespace)::tiled_kernel<float, 16>(int, ...)", labels)
      -> "tiled_kernel<float, 16>"

It imports no other script: the labels of the tensor stage's input precisions come from the registry
(registry.precision_labels()), and a stage's variants from registry.variants(); callers pass them.
"""
from __future__ import annotations

import re
import shutil
import subprocess


def demangle(names):
    """The demangled names of mangled ones, in their order, through c++filt. A name it leaves as it is
    (a C name) is returned unchanged, and so is every name where c++filt is missing."""
    names = list(names)
    tool = shutil.which("c++filt")
    if not names or not tool:
        return names
    lines = subprocess.run([tool], input="\n".join(names) + "\n", capture_output=True, text=True).stdout.splitlines()
    return [lines[i] if i < len(lines) and lines[i] else n for i, n in enumerate(names)]


# Inside template arguments: the grader's namespaces (a stage's own types are known by their name) and
# the tensor stage's input precision, which the compiler writes as a cast of its enum value.
OWN_NAMESPACES = re.compile(r"\b(?:gemmlab::)?(?:submission|reference)::(?:\(anonymous namespace\)::|<unnamed>::)?"
                            r"|\bgemmlab::(?=InputPrecision\b)")
PRECISION_CAST = re.compile(r"\((?:gemmlab::)?InputPrecision\)(\d+)")


def short_name(full, labels):
    """"void gemmlab::submission::(anonymous namespace)::tiled_kernel<float, 16>(int, ...)" ->
    "tiled_kernel<float, 16>": no return type, namespaces or parameters; template arguments kept, with
    the input precision as the variant label a student knows (labels: registry.precision_labels();
    "tensor_float_kernel<(gemmlab::InputPrecision)0>" -> "tensor_float_kernel<3xtf32>", in a double
    kernel "fp64")."""
    name = re.sub(r"^void\s+", "", full.strip())
    if name.endswith(")"):  # drop the parameter list: the last parenthesised group at depth 0
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                name = name[:i]
                break
    # the last ::-component outside template brackets
    depth, cut = 0, 0
    for i, c in enumerate(name):
        depth += {"<": 1, ">": -1}.get(c, 0)
        if depth == 0 and name.startswith("::", i):
            cut = i + 2
    name = OWN_NAMESPACES.sub("", name[cut:].strip())
    fp64 = re.search(r"[<,]\s*double\b", name)
    return PRECISION_CAST.sub(lambda m: "fp64" if fp64 else labels.get(int(m.group(1)), m.group(0)), name) or full


def template_arguments(short):
    """"tiled_kernel<float, 16>" -> ["float", "16"]: the top-level template arguments of a short name."""
    if "<" not in short or not short.endswith(">"):
        return []
    args, depth, cur = [], 0, ""
    for c in short[short.index("<") + 1:-1]:
        depth += {"<": 1, "(": 1, ">": -1, ")": -1}.get(c, 0)
        if c == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
        else:
            cur += c
    return args + [cur.strip()] if cur.strip() else args


def of_variant(short, variant, variants):
    """Whether a kernel (its short name) belongs to a variant of its stage (variants: the stage's,
    registry.variants()): a kernel whose template arguments name the variant (tiled_kernel<float, 16>
    for 16, tensor_float_kernel<fp16> for fp16), or name none of the stage's variants (a kernel every
    variant launches). Without a variant (""), every kernel does."""
    if not variant:
        return True
    args = template_arguments(short)
    return variant in args or not set(args) & set(variants or [])
