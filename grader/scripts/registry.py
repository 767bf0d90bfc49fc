#!/usr/bin/env python3
"""registry.py — the stage registry (grader/include/gemmlab/stages.h) as the scripts read it: the
stages in their order, each stage's variants, which stage may use the tensor cores, and the entry
points each variant's runs call.

  registry.py --stage-names        the stages, one library each (the Makefile's STAGE_NAMES)

It reads the header itself, once per call, with the one parser below, and imports no other script:
the Makefile asks for the stage names before anything is built, and the symbol check
(scan_symbols.py) runs during the build, before the judge exists. `gemmlab list --json` prints the
same table as the grader compiled it, with what the grader computes from it (error bounds,
architectures); report/ and the handout's check read that listing (tests/py/grader/test_registry.py holds
the two readings together).
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

HEADER = Path(__file__).resolve().parents[1] / "include" / "gemmlab" / "stages.h"

# A row of stage_table() starts {"name", "Title", ...; a variant is {"label", stage_fns_<kind><T>(...),
# stage_fns_<kind><T>(...)...; an entry point is stage_fns_dense<T>(&function<template arguments>), or
# stage_fns_pitched<T>() for the pitched stage's four functions.
ROW = re.compile(r'(?m)^\s*\{"(?=\w+",\s*")')
VARIANT = re.compile(r'\{"(\w*)",\s*(stage_fns_\w+<\w+>\([^)]*\),\s*stage_fns_\w+<\w+>\([^)]*\))')
ENTRY = re.compile(r"stage_fns_(\w+)<(\w+)>\((?:&(\w+)<([^>]*)>)?\)")
TENSOR_CORES = re.compile(r"\}\}\s*,\s*true\s*\}")  # the row's last field after its variants


@dataclass(frozen=True)
class EntryPoint:
    variant: str     # "" for a stage of one version
    precision: str   # "float" or "double"
    function: str    # "gemm_tiled"; "" for stage_fns_pitched (gemm_pitched and its three helpers)
    arguments: str   # template arguments as nm's demangler writes them: "float, 16",
                     # "float, (gemmlab::InputPrecision)2"


@dataclass(frozen=True)
class Stage:
    name: str
    variants: tuple      # labels in the registry's order; () for a stage of one version
    tensor_cores: bool   # may use the tensor cores in float (its row ends with `true`)
    entry_points: tuple  # EntryPoint per variant and precision, in the registry's order


def read(header=HEADER):
    """[Stage] of the registry header, in its order (the teaching order)."""
    text = re.sub(r"//[^\n]*", "", Path(header).read_text())
    enum = re.search(r"enum class InputPrecision\s*\{([^}]*)\}", text)
    precisions = [v.strip() for v in enum.group(1).split(",")] if enum else []

    def as_demangled(argument):
        value = argument.split("::", 1)[1] if argument.startswith("InputPrecision::") else None
        return f"(gemmlab::InputPrecision){precisions.index(value)}" if value in precisions else argument

    stages = []
    for row in ROW.split(text[text.find("stage_table()"):])[1:]:
        labels, entry_points = [], []
        for label, fns in VARIANT.findall(row):
            if label and label not in labels:
                labels.append(label)
            for kind, precision, function, arguments in ENTRY.findall(fns):
                shown = ", ".join(as_demangled(a.strip()) for a in arguments.split(",")) if kind != "pitched" else ""
                entry_points.append(EntryPoint(label, precision, function if kind != "pitched" else "", shown))
        stages.append(Stage(row.split('"', 1)[0], tuple(labels), bool(TENSOR_CORES.search(row)),
                            tuple(entry_points)))
    return stages


def declared_functions(header=HEADER):
    """The names of every function the registry header declares a stage file defines (each returns
    Status): the stages' entry points and the pitched stage's helpers."""
    return set(re.findall(r"Status\s+(\w+)\s*\(", re.sub(r"//[^\n]*", "", Path(header).read_text())))


def stage_names(header=HEADER):
    """The stages' names, in the registry's order."""
    return [s.name for s in read(header)]


def variants(stage, header=HEADER):
    """A stage's variant labels in the registry's order: tiled -> ["8", "16", "32"]; [] for a stage of
    one version; None for a stage the registry does not have."""
    found = next((s for s in read(header) if s.name == stage), None)
    return list(found.variants) if found else None


def variant_problem(stage_arg, header=HEADER):
    """"" when STAGE= (<stage> or <stage>/<variant>) names one of the stage's variants after its slash,
    or names no variant; else what is wrong. A stage the registry does not have is left to the stage
    file's own checks."""
    stage, _, variant = stage_arg.partition("/")
    known = variants(stage, header)
    if known is None or not variant or variant in known:
        return ""
    have = f"its variants are {', '.join(known)}" if known else "it has one version: say STAGE=" + stage
    return f"stage {stage} has no variant {variant}: {have}"


def tensor_core_stages(header=HEADER):
    """The stages whose row allows the tensor cores in float ({"tensor"} today)."""
    return {s.name for s in read(header) if s.tensor_cores}


def entry_point_runs(header=HEADER):
    """{(function, template arguments as nm's demangler writes them): [(stage, variant, precision)]}:
    which runs each entry point serves, e.g. ("gemm_tiled", "float, 8") -> [("tiled", "8", "float")].
    The pitched stage's four functions of one precision are keyed ("*<stage>", precision)."""
    out = {}
    for s in read(header):
        for e in s.entry_points:
            key = (e.function, e.arguments) if e.function else ("*" + s.name, e.precision)
            runs = out.setdefault(key, [])
            if (s.name, e.variant, e.precision) not in runs:
                runs.append((s.name, e.variant, e.precision))
    return out


PRECISION_CAST = re.compile(r"\(gemmlab::InputPrecision\)(\d+)")


def precision_labels(header=HEADER):
    """{InputPrecision value: the variant label a student knows}: the tensor variant whose float entry
    point declares it (0 -> "3xtf32", 1 -> "tf32", 2 -> "fp16"); kernel_names.short_name shows it."""
    labels = {}
    for s in read(header):
        for e in s.entry_points:
            cast = PRECISION_CAST.search(e.arguments)
            if cast and e.precision == "float" and e.variant:
                labels.setdefault(int(cast.group(1)), e.variant)
    return labels


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0].split("— ", 1)[-1])
    ap.add_argument("--header", default=str(HEADER), help="the registry header (default: %(default)s)")
    ap.add_argument("--stage-names", action="store_true", help="print the stages' names on one line")
    args = ap.parse_args(argv)
    if not args.stage_names:
        ap.error("say what to print: --stage-names")
    print(" ".join(stage_names(args.header)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
