"""reference/tuning/sass_loop.py on a hand-made SASS listing (no GPU, no cuobjdump needed)."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
TOOL = ROOT / "reference" / "tuning" / "sass_loop.py"
sys.path.insert(0, str(TOOL.parent))
import sass_loop  # noqa: E402


def listing(body_lines, loop_pad=256):
    """A kernel whose loop holds body_lines, padded with NOPs to loop_pad instructions."""
    lines = ["\t\tFunction : _Z6kernelv", "\t.headerflags ..."]
    body = list(body_lines) + ["NOP"] * max(0, loop_pad - len(body_lines) - 1)
    addr = 0x100
    lines.append(f"        /*{0x0:04x}*/                   MOV R1, c[0x0][0x28] ;")
    for t in body:
        lines.append(f"        /*{addr:04x}*/                   {t} ;")
        addr += 0x10
    lines.append(f"        /*{addr:04x}*/              @!P0 BRA 0x100 ;")
    lines.append(f"        /*{addr + 0x10:04x}*/                   EXIT ;")
    return "\n".join(lines) + "\n"


BODY = [
    "LDS.128 R4, [R0+0x10]",
    "FFMA R10, R20.reuse, R30, R10",     # R20 into slot 0's even-bank cache: 3 reads
    "FFMA R11, R20, R31, R11",           # R20 from the cache: 2 reads
    "FFMA R12, R5, R32, R12",            # first use of the LDS.128 (R4..R7), 3 instructions later
    "@P1 FFMA R13, R21, R33.reuse, R13",  # predicated: 3 reads
]


def test_loop_mix_reads_and_lds_distance():
    kernels = sass_loop.kernels(listing(BODY))
    assert list(kernels) == ["_Z6kernelv"]
    found = sass_loop.loops(kernels["_Z6kernelv"])
    assert len(found) == 1 and len(found[0]) == 256
    loop = found[0]
    assert loop[0].startswith("LDS.128") and "BRA" in loop[-1]
    assert sass_loop.register_reads(loop) == (3 + 2 + 3 + 3) / 4
    assert sass_loop.lds_distances(loop) == [3]


def test_short_loops_are_not_reported():
    kernels = sass_loop.kernels(listing(BODY, loop_pad=0))
    assert sass_loop.loops(kernels["_Z6kernelv"]) == []


def test_cli_reads_a_listing_from_stdin():
    out = subprocess.run([sys.executable, str(TOOL), "-", "kernel"], input=listing(BODY),
                         capture_output=True, text=True, check=True).stdout
    assert "_Z6kernelv" in out
    assert "FFMA 4" in out and "LDS.128 1" in out
    assert "register reads per FFMA (reuse cache per slot and bank): 2.750" in out
    assert "used within 40: 1 of 1" in out


def test_cli_says_when_no_kernel_matches():
    r = subprocess.run([sys.executable, str(TOOL), "-", "nomatch"], input=listing(BODY),
                       capture_output=True, text=True)
    assert r.returncode != 0 and "no kernel matches 'nomatch'" in r.stderr
