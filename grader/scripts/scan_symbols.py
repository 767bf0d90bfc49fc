#!/usr/bin/env python3
"""The symbol check of a submission's compiled stage files: what each may reference and define.

A stage file is compiled against the stage API alone (grader/include) and linked into the library of
its stage (and of every stage that calls into it), which gemmlab-stages opens with RTLD_LOCAL in
sandboxed children (grader/src/runner/submission_library.h). Before those links, this check reads
every stage object with `nm` and holds it to two allowlists:

  references  what a stage may call: the CUDA runtime calls a kernel stage needs (launches, errors,
              device queries, memory for the pitched stage, its own streams and events), host math,
              printf and C++ iostreams for debugging, memory and string basics, the C++ runtime
              (exceptions, guards, operator new/delete, std::string) and the stage API itself —
              ALLOWED_REFERENCES (symbol_rules.py, the rules' one home) says why each group is
              there. Everything else — the grader's own functions, cuBLAS or any library GEMM,
              clocks, files, processes, dynamic loading, NVML, CUPTI, host callbacks, mapped or
              managed memory — is refused.
  definitions what a stage may define: its own names (its kernels and helpers, inline C++
              functions from headers). A definition of a name that libc, libm, libstdc++, the CUDA
              runtime, the driver API, NVML, cuRAND, cuBLAS or CUPTI export (clock_gettime,
              cudaEventRecord, malloc, nvmlDeviceGetClockInfo...) is refused — it would replace the
              library's function — and so is one in the grader's namespace outside
              gemmlab::GEMMLAB_NS.

A file with a refused symbol is not linked; the stages whose files reference it (directly or through
a helper file) are `rejected` with the symbol and the rule named, and every other stage builds and
runs. Each stage gets a library of its own (libgemmlab-submission-<stage>.so), linked from exactly
the files this check reads for it: its stage file and the files it calls into by name (its closure,
"libraries" in the JSON). So code no name of the stage's files reaches — another stage's kernel whose
address a third file's static initializer keeps in a table — is not in the process that runs the
stage at all, and what the tensor-core rule reads for a stage is all the code that can run for it.
Each library is linked --no-undefined against the CUDA runtime and the C/C++ runtime only, so a
reference this check missed could still not reach the grader or another library.

  scan_symbols.py --write-protected build/protected-symbols.json --cuda-lib /usr/local/cuda/lib64
  scan_symbols.py --protected build/protected-symbols.json --registry .../submission_exports.o \\
                  --out .../symbols.json [--fail-on-missing] .../stages/*.o
  scan_symbols.py --library .../symbols.json STAGE (the objects of that stage's library, for the Makefile)
  scan_symbols.py --strict .../symbols.json       (exit 2 when a stage file costs points: `make`)

The check also finds entry points the registry needs but no file defines (a forgotten explicit
instantiation) and says how to fix it, and lists the kernels of the linked files ("kernels"): the
benchmark refuses a timed call during which the GPU ran any other kernel (docs/timing.md). The JSON it writes (schema gemmlab.symbols/2) is what
`gemmlab check` and `gemmlab grade` read; docs/gallery.md describes it.
"""
import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kernel_names  # noqa: E402  (demangled and short names)
import registry  # noqa: E402  (the stages, their entry points, which may use the tensor cores)
from symbol_rules import (RULE, WHY, NVCC_REGISTRATION_CODE, REGISTRATION, allowed_reference,  # noqa: E402
                          bare, definition_problem, explain_reference)

SCHEMA = "gemmlab.symbols/2"

DEFINED_TYPES = set("TtWwVvDdBbRrGgSsiuC")
LOCAL_TYPES = set("tdbrgsv") - {"v"}  # lowercase = local symbol; 'v'/'w' are weak, not local


def read_symbols(obj, nm="nm"):
    """[(mangled, demangled, type)] of an object file."""
    out = subprocess.run([nm, "-P", obj], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"nm {obj}: {out.stderr.strip()}")
    rows = []
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and not line.endswith(":"):
            rows.append((parts[0], parts[1]))
    return [(m, d, t) for (m, t), d in zip(rows, kernel_names.demangle(r[0] for r in rows))]


