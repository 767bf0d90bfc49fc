"""grader/scripts/scan_symbols.py, the symbol check, and its rules (grader/scripts/symbol_rules.py), with
no GPU: what a stage may call and define, helper files charged to the stages that call them, and the
student build and the reference held to the rules. The gallery's hostile submissions go through the
same check in test_gallery.py."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from support.paths import ROOT
sys.path.insert(0, str(ROOT / "grader" / "scripts"))
import registry  # noqa: E402
import scan_symbols  # noqa: E402
import symbol_rules  # noqa: E402

STAGES = registry.stage_names()


@pytest.mark.parametrize("symbol,rule", [
    ("cublasSgemm_v2", "library_gemm"), ("cublasLtMatmul", "library_gemm"), ("cblas_sgemm", "library_gemm"),
    ("sgemm_", "library_gemm"), ("magma_sgemm", "library_gemm"),
    ("void cutlass::gemm::device::Gemm<float>::operator()()", "library_gemm"),
    ("dlopen", "dynamic_loading"), ("dlsym@GLIBC_2.34", "dynamic_loading"), ("cuGetProcAddress_v2", "dynamic_loading"),
    ("cudaGetExportTable", "dynamic_loading"), ("dlmopen", "dynamic_loading"), ("__libc_dlopen_mode", "dynamic_loading"),
    ("cuModuleLoadData", "dynamic_loading"), ("cuModuleLoadDataEx", "dynamic_loading"),
    ("cuLibraryLoadData", "dynamic_loading"), ("cudaLibraryLoadData", "dynamic_loading"),
    ("nvrtcCompileProgram", "dynamic_loading"), ("__nvJitLinkCreate_12_0", "dynamic_loading"),
    ("nvPTXCompilerCompile", "dynamic_loading"), ("cuLinkAddData_v2", "dynamic_loading"),
    ("memfd_create", "dynamic_loading"), ("fexecve", "process"), ("execveat", "process"),
    ("fork", "process"), ("kill", "process"), ("getppid", "process"), ("system", "process"), ("syscall", "process"),
    ("pthread_create", "process"), ("mprotect", "process"),
    ("fopen", "files"), ("open64", "files"), ("write", "files"), ("rename", "files"),
    ("std::basic_ofstream<char, std::char_traits<char> >::basic_ofstream(char const*, std::_Ios_Openmode)", "files"),
    ("std::filesystem::__cxx11::path::_M_split_cmpts()", "files"),
    ("cudaDeviceReset", "device"), ("cudaSetDevice", "device"),
    ("clock_gettime", "clocks"), ("std::chrono::_V2::steady_clock::now()", "clocks"),
    ("cudaHostAlloc", "host_memory"), ("cudaMallocManaged", "host_memory"), ("cudaLaunchHostFunc", "callbacks"),
    ("nvmlDeviceGetClockInfo", "grader_libraries"), ("cuptiActivityDisable", "grader_libraries"),
    ("curandGenerateNormal", "grader_libraries"),
    ("gemmlab::reference_dgemm(gemmlab::GpuContext&, int, int, int, double, double const*, int, double const*, int, "
     "double, double*, int)", "grader_internal"),
    ("gemmlab::median(std::vector<double, std::allocator<double> >)", "grader_internal"),
    ("some_function_nobody_defines", "not_allowed"),
])
def test_what_a_stage_may_not_call_is_refused_and_named(symbol, rule):
    assert symbol_rules.classify(symbol) == (rule, symbol_rules.explain_reference(symbol)[1])


@pytest.mark.parametrize("symbol", [
    "printf", "puts", "fprintf", "fflush", "vprintf", "cudaMalloc", "cudaFree", "cudaMallocPitch", "cudaMemcpy2DAsync",
    "cudaFuncSetAttribute", "cudaGetLastError", "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaMemGetInfo",
    "__cudaLaunchKernel", "__cudaRegisterFatBinary", "atexit", "__cxa_guard_acquire", "operator new(unsigned long)",
    "std::__throw_length_error(char const*)", "memcpy", "std::ostream::operator<<(int)", "cudaLaunchKernel",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessor", "cudaEventRecord", "cudaStreamCreateWithFlags",
    "gemmlab::last_stage_error", "TLS wrapper function for gemmlab::last_stage_error",
])
def test_what_a_stage_may_call_is_on_the_allowlist(symbol):
    assert symbol_rules.classify(symbol) is None


def test_host_math_is_allowed_from_libm():
    assert symbol_rules.classify("sqrt", math=frozenset({"sqrt"})) is None
    assert symbol_rules.classify("sqrt") == ("not_allowed", "not on the allowlist")


def test_helper_files_count_against_the_stages_that_call_them(tmp_path):
    """A library call moved into a helper .cu is charged to the stage that calls the helper."""
    src = tmp_path / "src"
    src.mkdir()
    ns = "namespace gemmlab::submission {"
    (src / "helper.cu").write_text('extern "C" int cublasCreate_v2(void**);\n'
                                   f'{ns} int gallery_helper(void* h) {{ return cublasCreate_v2(&h); }} }}\n')
    (src / "tiled.cu").write_text(f'{ns} int gallery_helper(void* h);\n'
                                  'int gallery_tiled() { return gallery_helper(nullptr); } }\n')
    (src / "naive.cu").write_text(f'{ns} int gallery_naive() {{ return 0; }} }}\n')
    objs = []
    for cu in src.glob("*.cu"):
        obj = tmp_path / f"{cu.stem}.o"
        subprocess.run(["g++", "-x", "c++", "-c", str(cu), "-o", str(obj)], check=True)
        objs.append(obj)
    result = scan_symbols.scan(objs, None, STAGES)
    assert set(result["stages"]) == {"tiled"}
    assert "helper.cu" in result["stages"]["tiled"]["problem"]
    assert result["files"]["tiled.cu"]["calls_into"] == ["helper.cu"]


def test_the_student_build_and_the_reference_are_clean(grader):
    """The handed-out stubs and the instructor solutions call nothing a stage may not."""
    sub = Path(grader).parent
    objects = sorted((sub / "stages").glob("*.o"))
    if not objects:
        pytest.skip(f"no stage objects beside {grader}")
    owner, math = scan_symbols.load_protected(sub.parent / "grader" / "protected-symbols.json")
    result = scan_symbols.scan(objects, sub.parent / "grader" / "submission_exports.o", STAGES, owner, math)
    assert result["stages"] == {} and result["missing"] == [], json.dumps(result, indent=1)[:2000]
    reference = sorted((sub.parent / "reference").glob("*.o"))
    reference = [o for o in reference if o.stem != "registry"]
    if reference:
        # the reference's names live in gemmlab::reference (its build), which the check reads as the
        # grader's: only what the reference references is held to the allowlist here
        refs = scan_symbols.scan(reference, None, STAGES, owner, math)
        assert all(p["kind"] == "definition" for f in refs["files"].values() for p in f["problems"]), refs["files"]



@pytest.mark.parametrize("mangled,demangled,allowed", [
    ("_Z13helper_globalf", "helper_global(float)", True),  # a __device__ helper's host definition
    ("_ZN12_GLOBAL__N_111helper_anonEf", "(anonymous namespace)::helper_anon(float)", True),
    ("_ZN7gemmlab10submission5stuffEv", "gemmlab::submission::stuff()", True),
    ("clock_gettime", "clock_gettime", False),
    ("nvmlDeviceGetClockInfo", "nvmlDeviceGetClockInfo", False),  # NVML's prefix, library or not
    ("cudaEventRecord", "cudaEventRecord", False),
    ("_ZN7gemmlab6medianESt6vectorIdSaIdEE", "gemmlab::median(std::vector<double, std::allocator<double> >)", False),
])
def test_what_a_stage_may_define(mangled, demangled, allowed):
    problem = symbol_rules.definition_problem(mangled, demangled, "T", set(), {"clock_gettime": "libc"})
    assert (problem is None) == allowed, problem
