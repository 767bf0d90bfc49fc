#!/usr/bin/env python3
"""cuda_bundle_check.py — what a build that carries its own CUDA libraries (make CUDA_LIBS=pruned) loads.

No GPU and no binutils needed: it reads the ELF files itself (and runs ldd). For each BUILD directory given (build/<arch>-cuda<release>-pruned-<gpus>,
or the same tree unpacked elsewhere):

- cuda-libs/ holds libcublas-pruned.so and the CUDA runtime libcudart.so.<MAJOR> of --cuda-major;
- every binary and library of the build (sub-*/, cuda-libs/, grader/, tests/) needs nothing but those two
  and the C/C++ runtime: no libcublas.so*, libcublasLt.so*, libcurand.so* (the toolkit's shared
  libraries, which a machine with another CUDA would supply in another version), no other libcudart;
- their run path is $ORIGIN/../cuda-libs only: no absolute directory, which could find another
  toolkit's libraries first;
- `ldd` resolves libcublas-pruned.so and libcudart to this build's cuda-libs/ and nothing to a CUDA
  toolkit's directory, and finds everything;
- the machine code in libcublas-pruned.so runs on each GPU of --gpu (its own architecture, or an older
  one of the same major), and the judge (`gemmlab`) holds code for the build's architecture (--arch,
  read from the directory's name when not given).

Prints one line per check and exits 1 when one fails. tests/gpu_session/gpu_cuda12.sh runs it here before packing
and on the GPU machine after unpacking; tests/py/developer/test_cuda12_bundle.py runs it in `make test`.

  cuda_bundle_check.py --cuda-major 12 --gpu sm_90 build/sm_70-cuda12.5-pruned-sm_90 ...
"""
import argparse
import re
import struct
import subprocess
import sys
from pathlib import Path

SYSTEM = {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2", "libdl.so.2",
          "libpthread.so.0", "librt.so.1"}
RUN_PATH = "$ORIGIN/../cuda-libs"
TOOLKIT_DIR = re.compile(r"/cuda[^/]*/|/nvidia-cuda-toolkit/|/targets/x86_64-linux/")
FATBIN_MAGIC = 0xBA55ED50


def is_elf(path):
    """An executable or a shared library (not an object file)."""
    try:
        with open(path, "rb") as f:
            head = f.read(18)
    except OSError:
        return False
    return head[:4] == b"\x7fELF" and struct.unpack_from("<H", head, 16)[0] in (2, 3)  # ET_EXEC, ET_DYN


def section_headers(data):
    """[(name, type, offset, size, link)] of a little-endian ELF64 file."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab_off, strtab_size = heads[shstrndx][4], heads[shstrndx][5]
    names = data[strtab_off:strtab_off + strtab_size]
    return [(names[h[0]:names.index(b"\0", h[0])].decode(), h[1], h[4], h[5], h[6]) for h in heads]


def sections(data):
    """{name: (offset, size)}."""
    return {name: (off, size) for name, _type, off, size, _link in section_headers(data)}


def dynamic(path):
    """(NEEDED list, RUNPATH/RPATH entries, SONAME) from the file's dynamic section (what readelf -d shows)."""
    data = Path(path).read_bytes()
    heads = section_headers(data)
    needed, paths, soname = [], [], ""
    for _name, kind, off, size, link in heads:
        if kind != 6:  # SHT_DYNAMIC
            continue
        str_off, str_size = heads[link][2], heads[link][3]
        strtab = data[str_off:str_off + str_size]
        text = lambda i: strtab[i:strtab.index(b"\0", i)].decode()
        for i in range(0, size, 16):
            tag, val = struct.unpack_from("<qQ", data, off + i)
            if tag == 0:
                break
            if tag == 1:
                needed.append(text(val))
            elif tag in (15, 29):  # DT_RPATH, DT_RUNPATH
                paths += text(val).split(":")
            elif tag == 14:
                soname = text(val)
    return needed, paths, soname


def device_code(path):
    """{('sass'|'ptx', sm)} of the file's .nv_fatbin section (the CUDA fat binaries it registers)."""
    data = Path(path).read_bytes()
    sec = sections(data).get(".nv_fatbin")
    if not sec:
        return set()
    blob = data[sec[0]:sec[0] + sec[1]]
    found, off = set(), 0
    while off + 16 <= len(blob):
        magic, _version, head, size = struct.unpack_from("<IHHQ", blob, off)
        if magic != FATBIN_MAGIC:
            off += 8  # containers are 8-byte aligned
            continue
        p, end = off + head, off + head + size
        while p + 48 <= end:
            kind, _v, entry_head, padded = struct.unpack_from("<HHII", blob, p)
            sm, = struct.unpack_from("<I", blob, p + 28)
            if entry_head < 48:
                break
            found.add(("ptx" if kind == 1 else "sass", sm))
            p += entry_head + padded
        off = end
    return found


