#!/usr/bin/env python3
"""ncu_profile.py — `make profile`: Nsight Compute (ncu) on one call of one stage, and a short summary
of each kernel the stage launched, for the student and for the lab report.

  make profile STAGE=tiled/16 [PREC=float] [SHAPE=4096x4096x4096]

What runs: `gemmlab-stages run --stage S --prec P --shape MxNxK`, the runner the grader starts for
graded calls, calling the stage once on random data (the same command `make sanitize` runs under
compute-sanitizer), under `ncu --csv --page raw`. Nothing of the judge is involved: ncu starts the
runner itself, and the runner started that way is not sandboxed (the judge applies the sandbox when
it starts a runner; judge/isolation.cpp), so ncu can inject its library into it. The runner's own
kernels (filling A, B and C; grader/src/runner) are profiled too and left out of the summary.

Default shape: the first shape of course.toml [[scoring.shapes]], the one the scores headline.

Writes, in results/<submission>/profile/ (--out):
  <stage>[-<variant>]-<prec>.json   schema gemmlab.profile/1: per kernel its name, grid and block,
                                    registers per thread, shared memory per block, achieved and
                                    theoretical occupancy, memory and compute (SM) throughput in %
                                    of peak, DRAM bandwidth, duration, the top stall reasons; plus
                                    the ncu command, ncu's version, the GPU, the date
  <...>.md                          the same as a short table to read (make report includes it)
  <...>.csv                         ncu's raw CSV, as it printed it

Exit status: 0 profiled; 1 the stage launched no kernel or ncu failed; 2 bad arguments; 3 no GPU;
4 ncu is missing; 5 ncu may not read the GPU's performance counters (ERR_NVGPUCTRPERM: the message
says what an administrator sets). `--check` stops after the GPU and ncu checks (the Makefile runs it
before it builds anything).
"""
from __future__ import annotations

import argparse
import csv
import datetime as dt
import hashlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kernel_names  # noqa: E402  (a kernel's demangled and short names)
import registry  # noqa: E402  (the tensor stage's input precisions, as its variants are labelled)

SCHEMA = "gemmlab.profile/1"
PERMISSION_URL = "https://developer.nvidia.com/ERR_NVGPUCTRPERM"
EXIT_FAILED, EXIT_USAGE, EXIT_NO_GPU, EXIT_NO_NCU, EXIT_NO_PERMISSION = 1, 2, 3, 4, 5

# ncu's sections whose metrics the summary reads (their raw metrics come with them, named as this
# ncu names them), and the metrics asked for by name besides. A metric this ncu or GPU does not know
# is dropped and the run repeated (see run_ncu); the summary shows "n/a" for it.
SECTIONS = ("SpeedOfLight", "LaunchStats", "Occupancy", "WarpStateStats")
METRICS = {
    "registers": "launch__registers_per_thread",
    "smem_static": "launch__shared_mem_per_block_static",
    "smem_dynamic": "launch__shared_mem_per_block_dynamic",
    "occupancy_achieved": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "occupancy_theoretical": "sm__maximum_warps_per_active_cycle_pct",
    "memory_throughput": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "compute_throughput": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram_throughput": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram_bandwidth": "dram__bytes.sum.per_second",
    "duration": "gpu__time_duration.sum",
    # Shared memory: instructions, wavefronts (a conflict-free 4-byte access takes one per instruction, an
    # 8-byte one two, a 16-byte one four; an n-way bank conflict n times as many) and the conflicts ncu counts.
    "smem_ld_instructions": "smsp__sass_inst_executed_op_shared_ld.sum",
    "smem_ldsm_instructions": "smsp__inst_executed_op_ldsm.sum",  # ldmatrix: shared loads too (ncu's own rule)
    "smem_st_instructions": "smsp__sass_inst_executed_op_shared_st.sum",
    "smem_ld_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "smem_st_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "smem_ld_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "smem_st_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    # Global memory: 32-byte sectors per request (per warp instruction): 4 for a warp reading 32
    # consecutive floats, 8 for doubles or float2, 16 for float4; more means the warp's addresses scatter.
    "gmem_ld_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "gmem_ld_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "gmem_st_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "gmem_st_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    # The roofline: the floating-point work done on the CUDA cores (thread instructions; an FMA is two
    # flops), the bytes moved to and from DRAM, and the SM clock ncu ran at.
    "ffma": "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "fadd": "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "fmul": "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "dfma": "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
    "dadd": "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
    "dmul": "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
    "dram_bytes": "dram__bytes.sum",
    "sm_clock": "sm__cycles_elapsed.avg.per_second",
}
# The GPU, as ncu's raw page reports it with every kernel (no need to ask for them).
DEVICE = {"sms": "device__attribute_multiprocessor_count",
          "cc_major": "device__attribute_compute_capability_major",
          "cc_minor": "device__attribute_compute_capability_minor",
          "name": "device__attribute_display_name"}
