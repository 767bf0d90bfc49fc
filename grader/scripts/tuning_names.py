#!/usr/bin/env python3
"""tuning_names.py OBJECT... — do the compiled reference objects spell their tuning in symbol names?

The reference instantiates its kernels with named configuration types (`struct FloatLarge :
PitchedConfig<...> {}`), so that no symbol of a shipped build names its tile shapes. This script
checks that on host objects (.o, .a) or cubins:

  - host symbols: `nm -C` of every object (kernels appear there too, as their launch stubs);
  - device symbols: the function symbols of every cubin, demangled with c++filt — a cubin given
    directly, or each ELF image embedded in the .nv_fatbin section of a host object (an image stored
    compressed cannot be read, and is reported as such).

A symbol is refused when it mentions gemmlab and one of its template argument lists holds an
integer (`Config<128, 64>`, `(Scheme)1`, `-1`). Allowed: the registry's entry points, whose
template arguments are the API (`gemm_tiled<T, 8|16|32>`, `gemm_tensor<T, (InputPrecision)N>`),
and the tiled stage's kernel, whose tile is the entry point's. bool arguments (`true`, `false`)
are not integers here. Exit status 1 when anything is refused, 2 on a usage or read error.
"""
import re
import struct
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kernel_names import demangle  # noqa: E402  (device names through c++filt; handout.py calls it from here)

# Template arguments that are the API: the tile of gemm_tiled (and of the kernel behind it), the
# input precision of gemm_tensor.
ALLOWED = re.compile(r"\b(?:gemm_tiled|tiled_kernel)<(?:float|double), (?:8|16|32)>"
                     r"|\bgemm_tensor<(?:float|double), \(gemmlab::InputPrecision\)\d+>")
# An integer template argument: right after '<' or ', ', optionally cast "(Type)", then digits,
# then ',' or '>'.
INTEGER_ARG = re.compile(r"(?:<|, )(?:\([\w:]+\))?-?\d+[ul]*(?=[,>])")


def host_symbols(path):
    out = subprocess.run(["nm", "-C", path], capture_output=True, text=True)
    if out.returncode != 0:
        raise OSError(f"nm {path}: {out.stderr.strip()}")
    names = []
    for line in out.stdout.splitlines():
        parts = line.split(None, 2)
        if len(parts) == 3:
            names.append(parts[2])
        elif len(parts) == 2 and not line.endswith(":"):
            names.append(parts[1])
    return names


def elf_sections(data, base=0):
    """(name, offset, size, type) of the sections of the ELF64 image at data[base:]."""
    if data[base:base + 4] != b"\x7fELF" or data[base + 4] != 2:
        return []
    shoff, = struct.unpack_from("<Q", data, base + 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, base + 0x3A)
    headers = []
    for i in range(shnum):
        at = base + shoff + i * shentsize
        name, kind, _flags, _addr, offset, size = struct.unpack_from("<IIQQQQ", data, at)
        headers.append((name, kind, offset, size))
    if shstrndx >= len(headers):
        return []
    strtab_off, strtab_size = headers[shstrndx][2], headers[shstrndx][3]
    strtab = data[base + strtab_off:base + strtab_off + strtab_size]
    result = []
    for name, kind, offset, size in headers:
        end = strtab.find(b"\0", name)
        result.append((strtab[name:end].decode(errors="replace"), base + offset, size, kind))
    return result


def elf_function_names(data, base=0):
    """Names of the function symbols (STT_FUNC) of the ELF64 image at data[base:]."""
    sections = elf_sections(data, base)
    names = []
    for i, (_name, offset, size, kind) in enumerate(sections):
        if kind != 2:  # SHT_SYMTAB
            continue
        link, = struct.unpack_from("<I", data, _section_header(data, base, i) + 0x28)
        str_off, str_size = sections[link][1], sections[link][2]
        strings = data[str_off:str_off + str_size]
        for at in range(offset, offset + size, 24):
            st_name, st_info = struct.unpack_from("<IB", data, at)
            if st_info & 0xF == 2 and st_name:  # STT_FUNC
                end = strings.find(b"\0", st_name)
                names.append(strings[st_name:end].decode(errors="replace"))
    return names


def _section_header(data, base, index):
    shoff, = struct.unpack_from("<Q", data, base + 0x28)
    shentsize, = struct.unpack_from("<H", data, base + 0x3A)
    return base + shoff + index * shentsize


def device_symbols(path):
    """(names, notes): the function names of the cubin at path, or of the cubins embedded in the
    .nv_fatbin section of the host object at path."""
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF":
        return [], [f"{path}: not an ELF file (an archive? give its objects)"]
    sections = elf_sections(data)
    if any(name.startswith(".nv.info") for name, *_ in sections):  # a cubin
        return elf_function_names(data), []
    names, notes = [], []
    for name, offset, size, _kind in sections:
        if name != ".nv_fatbin":
            continue
        blob = data[offset:offset + size]
        images = 0
        at = blob.find(b"\x7fELF")
        while at >= 0:
            try:
                found = elf_function_names(blob, at)
            except struct.error:
                found = []
            if found:
                names += found
                images += 1
            at = blob.find(b"\x7fELF", at + 4)
        if images == 0:
            notes.append(f"{path}: no readable cubin in .nv_fatbin (compressed?): device names not checked")
    return names, notes


def refused(symbols):
    bad = []
    for name in symbols:
        if "gemmlab" not in name:
            continue
        if INTEGER_ARG.search(ALLOWED.sub("", name)):
            bad.append(name)
    return bad


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    status = 0
    for path in argv:
        try:
            host = [] if path.endswith(".cubin") else host_symbols(path)
            device, notes = device_symbols(path) if not path.endswith(".a") else ([], [])
        except OSError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
        device = demangle(device)
        for kind, names in (("host", host), ("device", device)):
            for name in sorted(set(refused(names))):
                print(f"{path}: {kind} symbol spells tuning parameters: {name}")
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
