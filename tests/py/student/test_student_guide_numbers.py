"""The numbers the student's docs quote from the example data are the example data's: the profile table of
docs/student-tools.md is generated from the example report's profile (tests/fixtures/report/profile/tiled-16-float.json), the
walkthrough's numbers are computed from it here, and its `make resources` line is the compiler's.

  /usr/bin/python3 tests/py/student/test_student_guide_numbers.py --write    regenerates the tools page's table
"""
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "grader" / "scripts"))
import kernel_names  # noqa: E402
import ncu_profile  # noqa: E402
import registry  # noqa: E402
import stage_resources  # noqa: E402

GUIDE = ROOT / "docs" / "student-guide.md"
TOOLS = ROOT / "docs" / "student-tools.md"  # the guide's tools: reading a failure, profiling
EXAMPLE = ROOT / "tests" / "fixtures" / "report" / "profile" / "tiled-16-float.json"
BLOCK = re.compile(r"(<!-- example-profile:[^\n]*-->\n)(.*?)(<!-- /example-profile -->)", re.S)


def example_doc():
    return json.loads(EXAMPLE.read_text())


def generated_block(doc):
    """The table make profile prints for the example profile, from its header row on."""
    text = ncu_profile.markdown(doc, heading=None)
    return text[text.index("| |"):].rstrip() + "\n"


def section(title, text=None):
    text = text if text is not None else (TOOLS if title in TOOLS.read_text() else GUIDE).read_text()
    start = text.index(title)
    end = text.find("\n#", start + len(title))
    return text[start:end if end > 0 else None]


def test_the_guides_profile_table_is_generated_from_the_example_report():
    m = BLOCK.search(TOOLS.read_text())
    assert m, "docs/student-tools.md has lost its <!-- example-profile --> block"
    assert m.group(2) == generated_block(example_doc()), \
        "the tools page's example profile differs from the example report's: run this file with --write"


def test_the_walkthrough_quotes_the_example_profile():
    doc = example_doc()
    [k] = doc["kernels"]
    text = " ".join((section("### Reading a profile: the tiled kernel") +
                     section("### Arithmetic intensity and the roofline")).split())  # lines wrap anywhere
    stalls = {s["reason"].replace("_", " "): s["share_pct"] for s in k["stalls"]}
    expected = [
        f"{k['memory_throughput_pct']:.0f}%", f"{k['dram_gbs']:.0f} GB/s", f"({k['dram_throughput_pct']:.0f}% of its peak)",
        f"compute throughput ({k['compute_throughput_pct']:.0f}%)", f"*achieved* ({k['occupancy_achieved_pct']:.1f}%)",
        f"would allow {k['blocks_per_sm_limits']['shared memory']}", f"{k['blocks_per_sm_limits']['registers']} blocks fit",
        f"{k['registers_per_thread']} registers", f"{k['shared_mem_per_block_bytes'] // 1024} KiB",
    ] + [f"*{reason}* ({share:.0f}%)" for reason, share in stalls.items()]
    # The roofline by hand, from the measured rows: bandwidth × duration, 2·4096³ flops.
    seconds = k["duration_us"] * 1e-6
    dram = k["dram_gbs"] * 1e9 * seconds
    flops = 2 * 4096 ** 3
    intensity = flops / dram
    roof = intensity * 3350  # the H100's datasheet bandwidth (gpu_peaks.py)
    expected += [f"{seconds * 1e3:.1f} ms", f"{dram / 1e9:.1f} GB", f"{flops / 1e9:.1f} GFLOP",
                 f"{intensity:.1f} flop/byte", f"{roof / 1e3:.1f} TFLOPS", f"reached {flops / seconds / 1e12:.1f}",
                 f"{100 * flops / seconds / 1e9 / roof:.0f}% of it"]
    missing = [e for e in expected if e not in text]
    assert not missing, missing
    for stale in ("114 GB/s", "92.3%", "mio throttle (42%)", "3.4% of"):  # an earlier, hand-written example
        assert stale not in GUIDE.read_text() + TOOLS.read_text(), stale
    assert doc["submission"] == "reference" and "reference solution's** `tiled/16`" in text


NVCC = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"


@pytest.mark.skipif(not Path(NVCC).is_file() or not (ROOT / "reference" / "tiled.cu").is_file(),
                    reason="needs nvcc and the instructor repository's reference/")