# Blocks per SM each resource allows (the Occupancy section): the smallest is what limits occupancy.
OCCUPANCY_LIMITS = {
    "registers": "launch__occupancy_limit_registers",
    "shared memory": "launch__occupancy_limit_shared_mem",
    "warps": "launch__occupancy_limit_warps",
    "blocks": "launch__occupancy_limit_blocks",
}
# Stall reasons, in the first family this ncu reports: average cycles a warp spent stalled for each
# reason per instruction issued (WarpStateStats), else its sampled counts.
STALL_FAMILIES = (
    re.compile(r"^smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$"),
    re.compile(r"^smsp__average_warp_latency_issue_stalled_(\w+?)\.ratio$"),
    re.compile(r"^smsp__pcsamp_warps_issue_stalled_(\w+?)$"),
)
NOT_A_STALL = {"selected"}  # the warp issued: not a stall
TOP_STALLS = 3
# The runner's own kernels (grader/src/runner: runner.cu fills the inputs, stage_call.cu checks a
# pitched stage's operands), in the grader's namespace, where no stage may define anything.
RUNNER_KERNEL = re.compile(r"^(?:void\s+)?gemmlab::(?:\(anonymous namespace\)::)?"
                           r"(?:fill_standalone|count_mismatch|padding_changed)\b")
RUNNER_KERNEL_NAMES = {"fill_standalone", "count_mismatch", "padding_changed"}
BOUND_THRESHOLD = 60.0  # ncu's rule of thumb: a unit under 60% of its peak is not what limits the kernel


class ProfileError(Exception):
    """A problem to report in words, without a traceback; .status is the exit status."""

    def __init__(self, message, status=EXIT_FAILED):
        super().__init__(message)
        self.status = status


def say(text):
    print(f"profile: {text}", flush=True)


# ---- the checks before anything runs ---------------------------------------------------------

def gpu_info():
    """{"name", "driver"} of the first GPU, or None where nvidia-smi sees none."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return None
    try:
        listing = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60)
        if listing.returncode != 0 or "GPU" not in listing.stdout:
            return None
        q = subprocess.run([smi, "--query-gpu=name,driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    first = (q.stdout.strip().splitlines() or [""])[0]
    name, _, driver = first.partition(",")
    return {"name": name.strip() or "unknown GPU", "driver": driver.strip()}


def find_ncu(ncu):
    """The path of ncu, or None."""
    if ncu and "/" in ncu:
        return ncu if Path(ncu).is_file() else None
    return shutil.which(ncu or "ncu")


def ncu_version(ncu):
    try:
        out = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=120).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    m = re.search(r"Version\s+(\S+)", out)
    return m.group(1) if m else out.strip().splitlines()[-1] if out.strip() else ""


def typed_command():
    """The command to run again on a GPU node: the one the student typed (the Makefile passes it in
    GEMMLAB_COMMAND: the one source of these hints), else this script's own command line."""
    return os.environ.get("GEMMLAB_COMMAND") or shlex.join([sys.executable, *sys.argv])


def preflight(ncu_arg):
    """(gpu, ncu path); raises ProfileError with one line where either is missing."""
    gpu = gpu_info()
    if gpu is None:
        srun = os.environ.get("GEMMLAB_SRUN")  # the course's srun line, from the Makefile (make hint)
        raise ProfileError("no NVIDIA GPU on this machine (nvidia-smi sees none): profiling runs the stage on "
                           "a GPU. On the course cluster, run the same command on a GPU node"
                           + (f": {srun}" if srun else ", after the srun line `make hint` prints: srun ...")
                           + f" {typed_command()}", EXIT_NO_GPU)
    ncu = find_ncu(ncu_arg)
    if ncu is None:
        raise ProfileError(f"Nsight Compute (ncu) not found ({ncu_arg or 'ncu'}): it ships with the CUDA toolkit "
                           "(<toolkit>/bin/ncu) or as the nsight-compute package; NCU=<path> names it",
                           EXIT_NO_NCU)
    return gpu, ncu


