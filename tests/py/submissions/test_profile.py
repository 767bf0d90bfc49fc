"""make profile (grader/scripts/ncu_profile.py), make resources (grader/scripts/stage_resources.py) and the
report's Profiles section (report/report_profile.py), with no GPU: ncu's raw CSV is a hand-written file
in its documented format (tests/fixtures/profile), ncu and nvidia-smi are stand-ins on PATH where a run
is needed, and ptxas's report comes from compiling a real stage file.
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPTS = ROOT / "grader" / "scripts"
FIXTURES = ROOT / "tests" / "fixtures" / "profile"
sys.path.insert(0, str(SCRIPTS))
sys.path.insert(0, str(ROOT / "report"))
import kernel_names  # noqa: E402
import ncu_profile  # noqa: E402
import registry  # noqa: E402
import stage_resources  # noqa: E402

CSV = FIXTURES / "tiled-16-float.csv"
NVCC = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
needs_nvcc = pytest.mark.skipif(not Path(NVCC).is_file(), reason="needs nvcc (the CUDA toolkit)")


# ---- ncu's raw CSV -----------------------------------------------------------------------------

def test_raw_csv_gives_the_stage_kernel_without_the_runners():
    launches = ncu_profile.parse_raw_csv(CSV.read_text())
    assert len(launches) == 4  # three fills of the runner, then the stage's kernel
    kernels, missing = ncu_profile.summarize(launches)
    assert missing == []
    [k] = kernels
    assert k["name"] == "tiled_kernel<float, 16>"
    assert k["grid"] == [256, 256, 1] and k["block"] == [16, 16, 1]
    assert k["registers_per_thread"] == 32
    assert k["shared_mem_static_bytes"] == 4096 and k["shared_mem_dynamic_bytes"] == 0
    assert k["shared_mem_per_block_bytes"] == 4096
    assert k["occupancy_achieved_pct"] == 97.81 and k["occupancy_theoretical_pct"] == 100
    assert k["blocks_per_sm_limits"] == {"registers": 8, "shared memory": 44, "warps": 8, "blocks": 32}
    assert k["occupancy_limiter"] == ["registers", "warps"]
    assert k["memory_throughput_pct"] == 92.31 and k["compute_throughput_pct"] == 68.47
    assert k["dram_gbs"] == pytest.approx(114.036, abs=1e-3)  # "114,036,245,616" byte/second
    assert k["duration_us"] == pytest.approx(30512.64)         # "30,512,640" nsecond
    assert [s["reason"] for s in k["stalls"]] == ["mio_throttle", "short_scoreboard", "barrier"]
    assert k["stalls"][0]["share_pct"] == pytest.approx(100 * 6.92 / (2.64 + .31 + .05 + 6.92 + .88 + 4.15 + 1.47), abs=.1)
    assert k["bound"] == "memory"


def test_bank_conflicts_sectors_and_the_roofline_from_the_raw_csv():
    """The counters the lessons need (bank conflicts, coalescing, arithmetic intensity), from the fixture's
    hand-written columns (tests/fixtures/profile/README.md): the roofline against gpu_peaks.py's FP32 FMA
    peak at the clock ncu ran and the datasheet's bandwidth."""
    [k], _ = ncu_profile.summarize(ncu_profile.parse_raw_csv(CSV.read_text()))
    assert k["shared_ld_wavefronts_per_instruction"] == 1.0 and k["shared_ld_bank_conflicts"] == 0
    assert k["shared_st_wavefronts_per_instruction"] == 1.0 and k["shared_st_bank_conflicts"] == 0
    assert k["global_ld_sectors_per_request"] == 4.0 and k["global_st_sectors_per_request"] == 4.0
    assert k["flops"] == 2 * (4096 ** 3 + 4096 ** 2) + 4096 ** 2 and k["flop_precision"] == "float"
    assert k["dram_bytes"] == round(114_036_245_616 * 30_512_640e-9)
    assert k["arithmetic_intensity"] == pytest.approx(k["flops"] / k["dram_bytes"], abs=1e-3)
    r = k["roofline"]
    assert r["peak_gflops"] == pytest.approx(132 * 128 * 2 * 1590 / 1000, abs=0.1)  # H100, 1590 MHz
    assert r["bandwidth_gbs"] == 3350 and r["ridge"] == pytest.approx(r["peak_gflops"] / 3350, abs=0.01)
    assert r["side"] == "compute" and r["roof_gflops"] == r["peak_gflops"]
    assert r["pct_of_roof"] == pytest.approx(100 * k["achieved_gflops"] / r["peak_gflops"], abs=0.1)
    md = ncu_profile.markdown({"label": "tiled/16", "precision": "float", "shape": "4096x4096x4096",
                               "gpu": {"name": "G"}, "created": "2026-12-01T00:00:00Z", "kernels": [k]})
    assert "| shared loads | 1.00 wavefronts/instruction, 0 bank conflicts |" in md
    assert "| global loads / stores: sectors per request | 4.0 / 4.0 |" in md
    assert "| arithmetic intensity (DRAM) | 39.51 flop/byte |" in md
    assert "compute-bound side" in md and "‡" not in md


