#!/usr/bin/env python3
"""Symbol scan of a submission's compiled stage files: what each stage calls that a stage may not.

A stage computes its product itself. This scan reads the symbols of the built objects
($(SUB_BUILD)/stages/*.o) with `nm` and flags, per stage, references to

  library_gemm      cuBLAS/cuBLASLt/CUTLASS/CuTe/cuSPARSE/cuSOLVER/cuTENSOR/cuDNN/MAGMA/BLAS/MKL/...
  dynamic_loading   dlopen/dlsym/cuGetProcAddress/cudaGetDriverEntryPoint (calls found by name at run time)
  process           fork/exec/system/popen/posix_spawn/kill/getppid/ptrace/setsid/prctl/raw syscall()
  files             open/fopen/fstream/opendir/unlink/rename/mkdir/write/dup2/socket/std::filesystem
  device            cudaDeviceReset/cudaSetDevice/cuCtxDestroy/cuDevicePrimaryCtxReset (the grader's GPU)

A flagged stage gets the disposition `rejected` with the symbol named. A stage file is <stage>.cu;
any other .cu file (a helper) counts against every stage that calls into it. The scan also finds
stage entry points the registry needs but no file defines (a forgotten explicit instantiation) and
says how to fix it, which the linker alone does not.

  scan_symbols.py --registry $(SUB_BUILD)/registry.o --out $(SUB_BUILD)/symbols.json \\
                  $(SUB_BUILD)/stages/*.o

Prints one warning per flagged stage (students see it at build time) and exits 0; with
--fail-on-missing it exits 1 when an entry point is missing. `--gate symbols.json` exits 1 when
any file calls process, file or dynamic-loading functions: static initializers of stage files run in
every process of gemmlab-stages before main; the grader confines those processes, and a grading
job does not run such a build at all, as defence in depth (docs/gallery.md). The JSON it writes (schema
gemmlab.symbols/1) is what `gemmlab grade` reads; docs/gallery.md describes it.
"""
import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = "gemmlab.symbols/1"
RULE = "docs/student-guide.md, \"What a stage may call\""


def _names(*names):
    return re.compile(r"^(?:%s)$" % "|".join(names))


# (category, what it is, pattern on the demangled name without any @version suffix)
FORBIDDEN = [
    ("library_gemm", "cuBLAS", re.compile(r"^cublas")),
    ("library_gemm", "cuSPARSE/cuSOLVER/cuTENSOR/cuDNN",
     re.compile(r"^(cusparse|cusolver|cutensor|cudnn)")),
    ("library_gemm", "CUTLASS/CuTe", re.compile(r"(^|[\s(<,*&])(cutlass|cute)::")),
    ("library_gemm", "MAGMA", re.compile(r"^magma(blas)?_")),
    ("library_gemm", "a CPU BLAS", re.compile(r"^(cblas_|openblas_|mkl_|MKL_|bli_|[sdcz]gemm_?$|[sdcz]gemm_batch)")),
    ("library_gemm", "rocBLAS/hipBLAS", re.compile(r"^(rocblas_|hipblas)")),
    ("dynamic_loading", "loading code by name at run time",
     _names("dlopen", "dlsym", "dlvsym", "dlmopen", "cuGetProcAddress(_v2)?", "cudaGetDriverEntryPoint.*",
            "cuLibraryLoad.*", "cuModuleLoad.*", "cudaLibraryLoad.*")),
    ("process", "process control",
     _names("fork", "vfork", "clone3?", "execl[ep]?", "execv[pe]?", "execvpe", "execveat", "fexecve", "system",
            "popen", "posix_spawnp?", "kill", "killpg", "tgkill", "sigqueue", "getppid", "ptrace", "setsid",
            "setpgid", "daemon", "prctl", "pidfd_.*", "syscall", "process_vm_(readv|writev)")),
    ("files", "file system, descriptor or network access",
     _names("open(at)?(64)?", "__open(64)?(_2)?", "__openat(64)?_2", "creat(64)?", "fopen(64)?", "freopen(64)?",
            "fdopen", "opendir", "fdopendir", "scandir", "unlink(at)?", "rename(at2?)?", "remove", "mkdir(at)?",
            "rmdir", "symlink(at)?", "link(at)?", "truncate(64)?", "chmod", "fchmod(at)?", "chown", "write",
            "pwrite(64)?", "writev", "__write_chk", "dup", "dup2", "dup3", "socket", "connect", "bind",
            "sendto", "sendmsg")),
    ("files", "C++ file streams", re.compile(r"^std::(__cxx11::)?basic_(i|o)?f(stream|ilebuf)<.*>::(open|basic_)")),
    ("files", "std::filesystem", re.compile(r"^std::(__cxx11::)?filesystem::")),
    ("device", "device-wide CUDA calls that destroy or switch the grader's GPU context",
     _names("cudaDeviceReset", "cudaThreadExit", "cudaSetDevice", "cudaSetValidDevices", "cudaSetDeviceFlags",
            "cuCtxDestroy(_v2)?", "cuCtxCreate.*", "cuCtxSetCurrent", "cuCtxPopCurrent(_v2)?",
            "cuDevicePrimaryCtxReset(_v2)?", "cuDevicePrimaryCtxRelease(_v2)?")),
]