# ---- ncu's raw CSV -----------------------------------------------------------------------------

PERMISSION = re.compile(r"ERR_NVGPUCTRPERM|does not have permission to access NVIDIA GPU Performance Counters")
UNKNOWN_METRIC = (re.compile(r"Failed to find metrics?:?\s+(.+)$", re.M),
                  re.compile(r"Failed to access the following \d+ metrics?:\s*(.+)$", re.M),
                  re.compile(r"[Uu]nknown metrics?:?\s+(.+)$", re.M))


def permission_denied(text):
    """True when ncu's output says the user may not read the GPU's performance counters."""
    return bool(PERMISSION.search(text or ""))


def permission_message():
    return ("profile: error: ncu may not read this GPU's performance counters (ERR_NVGPUCTRPERM): the NVIDIA "
            "driver lets only administrators profile.\n"
            "  An administrator allows every user with the nvidia kernel module option\n"
            "      options nvidia NVreg_RestrictProfilingToAdminUsers=0\n"
            "  in a file of /etc/modprobe.d/, then reloads the module (or reboots); or run make profile as root "
            "(in a container: started with --cap-add=SYS_ADMIN).\n"
            f"  NVIDIA's instructions: {PERMISSION_URL}\n"
            "  On the course cluster, ask the staff which GPU nodes allow profiling. `make resources` (no GPU, no "
            "counters) shows registers, shared memory and spills of every kernel meanwhile.")


def unknown_metrics(text, asked):
    """The metrics of `asked` that ncu's output says it does not know."""
    found = set()
    for pattern in UNKNOWN_METRIC:
        for m in pattern.finditer(text or ""):
            found |= {t.strip(" .,'\"") for t in re.split(r"[,\s]+", m.group(1))}
    return [m for m in asked if m in found]


def number(text):
    """A float from ncu's text ("1,234.5", "98.7"), None for "n/a", "" or anything else."""
    t = (text or "").strip().replace(",", "")
    try:
        return float(t)
    except ValueError:
        return None


def parse_raw_csv(text):
    """ncu's `--csv --page raw` output -> one dict per profiled kernel launch:
    {"info": {column: text}, "metrics": {name: (text, unit)}}. Lines before the header (ncu's
    ==PROF== messages, the program's own output) and after the data are skipped; the second row is
    the units row when its ID cell is empty."""
    lines = (text or "").splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        return []
    rows = list(csv.reader(io.StringIO("\n".join(l for l in lines[start:] if l.startswith('"')))))
    header, rows = rows[0], rows[1:]
    units = [""] * len(header)
    if rows and rows[0] and rows[0][0] == "":
        units, rows = rows[0], rows[1:]
    launches = []
    for row in rows:
        if len(row) < len(header):
            continue
        info, metrics = {}, {}
        for name, unit, value in zip(header, units, row):
            if "__" in name:
                metrics[name] = (value, unit)
            else:
                info[name] = value
        launches.append({"info": info, "metrics": metrics})
    return launches


BYTE_PREFIX = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30,
               "Ti": 2**40}
SECONDS = {"second": 1, "s": 1, "msecond": 1e-3, "ms": 1e-3, "usecond": 1e-6, "us": 1e-6, "nsecond": 1e-9,
           "ns": 1e-9}


def in_bytes(value, unit):
    m = re.fullmatch(r"(\w*?)byte", (unit or "byte").strip())
    return value * BYTE_PREFIX.get(m.group(1), 1) if m and value is not None else value


def in_gb_per_s(value, unit):
    m = re.fullmatch(r"(\w*?)byte/(\w+)", (unit or "").strip())
    if value is None or not m or m.group(2) not in SECONDS:
        return value if value is None or not unit else None
    return value * BYTE_PREFIX.get(m.group(1), 1) / SECONDS[m.group(2)] / 1e9


HERTZ = {"hz": 1, "hertz": 1, "khz": 1e3, "mhz": 1e6, "ghz": 1e9, "cycle/second": 1, "cycle/nsecond": 1e9,
         "cycle/usecond": 1e6}


def in_mhz(value, unit):
    u = (unit or "hz").strip().lower()
    return value * HERTZ[u] / 1e6 if value is not None and u in HERTZ else None