def test_a_bank_conflict_shows_as_wavefronts_per_instruction(tmp_path):
    """A 32-way conflict on a 4-byte store (a transposed tile without padding): 32 wavefronts per instruction."""
    header = ["ID", "Kernel Name", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
              "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "smsp__sass_inst_executed_op_shared_st.sum"]
    text = write_csv(tmp_path / "r.csv", header, ["", "", "", "", "inst"], [["0", "k(int)", "3,100", "3,200", "100"]])
    [k], missing = ncu_profile.summarize(ncu_profile.parse_raw_csv(text))
    assert k["shared_st_wavefronts_per_instruction"] == 32 and k["shared_st_bank_conflicts"] == 3100
    assert k["roofline"] is None and "dram__bytes.sum" in missing


def write_csv(path, header, units, rows):
    import csv
    with open(path, "w", newline="") as f:
        w = csv.writer(f, quoting=csv.QUOTE_ALL)
        w.writerow(header)
        if units is not None:
            w.writerow(units)
        w.writerows(rows)
    return path.read_text()


def test_missing_metrics_are_na_and_other_units_convert(tmp_path):
    header = ["ID", "Kernel Name", "Block Size", "Grid Size", "dram__bytes.sum.per_second", "gpu__time_duration.sum",
              "launch__shared_mem_per_block_dynamic", "launch__shared_mem_per_block_static",
              "smsp__pcsamp_warps_issue_stalled_long_scoreboard", "smsp__pcsamp_warps_issue_stalled_selected",
              "smsp__pcsamp_warps_issue_stalled_wait"]
    units = ["", "", "", "", "Tbyte/second", "usecond", "Kbyte", "byte", "", "", ""]
    text = write_csv(tmp_path / "r.csv", header, units, [
        ["0", "_Z6kernelPf", "(128, 1, 1)", "(64, 1, 1)", "1.5", "12.5", "48", "n/a", "900", "5000", "100"]])
    [k], missing = ncu_profile.summarize(ncu_profile.parse_raw_csv(text))
    assert k["dram_gbs"] == 1500 and k["duration_us"] == 12.5
    assert k["shared_mem_dynamic_bytes"] == 48000 and k["shared_mem_static_bytes"] is None
    assert k["registers_per_thread"] is None and k["bound"] == "n/a"
    assert [s["reason"] for s in k["stalls"]] == ["long_scoreboard", "wait"]  # "selected" is no stall
    assert "launch__registers_per_thread" in missing and "launch__shared_mem_per_block_static" in missing
    md = ncu_profile.markdown({"label": "x", "precision": "float", "shape": "64x64x64", "gpu": {"name": "G"},
                               "created": "2026-12-01T00:00:00Z", "kernels": [k], "missing_metrics": missing})
    assert "| registers / thread | n/a |" in md and "not reported by this ncu" in md


def test_csv_without_units_row_and_without_header():
    text = '"ID","Kernel Name","launch__registers_per_thread"\n"0","k(int)","40"\n'
    [k], _ = ncu_profile.summarize(ncu_profile.parse_raw_csv(text))
    assert k["registers_per_thread"] == 40 and k["name"] == "k"
    assert ncu_profile.parse_raw_csv("==WARNING== No kernels were profiled.\n") == []


def test_runner_kernels_by_full_or_bare_name():
    assert ncu_profile.is_runner_kernel("void gemmlab::(anonymous namespace)::fill_standalone(double *, unsigned long)")
    assert ncu_profile.is_runner_kernel("fill_standalone")
    assert ncu_profile.is_runner_kernel("void gemmlab::count_mismatch<float>(const float *)")
    assert not ncu_profile.is_runner_kernel("void gemmlab::submission::tiled_kernel<float, 16>(int)")


def test_permission_denied_is_detected():
    assert ncu_profile.permission_denied((FIXTURES / "permission-denied.txt").read_text())
    assert not ncu_profile.permission_denied(CSV.read_text())
    msg = ncu_profile.permission_message()
    assert "NVreg_RestrictProfilingToAdminUsers=0" in msg and ncu_profile.PERMISSION_URL in msg and "root" in msg


def test_unknown_metrics_are_named():
    out = "==ERROR== Failed to find metric dram__bytes.sum.per_second\n"
    assert ncu_profile.unknown_metrics(out, ["dram__bytes.sum.per_second", "gpu__time_duration.sum"]) == \
        ["dram__bytes.sum.per_second"]


# ---- the script, with stand-ins for nvidia-smi and ncu ------------------------------------------

FAKE_NCU = textwrap.dedent("""\
    #!{python}
    import os, shutil, sys
    args = sys.argv[1:]
    if "--version" in args:
        print("NVIDIA (R) Nsight Compute Command Line Profiler\\nVersion 2025.3.0.0 (build 1)"); sys.exit(0)
    with open(os.environ["FAKE_NCU_LOG"], "a") as f:
        f.write(" ".join(args) + "\\n")
    log = args[args.index("--log-file") + 1]
    mode = os.environ.get("FAKE_NCU_MODE", "ok")
    metrics = args[args.index("--metrics") + 1] if "--metrics" in args else ""
    if mode == "perm":
        shutil.copyfile({perm!r}, log); print("ran tiled/16 float 4096x4096x4096: ok"); sys.exit(1)
    if mode == "unknown" and "dram__bytes.sum.per_second" in metrics:
        print("==ERROR== Failed to find metric dram__bytes.sum.per_second", file=sys.stderr); sys.exit(1)
    if mode == "nokernel":
        open(log, "w").write("==WARNING== No kernels were profiled.\\n")
        print("ran tiled/16 float 4096x4096x4096: not_implemented"); sys.exit(1)
    shutil.copyfile({csv!r}, log)
    print("ran tiled/16 float 4096x4096x4096: ok")
    """)
FAKE_SMI_GPU = "#!/bin/sh\ncase \"$1\" in -L) echo 'GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)';; " \
               "*) echo 'NVIDIA H100 80GB HBM3, 580.159.04';; esac\n"
FAKE_SMI_NONE = "#!/bin/sh\necho 'No devices were found' >&2\nexit 6\n"


def fake_tools(tmp_path, gpu=True):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "nvidia-smi").write_text(FAKE_SMI_GPU if gpu else FAKE_SMI_NONE)
    (bin_dir / "ncu").write_text(FAKE_NCU.format(python=sys.executable, perm=str(FIXTURES / "permission-denied.txt"),
                                                 csv=str(CSV)))
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", FAKE_NCU_LOG=str(tmp_path / "ncu-calls.log"))
    return bin_dir, env


