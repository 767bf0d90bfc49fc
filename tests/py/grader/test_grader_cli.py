"""The grader's command line as students meet it: the registry listing and clear errors."""
import json
import os

import pytest
import subprocess

from support.gpu import HAS_GPU, gpu


def run(grader, *args):
    return subprocess.run([str(grader), *args], capture_output=True, text=True)


def test_list_json_is_the_registry(grader):
    out = run(grader, "list", "--json")
    assert out.returncode == 0, out.stderr
    stages = json.loads(out.stdout)["stages"]
    names = [s["name"] for s in stages]
    assert names == ["naive", "tiled", "unrolled", "pitched", "reuse", "tensor"]
    tiled = stages[1]
    assert tiled["variants"] == ["8", "16", "32"]
    assert [s["name"] for s in stages if s["baseline"]] == ["naive"]
    assert stages[3]["operands"] == "pitched"
    # The tensor stage: its variants declare what their float versions round A and B to, and the
    # listing carries the bound each is held to (bound.h); every double version is FP64.
    tensor = stages[5]
    assert tensor["tensor_cores"] and not any(s["tensor_cores"] for s in stages[:5])
    assert tensor["variants"] == ["fp16", "tf32", "3xtf32"]
    info = {v["label"]: v for v in tensor["variant_info"]}
    assert info["fp16"]["inputs"] == {"float": "fp16", "double": "fp64"}
    assert info["tf32"]["inputs"]["float"] == "tf32"
    assert info["3xtf32"]["inputs"]["float"] == "fp32"
    assert info["fp16"]["error_bound"] == {"float": 32 + 4 * 2 ** 13, "double": 32}
    assert info["3xtf32"]["error_bound"] == {"float": 32, "double": 32}
    assert all(v["error_bound"] == {"float": 32, "double": 32} for s in stages[:5] for v in s["variant_info"])
    # ... and the oldest architecture each runs on: FP16 mma.sync from sm_75, TF32 and DMMA from sm_80
    assert info["fp16"]["min_arch"] == {"float": 75, "double": 80}
    assert info["tf32"]["min_arch"] == info["3xtf32"]["min_arch"] == {"float": 80, "double": 80}
    assert all(v["min_arch"] == {"float": 0, "double": 0} for s in stages[:5] for v in s["variant_info"])


@pytest.mark.skipif(HAS_GPU, reason="this machine has a GPU: the no-GPU path is not taken")
def test_check_without_gpu_says_what_to_do(grader):
    out = run(grader, "check", "--stage", "tiled/16")
    assert out.returncode == 3
    # run by hand: the same command, on a GPU node, after the course's srun line (make hint prints it)
    assert "gemmlab check needs an NVIDIA GPU" in out.stderr
    assert "after the srun line `make hint` prints" in out.stderr
    assert f"      srun ... {grader} check --stage tiled/16\n" in out.stderr, out.stderr
    # run by make: the command the student typed (the Makefile passes it), and nothing else to try
    typed = subprocess.run([str(grader), "check", "--stage", "tiled/16"], capture_output=True, text=True,
                           env={**os.environ, "GEMMLAB_COMMAND": "make check STAGE=tiled/16 PREC=double",
                                "GEMMLAB_SRUN": "srun --partition=gpu --account=cs101 --gres=gpu:1"})
    assert "make check needs an NVIDIA GPU" in typed.stderr
    assert ("      srun --partition=gpu --account=cs101 --gres=gpu:1 make check STAGE=tiled/16 PREC=double\n"
            in typed.stderr), typed.stderr
    assert "make submit" not in typed.stderr and "make check\n" not in typed.stderr
    # plain words first ("this machine has no GPU"), CUDA's error only in parentheses
    first = out.stderr.splitlines()[0]
    assert first.startswith("gemmlab check: ") and " (" in first, first
    assert not first.startswith("gemmlab check: cuda") and "failed:" not in first, first


@pytest.mark.parametrize("args,says", [
    (("check", "--stage", "nonexistent"), "unknown stage 'nonexistent'; the stages are: naive"),
    (("check", "--stage", "tiled/7"), "stage 'tiled' has no variant '7'"),
    (("check", "--prec", "half"), "unknown precision 'half': use float, double or all"),
    (("bench", "--shapes", "abc"), "bad shape 'abc'"),
    (("bench", "--stage", "nonexistent"), "unknown stage 'nonexistent'"),
    (("run", "--stage", "reuse", "--shape", "12x"), "bad shape '12x'"),
    (("run", "--stage", "nonexistent"), "unknown stage 'nonexistent'"),
])
def test_arguments_are_checked_before_the_machine(grader, args, says):
    """A wrong stage, precision or shape is named with exit 2 on any machine, GPU or not."""
    out = run(grader, *args)
    assert out.returncode == 2, out.stdout + out.stderr
    assert says in out.stderr
    assert "needs an NVIDIA GPU" not in out.stderr


@gpu
def test_check_quick_on_student_stubs(grader, tmp_path):
    report = tmp_path / "check.json"
    out = run(grader, "check", "--json", str(report), "--no-color")
    assert out.returncode == 0, out.stdout + out.stderr
    results = json.loads(report.read_text())["results"]
    by_stage = {(r["stage"], r["variant"], r["precision"]): r["disposition"] for r in results}
    assert by_stage[("naive", "", "float")] == "passed"
    assert by_stage[("naive", "", "double")] == "passed"
    for key, disposition in by_stage.items():
        if key[0] != "naive":
            assert disposition == "not_implemented", key
    # The stubs were found by one probe process before the check, not each by a runner of its own
    # (check_engine.h, find_stubs); naive was checked in its own runners.
    ends = {(r["stage"], r["variant"], r["precision"]): r["process"]["end"] for r in results}
    probe = "no runner of its own: the stub probe's call returned Status::not_implemented"
    assert [k for k, e in ends.items() if not e.startswith(probe)] == [("naive", "", "float"), ("naive", "", "double")]