def in_us(value, unit):
    u = (unit or "nsecond").strip()
    return value * SECONDS[u] / 1e-6 if value is not None and u in SECONDS else None


def triple(text):
    """"(16, 16, 1)" -> [16, 16, 1]; None where the text is no such triple."""
    nums = re.findall(r"\d+", text or "")
    return [int(n) for n in nums] if len(nums) == 3 else None


def total(metrics, name):
    """[n] from a launch size metric, where ncu gives no (x, y, z) column; None without it."""
    v = number(metrics.get(name, ("", ""))[0])
    return [int(v)] if v is not None else None


def is_runner_kernel(full):
    """The runner's own kernels, by their full name, or by their last name where ncu shortens the
    rest (ncu 2025 prints "unnamed>::fill_standalone(float *, ...)" for the anonymous namespace)."""
    if RUNNER_KERNEL.match(full):
        return True
    if "submission::" in full or "reference::" in full:  # a stage's own kernel of the same name
        return False
    m = re.search(r"(?:^|::|\s)(\w+)\s*(?:[(<]|$)", full)
    return bool(m) and m.group(1) in RUNNER_KERNEL_NAMES


def stalls_of(metrics):
    """[(reason, value)] of the first stall family present, largest first ("selected" left out)."""
    for family in STALL_FAMILIES:
        found = []
        for name, (text, _unit) in metrics.items():
            m = family.match(name)
            if m and not m.group(1).endswith("_not_issued") and m.group(1) not in NOT_A_STALL:
                v = number(text)
                if v is not None:
                    found.append((m.group(1), v))
        if found:
            return sorted(found, key=lambda rv: -rv[1]), family.pattern
    return [], None


def bound_of(memory_pct, compute_pct):
    """What limits the kernel, by ncu's rule of thumb on its two throughputs (% of peak)."""
    if memory_pct is None or compute_pct is None:
        return "n/a"
    if max(memory_pct, compute_pct) < BOUND_THRESHOLD:
        return "latency"  # neither unit is busy: too few warps in flight, or warps stalled
    return "memory" if memory_pct >= compute_pct else "compute"


def summarize(launches):
    """The summary of each stage kernel launch (runner kernels left out): a list of dicts, and the
    names of the metrics no launch reported."""
    kernels, missing, labels = [], set(), registry.precision_labels()
    for launch in launches:
        info, metrics = launch["info"], launch["metrics"]
        listed = info.get("Kernel Name", "?")
        full = kernel_names.demangle([listed])[0] if listed.startswith("_Z") else listed
        if is_runner_kernel(full):
            continue

        def get(name, convert=None):
            text, unit = metrics.get(name, ("", ""))
            v = number(text)
            if v is None:
                missing.add(name)
                return None
            return convert(v, unit) if convert else v

        k = {"id": info.get("ID"), "name": kernel_names.short_name(full, labels), "full_name": full,
             "grid": triple(info.get("Grid Size")) or total(metrics, "launch__grid_size"),
             "block": triple(info.get("Block Size")) or total(metrics, "launch__block_size"),
             "registers_per_thread": get(METRICS["registers"]),
             "shared_mem_static_bytes": get(METRICS["smem_static"], in_bytes),
             "shared_mem_dynamic_bytes": get(METRICS["smem_dynamic"], in_bytes),
             "occupancy_achieved_pct": get(METRICS["occupancy_achieved"]),
             "occupancy_theoretical_pct": get(METRICS["occupancy_theoretical"]),
             "memory_throughput_pct": get(METRICS["memory_throughput"]),
             "compute_throughput_pct": get(METRICS["compute_throughput"]),
             "dram_throughput_pct": get(METRICS["dram_throughput"]),
             "dram_gbs": get(METRICS["dram_bandwidth"], in_gb_per_s),
             "duration_us": get(METRICS["duration"], in_us)}
        for key, v in list(k.items()):
            if isinstance(v, float):
                k[key] = int(v) if v.is_integer() else round(v, 3)
        smem = [k["shared_mem_static_bytes"], k["shared_mem_dynamic_bytes"]]
        k["shared_mem_per_block_bytes"] = sum(smem) if all(v is not None for v in smem) else None
        limits = {what: number(metrics.get(m, ("", ""))[0]) for what, m in OCCUPANCY_LIMITS.items()}
        limits = {what: int(v) for what, v in limits.items() if v is not None}
        k["blocks_per_sm_limits"] = limits
        k["occupancy_limiter"] = sorted(w for w, v in limits.items() if v == min(limits.values())) if limits else []
        stalls, family = stalls_of(metrics)
        all_stalls = sum(v for _, v in stalls)
        k["stalls"] = [{"reason": r, "value": round(v, 3),
                        "share_pct": round(100 * v / all_stalls, 1) if all_stalls else None}
                       for r, v in stalls[:TOP_STALLS]]
        k["stall_metric"] = family
        if family is None:
            missing.add("smsp__average_warps_issue_stalled_*_per_issue_active.ratio")
        k["bound"] = bound_of(k["memory_throughput_pct"], k["compute_throughput_pct"])
        memory_access(k, get, metrics)
        roofline(k, get, metrics)
        kernels.append(k)
    return kernels, sorted(missing)


