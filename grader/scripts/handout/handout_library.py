"""The compiled reference of a handout (grader/scripts/handout.py): reference/*.cu compiled into one
library whose only global symbol is the registry, and what can be read back out of such a library
(its device code's architectures, its symbol names). docs/handout.md, "The compiled reference"."""
import os
import re
import struct
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from handout_base import ROOT, HandoutError, cuda_home, run, say

sys.path.insert(0, str(ROOT / "grader" / "scripts"))
import object_cache  # noqa: E402  (grader/scripts)
from kernel_names import demangle  # noqa: E402

REF_LIB = "reference/lib/libgemmlab_reference.a"
REGISTRY_SYMBOL = "gemmlab::reference::registry()"  # the one global symbol the library keeps


def arch_number(arch):
    return int(re.fullmatch(r"sm_(\d+)[af]?", arch).group(1))


def gencode_flags(archs, ptx):
    flags = []
    for a in archs:
        suffix = a[len("sm_"):]
        # Hopper's machine code is built for sm_90a, as the Makefile does: it runs on the same GPUs
        # as sm_90 and holds the tensor stage's wgmma kernel (the PTX below stays portable).
        if suffix == "90":
            suffix = "90a"
        flags += ["-gencode", f"arch=compute_{suffix},code=sm_{suffix}"]
    if ptx:
        top = max(arch_number(a) for a in archs)
        flags += ["-gencode", f"arch=compute_{top},code=compute_{top}"]
    return flags


def global_symbols(obj):
    """Defined global symbols of an object or archive: [(type letter, mangled, demangled)]."""
    out = run(["nm", "--defined-only", "-g", str(obj)]).stdout
    rows = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            rows.append((parts[1], parts[2]))
    return [(t, m, d) for (t, m), d in zip(rows, demangle([m for _, m in rows]))]