def defined_kernels(symbols):
    """Mangled names of the kernels defined in an object, as the GPU reports them: nvcc names each
    kernel's host stub (and its static locals) __device_stub__<name without its leading _>."""
    out = set()
    for _m, d, t in symbols:
        m = re.match(r"^__device_stub__(\S+?)\(", d)
        if m and t not in "Uw":
            out.add("_" + m.group(1))
    return out


def instantiation(demangled):
    """The explicit instantiation a student writes for a demangled entry point."""
    sig = demangled.replace("gemmlab::submission::", "").replace("gemmlab::", "")
    sig = re.sub(r"(\w+(?:<[^<>]*>)?) const([&*])", r"const \1\2", sig)
    sig = sig.replace("CUstream_st*", "cudaStream_t")
    return f"template {sig};"


def load_protected(path):
    """{name: library} of every symbol a protected library exports, and the set of libm's functions."""
    if not path:
        return {}, frozenset()
    data = json.loads(Path(path).read_text())
    owner = {}
    for lib, names in data["libraries"].items():
        for n in names:
            owner.setdefault(n, lib)
    return owner, frozenset(data["libraries"].get("libm", []))


def registration_outside_nvcc(obj, objdump="objdump"):
    """{registration function: where} for each one an object refers to from anywhere but nvcc's own
    registration code (a function of the object, or a data section), read from its relocations."""
    found = {}
    code = subprocess.run([objdump, "-dr", "--no-show-raw-insn", str(obj)], capture_output=True, text=True)
    func = None
    for line in code.stdout.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            func = m.group(1)
            continue
        m = re.search(r"\bR_\w+\s+([A-Za-z_][\w.@]*)", line)
        if m and REGISTRATION.match(bare(m.group(1))) and (func or "").split(".")[0] not in NVCC_REGISTRATION_CODE:
            found.setdefault(bare(m.group(1)), func or "?")
    data = subprocess.run([objdump, "-r", str(obj)], capture_output=True, text=True)
    section = ""
    for line in data.stdout.splitlines():
        m = re.match(r"^RELOCATION RECORDS FOR \[(.+)\]:", line)
        if m:
            section = m.group(1)
            continue
        parts = line.split()
        if len(parts) >= 3 and not section.startswith(".text"):
            target = bare(re.split(r"[+-]0x", parts[2])[0])
            if REGISTRATION.match(target):
                found.setdefault(target, f"data ({section})")
    names = [f for f in found.values() if not f.startswith("data")]
    demangled = dict(zip(names, kernel_names.demangle(names)))
    return {k: demangled.get(v, v) for k, v in found.items()}


def read_compile_failure(obj):
    """The verdict compile_stage.py left beside an object it could not make, or None."""
    try:
        return json.loads(Path(f"{obj}.failed").read_text())
    except (OSError, ValueError):
        return None


def read_compile_warnings(obj):
    """{count, first} of what the compiler warned about in an object it made (compile_stage.py's
    <object>.warnings), or None."""
    try:
        w = json.loads(Path(f"{obj}.warnings").read_text())
        return {"count": int(w["count"]), "first": str(w["first"])}
    except (OSError, ValueError, KeyError, TypeError):
        return None


# ---- the tensor-core rule: what the compiled kernels run ---------------------------------------------
# Only a stage whose registry row says tensor_cores (gemmlab/stages.h: the tensor stage) may use the
# tensor cores for anything but FP64: its speed is held against the tensor cores' peak, every other
# stage's against the CUDA cores' FP32 or FP64 peak, and its error bound is per declared input precision.
# A stage file whose kernels run HMMA, HGMMA, IMMA, BMMA, QMMA, ... (in the SASS of any architecture
# the object holds; in its PTX, mma/wmma/wgmma/tcgen05, as a second signal) — itself or through a file
# it calls into — is refused like a forbidden symbol. The FP64 tensor cores (DMMA) multiply and add
# doubles exactly like DFMA and are allowed everywhere. stage_sass.py reads the machine code.