def run_script(tmp_path, env, *extra, mode="ok"):
    runner = tmp_path / "gemmlab-stages"
    runner.write_text("")
    sub = tmp_path / "sub"
    sub.mkdir(exist_ok=True)
    (sub / "tiled.cu").write_text("// a stage file\n")
    cmd = [sys.executable, str(SCRIPTS / "ncu_profile.py"), "--runner", str(runner), "--stage", "tiled/16",
           "--prec", "float", "--config", str(ROOT / "course.toml"), "--out", str(tmp_path / "profile"),
           "--submission", str(sub), "--ncu", "ncu", *extra]
    return subprocess.run(cmd, capture_output=True, text=True, env=dict(env, FAKE_NCU_MODE=mode), cwd=tmp_path)


def test_profile_writes_json_markdown_and_raw_csv(tmp_path):
    _, env = fake_tools(tmp_path)
    proc = run_script(tmp_path, env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = tmp_path / "profile"
    doc = json.loads((out / "tiled-16-float.json").read_text())
    assert doc["schema"] == ncu_profile.SCHEMA and doc["label"] == "tiled/16" and doc["precision"] == "float"
    assert doc["shape"] == "4096x4096x4096"  # course.toml's headline scoring shape
    assert doc["gpu"] == {"name": "NVIDIA H100 80GB HBM3", "driver": "580.159.04"}
    assert doc["ncu_version"] == "2025.3.0.0" and doc["created"].endswith("Z")
    assert "--page raw" in doc["ncu_command"] and "run --stage tiled/16 --prec float --shape 4096x4096x4096" \
        in doc["ncu_command"]
    assert doc["submission"] == "sub" and doc["stage_file"]["sha256"].startswith("sha256:")
    assert [k["name"] for k in doc["kernels"]] == ["tiled_kernel<float, 16>"]
    assert (out / "tiled-16-float.csv").read_text() == CSV.read_text()
    md = (out / "tiled-16-float.md").read_text()
    assert "| registers / thread | 32 |" in md and "mio throttle (42%)" in md
    assert "tiled_kernel<float, 16>" in proc.stdout


def test_permission_denied_says_what_to_set_and_no_traceback(tmp_path):
    _, env = fake_tools(tmp_path)
    proc = run_script(tmp_path, env, mode="perm")
    assert proc.returncode == ncu_profile.EXIT_NO_PERMISSION
    assert "ERR_NVGPUCTRPERM" in proc.stderr and "NVreg_RestrictProfilingToAdminUsers=0" in proc.stderr
    assert "https://developer.nvidia.com/ERR_NVGPUCTRPERM" in proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert not (tmp_path / "profile" / "tiled-16-float.json").exists()


def test_a_metric_this_ncu_lacks_is_dropped_and_ncu_run_again(tmp_path):
    _, env = fake_tools(tmp_path)
    proc = run_script(tmp_path, env, mode="unknown")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    calls = (tmp_path / "ncu-calls.log").read_text().splitlines()
    assert len(calls) == 2 and "dram__bytes.sum.per_second" in calls[0] and "dram__bytes.sum.per_second" not in calls[1]


def test_a_stage_that_launches_nothing_says_so(tmp_path):
    _, env = fake_tools(tmp_path)
    proc = run_script(tmp_path, env, mode="nokernel")
    assert proc.returncode == ncu_profile.EXIT_FAILED
    assert "profiled no kernel" in proc.stderr and "not_implemented" in proc.stderr
    assert "Traceback" not in proc.stderr


def make(*args, env=None):
    return subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), *args], capture_output=True, text=True,
                          env=env)