def ratio(a, b):
    return round(a / b, 3) if a is not None and b else None


def memory_access(k, get, metrics):
    """Bank conflicts and wavefronts per shared-memory instruction; sectors per global request."""
    for op in ("ld", "st"):
        inst, waves = get(METRICS[f"smem_{op}_instructions"]), get(METRICS[f"smem_{op}_wavefronts"])
        if op == "ld" and inst is not None:  # ldmatrix, where the GPU has it (no LDSM: no such counter)
            inst += number(metrics.get(METRICS["smem_ldsm_instructions"], ("", ""))[0]) or 0
        k[f"shared_{op}_instructions"] = int(inst) if inst is not None else None
        k[f"shared_{op}_wavefronts_per_instruction"] = ratio(waves, inst)
        conflicts = get(METRICS[f"smem_{op}_conflicts"])
        k[f"shared_{op}_bank_conflicts"] = int(conflicts) if conflicts is not None else None
        sectors, requests = get(METRICS[f"gmem_{op}_sectors"]), get(METRICS[f"gmem_{op}_requests"])
        k[f"global_{op}_sectors_per_request"] = ratio(sectors, requests)


def roofline(k, get, metrics):
    """The kernel on the roofline: its flops on the CUDA cores, its DRAM bytes, their ratio (the
    arithmetic intensity), the GFLOPS it reached and the roof at that intensity: the FMA peak at the
    clock ncu ran (gpu_peaks.py's lanes) and the datasheet's bandwidth, whichever is lower."""
    import gpu_peaks  # noqa: PLC0415  (beside this script)
    single = [get(METRICS[m]) for m in ("ffma", "fadd", "fmul")]
    double = [get(METRICS[m]) for m in ("dfma", "dadd", "dmul")]
    dram = get(METRICS["dram_bytes"], in_bytes)
    if any(v is None for v in single + double):
        k["flops"] = None
    else:
        k["flops"] = int(2 * single[0] + single[1] + single[2] + 2 * double[0] + double[1] + double[2])
    k["flop_precision"] = ("double" if double[0] and (single[0] or 0) < double[0] else "float") if k["flops"] else None
    k["dram_bytes"] = int(dram) if dram is not None else None
    k["arithmetic_intensity"] = ratio(k["flops"], k["dram_bytes"])
    seconds = (k.get("duration_us") or 0) * 1e-6
    k["achieved_gflops"] = round(k["flops"] / seconds / 1e9, 1) if k["flops"] and seconds else None
    device = {key: metrics.get(name, ("", ""))[0] for key, name in DEVICE.items()}
    sms, major, minor = (number(device[x]) for x in ("sms", "cc_major", "cc_minor"))
    clock = get(METRICS["sm_clock"], in_mhz)
    cc = f"{int(major)}.{int(minor)}" if major is not None and minor is not None else ""
    peak = gpu_peaks.fma_peak_gflops(cc, sms, clock, k["flop_precision"] or "float") if k["flops"] else None
    bandwidth, _key = gpu_peaks.bandwidth_gbs(device["name"])
    k["roofline"] = None
    if peak and bandwidth and k["arithmetic_intensity"]:
        ridge = peak / bandwidth
        roof = min(peak, k["arithmetic_intensity"] * bandwidth)
        k["roofline"] = {"peak_gflops": round(peak, 1), "sm_clock_mhz": round(clock, 1), "bandwidth_gbs": bandwidth,
                         "ridge": round(ridge, 2), "roof_gflops": round(roof, 1),
                         "side": "memory" if k["arithmetic_intensity"] < ridge else "compute",
                         "pct_of_roof": round(100 * k["achieved_gflops"] / roof, 1) if k["achieved_gflops"] else None}