WHY = {
    "library_gemm": "a stage must compute the product itself; a library GEMM is not your work",
    "dynamic_loading": "it hides what a stage calls from this scan",
    "process": "a stage must not start, signal or watch processes",
    "files": "a stage must not touch files, descriptors or the network (printf for debugging is fine)",
    "device": "the grader owns the GPU context; resetting or switching it breaks the check",
}

DEFINED_TYPES = set("TtWwVvDdBbRrGgSsiu")

# Categories whose calls could act from a static initializer, before main (in gemmlab-stages; the
# grader's parent holds no submission code). A grading job refuses to run such a build (--gate).
UNSAFE_TO_RUN = ("process", "files", "dynamic_loading")


def classify(name):
    """The (category, label) of a forbidden symbol, or None."""
    bare = name.split("@")[0]
    for category, label, pattern in FORBIDDEN:
        if pattern.search(bare):
            return category, label
    return None


def read_symbols(obj, nm="nm", cxxfilt="c++filt"):
    """[(mangled, demangled, type)] of an object file."""
    out = subprocess.run([nm, "-P", obj], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"nm {obj}: {out.stderr.strip()}")
    rows = []
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and not line.endswith(":"):
            rows.append((parts[0], parts[1]))
    names = "\n".join(r[0] for r in rows)
    dem = subprocess.run([cxxfilt], input=names, capture_output=True, text=True).stdout.splitlines() if rows else []
    if len(dem) != len(rows):
        dem = [r[0] for r in rows]
    return [(m, d, t) for (m, t), d in zip(rows, dem)]


def instantiation(demangled):
    """The explicit instantiation a student writes for a demangled entry point."""
    sig = demangled.replace("gemmlab::submission::", "").replace("gemmlab::", "")
    sig = re.sub(r"(\w+(?:<[^<>]*>)?) const([&*])", r"const \1\2", sig)
    sig = sig.replace("CUstream_st*", "cudaStream_t")
    return f"template {sig};"


def stage_names(header):
    """Stage names from the registry header (rows look like {"name", "Title", ...)."""
    text = Path(header).read_text()
    body = text[text.find("stage_table()"):]
    return re.findall(r'^\s*\{"(\w+)",\s*"', body, flags=re.M)