def test_make_profile_without_gpu_says_so_before_building(tmp_path):
    _, env = fake_tools(tmp_path, gpu=False)
    proc = make("profile", "STAGE=tiled/16", f"BUILD={tmp_path}/build", env=env)
    assert proc.returncode != 0
    lines = [l for l in proc.stderr.splitlines() if l.startswith("profile:")]
    assert len(lines) == 1 and "no NVIDIA GPU" in lines[0]
    # the command typed, with its variables, on a GPU node
    assert lines[0].endswith(f"srun --gres=gpu:1 make profile STAGE=tiled/16 BUILD={tmp_path}/build"), lines[0]
    assert not (tmp_path / "build").exists()  # nothing built


def test_make_profile_without_ncu_says_so(tmp_path):
    _, env = fake_tools(tmp_path)
    proc = make("profile", "STAGE=tiled/16", "NCU=/nonexistent/ncu", f"BUILD={tmp_path}/build", env=env)
    assert proc.returncode != 0
    lines = [l for l in proc.stderr.splitlines() if l.startswith("profile:")]
    assert len(lines) == 1 and "ncu" in lines[0] and "/nonexistent/ncu" in lines[0]
    assert not (tmp_path / "build").exists()


def test_make_profile_needs_a_stage():
    proc = make("profile")
    assert proc.returncode == 2 and "make profile needs STAGE=" in proc.stdout


