"""GPU: `gemmlab check --full` on the deliberately broken submissions of tests/broken/ gives every
stage the disposition its README promises, says why in words a student can act on, and still
passes the correct naive stage of the same build.

Builds with the project's Makefile (GEMMLAB_BUILD_JOBS jobs, default: every core) into the build
directory `make test` used; each submission is built and checked once per session.
"""
import json
import re
import subprocess

import pytest

from support import gpu_prebuild
from support.broken_submissions import EXPECTED, build, expected_disposition
from support.gpu import gpu

pytestmark = gpu

# A stage that hangs costs this much per precision; every honest case finishes in far less (the
# largest of the full set, 2048³, is 17 GFLOP: a fraction of a second for the naive stage in double).
IDLE_TIMEOUT_S = 2
ERROR_BOUND = 32  # bound.h kErrorThreshold, in u·G


@pytest.fixture(scope="session")
def checked(tmp_path_factory):
    """name -> (results by (stage, variant, precision), stdout, exit code, seed). The first use checks
    every broken submission at once, side by side on the GPU: a check keeps no clock (only a grade
    times), each judge and runner has a CUDA context of its own, and the process submission's hung
    stage waits out its silence while the others run."""
    cache = {}

    def start(name):
        binary = build(name)
        out = tmp_path_factory.mktemp(name) / "check.json"
        proc = subprocess.Popen([str(binary), "check", "--full", "--timeout", str(IDLE_TIMEOUT_S), "--no-color",
                                 "--json", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        return proc, out

    def get(name):
        if not cache:
            gpu_prebuild.result("broken")  # built beside each other, in the background where a GPU is
            running = {n: start(n) for n in sorted(EXPECTED)}
            for n, (proc, out) in running.items():
                stdout, stderr = proc.communicate(timeout=900)
                assert out.exists(), f"{n}: check wrote no JSON:\n{stdout}\n{stderr}"
                data = json.loads(out.read_text())
                results = {(r["stage"], r["variant"], r["precision"]): r for r in data["results"]}
                cache[n] = (results, stdout, proc.returncode, data["seed"])
        return cache[name]

    return get


def label(stage, variant):
    return f"{stage}/{variant}" if variant else stage


def failing(result):
    return [c for c in result["cases"] if c["disposition"] != "passed"]


def max_ratio(result):
    return max((c["max_error_ratio"] for c in result["cases"] if isinstance(c.get("max_error_ratio"), (int, float))),
               default=0)


# ---- what each broken stage's message must say ------------------------------------------------

def tile_edge(result, tile):
    assert result["problem"] == "wrong values"
    for c in result["cases"]:
        s = c["shape"]
        if s["alpha"] == 0:
            continue  # C = beta·C needs no product
        should_fail = s["K"] % tile != 0
        assert (c["disposition"] == "failed") == should_fail, (s, c["disposition"])
        if should_fail:
            assert c["worst"]["ratio"] == "inf" or c["worst"]["ratio"] > ERROR_BOUND
    assert any("picture" in c for c in failing(result)), "small failing shapes come with a picture"


def ignores_beta(result):
    for c in result["cases"]:
        assert (c["disposition"] == "failed") == (c["shape"]["beta"] != 0), c["shape"]


def unaligned_pitch(result):
    assert "16-byte aligned" in result["problem"]


def rounded_inputs(result):
    assert result["problem"] == "wrong values"
    assert max_ratio(result) > 3 * ERROR_BOUND  # hundreds of u·G, not a borderline miss


def race(result):
    assert result["problem"] == "wrong values"


def writes_past_rows(result):
    assert "wrote outside C" in result["problem"]
    places = [c["out_of_bounds"]["first"] for c in result["cases"] if "out_of_bounds" in c]
    assert places
    assert any("padding column" in p or "past the last row" in p for p in places), places


def writes_pitched_padding(result):
    assert "padding of the pitched C" in result["problem"]


def reads_c(result):
    for c in result["cases"]:
        assert (c["disposition"] == "failed") == (c["shape"]["beta"] == 0), c["shape"]
    assert all(c["worst"]["got"] == "nan" for c in failing(result))


def crashed_with(error):
    def check(result):
        assert error in result["problem"], result["problem"]
        assert failing(result)[-1]["disposition"] == "crashed"
    return check


def hangs(result):
    assert "without progress" in result["problem"]
    assert "while running 1x1x1" in result["problem"]


def fp16_as_fp32_accurate(result):
    """An FP16 kernel handed in as tensor/3xtf32: held to the FP32 bound, and told why it fails."""
    assert result["problem"] == "wrong values"
    assert result["error_bound"]["threshold"] == ERROR_BOUND and result["error_bound"]["inputs"] == "fp32"
    assert max_ratio(result) > 3 * ERROR_BOUND
    for c in failing(result):
        assert c["bound"] == ERROR_BOUND and c["inputs"] == "fp32"


def exits(result):
    assert "exited with code 0" in result["problem"]
    assert "a stage must return, not exit" in result["problem"]


MESSAGES = {
    ("wrong_values", "tiled", "8"): lambda r: tile_edge(r, 8),
    ("wrong_values", "tiled", "16"): lambda r: tile_edge(r, 16),
    ("wrong_values", "tiled", "32"): lambda r: tile_edge(r, 32),
    ("wrong_values", "unrolled", ""): ignores_beta,
    ("wrong_values", "pitched", ""): unaligned_pitch,
    ("wrong_values", "reuse", ""): rounded_inputs,
    ("wrong_values", "tensor", "3xtf32"): fp16_as_fp32_accurate,
    ("memory", "tiled", "8"): race,
    ("memory", "tiled", "16"): race,
    ("memory", "tiled", "32"): race,
    ("memory", "unrolled", ""): writes_past_rows,
    ("memory", "pitched", ""): writes_pitched_padding,
    ("memory", "reuse", ""): reads_c,
    ("process", "tiled", "8"): crashed_with("cudaErrorIllegalAddress"),
    ("process", "tiled", "16"): hangs,
    ("process", "tiled", "32"): exits,
    ("process", "unrolled", ""): crashed_with("cudaErrorMisalignedAddress"),
    ("process", "pitched", ""): crashed_with("cudaErrorAssert"),
    ("process", "reuse", ""): rounded_inputs,
}

CASES = [(name, stage, variant, prec) for name in sorted(EXPECTED) for (stage, variant) in EXPECTED[name]
         for prec in ("float", "double")]


@pytest.mark.parametrize("name,stage,variant,prec", CASES,
                         ids=[f"{n}-{label(s, v)}-{p}" for n, s, v, p in CASES])
def test_disposition_and_message(checked, name, stage, variant, prec):
    results, stdout, _, seed = checked(name)
    r = results[(stage, variant, prec)]
    expected = expected_disposition(name, stage, variant, prec)
    context = f"{name}: {label(stage, variant)} {prec} (seed {seed}): {r['problem']}"
    assert r["disposition"] == expected, context
    if expected == "passed":
        assert r["cases"] and len(r["cases"]) == r["expected_cases"], context
        return
    if expected == "not_implemented":
        assert "not implemented" in r["problem"], context
        return
    MESSAGES[(name, stage, variant)](r)


def test_fp16_inputs_pass_where_declared_and_the_message_says_why_they_fail_elsewhere(checked):
    """The one FP16 kernel of wrong_values/tensor.cu: within the bound of the variants that declare 11-bit
    inputs (32 + 4·2^13 u·G), and, as tensor/3xtf32, failed with the bound and the hint in the report."""
    results, stdout, _, _ = checked("wrong_values")
    for variant in ("fp16", "tf32"):
        r = results[("tensor", variant, "float")]
        assert r["error_bound"]["threshold"] == ERROR_BOUND + 4 * 2 ** 13
        assert r["error_bound"]["inputs"] == variant
        assert 3 * ERROR_BOUND < max_ratio(r) < r["error_bound"]["threshold"]
    assert re.search(r"failed: stage tensor/3xtf32, float, M=\d+", stdout)
    assert re.search(r"\(error is \S+ u·G, bound 32 u·G\)", stdout)
    assert "splits each operand into a high and a low TF32 part" in stdout


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_report_for_people(checked, name):
    results, stdout, code, seed = checked(name)
    assert code == 1  # something failed
    assert "\033[" not in stdout  # --no-color (and a pipe) means plain text
    assert f"seed {seed}" in stdout
    assert "Summary:" in stdout
    assert re.search(r"naive\s+float\s+passed", stdout)
    assert re.search(r"naive\s+double\s+passed", stdout)
    assert f"reproduce: make check STAGE=" in stdout and f"SEED={seed} FULL=1" in stdout
    # every failing stage's first failure names stage, precision, shape and scalars
    assert re.search(r"(failed|out_of_bounds|crashed|timed_out): stage \S+, (float|double), M=\d+ N=\d+ K=\d+ "
                     r"\(lda=\d+ ldb=\d+ ldc=\d+\), alpha=\S+, beta=\S+", stdout)


def test_wrong_values_message_shows_worst_element(checked):
    _, stdout, _, _ = checked("wrong_values")
    assert re.search(r"\d+ of \d+ elements are wrong", stdout)
    assert re.search(r"worst: C\[\d+\]\[\d+\] expected \S+, got \S+, allowed error \S+", stdout)
    assert "one character per" in stdout  # the picture of where


def test_reads_c_message_has_the_hint(checked):
    _, stdout, _, _ = checked("memory")
    assert "fills C with NaN" in stdout


def test_selection_runs_only_what_was_asked(tmp_path):
    binary = build("wrong_values")
    out = tmp_path / "check.json"
    proc = subprocess.run([str(binary), "check", "--stage", "tiled", "--prec", "double", "--seed", "7", "--no-color",
                           "--json", str(out)], capture_output=True, text=True, timeout=300)
    data = json.loads(out.read_text())
    assert data["seed"] == 7 and data["set"] == "quick"
    assert [(r["stage"], r["variant"], r["precision"]) for r in data["results"]] == \
        [("tiled", "8", "double"), ("tiled", "16", "double"), ("tiled", "32", "double")]
    assert proc.returncode == 1


STUB_PROBE_END = "no runner of its own: the stub probe's call returned Status::not_implemented"


def test_stubs_are_answered_by_the_probe_until_a_stage_breaks_it(checked):
    """One process asks every stage once before the check (check_engine.h, find_stubs): the memory
    submission's stages all return there, so its tensor stubs need no runner of their own; the process
    submission's tiled/8 kills the probe's context, so every run from it on, its tensor stubs too, is
    checked in a runner of its own, with the same verdict."""
    memory, _, _, _ = checked("memory")
    process, _, _, _ = checked("process")
    for variant in ("fp16", "tf32", "3xtf32"):
        for prec in ("float", "double"):
            by_probe, by_runner = memory[("tensor", variant, prec)], process[("tensor", variant, prec)]
            assert by_probe["disposition"] == by_runner["disposition"] == "not_implemented"
            assert by_probe["process"]["end"].startswith(STUB_PROBE_END), by_probe["process"]
            assert by_runner["process"]["end"] == "exited with code 0", by_runner["process"]
            assert by_probe["problem"] == by_runner["problem"]
            assert [c["shape"] for c in by_probe["cases"]] == [c["shape"] for c in by_runner["cases"]]
    # what the probe ran is checked as before, each in its own runner
    assert not any(r["process"]["end"].startswith(STUB_PROBE_END) for r in memory.values()
                   if r["disposition"] != "not_implemented")