def build_reference_library(cfg, dest, work, object_cache_dir=None, ccache=""):
    """Compiles reference/*.cu (not reference/tuning/) for the configured archs into one object
    whose only global symbol is gemmlab::reference::registry(), without debug or line info. Each
    file's compile goes through the object cache (grader/scripts/object_cache.py) when one is given:
    a test suite that builds the handout twice, side by side, compiles the reference once; and
    through `ccache` (the Makefile's CCACHE) when given, so another checkout compiles it once too."""
    sources = sorted((ROOT / "reference").glob("*.cu"))
    if not sources:
        raise HandoutError("no reference/*.cu here: `make handout` runs in the instructor repository "
                           "(a handout has only the compiled library)")
    cuda = cuda_home()
    nvcc = cuda / "bin" / "nvcc"
    common = ["-std=c++17", "-DNDEBUG", "-DGEMMLAB_NS=reference", "-Igrader/include", "-Igrader/src"]
    # No -g, -G or -lineinfo: no debug sections and no source lines, host or device.
    # -fno-gnu-unique: function-local statics of templates become weak symbols, which objcopy can
    # make local, instead of STB_GNU_UNIQUE ones, which it cannot.
    nvcc_flags = common + ["-O3", "-Xcompiler", "-Wall,-Wextra,-fno-gnu-unique"] + gencode_flags(cfg["archs"], cfg["ptx"])
    cxx = os.environ.get("CXX", "g++")
    cxx_flags = common + ["-O2", "-Wall", "-Wextra", "-fno-gnu-unique", "-isystem", str(cuda / "include")]
    launcher = [ccache] if ccache else []
    jobs = [([*launcher, str(nvcc), *nvcc_flags, "-c", s.relative_to(ROOT).as_posix(), "-o", str(work / f"{s.stem}.o")],
             s.name) for s in sources]
    jobs.append(([cxx, *cxx_flags, "-c", "grader/src/runner/registry.cpp", "-o", str(work / "registry.o")],
                 "registry.cpp"))
    say(f"compiling the reference ({', '.join(n for _, n in jobs)}) for {', '.join(cfg['archs'])}"
        + (f" + PTX compute_{max(arch_number(a) for a in cfg['archs'])}" if cfg["ptx"] else ""))
    # What a reference object depends on besides its source: every header it could include.
    depends = sorted(str(p) for d in ("grader/include", "grader/src", "reference") for p in (ROOT / d).rglob("*")
                     if p.is_file() and p.suffix in object_cache.HEADER_SUFFIXES)

    def compile_one(cmd):
        source = ROOT / cmd[cmd.index("-c") + 1]
        if not object_cache_dir or source.suffix != ".cu":
            return run(cmd)
        return object_cache.run_cached(object_cache_dir, cmd, source, cmd[cmd.index("-o") + 1], depends,
                                       say=lambda _: None, compile_=lambda c: run(c).returncode)

    with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
        for f in [pool.submit(compile_one, cmd) for cmd, _ in jobs]:
            f.result()
    objects = [str(work / f"{s.stem}.o") for s in sources] + [str(work / "registry.o")]

    combined = work / "gemmlab_reference_all.o"
    run(["ld", "-r", "-o", str(combined), *objects])
    registry = [m for _, m, d in global_symbols(combined) if d == REGISTRY_SYMBOL]
    if len(registry) != 1:
        raise HandoutError(f"{REGISTRY_SYMBOL} is not defined exactly once in the reference objects")
    final = work / "gemmlab_reference.o"
    # Every global symbol but registry() becomes local: the grader reaches the reference only
    # through its registry, and nothing else of it can clash with or be called from student code.
    # The COMDAT groups go first (-R .group): otherwise the final link would keep the grader's copy
    # of a shared template (std::vector<StageInfo>, ...) and discard the library's, to which the
    # library's now-local references still point ("defined in discarded section").
    # --strip-unneeded then drops every local symbol no relocation needs (and the debug sections).
    run(["objcopy", "-R", ".group", f"--keep-global-symbol={registry[0]}", "--strip-debug",
         "--strip-unneeded", f"--keep-symbol={registry[0]}", str(combined), str(final)])
    leftover = [d for _, _, d in global_symbols(final) if d != REGISTRY_SYMBOL]
    if leftover:
        raise HandoutError(f"the reference library still exports {len(leftover)} other symbol(s), e.g. {leftover[0]}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists():
        dest.unlink()
    run(["ar", "rcsD", str(dest), str(final)])
    return run([str(nvcc), "--version"]).stdout.strip().splitlines()[-1]



def fatbin_entries(blob):
    """(kind, arch, flags) of every device-code entry in the fatbinaries inside `blob`:
    kind 'sass' or 'ptx', arch like 90. Layout: a 16-byte header (magic 0xBA55ED50, version,
    header size, payload size), then entries that each start with kind (u16), a u16, header size
    (u32), payload size (u64), compressed size (u32), a u32, minor/major (u16 each), arch (u32),
    name offset and length (u32 each), flags (u64)."""
    entries, pos = [], 0
    magic = struct.pack("<I", 0xBA55ED50)
    while (pos := blob.find(magic, pos)) >= 0:
        if pos + 16 > len(blob):
            break
        _, _, hsize, fat_size = struct.unpack_from("<IHHQ", blob, pos)
        cursor, end = pos + hsize, pos + hsize + fat_size
        while cursor + 64 <= min(end, len(blob)):
            kind, _, ehsize, payload = struct.unpack_from("<HHIQ", blob, cursor)
            if kind not in (1, 2) or ehsize < 64:
                break
            arch = struct.unpack_from("<I", blob, cursor + 28)[0]
            flags = struct.unpack_from("<Q", blob, cursor + 40)[0]
            entries.append(("ptx" if kind == 1 else "sass", arch, flags))
            cursor += ehsize + payload
        pos = max(end, pos + 4)
    return entries



def library_symbol_names(lib):
    """Every symbol name the shipped library holds: its objects' symbol tables (host, nm -C), the
    function names of the cubins in their fatbinaries (device), and any mangled name spelled out in
    their bytes (the names the CUDA runtime registers kernels by, which also stand for the device
    names of a compressed fatbinary)."""
    import tuning_names  # grader/scripts/tuning_names.py, on sys.path above
    names = set()
    with tempfile.TemporaryDirectory() as tmp:
        run(["ar", "x", str(lib.resolve())], cwd=tmp)
        for obj in sorted(Path(tmp).iterdir()):
            names.update(tuning_names.host_symbols(str(obj)))
            device, _ = tuning_names.device_symbols(str(obj))
            raw = {m.decode() for m in re.findall(rb"_Z[A-Za-z0-9_]{4,}", obj.read_bytes())}
            names.update(demangle(sorted(set(device) | raw)))
    return names, tuning_names.refused


