"""grader/scripts/tuning_names.py: the check that no symbol of a shipped reference build spells its
tuning (integer template arguments), on demangled names and on objects built from a tiny .cu."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
TOOL = ROOT / "grader" / "scripts" / "tuning_names.py"
sys.path.insert(0, str(TOOL.parent))
import tuning_names  # noqa: E402

NS = "gemmlab::reference::(anonymous namespace)::"


def test_refuses_integer_template_arguments():
    names = [
        f"void {NS}reuse_kernel<{NS}ReuseConfig<float, 128, 128, 8>, true>(int)",
        f"void {NS}tensor_kernel<{NS}TensorConfig<({NS}Scheme)1, 64>, false>(int)",
        f"gemmlab::Status {NS}launch<{NS}SgemmConfig<64, -1> >(int)",
    ]
    assert tuning_names.refused(names) == names


def test_allows_named_configurations_bools_and_the_api():
    assert tuning_names.refused([
        f"void {NS}reuse_kernel<{NS}FloatLarge, true>(int, int, {NS}FloatLarge::Elem)",
        f"void {NS}reuse_ffma_kernel<{NS}FloatHuge, false, {NS}WholeTiles>(int)",
        "gemmlab::Status gemmlab::reference::gemm_tiled<float, 32>(gemmlab::GemmProblem<float> const&)",
        f"void {NS}tiled_kernel<double, 8>(int, int, int, double)",
        "gemmlab::Status gemmlab::reference::gemm_tensor<float, (gemmlab::InputPrecision)2>("
        "gemmlab::GemmProblem<float> const&)",
        "std::array<int, 4>::size() const",  # not gemmlab's
    ]) == []


NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)

SOURCE = r"""
namespace gemmlab::reference {
namespace {
template <int BM_> struct TileConfig { static constexpr int BM = BM_; };
%s
template <class Cfg> __global__ void tile_kernel(float* c) { c[threadIdx.x] = Cfg::BM; }
}  // namespace
void launch(float* c) { tile_kernel<%s><<<1, 32>>>(c); }
}  // namespace gemmlab::reference
"""


@pytest.mark.skipif(NVCC is None, reason="needs nvcc (compile only, no GPU)")
@pytest.mark.parametrize("named", [False, True])
def test_objects_and_cubins(tmp_path, named):
    src = tmp_path / "tiny.cu"
    src.write_text(SOURCE % (("struct Large : TileConfig<128> {};", "Large") if named else ("", "TileConfig<128>")))
    obj, cubin = tmp_path / "tiny.o", tmp_path / "tiny.cubin"
    for flag, out in (("-c", obj), ("-cubin", cubin)):
        subprocess.run([NVCC, "-std=c++17", "-arch=sm_80", flag, str(src), "-o", str(out)], check=True)
    for target in (obj, cubin):
        run = subprocess.run([sys.executable, str(TOOL), str(target)], capture_output=True, text=True)
        assert run.returncode == (0 if named else 1), run.stdout + run.stderr
        if not named:
            assert "TileConfig<128>" in run.stdout
    if not named:  # the device name is found in the object's fatbin, not only through the host stub
        names, notes = tuning_names.device_symbols(str(obj))
        assert notes == [] and any("TileConfig" in n for n in tuning_names.demangle(names))
