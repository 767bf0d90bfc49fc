"""report_draft.py — what `make report` knows of a submission on a machine without a GPU: its build.

For each stage, from the object the build compiled (build/<arch>/sub-<name>-<hash>/stages/<stage>.o, beside
the grader): every kernel's registers, static shared memory and local memory (cuobjdump -res-usage: what
`make resources` reads from the compiler) and its machine code counted (`make sass`'s summary: loads,
FMAs, the main loop, spills, tensor cores); or, where the file did not compile, its first error. The draft
report shows these under each stage, where the measurements will be once `make report` runs on a GPU.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "grader" / "scripts"))
import kernel_names  # noqa: E402  (demangled and short kernel names)
import registry  # noqa: E402  (precision labels of the kernels' names)
import stage_sass  # noqa: E402  (make sass: the disassembly, counted)

WIDTH = 100  # characters of a code line the page holds (A4, 2 cm margins, the code font)
# cuobjdump -res-usage: a kernel's line, then its resources on the next
RESOURCES = re.compile(r"Function (\S+):\s*\n\s*REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)")


def resources(obj, cuobjdump):
    """{mangled name: {"registers", "shared", "local"}} of the kernels of an object."""
    out = subprocess.run([cuobjdump, "-res-usage", str(obj)], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"cuobjdump -res-usage {obj}: {out.stderr.strip()[:300]}")
    return {m.group(1): {"registers": int(m.group(2)), "shared": int(m.group(4)), "local": int(m.group(5))}
            for m in RESOURCES.finditer(out.stdout)}


def stage_facts(obj, source, cuobjdump):
    """The Markdown of what the build knows of one stage file."""
    failed = Path(f"{obj}.failed")
    if not obj.is_file():
        if failed.is_file():
            first = json.loads(failed.read_text()).get("first_error", "")
            return f"`{source}` does not compile, so it has no machine code yet:\n\n```\n{first.strip()}\n```\n"
        return f"`{source}` is not built (`make` builds it).\n"
    listing = stage_sass.disassemble(obj, cuobjdump, "-sass")
    kernels = stage_sass.kernel_reports(listing)
    if not kernels:
        return f"`{source}` holds no kernel.\n"
    used = resources(obj, cuobjdump)
    labels = registry.precision_labels()
    rows = [f"| `{kernel_names.short_name(full, labels)}` | {r['registers']} | {r['shared']:,} B | {r['local']:,} B |"
            for full, r in zip(kernel_names.demangle(list(used)), used.values())]
    arch = ", ".join(sorted({k.arch for k in kernels}))
    lines = [f"What the build knows of `{source}` ({arch}; `make resources` and `make sass` show the same, "
             "no GPU needed):", "",
             "| kernel | registers | shared memory (static) | local memory |", "|:--|--:|--:|--:|", *sorted(rows), "",
             "```"]
    for k in kernels:  # make sass's lines, wrapped to the page
        for line in stage_sass.summary(k, source):
            lines += textwrap.wrap(line, WIDTH, subsequent_indent=" " * 17, break_on_hyphens=False) or [""]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n```\n"


def build_facts(grader, submission, stage_names, cuda_home=None):
    """{stage: Markdown} of the stage files of a build, read from the objects beside `grader`; {} where no
    disassembler is found (make setup installs one), with nothing said of the stages."""
    cuobjdump = stage_sass.find_cuobjdump(None, cuda_home)
    if not cuobjdump:
        return {}
    stages_dir = Path(grader).parent / "stages"
    out = {}
    for name in stage_names:
        source = f"{Path(submission).name if submission else 'student'}/{name}.cu"
        try:
            out[name] = stage_facts(stages_dir / f"{name}.o", source, cuobjdump)
        except (RuntimeError, OSError, ValueError) as e:
            out[name] = f"What the build knows of `{source}` could not be read: {e}\n"
    return out