# ---- make resources: ptxas's report ------------------------------------------------------------

def test_ptxas_lines_parse_with_spills_and_device_functions():
    text = textwrap.dedent("""\
        ptxas info    : 0 bytes gmem
        ptxas info    : Function properties for _Z6helperv
            16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
        ptxas info    : Compiling entry function '_Z1kPf' for 'sm_80'
        ptxas info    : Function properties for _Z1kPf
            40 bytes stack frame, 36 bytes spill stores, 28 bytes spill loads
        ptxas info    : Used 255 registers, used 1 barriers, 49152 bytes smem, 380 bytes cmem[0]
        ptxas info    : Compile time = 3.1 ms
        ptxas info    : Compiling entry function '_Z1jv' for 'sm_80'
        ptxas info    : Used 8 registers, 24 bytes lmem, 356 bytes cmem[0]
        """)
    k, j = stage_resources.parse_ptxas(text)
    assert (k["name"], k["arch"], k["registers"], k["smem_bytes"], k["stack_bytes"], k["spill_stores"],
            k["spill_loads"], k["barriers"]) == ("_Z1kPf", "sm_80", 255, 49152, 40, 36, 28, 1)
    assert (j["registers"], j["smem_bytes"], j["stack_bytes"]) == (8, 0, 24)
    assert "spills to local memory" in stage_resources.table([dict(k, short="k")])


@needs_nvcc
def test_resources_of_a_real_stage_file(tmp_path):
    kernels, error = stage_resources.compile_file(
        NVCC, f"-std=c++17 -O3 -arch=sm_80 -I{ROOT / 'grader' / 'include'} -DGEMMLAB_NS=submission",
        ROOT / "student" / "naive.cu", tmp_path)
    assert error is None
    labels = registry.precision_labels()
    shorts = sorted(kernel_names.short_name(full, labels) for full in kernel_names.demangle(k["name"] for k in kernels))
    assert shorts == ["naive_kernel<double>", "naive_kernel<float>"]
    assert all(k["arch"] == "sm_80" and 0 < k["registers"] <= 255 and k["smem_bytes"] == 0 for k in kernels)


@needs_nvcc
@pytest.mark.skipif(not (ROOT / "reference" / "tiled.cu").is_file(), reason="the instructor repository only")
def test_make_resources_one_stage_file():
    def smem_by_tile(proc):  # tile -> static shared memory of the float kernel
        assert proc.returncode == 0, proc.stdout + proc.stderr
        rows = [l.split() for l in proc.stdout.splitlines() if l.strip().startswith("tiled_kernel<float,")]
        return {r[1].rstrip(">"): int(r[3].replace(",", "")) for r in rows}
    proc = make("resources", "SUBMISSION=reference", "STAGE=tiled", "ARCH=sm_80")
    assert "reference/tiled.cu (sm_80)" in proc.stdout, proc.stdout
    smem = smem_by_tile(proc)
    assert set(smem) == {"8", "16", "32"} and smem["8"] < smem["16"] < smem["32"]
    # a variant: its kernels only
    proc = make("resources", "SUBMISSION=reference", "STAGE=tiled/16", "ARCH=sm_80")
    assert "reference/tiled.cu (sm_80; the kernels of tiled/16)" in proc.stdout, proc.stdout
    assert smem_by_tile(proc) == {"16": smem["16"]}