def ldd(path):
    """{name: resolved path or None}."""
    out = subprocess.run(["ldd", str(path)], capture_output=True, text=True).stdout
    found = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (not found|(\S+))", line)
        if m:
            found[m.group(1)] = None if m.group(2) == "not found" else m.group(3)
    return found


def arch_number(text):
    m = re.search(r"sm_(\d+)", text)
    return int(m.group(1)) if m else None


class Checker:
    def __init__(self):
        self.failed = 0

    def check(self, ok, what):
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
        self.failed += not ok
        return ok


def check_build(build: Path, cuda_major: int, gpus, arch, c: Checker):
    libs = build / "cuda-libs"
    pruned, cudart = libs / "libcublas-pruned.so", libs / f"libcudart.so.{cuda_major}"
    if not c.check(pruned.is_file() and cudart.is_file(), f"{build}: cuda-libs/ holds libcublas-pruned.so and "
                   f"libcudart.so.{cuda_major}"):
        return
    _, _, soname = dynamic(cudart)
    c.check(soname == f"libcudart.so.{cuda_major}", f"{cudart.name}: the CUDA {cuda_major} runtime (SONAME {soname})")
    allowed = SYSTEM | {"libcublas-pruned.so", f"libcudart.so.{cuda_major}"}
    files = sorted(p for d in ("cuda-libs", "grader", "tests") for p in (build / d).glob("*") if is_elf(p))
    files += sorted(p for sub in build.glob("sub-*") for p in sub.iterdir() if p.is_file() and is_elf(p))
    for f in files:
        needed, paths, _ = dynamic(f)
        name = f.relative_to(build)
        bad = [n for n in needed if n not in allowed]
        c.check(not bad, f"{name}: needs {', '.join(needed) or 'nothing'}"
                + (f" — not carried: {', '.join(bad)}" if bad else ""))
        want = ["$ORIGIN"] if f.parent == libs else [RUN_PATH]
        if set(needed) - SYSTEM:  # what needs a CUDA library finds it beside itself, nowhere else
            c.check(paths == want, f"{name}: run path {paths or 'none'} (want {want[0]})")
        resolved = ldd(f)
        lost = [n for n, p in resolved.items() if p is None]
        c.check(not lost, f"{name}: ldd finds every library" + (f" — not found: {', '.join(lost)}" if lost else ""))
        for n, p in resolved.items():
            if p and n in ("libcublas-pruned.so", cudart.name):
                c.check(Path(p).resolve() == (libs / n).resolve(), f"{name}: {n} => {p}")
            elif p and TOOLKIT_DIR.search(p):
                c.check(False, f"{name}: {n} => {p} (a CUDA toolkit's directory)")
    have = device_code(pruned)
    sass = sorted({sm for kind, sm in have if kind == "sass"})
    for gpu in gpus:
        usable = [sm for sm in sass if sm // 10 == gpu // 10 and sm <= gpu]
        c.check(bool(usable), f"libcublas-pruned.so: machine code for sm_{gpu}"
                + (f" (sm_{max(usable)})" if usable else f" — it has {', '.join(f'sm_{s}' for s in sass) or 'none'}"))
    for judge in sorted(build.glob("sub-*/gemmlab")):
        code = device_code(judge)
        if arch:
            c.check(("sass", arch) in code or ("ptx", arch) in code,
                    f"{judge.relative_to(build)}: device code for sm_{arch} "
                    f"({', '.join(f'{k} sm_{s}' for k, s in sorted(code))})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cuda-major", type=int, required=True, help="the CUDA release the build carries, e.g. 12")
    ap.add_argument("--gpu", default="sm_90", help="the GPUs its libraries must run on, e.g. 'sm_90' or 'sm_70 sm_90'")
    ap.add_argument("--arch", default="", help="the build's ARCH (default: from the directory's name)")
    ap.add_argument("builds", nargs="+", type=Path)
    args = ap.parse_args()
    gpus = [arch_number(g) for g in args.gpu.split()]
    c = Checker()
    for build in args.builds:
        arch = arch_number(args.arch) if args.arch else arch_number(build.name.split("-")[0])
        check_build(build, args.cuda_major, gpus, arch, c)
    print(f"cuda_bundle_check: {'every check passed' if not c.failed else f'{c.failed} check(s) failed'} "
          f"({len(args.builds)} build(s))")
    sys.exit(1 if c.failed else 0)


if __name__ == "__main__":
    main()