def test_the_guides_make_resources_line_is_the_compilers(tmp_path):
    """The row the guide shows for a double-buffered tiled_kernel<float, 16> (the reference's, shown as the
    student's file), compiled as make resources does for the architecture it names (sm_90a); and the
    stub's 2,048 B is two tiles of 16×16 floats."""
    text = section("## Profiling your kernels")
    m = re.search(r"student/tiled\.cu \((sm_\w+)\)\n.*\n(\s+tiled_kernel<float, 16>.*)\n", text)
    assert m, "the guide's make resources example is gone"
    kernels, error = stage_resources.compile_file(
        NVCC, f"-std=c++17 -O3 -lineinfo -gencode arch=compute_90a,code={m.group(1)} -I{ROOT / 'grader/include'} "
              "-DGEMMLAB_NS=submission", ROOT / "reference" / "tiled.cu", tmp_path)
    assert error is None, error
    shorts = [kernel_names.short_name(full, {}) for full in kernel_names.demangle(k["name"] for k in kernels)]
    [k] = [k for k, short in zip(kernels, shorts) if short == "tiled_kernel<float, 16>"]
    quoted = m.group(2).split()
    assert quoted[2] == str(k["registers"]) and quoted[3] == f"{k['smem_bytes']:,}", (quoted, k)
    assert f"2 × 16 × 16 × 4 = {2 * 16 * 16 * 4:,} B" in text


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(__doc__)
    tools = TOOLS.read_text()
    new = BLOCK.sub(lambda m: m.group(1) + generated_block(example_doc()) + m.group(3), tools)
    TOOLS.write_text(new)
    print(f"{TOOLS}: the example profile {'rewritten' if new != tools else 'was up to date'}")


def test_the_docs_count_the_stage_runs_of_the_registry():
    """`make check` prints "Checking N stage run(s)": every stage × variant × precision of the registry.
    The student's tools page and correctness.md quote that line; their N is the registry's, whatever stages
    it gains."""
    runs = {run for found in registry.entry_point_runs().values() for run in found}
    assert len(runs) >= 20
    for doc in ("student-tools.md", "correctness.md"):
        quoted = re.findall(r"Checking (\d+) stage run\(s\)", (ROOT / "docs" / doc).read_text())
        assert quoted and {int(n) for n in quoted} == {len(runs)}, f"docs/{doc} quotes {quoted}; the registry has {len(runs)}"


def test_the_guide_names_every_disposition_of_a_check():
    """The guide's list of what a stage run ends as holds every disposition correctness.md's table explains."""
    explained = re.findall(r"^\| `(\w+)` \|", section("## Dispositions", (ROOT / "docs" / "correctness.md").read_text()), re.M)
    listed = " ".join(re.search(r"\*\*Dispositions\.\*\*(.*?)\n- ", GUIDE.read_text(), re.S).group(1).split())
    assert len(explained) >= 7
    for d in explained:
        assert f"`{d}`" in listed, f"the guide's Dispositions leave out {d}"


# The guide's time limits, each with where it is set: (the limit's words in the table, [(file, C++ name)]).
TIME_LIMITS = {
    "one call of each stage by the stub probe": [("grader/src/judge/check_engine.h", "kStubProbeSeconds")],
    "one case of the check": [("grader/src/judge/main.cpp", "idle_timeout"),
                              ("grader/src/judge/isolation.h", "idle_seconds")],
    "one timed interval of the benchmark": [("grader/src/judge/config.h", "call_timeout_seconds")],
}


def test_the_time_limits_are_one_table_held_to_where_they_are_set():
    """Three limits, one table (the guide's Time limits), each number the one its sources set, and none of
    them written again in the guide's prose."""
    rows = re.findall(r"^\| (\d+) s \| (.*)$", section("### Time limits"), re.M)
    assert len(rows) == len(TIME_LIMITS), rows
    for words, sources in TIME_LIMITS.items():
        [seconds] = [int(n) for n, rest in rows if rest.startswith(words)]
        for path, name in sources:
            text = (ROOT / path).read_text()
            set_to = re.findall(rf"\b{name}\s*=\s*([\d.]+)", text)
            assert set_to and {float(v) for v in set_to} == {seconds}, f"{path}: {name} = {set_to}; the guide says {seconds} s"
            assert path in dict(rows)[str(seconds)], f"the guide's row of {seconds} s does not name {path}"
        assert len(re.findall(rf"\b{seconds} s\b", GUIDE.read_text())) == 1, f"{seconds} s is written outside the table"