def scan(objects, registry=None, stages=None):
    objects = [Path(o) for o in objects]
    stages = list(stages or [])
    info = {}
    for o in objects:
        syms = read_symbols(str(o))
        info[o.stem] = {
            "file": o.stem + ".cu",
            "undefined": {m: d for m, d, t in syms if t in ("U", "w", "v")},
            "defined": {m: d for m, d, t in syms if t in DEFINED_TYPES and t not in ("U",)},
        }
    # What each object itself references that it may not (undefined names; header-only libraries
    # such as CUTLASS show up among the defined ones).
    for name, o in info.items():
        flagged = {}
        for table in (o["undefined"], o["defined"]):
            for mangled, demangled in table.items():
                c = classify(demangled)
                if c and demangled not in flagged:
                    flagged[demangled] = c
        o["flagged"] = [{"symbol": s, "category": c, "what": label, "file": o["file"]}
                        for s, (c, label) in sorted(flagged.items())]
    # Which objects each object calls into.
    provider = {}
    for name, o in info.items():
        for mangled in o["defined"]:
            provider.setdefault(mangled, set()).add(name)
    calls = {name: set().union(*[provider.get(m, set()) for m in o["undefined"]]) - {name}
             for name, o in info.items()}

    result = {"schema": SCHEMA, "rule": RULE, "files": {}, "stages": {}, "missing": [], "unsafe_to_run": []}
    for name, o in sorted(info.items()):
        result["files"][o["file"]] = {"stage": name if name in stages else None, "flagged": o["flagged"],
                                      "calls_into": sorted(info[c]["file"] for c in calls[name])}
    # Code in any file can run before main (static initializers): a build whose files call these
    # is not run by a grading job at all (--gate), whatever the sandbox of the children is.
    for name, o in sorted(info.items()):
        risky = sorted({f["symbol"] for f in o["flagged"] if f["category"] in UNSAFE_TO_RUN})
        if risky:
            result["unsafe_to_run"].append({"file": o["file"], "symbols": risky})
    for stage in stages:
        if stage not in info:
            continue
        seen, todo = {stage}, [stage]
        while todo:
            for nxt in calls[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        flagged = [f for n in sorted(seen) for f in info[n]["flagged"]]
        if not flagged:
            continue
        first = flagged[0]
        names = sorted({f["symbol"] for f in flagged})
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        problem = (f"{first['file']} references {shown} ({first['what']}): {WHY[first['category']]}. "
                   f"Rejected by the symbol scan; see {RULE}.")
        result["stages"][stage] = {"disposition": "rejected", "problem": problem,
                                   "symbols": names, "categories": sorted({f["category"] for f in flagged}),
                                   "files": sorted({f["file"] for f in flagged})}
    if registry:
        defined = set().union(*[set(o["defined"]) for o in info.values()]) if info else set()
        for mangled, demangled, t in read_symbols(str(registry)):
            if t != "U" or "gemmlab::submission::" not in demangled or mangled in defined:
                continue
            m = re.search(r"gemmlab::submission::(\w+)(<[^()]*>)?\(", demangled)
            func, targs = (m.group(1), m.group(2) or "") if m else (demangled, "")
            stage = next((s for s in stages if func == f"gemm_{s}" or func.startswith(s + "_")),
                         func.replace("gemm_", ""))
            file = f"{stage}.cu"
            if stage not in info:
                problem = (f"{file} is missing (or was not compiled): the registry needs {func}{targs}. "
                           f"Copy the stub of {file} from the handout.")
            else:
                problem = (f"{file} does not define {func}{targs}: keep its explicit instantiation at the end "
                           f"of the file, `{instantiation(demangled)}` (inside namespace "
                           f"gemmlab::GEMMLAB_NS). Without it the template is never compiled for those "
                           f"arguments and the grader cannot link.")
            result["missing"].append({"stage": stage, "file": file, "symbol": demangled, "problem": problem})
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("objects", nargs="*", help="the stage object files ($(SUB_BUILD)/stages/*.o)")
    ap.add_argument("--registry", help="the submission's registry.o (to find missing entry points)")
    ap.add_argument("--stages-header", default=str(ROOT / "grader/include/gemmlab/stages.h"))
    ap.add_argument("--out", help="write the JSON here (atomically)")
    ap.add_argument("--fail-on-missing", action="store_true", help="exit 1 when an entry point is missing")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--gate", metavar="SYMBOLS_JSON",
                    help="only read this scan and exit 1 when the build is unsafe to run (a grading job "
                         "runs this before the grader binary)")
    args = ap.parse_args()

    if args.gate:
        unsafe = json.loads(Path(args.gate).read_text()).get("unsafe_to_run", [])
        for u in unsafe:
            print(f"gemmlab: refusing to run this submission: {u['file']} references {', '.join(u['symbols'])}; "
                  f"code in a stage file can run before any sandbox exists, so a build that calls these is "
                  f"not executed (see {RULE}).", file=sys.stderr)
        return 1 if unsafe else 0

    result = scan(args.objects, args.registry, stage_names(args.stages_header))
    if args.out:
        tmp = f"{args.out}.tmp{os.getpid()}"
        Path(tmp).write_text(json.dumps(result, indent=2) + "\n")
        os.replace(tmp, args.out)
    if not args.quiet:
        for stage, r in result["stages"].items():
            print(f"gemmlab: warning: stage {stage} will be rejected: {r['problem']}", file=sys.stderr)
        for m in result["missing"]:
            print(f"gemmlab: error: {m['problem']}", file=sys.stderr)
        for u in result["unsafe_to_run"]:
            print(f"gemmlab: warning: a grading job will not run this build: {u['file']} references "
                  f"{', '.join(u['symbols'])} (see {RULE})", file=sys.stderr)
    return 1 if args.fail_on_missing and result["missing"] else 0


if __name__ == "__main__":
    sys.exit(main())