@needs_nvcc
def test_resources_name_the_tensor_variants_as_the_student_knows_them(tmp_path):
    """tensor_float_kernel<IN> is shown as <fp16>, <tf32>, <3xtf32> (the registry's variant labels), not as
    the compiler's `(gemmlab::InputPrecision)0`."""
    kernels, error = stage_resources.compile_file(
        NVCC, f"-std=c++17 -O3 -arch=sm_80 -I{ROOT / 'grader' / 'include'} -DGEMMLAB_NS=submission",
        ROOT / "student" / "tensor.cu", tmp_path)
    assert error is None, error
    labels = registry.precision_labels()
    shorts = sorted(kernel_names.short_name(full, labels) for full in kernel_names.demangle(k["name"] for k in kernels))
    assert shorts == ["tensor_double_kernel", "tensor_float_kernel<3xtf32>", "tensor_float_kernel<fp16>",
                      "tensor_float_kernel<tf32>"], shorts


def test_make_resources_names_a_missing_file():
    proc = make("resources", "STAGE=nosuchstage")
    assert proc.returncode == 2 and "no stage file student/nosuchstage.cu" in proc.stdout


# ---- the report's Profiles section --------------------------------------------------------------

def profile_doc(tmp_path, **changes):
    doc = json.loads((ROOT / "tests" / "fixtures" / "report" / "profile" / "tiled-16-float.json").read_text())
    doc.update(changes)
    folder = tmp_path / "profile"
    folder.mkdir(exist_ok=True)
    (folder / "tiled-16-float.json").write_text(json.dumps(doc))
    return folder


def test_report_block_renders_each_profile(tmp_path):
    import report_profile
    folder = profile_doc(tmp_path, placeholder=False)
    (folder / "other.json").write_text(json.dumps({"schema": "something/else"}))
    docs = report_profile.load_profiles(folder)
    assert [d["label"] for d in docs] == ["tiled/16"]
    md = report_profile.profiles_block(docs, ["naive", "tiled"], str(folder))
    assert "**Profile of tiled/16, float, 4096×4096×4096.**" in md
    assert "| registers / thread | 32 |" in md and "| shared memory / block | 4.0 KiB |" in md
    assert "99.3% of 100% (limit: registers, warps)" in md and "847 GB/s (25.3% of peak)" in md
    assert "Placeholder" not in md


def test_report_block_marks_a_changed_stage_file_and_says_when_there_is_none(tmp_path):
    import report_profile
    source = tmp_path / "tiled.cu"
    source.write_text("// now\n")
    folder = profile_doc(tmp_path, stage_file={"path": str(source), "sha256": "sha256:" + "0" * 64})
    md = report_profile.profiles_block(report_profile.load_profiles(folder), ["tiled"], str(folder))
    assert "changed since this profile was taken" in md and "make profile" in md
    empty = report_profile.profiles_block(report_profile.load_profiles(tmp_path / "none"), ["tiled"], "results/x/profile")
    assert "No profiles yet" in empty and "make profile STAGE=" in empty


def test_report_template_has_the_profiles_section():
    assert '::: {include="profiles"}' in (ROOT / "report" / "report.md").read_text()


def test_the_runners_kernels_are_left_out_of_a_real_h100_profile():
    """ncu 2025.3 on an H100 prints the runner's fill kernel as "unnamed>::fill_standalone(...)":
    only the stage's own kernel remains."""
    text = (ROOT / "tests" / "fixtures" / "profile" / "h100-tiled-16-float.csv").read_text()
    kernels, missing = ncu_profile.summarize(ncu_profile.parse_raw_csv(text))
    assert [k["name"] for k in kernels] == ["tiled_kernel<float, 16>"]
    assert missing == []


def test_the_example_reports_profile_is_the_h100_csvs_summary():
    """tests/fixtures/report/profile/tiled-16-float.json (the example report's) is make profile's summary of
    the H100 CSV, every row measured (README.md there): nothing is marked as written by hand."""
    text = (ROOT / "tests" / "fixtures" / "profile" / "h100-tiled-16-float.csv").read_text()
    kernels, missing = ncu_profile.summarize(ncu_profile.parse_raw_csv(text))
    doc = json.loads((ROOT / "tests" / "fixtures" / "report" / "profile" / "tiled-16-float.json").read_text())
    assert doc["kernels"] == kernels and doc["missing_metrics"] == missing
    assert not doc.get("placeholder_rows")
    for metric in ("dram__bytes.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                   "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "sm__cycles_elapsed.avg.per_second"):
        assert metric in text  # what make profile asks for, measured