def tensor_reading_key(obj, tool):
    """What the tensor-core reading of an object depends on: the object's bytes, the rule's code (this
    file and stage_sass.py) and the disassembler (its path, size and time)."""
    h = hashlib.sha256()
    for f in (Path(obj), Path(__file__), Path(__file__).with_name("stage_sass.py")):
        h.update(hashlib.sha256(f.read_bytes()).digest())
    st = os.stat(tool)
    h.update(f"{tool}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    return h.hexdigest()


def tensor_core_use(objects, cuobjdump=None, cuda_home=None, cache=None):
    """({object stem: [finding]} of stage_sass.tensor_core_kernels, the check's record): the record says
    whether the check ran and with which disassembler; without one it did not (and says so). cache: a
    directory where each object's reading is kept under tensor_reading_key (the disassembly is most of
    a build's check, and the tests and a sweep build the same files again and again); it is as
    trusted as the objects beside it (the build's object cache)."""
    import stage_sass  # noqa: PLC0415  (needs nothing unless the check runs)
    tool = stage_sass.find_cuobjdump(cuobjdump, cuda_home)
    record = {"ran": bool(tool), "cuobjdump": tool or "", "skipped": []}
    if not tool:
        record["why_not"] = ("no cuobjdump (it comes with the CUDA toolkit; `make setup` installs NVIDIA's own "
                             "copy where the toolkit lacks it)")
        return {}, record
    def read(o):
        kept = Path(cache) / f"tensor-{tensor_reading_key(o, tool)}.json" if cache else None
        if kept and kept.is_file():
            try:
                return o, json.loads(kept.read_text()), None
            except (OSError, ValueError):
                pass  # read again below
        try:
            kernels = stage_sass.tensor_core_kernels(o, tool)
        except RuntimeError as e:
            return o, [], e
        if kept:
            try:
                kept.parent.mkdir(parents=True, exist_ok=True)
                tmp = kept.with_name(f".{kept.name}.{os.getpid()}.{threading.get_ident()}.tmp")
                tmp.write_text(json.dumps(kernels))
                os.replace(tmp, kept)
            except OSError:
                pass  # a cache that cannot be written is no cache
        return o, kernels, None

    found = {}
    existing = [Path(o) for o in objects if Path(o).exists()]
    with ThreadPoolExecutor(max(1, min(len(existing), os.cpu_count() or 1))) as pool:  # nvdisasm per object
        for o, kernels, error in pool.map(read, existing):
            if error:
                record["skipped"].append(f"{o.stem}.cu: {error}")
            elif kernels:
                found[o.stem] = kernels
    mangled = sorted({k["kernel"] for ks in found.values() for k in ks})
    names, labels = dict(zip(mangled, kernel_names.demangle(mangled))), registry.precision_labels()
    for ks in found.values():
        for k in ks:
            k["demangled"] = names[k["kernel"]]
            k["name"] = kernel_names.short_name(k["demangled"], labels)  # as the student wrote it
    return found, record


def tensor_core_problems(info, closure, stages, allowed, found):
    """Adds a "tensor_cores" problem to the object of every stage file that may not use the tensor cores
    and runs them, in its own kernels or in those of a file it calls into (the closure)."""
    import stage_sass  # noqa: PLC0415
    for name, o in info.items():
        if name not in stages or name in allowed:
            continue
        for other in sorted(closure(name)):
            for k in found.get(other, []):
                code = "machine code" if k["signal"] == "sass" else "PTX"
                o["problems"].append({
                    "symbol": k["name"], "kind": "tensor_cores", "rule": "tensor_cores", "file": o["file"],
                    "via": "" if other == name else info[other]["file"],
                    "what": f"{stage_sass.describe_tensor_use(k['instructions'])} in its {k['arch']} {code}"})


def print_tensor_check_note(result, out=sys.stdout):
    """One line when the tensor-core rule could not read some (or all) of the stage files."""
    record = result.get("tensor_core_check") or {}
    if record and not record.get("ran"):
        print(f"  (the tensor-core rule did not run: {record.get('why_not', '')})", file=out)
    for why in record.get("skipped", []):
        print(f"  (the tensor-core rule could not read {why})", file=out)


def tensor_core_message(stage, flagged, allowed):
    """The problem of a stage refused by the tensor-core rule: which kernel, which instructions, the rule
    and where such code belongs."""
    mine = [f for f in flagged if f["rule"] == "tensor_cores"]
    first = mine[0]
    others = len({f["symbol"] for f in mine}) - 1
    home = " or ".join(f"{s}.cu" for s in sorted(allowed)) or "the tensor stage's file"
    whose = (f"{first['file']} calls into {first['via']}, whose kernel" if first.get("via")
             else f"{first['file']} runs tensor-core instructions: its kernel")
    return (f"{whose} {first['symbol']} runs {first['what']}"
            + (f" (and {others} more kernel{'s' if others > 1 else ''} like it)" if others else "") +
            f". Only the tensor stage ({home}) may use the tensor cores for FP16, BF16, TF32, FP8 or integer "
            f"products; stage {stage} is graded on the CUDA cores (FFMA in float; DFMA, or the FP64 tensor "
            f"cores' DMMA, in double). Put such code in {home} (graded per input precision: tensor/fp16, "
            f"tensor/tf32, tensor/3xtf32) and compute {stage} with FMAs (`make sass STAGE={stage}` shows what "
            f"its kernels run). Rejected by the symbol check's tensor-core rule; see {RULE}.")


def scan(objects, exports=None, stages=None, protected=None, math=None, runs_of=None,
         tensor=None):
    """The check of a set of stage objects; see the module's docstring. `exports` is the submission's
    submission_exports.o (the registry's entry points, to find the missing ones); `protected` is {name: lib};
    `runs_of` is registry.entry_point_runs() of the registry header (which runs a missing entry point costs).
    An object that does not exist is a file that did not compile when compile_stage.py left its
    verdict (<object>.failed) beside it, and is skipped (not built yet) otherwise."""
    objects = [Path(o) for o in objects]
    stages = list(stages or [])
    # tensor: {"allowed": stages, "cuobjdump", "cuda_home"} of the tensor-core rule (default: the registry's
    # stages, the disassembler found by stage_sass.find_cuobjdump); False turns the rule off.
    tensor = {} if tensor is None else tensor
    protected = protected or {}
    math = math if math is not None else frozenset()
    info, failed = {}, {}
    for o in objects:
        if not o.exists():
            verdict = read_compile_failure(o)
            if verdict:
                failed[o.stem] = verdict
            continue
        syms = read_symbols(str(o))
        kernels = defined_kernels(syms)
        info[o.stem] = {
            "file": o.stem + ".cu",
            "object": str(o),
            "undefined": {m: d for m, d, t in syms if t in ("U", "w")},
            "strong_undefined": {m for m, _d, t in syms if t == "U"},
            "defined": {m: (d, t) for m, d, t in syms if t in DEFINED_TYPES and t != "U" and t not in "w"},
            "kernels": kernels,
        }
    with ThreadPoolExecutor(max(1, min(len(info), os.cpu_count() or 1))) as pool:  # objdump per object
        for o, found in zip(info.values(), pool.map(lambda o: registration_outside_nvcc(o["object"]), info.values())):
            o["registers"] = found
    provided = set()
    for o in info.values():
        provided |= set(o["defined"])
    # What each object references or defines that it may not.
    for name, o in info.items():
        problems = {}
        for mangled, demangled in o["undefined"].items():
            if mangled in provided:
                continue  # another file of the submission defines it
            strong = mangled in o["strong_undefined"]
            if re.search(r"gemmlab::submission::", demangled) and not strong:
                continue  # a weak reference (the registry's entry points): reported as missing below
            if allowed_reference(mangled, demangled, math):
                continue
            rule, what = explain_reference(demangled)
            if rule == "not_allowed" and strong and bare(mangled) not in protected:
                # Defined by no file and no library: it could not link (--no-undefined).
                rule, what = "undefined", "which no stage file defines"
            problems.setdefault(demangled, {"symbol": bare(demangled), "kind": "reference", "rule": rule,
                                            "what": what, "file": o["file"]})
        for symbol, where in o["registers"].items():
            what = f"GPU code registered from {'its ' + where if where.startswith('data') else where}, not by nvcc: code carried as data"
            problems.setdefault(symbol, {"symbol": symbol, "kind": "reference", "rule": "dynamic_loading",
                                         "what": what, "file": o["file"]})
        for mangled, (demangled, t) in o["defined"].items():
            if t.islower() and t not in "wvu":
                continue  # local: static, anonymous namespace, compiler-internal
            bad = definition_problem(mangled, demangled, t, o["kernels"], protected)
            if bad:
                rule, what = bad
                problems.setdefault(demangled, {"symbol": bare(demangled), "kind": "definition", "rule": rule,
                                                "what": what, "file": o["file"]})
        o["problems"] = [problems[k] for k in sorted(problems)]
    # Which objects each object calls into.
    owner = {}
    for name, o in info.items():
        for mangled in o["defined"]:
            owner.setdefault(mangled, set()).add(name)
    calls = {name: set().union(*[owner.get(m, set()) for m in o["undefined"]]) - {name} for name, o in info.items()}

    def closure(start):
        seen, todo = {start}, [start]
        while todo:
            for nxt in calls.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    allowed = set()
    if tensor is not False:
        allowed = set(tensor.get("allowed", registry.tensor_core_stages()))
        found, tensor_record = tensor_core_use([i["object"] for i in info.values()], tensor.get("cuobjdump"),
                                               tensor.get("cuda_home"), tensor.get("cache"))
        tensor_core_problems(info, closure, stages, allowed, found)

    result = {"schema": SCHEMA, "rule": RULE, "files": {}, "stages": {}, "missing": [], "linkable": [], "kernels": [],
              "libraries": {}}
    if tensor is not False:
        result["tensor_core_check"] = dict(tensor_record, allowed=sorted(allowed))
    for name, verdict in sorted(failed.items()):
        result["files"][f"{name}.cu"] = {"stage": name if name in stages else None, "compiled": False,
                                         "first_error": verdict.get("first_error", ""),
                                         "problems": [], "calls_into": [], "linked": False}
    for name, o in sorted(info.items()):
        reach = closure(name)
        refused = [p for n in sorted(reach) for p in info[n]["problems"]]
        result["files"][o["file"]] = {"stage": name if name in stages else None, "compiled": True,
                                      "problems": o["problems"],
                                      "calls_into": sorted(info[c]["file"] for c in calls[name]),
                                      "linked": not refused}
        warned = read_compile_warnings(o["object"])
        if warned:
            result["files"][o["file"]]["warnings"] = warned
        if not refused:
            result["linkable"].append(o["object"])
            result["kernels"] += sorted(o["kernels"])
    # Each stage's library: its stage file and the files it calls into, when none of them is refused;
    # else nothing (the library holds only the trusted registry, and the stage is `rejected`).
    for stage in stages:
        linked = stage in info and result["files"][info[stage]["file"]]["linked"]
        result["libraries"][stage] = sorted(info[n]["object"] for n in closure(stage)) if linked else []
    for stage in stages:
        if stage in failed:
            first = failed[stage].get("first_error", "")
            result["stages"][stage] = {
                "disposition": "rejected", "symbols": [], "rules": ["does_not_compile"], "files": [f"{stage}.cu"],
                "first_error": first,
                "problem": f"{stage}.cu does not compile: {first}. The build left it out, so this stage "
                           f"cannot run; every other stage was built. Fix the error (`make check` shows the "
                           f"compiler's messages) and build again."}
            continue
        if stage not in info:
            continue
        flagged = [p for n in sorted(closure(stage)) for p in info[n]["problems"]]
        if not flagged:
            continue
        first = flagged[0]
        names = sorted({f["symbol"] for f in flagged})
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        verb = "defines" if first["kind"] == "definition" else "references"
        if all(f["rule"] == "tensor_cores" for f in flagged):
            problem = tensor_core_message(stage, flagged, allowed)
        elif first["rule"] == "undefined":
            problem = (f"{first['file']} references {shown}, which no stage file defines: the library could "
                       f"not be linked with it. Define it (a function declared but never defined, or a template "
                       f"without the explicit instantiation its caller needs), or stop calling it.")
        else:
            problem = (f"{first['file']} {verb} {shown} ({first['what']}): {WHY[first['rule']]}. "
                       f"Rejected by the symbol check; see {RULE}.")
        result["stages"][stage] = {"disposition": "rejected", "problem": problem, "symbols": names,
                                   "rules": sorted({f["rule"] for f in flagged}),
                                   "files": sorted({f["file"] for f in flagged})}
    if exports:
        defined = set().union(*[set(o["defined"]) for o in info.values()]) if info else set()
        for mangled, demangled, t in read_symbols(str(exports)):
            if t not in ("U", "w") or "gemmlab::submission::" not in demangled or mangled in defined:
                continue
            m = re.search(r"gemmlab::submission::(\w+)(<[^()]*>)?\(", demangled)
            func, targs = (m.group(1), m.group(2) or "") if m else (demangled, "")
            stage = next((s for s in stages if func == f"gemm_{s}" or func.startswith(s + "_")),
                         func.replace("gemm_", ""))
            file = f"{stage}.cu"
            if stage in failed:
                continue  # the stage is rejected for not compiling; its entry points are missing for that
            if stage not in info:
                problem = (f"{file} is missing (or was not compiled): the registry needs {func}{targs}. "
                           f"Copy the stub of {file} from the handout.")
            else:
                problem = (f"{file} does not define {func}{targs}: keep its explicit instantiation at the end "
                           f"of the file, `{instantiation(demangled)}` (inside namespace "
                           f"gemmlab::GEMMLAB_NS). Without it the template is never compiled for those "
                           f"arguments and the stage cannot run.")
            args = targs[1:-1] if targs else ""
            prec = args.split(",")[0].strip()
            runs = (runs_of or {}).get((func, args)) or (runs_of or {}).get(("*" + stage, prec)) or []
            miss = {"stage": stage, "file": file, "symbol": demangled, "problem": problem,
                    "runs": [{"variant": v, "precision": p} for _s, v, p in runs]}
            result["missing"].append(miss)
            if stage not in info:
                continue  # no object for it in this scan (not built, or no such file): nothing to reject
            # The entry point is weak (submission_exports.cpp): only these runs are rejected, with the fix.
            verdict = result["stages"].get(stage)
            if verdict and "runs" not in verdict:
                continue  # the whole stage is rejected already
            if verdict is None:
                verdict = result["stages"][stage] = {"disposition": "rejected", "problem": problem, "symbols": [],
                                                     "rules": ["missing_entry_point"], "files": [file], "runs": []}
            verdict["symbols"].append(demangled)
            known = {(r["variant"], r["precision"]) for r in verdict["runs"]}
            new_runs = [r for r in miss["runs"] if (r["variant"], r["precision"]) not in known]
            for r in new_runs:
                r["problem"] = problem
            verdict["runs"] += new_runs
            if not miss["runs"]:
                del verdict["runs"]  # not a run the registry names: the whole stage
    return result


def verdicts(result, source_dir=None):
    """One (state, line) per stage file: state "ok", "warned" (compiles and links, with compiler
    warnings) or "refused" (some of its stages will be rejected); the line says which and why."""
    def shown(file):
        if not source_dir:
            return file
        from_cwd = Path(source_dir) / file
        try:
            return str(from_cwd.resolve().relative_to(Path.cwd().resolve()))
        except (ValueError, OSError):
            return str(from_cwd)

    out = []
    missing_by_file = {}
    for m in result.get("missing", []):
        missing_by_file.setdefault(m["file"], []).append(m)
    for file, f in sorted(result.get("files", {}).items()):
        stage = f.get("stage")
        whose = f"stage {stage}" if stage else "the stages that call it"
        if f.get("compiled") is False:
            out.append(("refused", f"{shown(file)}: does not compile — {whose} will be rejected "
                                   f"(first error: {f.get('first_error', '')})"))
        elif not f.get("linked", True):
            verdict = result["stages"].get(stage) if stage else None
            why = verdict["problem"] if verdict else "it calls into a file that is left out (see below)"
            if f.get("problems") and not verdict:
                p = f["problems"][0]
                why = f"{file} {'defines' if p['kind'] == 'definition' else 'references'} {p['symbol']} ({p['what']})"
            out.append(("refused", f"{shown(file)}: left out of the library — {whose} will be rejected: {why}"))
        elif file in missing_by_file:
            for m in missing_by_file[file]:
                runs = ", ".join(sorted({"/".join(x for x in (stage, r["variant"], r["precision"]) if x)
                                         for r in m["runs"]})) or f"stage {m['stage']}"
                out.append(("refused", f"{shown(file)}: compiles, but {runs} will be rejected: {m['problem']}"))
        elif f.get("warnings"):
            w = f["warnings"]
            many = f"{w['count']} compiler warning{'s' if w['count'] != 1 else ''}"
            out.append(("warned", f"{shown(file)}: ok, with {many} (no points lost; the first: {w['first']})"))
        else:
            out.append(("ok", f"{shown(file)}: ok"))
    for m in result.get("missing", []):
        if m["file"] not in result.get("files", {}):
            out.append(("refused", f"{shown(m['file'])}: missing — {m['problem']}"))
    return out


def verdict_lines(result, source_dir=None):
    """One line per stage file: ok, or what keeps (some of) its stages out and why."""
    return [line for _, line in verdicts(result, source_dir)]


def write_build_log(path, result, objects):
    """Every stage compile's command and output (compile_stage.py's <object>.log), in file order, and
    the verdicts: what a student or TA reads when the short lines are not enough."""
    parts = [f"# the stage files' compiles, then the verdicts ({len(objects)} file(s))\n"]
    for o in objects:
        log = Path(f"{o}.log")
        parts.append(f"\n## {Path(o).stem}.cu\n" + (log.read_text(errors="replace") if log.exists() else "(no log)\n"))
    parts.append("\n## verdicts\n" + "\n".join(verdict_lines(result)) + "\n")
    tmp = f"{path}.tmp{os.getpid()}"
    Path(tmp).write_text("".join(parts))
    os.replace(tmp, path)


def print_verdicts(result, source_dir=None, build_log=None, out=sys.stdout):
    found = verdicts(result, source_dir)
    bad = [line for state, line in found if state == "refused"]
    warned = [line for state, line in found if state == "warned"]
    print("stage files:" + ("" if bad else " every one compiles and links"), file=out)
    for _, line in found:
        print(f"  {line}", file=out)
    if (bad or warned) and build_log:
        print(f"  (the compiler's commands and full output{', every warning included' if warned else ''}: {build_log}"
              + ("; `make WERROR=1` turns warnings into errors" if warned and not bad else "") + ")", file=out)


def strict(result, source_dir=None):
    """`make`'s last word on the stage files: '' when every one compiles and links, else what to
    tell the student (the grader was built without them; what it means for `make check`)."""
    bad = [line.split(": ", 1)[0] for state, line in verdicts(result, source_dir) if state == "refused"]
    if not bad:
        return ""
    files = ", ".join(dict.fromkeys(bad))
    return (f"make: {len(set(bad))} stage file(s) cost points: {files} (the verdicts above say why; `make scan` "
            "shows them again). The grader was built without what they leave out: `make check` still checks "
            "every other stage, and `make` succeeds once they are fixed.")


# ---- the protected libraries' exports --------------------------------------------------------------
def library_paths(cuda_lib):
    """{short name: path} of the libraries whose exported names a stage may not define."""
    cuda_lib = Path(cuda_lib)
    cupti = [cuda_lib / "libcupti.so", cuda_lib.parent / "extras/CUPTI/lib64/libcupti.so"]

    def gcc_file(name):
        out = subprocess.run(["g++", f"-print-file-name={name}"], capture_output=True, text=True).stdout.strip()
        return Path(out) if out and Path(out).is_absolute() else None

    candidates = {
        "libc": [gcc_file("libc.so.6")], "libm": [gcc_file("libm.so.6")],
        "libstdc++": [gcc_file("libstdc++.so.6")], "libgcc_s": [gcc_file("libgcc_s.so.1")],
        "libcudart": [cuda_lib / "libcudart.so"],
        "the CUDA driver API": [Path("/usr/lib/x86_64-linux-gnu/libcuda.so.1"), cuda_lib / "stubs/libcuda.so"],
        "NVML": [Path("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1"), cuda_lib / "stubs/libnvidia-ml.so"],
        "cuRAND": [cuda_lib / "libcurand.so"], "cuBLAS": [cuda_lib / "libcublas.so"],
        "cuBLASLt": [cuda_lib / "libcublasLt.so"], "CUPTI": cupti,
    }
    found = {}
    for lib, paths in candidates.items():
        for p in paths:
            if p and p.exists():
                found[lib] = p
                break
    return found


def exported_names(path):
    out = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True, text=True)
    names = set()
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] in "TtWwVvDdBbRriu":
            names.add(bare(parts[2]))
    return sorted(names)