# ---- the summary a student reads ---------------------------------------------------------------

def fmt(v, digits=1, unit=""):
    if v is None:
        return "n/a"
    if isinstance(v, int) or float(v).is_integer() and digits == 0:
        return f"{int(v):,}{unit}"
    return f"{v:,.{digits}f}{unit}"


def fmt_dim(d):
    """[256, 256, 1] -> "256×256" (trailing 1s dropped)."""
    if not d:
        return "n/a"
    d = list(d)
    while len(d) > 1 and d[-1] == 1:
        d.pop()
    return "×".join(str(x) for x in d)


def fmt_smem(k):
    total = k.get("shared_mem_per_block_bytes")
    if total is None:
        return "n/a"
    text = f"{total / 1024:.1f} KiB" if total >= 1024 else f"{int(total)} B"
    if k.get("shared_mem_dynamic_bytes"):
        text += f" ({int(k['shared_mem_dynamic_bytes']):,} B dynamic)"
    return text


def fmt_stalls(k):
    if not k.get("stalls"):
        return "n/a"
    return ", ".join(f"{s['reason'].replace('_', ' ')} ({s['share_pct']:.0f}%)" if s.get("share_pct") is not None
                     else s["reason"].replace("_", " ") for s in k["stalls"])


def fmt_occupancy(k):
    text = f"{fmt(k.get('occupancy_achieved_pct'))}% of {fmt(k.get('occupancy_theoretical_pct'))}%"
    if k.get("occupancy_limiter"):
        text += f" (limit: {', '.join(k['occupancy_limiter'])})"
    return text.replace("n/a%", "n/a")


def fmt_shared(k, op):
    per = k.get(f"shared_{op}_wavefronts_per_instruction")
    if per is None and k.get(f"shared_{op}_bank_conflicts") is None:
        return "n/a"
    if k.get(f"shared_{op}_instructions") == 0:
        return "none"
    conflicts = k.get(f"shared_{op}_bank_conflicts")
    return f"{fmt(per, 2)} wavefronts/instruction, {fmt(conflicts, 0)} bank conflicts"


def fmt_giga(v, unit):
    return "n/a" if v is None else f"{v / 1e9:,.1f} G{unit}"


def fmt_roofline(k):
    r = k.get("roofline")
    if not r:
        return "n/a"
    prec = "FP32" if k.get("flop_precision") == "float" else "FP64"
    text = (f"{fmt(k.get('achieved_gflops'), 0)} GFLOPS = {fmt(r['pct_of_roof'], 0)}% of the roof at this intensity "
            f"({r['side']}-bound side: the ridge is {fmt(r['ridge'], 1)} flop/byte; {prec} FMA peak "
            f"{fmt(r['peak_gflops'], 0)} GFLOPS at ncu's {fmt(r['sm_clock_mhz'], 0)} MHz, DRAM {fmt(r['bandwidth_gbs'], 0)} GB/s)")
    return text


ROWS = (
    ("grid (blocks)", lambda k: fmt_dim(k.get("grid"))),
    ("block (threads)", lambda k: fmt_dim(k.get("block"))),
    ("registers / thread", lambda k: fmt(k.get("registers_per_thread"), 0)),
    ("shared memory / block", fmt_smem),
    ("occupancy: achieved of theoretical", fmt_occupancy),
    ("memory throughput (% of peak)", lambda k: fmt(k.get("memory_throughput_pct"), 1, "%")),
    ("compute (SM) throughput (% of peak)", lambda k: fmt(k.get("compute_throughput_pct"), 1, "%")),
    ("DRAM bandwidth", lambda k: f"{fmt(k.get('dram_gbs'), 0)} GB/s" + (
        f" ({fmt(k.get('dram_throughput_pct'), 1)}% of peak)" if k.get("dram_throughput_pct") is not None else "")),
    ("duration", lambda k: f"{fmt(k.get('duration_us'), 1)} µs"),
    ("top stall reasons", fmt_stalls),
    ("bound (ncu's rule of thumb)", lambda k: k.get("bound", "n/a")),
    ("shared loads", lambda k: fmt_shared(k, "ld")),
    ("shared stores", lambda k: fmt_shared(k, "st")),
    ("global loads / stores: sectors per request",
     lambda k: f"{fmt(k.get('global_ld_sectors_per_request'), 1)} / {fmt(k.get('global_st_sectors_per_request'), 1)}"),
    ("FLOPs (CUDA cores) / DRAM bytes", lambda k: f"{fmt_giga(k.get('flops'), 'FLOP')} / {fmt_giga(k.get('dram_bytes'), 'B')}"),
    ("arithmetic intensity (DRAM)", lambda k: f"{fmt(k.get('arithmetic_intensity'), 2)} flop/byte".replace("n/a flop/byte", "n/a")),
    ("roofline", fmt_roofline),
)


