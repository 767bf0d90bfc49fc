"""grader/scripts/kernel_names.py: a kernel's demangled and short names (make sass, make resources,
make profile and the symbol check show them), and the kernels of one variant, with no GPU."""
import shutil
import sys

import pytest

from support.paths import ROOT
sys.path.insert(0, str(ROOT / "grader" / "scripts"))
import kernel_names  # noqa: E402
import registry  # noqa: E402

LABELS = registry.precision_labels()


@pytest.mark.skipif(not shutil.which("c++filt"), reason="needs c++filt (binutils)")
def test_demangle_keeps_the_order_and_leaves_c_names_as_they_are():
    assert kernel_names.demangle(["_ZN7gemmlab10submission12tiled_kernelIfLi16EEEviiiPKfS3_Pf", "printf",
                                  "_Z6kernelPf"]) == [
        "void gemmlab::submission::tiled_kernel<float, 16>(int, int, int, float const*, float const*, float*)",
        "printf", "kernel(float*)"]
    assert kernel_names.demangle([]) == [] and kernel_names.demangle(iter(["_Z1kv"])) == ["k()"]


def test_without_cxxfilt_the_names_are_returned_unchanged(monkeypatch):
    monkeypatch.setattr(kernel_names.shutil, "which", lambda _name: None)
    assert kernel_names.demangle(["_Z1kv", "printf"]) == ["_Z1kv", "printf"]


def test_short_names():
    assert kernel_names.short_name("void gemmlab::submission::(anonymous namespace)::reuse_kernel<double, 128, "
                                   "std::pair<int, int>>(int, const double *)", LABELS) == \
        "reuse_kernel<double, 128, std::pair<int, int>>"
    assert kernel_names.short_name("sgemm_kernel", LABELS) == "sgemm_kernel"
    assert kernel_names.short_name("void gemmlab::submission::tiled_kernel<float, 16>(int, int, int, float const*, "
                                   "float const*, float*)", LABELS) == "tiled_kernel<float, 16>"


def test_kernel_names_show_the_precision_a_student_wrote():
    assert kernel_names.short_name("void gemmlab::submission::(anonymous namespace)::tensor_float_kernel"
                                   "<(gemmlab::InputPrecision)0>(int, float)", LABELS) == "tensor_float_kernel<3xtf32>"
    assert kernel_names.short_name("void submission::<unnamed>::k<double, (InputPrecision)0>(int)", LABELS) == \
        "k<double, fp64>"
    assert kernel_names.short_name("void gemmlab::reference::(anonymous namespace)::reuse_kernel<gemmlab::reference::"
                                   "(anonymous namespace)::FloatSmall, false>(int)", LABELS) == \
        "reuse_kernel<FloatSmall, false>"
    # without the registry's labels the compiler's cast stays, as it wrote it
    assert kernel_names.short_name("void k<(gemmlab::InputPrecision)2>(int)", {}) == "k<(InputPrecision)2>"


def test_a_variant_keeps_the_kernels_that_name_it_and_those_every_variant_launches():
    assert kernel_names.template_arguments("k<Cfg<1, 2>, (x)3, 16>") == ["Cfg<1, 2>", "(x)3", "16"]
    tiled = registry.variants("tiled")
    kept = [s for s in ("tiled_kernel<float, 16>", "tiled_kernel<double, 16>", "tiled_kernel<float, 8>",
                        "tiled_kernel<double, 32>", "zero_fill<float>", "helper") if kernel_names.of_variant(s, "16", tiled)]
    assert kept == ["tiled_kernel<float, 16>", "tiled_kernel<double, 16>", "zero_fill<float>", "helper"]
    assert [s for s in ("tensor_float_kernel<fp16>", "tensor_float_kernel<3xtf32>", "split<float>")
            if kernel_names.of_variant(s, "3xtf32", registry.variants("tensor"))] == \
        ["tensor_float_kernel<3xtf32>", "split<float>"]
    assert kernel_names.of_variant("tiled_kernel<float, 8>", "", tiled)