def write_protected(out, cuda_lib):
    libs = library_paths(cuda_lib)
    data = {"schema": "gemmlab.protected-symbols/1", "paths": {k: str(v) for k, v in libs.items()},
            "libraries": {k: exported_names(v) for k, v in libs.items()}}
    missing = sorted({"libc", "libm", "libstdc++", "libcudart"} - set(libs))
    if missing:
        raise SystemExit(f"scan_symbols.py: cannot find {', '.join(missing)} (looked with g++ -print-file-name "
                         f"and in {cuda_lib}); the symbol check needs their exported names")
    tmp = f"{out}.tmp{os.getpid()}"
    Path(tmp).write_text(json.dumps(data) + "\n")
    os.replace(tmp, out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("objects", nargs="*", help="the stage object files ($(SUB_BUILD)/stages/*.o)")
    ap.add_argument("--registry", help="the submission's submission_exports.o (to find missing entry points)")
    ap.add_argument("--protected", help="the protected libraries' exports (--write-protected writes it)")
    ap.add_argument("--stages-header", default=str(registry.HEADER))
    ap.add_argument("--out", help="write the JSON here (atomically)")
    ap.add_argument("--source-dir", help="the submission's directory (verdicts name its files as typed)")
    ap.add_argument("--build-log", help="gather the compiles' commands and output here (and name it)")
    ap.add_argument("--fail-on-missing", action="store_true", help="exit 1 when an entry point is missing")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--verdicts", metavar="SYMBOLS_JSON", help="print the verdicts of a symbols.json again")
    ap.add_argument("--write-protected", metavar="OUT", help="write the protected libraries' exported names")
    ap.add_argument("--cuda-lib", default="/usr/local/cuda/lib64", help="the CUDA toolkit's library directory")
    ap.add_argument("--library", nargs=2, metavar=("SYMBOLS_JSON", "STAGE"),
                    help="print the objects of STAGE's library: its stage file and the files it calls into")
    ap.add_argument("--strict", metavar="SYMBOLS_JSON",
                    help="exit 2, saying which, when a stage file of this scan costs points (`make`)")
    ap.add_argument("--cuobjdump", help="the disassembler of the tensor-core rule (default: found as make sass finds it)")
    ap.add_argument("--cuda-home", help="the toolkit whose cuobjdump to prefer")
    ap.add_argument("--tensor-cache", help="where the tensor-core rule keeps its reading of each object, by content "
                                           "(the build's object cache; default: none)")
    args = ap.parse_args()

    if args.write_protected:
        write_protected(args.write_protected, args.cuda_lib)
        return 0
    if args.library:
        path, stage = args.library
        print(" ".join(json.loads(Path(path).read_text())["libraries"].get(stage, [])))
        return 0
    if args.strict:
        result = json.loads(Path(args.strict).read_text())
        message = strict(result, result.get("source_dir"))
        if message:
            print(message, file=sys.stderr)
            return 2
        return 0
    if args.verdicts:
        result = json.loads(Path(args.verdicts).read_text())
        print_verdicts(result, result.get("source_dir"), args.build_log)
        print_tensor_check_note(result)
        return 0

    owner, math = load_protected(args.protected)
    result = scan(args.objects, args.registry, registry.stage_names(args.stages_header), owner, math,
                  registry.entry_point_runs(args.stages_header),
                  {"allowed": registry.tensor_core_stages(args.stages_header), "cuobjdump": args.cuobjdump,
                   "cuda_home": args.cuda_home, "cache": args.tensor_cache})
    if args.source_dir:
        result["source_dir"] = args.source_dir
    if args.build_log:
        write_build_log(args.build_log, result, args.objects)
    if args.out:
        tmp = f"{args.out}.tmp{os.getpid()}"
        Path(tmp).write_text(json.dumps(result, indent=2) + "\n")
        os.replace(tmp, args.out)
    if not args.quiet:
        print_verdicts(result, args.source_dir, args.build_log)
        print_tensor_check_note(result)
    return 1 if args.fail_on_missing and result["missing"] else 0


if __name__ == "__main__":
    sys.exit(main())