def md_cell(text):
    return str(text).replace("|", "\\|").replace("*", "\\*").replace("_", "\\_")


def markdown(doc, heading="###"):
    """The student's summary: one column per kernel, one row per quantity (Pandoc pipe table). heading:
    the Markdown heading mark of its title, or None for a bold line (the lab report's)."""
    title = f"Profile of {doc['label']}, {doc['precision']}, {doc['shape'].replace('x', '×')}"
    out = [f"{heading} {md_cell(title)}\n" if heading else f"**{md_cell(title)}.**\n",
           f"{md_cell(doc['gpu'].get('name', '?'))}, ncu {md_cell(doc.get('ncu_version') or '?')}, "
           f"{doc['created'][:10]}; clocks locked to base by ncu, so times are longer than in `make bench`.\n"]
    kernels = doc["kernels"]
    if not kernels:
        out.append("> **The stage launched no kernel in this call.**\n")
        return "\n".join(out)
    names = [md_cell(k["name"]) for k in kernels]
    if len(set(names)) < len(names):
        names = [f"{n} (#{k['id']})" for n, k in zip(names, kernels)]
    out.append("| | " + " | ".join(f"`{n}`".replace("\\_", "_") for n in names) + " |")
    out.append("|:--|" + "|".join("--:" for _ in kernels) + "|")
    by_hand = set(doc.get("placeholder_rows") or [])
    for label, cell in ROWS:
        mark = " ‡" if label in by_hand else ""
        out.append(f"| {label}{mark} | " + " | ".join(md_cell(cell(k)) for k in kernels) + " |")
    if by_hand:
        out.append("\n*‡ Written by hand in ncu's format, not measured (derived from the kernel's code and this "
                   "profile's measured bandwidth and duration); `make profile` on a GPU measures them.*")
    if doc.get("missing_metrics"):
        out.append(f"\n*n/a: not reported by this ncu or GPU ({md_cell(', '.join(doc['missing_metrics']))}).*")
    return "\n".join(out) + "\n"


# ---- running ncu -------------------------------------------------------------------------------

def default_shape(config):
    """The first shape of course.toml [[scoring.shapes]] (the scores' headline), else 4096³."""
    try:
        with open(config, "rb") as f:
            shapes = tomllib.load(f).get("scoring", {}).get("shapes", [])
        return str(shapes[0]["shape"]) if shapes and shapes[0].get("shape") else "4096x4096x4096"
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError):
        return "4096x4096x4096"


def ncu_command(ncu, runner, stage, prec, shape, csv_path, metrics):
    cmd = [ncu, "--csv", "--page", "raw", "--print-units", "base", "--log-file", str(csv_path)]
    for s in SECTIONS:
        cmd += ["--section", s]
    if metrics:
        cmd += ["--metrics", ",".join(metrics)]
    return cmd + [str(runner), "run", "--stage", stage, "--prec", prec, "--shape", shape]


def run_ncu(ncu, runner, stage, prec, shape, csv_path):
    """Runs ncu (again without the metrics it says it does not know); returns (command, output, csv)."""
    metrics = list(dict.fromkeys(list(METRICS.values()) + list(OCCUPANCY_LIMITS.values())))
    for _attempt in range(4):
        csv_path.unlink(missing_ok=True)
        cmd = ncu_command(ncu, runner, stage, prec, shape, csv_path, metrics)
        say("$ " + shlex.join(cmd))
        proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
        output = proc.stdout + proc.stderr
        text = csv_path.read_text(errors="replace") if csv_path.exists() else ""
        if permission_denied(output + text):
            raise ProfileError(permission_message(), EXIT_NO_PERMISSION)
        unknown = unknown_metrics(output + text, metrics)
        if unknown and not parse_raw_csv(text):
            say(f"this ncu does not know {', '.join(unknown)}: profiling again without")
            metrics = [m for m in metrics if m not in unknown]
            continue
        return cmd, proc.returncode, output, text
    raise ProfileError("ncu kept refusing the metrics asked for:\n" + output[-2000:])


def stage_file(submission, stage):
    """{"path", "sha256"} of the stage's file (<submission>/<stage>.cu), so a report can tell that the file
    changed since; {} where there is none."""
    path = Path(submission or "", stage.split("/")[0] + ".cu")
    if not submission or not path.is_file():
        return {}
    return {"path": str(path), "sha256": "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()}


def file_stem(stage, prec):
    return f"{stage.replace('/', '-')}-{prec}"


def profile(args):
    gpu, ncu = preflight(args.ncu)
    if args.check:
        return 0
    runner = Path(args.runner)
    if not runner.is_file():
        raise ProfileError(f"the runner {runner} is not built (make profile builds it)", EXIT_USAGE)
    shape = args.shape or default_shape(args.config)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = file_stem(args.stage, args.prec)
    csv_path = out / f"{stem}.csv"
    say(f"profiling {args.stage} {args.prec} at {shape}: one call, under ncu (each kernel is replayed "
        "once per group of counters, so this takes longer than the call)")
    cmd, status, output, text = run_ncu(ncu, runner, args.stage, args.prec, shape, csv_path)
    launches = parse_raw_csv(text)
    ran = [line for line in output.splitlines() if line.startswith("ran ")]
    if not launches:
        tail = "\n".join("  " + l for l in output.strip().splitlines()[-12:])
        raise ProfileError(f"ncu profiled no kernel (exit status {status}); its output and the runner's:\n{tail}")
    kernels, missing = summarize(launches)
    if not kernels:
        raise ProfileError(f"{args.stage} launched no kernel of its own in this call"
                           + (f" (the runner said: {ran[-1]})" if ran else ""))
    doc = {"schema": SCHEMA, "stage": args.stage.split("/")[0], "variant": args.stage.partition("/")[2],
           "label": args.stage, "precision": args.prec, "shape": shape,
           "submission": Path(args.submission).name if args.submission else "",
           "stage_file": stage_file(args.submission, args.stage),
           "created": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "gpu": gpu, "ncu_version": ncu_version(ncu), "ncu_command": shlex.join(cmd),
           "runner_said": ran[-1] if ran else "", "raw_csv": csv_path.name,
           "kernels": kernels, "missing_metrics": missing}
    (out / f"{stem}.json").write_text(json.dumps(doc, indent=2) + "\n")
    (out / f"{stem}.md").write_text(markdown(doc))
    print()
    print(markdown(doc, heading="#"))
    if ran and not ran[-1].rstrip().endswith(": ok"):
        say(f"note: the runner said: {ran[-1]}")
    say(f"wrote {out / (stem + '.json')}, {stem}.md and {stem}.csv (ncu's raw CSV); make report includes it")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0].split("— ", 1)[-1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[1:]))
    ap.add_argument("--runner", help="gemmlab-stages of the submission (the Makefile's STAGE_RUNNER)")
    ap.add_argument("--stage", help="stage or stage/variant, e.g. tiled/16")
    ap.add_argument("--prec", default="float", choices=("float", "double"))
    ap.add_argument("--shape", help="MxNxK (default: the first shape of course.toml [[scoring.shapes]])")
    ap.add_argument("--config", default="course.toml")
    ap.add_argument("--out", default="results/student/profile", help="folder of the outputs")
    ap.add_argument("--submission", help="the submission's folder (student/): its name and the profiled "
                                         "stage file's hash are recorded in the JSON")
    ap.add_argument("--ncu", default="ncu", help="the ncu to run (a path, or a name on PATH)")
    ap.add_argument("--check", action="store_true", help="only check that there is a GPU and an ncu")
    args = ap.parse_args(argv)
    try:
        if not args.check and not (args.runner and args.stage):
            raise ProfileError("--runner and --stage are needed (make profile STAGE=<stage> passes them)",
                               EXIT_USAGE)
        return profile(args)
    except ProfileError as e:
        text = str(e)
        print(text if text.startswith("profile: ") else f"profile: error: {text}", file=sys.stderr)
        return e.status
    except KeyboardInterrupt:
        print("profile: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
