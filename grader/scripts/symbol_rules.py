"""symbol_rules.py — the symbol check's rules: what a stage object may reference and define, and why
each refusal is one (docs/student-guide.md, "What a stage may call"; docs/gallery.md).

  ALLOWED_REFERENCES  the groups of names a stage may call, each with the reason it is there; host
                      math is every function the machine's libm exports (MATH_GROUP)
  EXPLAINED, WHY      the refused references, most specific first, named for the message
  definition_problem  what a stage may define: its own names, never a protected library's or the
                      grader's
  REGISTRATION        the launch machinery's registration functions, which only nvcc's own
                      registration code may call

scan_symbols.py applies them to the objects; this file reads no object, runs no tool and imports no
other script.
"""
import re

RULE = "docs/student-guide.md, \"What a stage may call\""


def _names(*names):
    return re.compile(r"^(?:%s)$" % "|".join(names))


# ---- references a stage may make: (group, why it is allowed, pattern on the bare name) -------------
# Patterns see the demangled name without any @version suffix; the mangled name is tried too.
ALLOWED_REFERENCES = [
    ("toolchain", "code the compiler emits for any C++/CUDA file (unwinding, static guards, TLS, PIC)",
     _names(r"_GLOBAL_OFFSET_TABLE_", r"_Unwind_Resume", r"__gxx_personality_v0", r"__cxa_guard_(acquire|release|abort)",
            r"__cxa_atexit", r"atexit", r"__dso_handle", r"__stack_chk_fail", r"__tls_get_addr", r"__gmon_start__",
            r"_ITM_(de)?registerTMCloneTable", r"__cxa_finalize", r"__libc_single_threaded")),
    ("cuda_launch", "the launch machinery nvcc generates for <<<...>>> and kernel registration (the registration "
                    "functions only from nvcc's own registration code: REGISTRATION below)",
     re.compile(r"^__cuda(RegisterFatBinary(End)?|UnregisterFatBinary|RegisterFunction|RegisterVar|RegisterManagedVar|"
                r"RegisterSurface|RegisterTexture|RegisterLinkedBinary\w*|LaunchKernel(_ptsz)?|PushCallConfiguration|"
                r"PopCallConfiguration|GetKernel|InitModule)$")),
    ("cuda_errors", "checking what a CUDA call or a launch did (GEMMLAB_TRY)",
     _names("cudaGetLastError", "cudaPeekAtLastError", "cudaGetErrorString", "cudaGetErrorName")),
    ("cuda_launch_api", "launching kernels explicitly and configuring them",
     _names(r"cudaLaunchKernel(_ptsz)?", r"cudaLaunchKernelExC(_ptsz)?", r"cudaLaunchCooperativeKernel(_ptsz)?",
            "cudaFuncSetAttribute", "cudaFuncGetAttributes", "cudaFuncSetCacheConfig", "cudaFuncSetSharedMemConfig",
            r"cudaOccupancy\w+")),
    ("cuda_queries", "asking what the device is (SM count, shared memory, limits) to choose a configuration",
     _names("cudaGetDevice", "cudaGetDeviceCount", r"cudaGetDeviceProperties(_v2)?", "cudaDeviceGetAttribute",
            "cudaDeviceGetLimit", "cudaMemGetInfo", "cudaDeviceGetStreamPriorityRange", "cudaRuntimeGetVersion",
            "cudaDriverGetVersion", "cudaPointerGetAttributes")),
    ("cuda_memory", "device memory and copies: the pitched stage allocates and uploads its operands",
     _names("cudaMalloc", "cudaMallocPitch", "cudaMalloc3D", "cudaFree", "cudaMallocAsync", "cudaFreeAsync",
            r"cudaMemcpy(2D|3D)?(Async)?(_ptds|_ptsz)?", r"cudaMemset(2D|3D)?(Async)?(_ptds|_ptsz)?",
            r"cudaMemcpy(To|From)Symbol(Async)?", "cudaGetSymbolAddress", "cudaGetSymbolSize")),
    ("cuda_streams", "the stage's own streams and events (its work is timed to the end wherever it runs)",
     _names(r"cudaStreamCreate(WithFlags|WithPriority)?", "cudaStreamDestroy", r"cudaStreamSynchronize(_ptsz)?",
            r"cudaStreamWaitEvent(_ptsz)?", r"cudaStreamQuery(_ptsz)?", "cudaStreamGetFlags", "cudaStreamGetPriority",
            r"cudaEventCreate(WithFlags)?", "cudaEventDestroy", r"cudaEventRecord(WithFlags)?(_ptsz)?",
            "cudaEventSynchronize", "cudaEventQuery", "cudaEventElapsedTime", "cudaDeviceSynchronize")),
    ("printing", "printf and C++ streams for debugging (the output is captured, never parsed)",
     _names("printf", "puts", "putchar", "fputs", "fputc", "putc", "fprintf", "vprintf", "vfprintf", "snprintf",
            "sprintf", "vsnprintf", "vsprintf", "fflush", "fwrite", "perror", "stdout", "stderr",
            r"__(v?f?s?n?printf)_chk", r"std::(cout|cerr|clog)", r"std::basic_ostream<.*",
            r"std::ostream::.*", r"std::__ostream_insert<.*", r"std::ios_base::Init::(Init|~Init)\(\)",
            r"std::basic_ios<.*", r"std::ostream& std::.*", r"std::basic_ostream<.*>& std::.*")),
    ("memory", "host memory and byte/string basics",
     _names("malloc", "calloc", "realloc", "free", "aligned_alloc", "posix_memalign", "memcpy", "memmove", "memset",
            "memcmp", "memchr", "strlen", "strcmp", "strncmp", "strcpy", "strncpy", "strchr", "strrchr", "strstr",
            "strcat", "strncat", "strnlen", r"(__isoc99_|__isoc23_)?sscanf", "strtol", "strtoul", "strtoll", "strtoull",
            "strtod", "strtof", "atoi", "atol", "atof", r"__(memcpy|memmove|memset|strcpy|strncpy|strcat|strncat)_chk",
            r"operator new(\[\])?\(.*", r"operator delete(\[\])?\(.*", r"std::nothrow")),
    ("cxx_runtime", "the C++ runtime: exceptions, type information, std::string and container helpers",
     re.compile(r"^(__cxa_(allocate_exception|free_exception|throw|begin_catch|end_catch|rethrow|pure_virtual|"
                r"deleted_virtual|call_unexpected|bad_cast|bad_typeid|get_exception_ptr|current_exception_type|"
                r"thread_atexit)"
                r"|std::__throw_\w+\(.*|std::terminate\(\)"
                r"|(vtable|typeinfo|typeinfo name) for (__cxxabiv1::\w+|std::(exception|bad_alloc|bad_array_new_length|"
                r"runtime_error|logic_error|out_of_range|invalid_argument|length_error|domain_error|overflow_error|"
                r"range_error|underflow_error|bad_cast)|(int|unsigned int|long|unsigned long|float|double|char|bool)( const)?\*?)"
                r"|std::(exception|bad_alloc|bad_array_new_length|runtime_error|logic_error|out_of_range|invalid_argument|"
                r"length_error|domain_error|overflow_error|range_error|underflow_error)::.*"
                r"|std::(__cxx11::)?basic_string<.*|std::(__cxx11::)?to_string\(.*"
                r"|std::_Hash_bytes\(.*|std::__detail::_Prime_rehash_policy::.*|std::_Rb_tree_\w+\(.*"
                r"|std::__detail::_List_node_base::.*|std::__cxx11::_List_node_base::.*)$")),
    ("ending", "ending the process or waiting (the grader records a crash or a time-out; nothing else changes)",
     _names("exit", "_exit", "_Exit", "quick_exit", "abort", "__assert_fail", "sleep", "usleep", "nanosleep",
            "sched_yield")),
    ("stage_api", "the stage API's own inline state (gemmlab/stage_api.h: GEMMLAB_TRY keeps the error)",
     re.compile(r"^((TLS init function|TLS wrapper function) for )?gemmlab::last_stage_error$")),
]

# Host math comes from libm: every function it exports may be called (the list is read from the
# libm of this machine, see --write-protected).
MATH_GROUP = ("math", "host math (libm)")


# ---- refused references, named for the message (the allowlist above decides; these explain) ----
EXPLAINED = [
    ("grader_internal", "the grader's own code",
     re.compile(r"^(?!gemmlab::(submission::|last_stage_error))(.*[\s(<,*&])?gemmlab::")),
    ("library_gemm", "cuBLAS", re.compile(r"^cublas")),
    ("library_gemm", "cuSPARSE/cuSOLVER/cuTENSOR/cuDNN", re.compile(r"^(cusparse|cusolver|cutensor|cudnn)")),
    ("library_gemm", "CUTLASS/CuTe", re.compile(r"(^|[\s(<,*&])(cutlass|cute)::")),
    ("library_gemm", "MAGMA", re.compile(r"^magma(blas)?_")),
    ("library_gemm", "a CPU BLAS",
     re.compile(r"^(cblas_|openblas_|mkl_|MKL_|bli_|[sdcz]gemm_?$|[sdcz]gemm_batch)")),
    ("library_gemm", "rocBLAS/hipBLAS", re.compile(r"^(rocblas_|hipblas)")),
    ("dynamic_loading", "loading code by name at run time",
     _names("dlopen", "dlsym", "dlvsym", "dlmopen", "dladdr1?", "dlinfo", r"__libc_dl(open_mode|sym|vsym|close)",
            r"cuGetProcAddress(_v2)?", r"cudaGetDriverEntryPoint.*", "cudaGetExportTable", r"cudaGetFuncBySymbol",
            r"cudaGetKernel")),
    ("dynamic_loading", "loading a module or library of GPU code from memory or a file at run time",
     _names(r"cuLibraryLoad\w*", r"cuModuleLoad\w*", r"cudaLibraryLoad\w*")),
    ("dynamic_loading", "compiling or linking code at run time (NVRTC, nvJitLink, the PTX compiler, the driver's linker)",
     re.compile(r"^(nvrtc[A-Z]\w*|(__)?nvJitLink[A-Z]\w*|nvPTXCompiler\w+|cuLink\w+)$")),
    ("dynamic_loading", "anonymous memory files, from which code can be loaded or run",
     _names("memfd_create", "memfd_secret", "shm_open")),
    ("process", "process control",
     _names("fork", "vfork", "clone3?", "execl[ep]?", "execv[pe]?", "execvpe", "execveat", "fexecve", "system",
            "popen", "posix_spawnp?", "kill", "killpg", "tgkill", "sigqueue", "getppid", "ptrace", "setsid",
            "setpgid", "daemon", "prctl", r"pidfd_.*", "syscall", r"process_vm_(readv|writev)", r"pthread_\w+",
            r"std::thread::.*", "mprotect", "mmap(64)?", "munmap")),
    ("files", "file system, descriptor or network access",
     _names(r"open(at)?(64)?", r"__open(64)?(_2)?", r"__openat(64)?_2", r"creat(64)?", r"fopen(64)?", r"freopen(64)?",
            "fdopen", "opendir", "fdopendir", "scandir", r"unlink(at)?", r"rename(at2?)?", "remove", r"mkdir(at)?",
            "rmdir", r"symlink(at)?", r"link(at)?", r"truncate(64)?", "chmod", r"fchmod(at)?", "chown", "write",
            r"pwrite(64)?", "writev", "__write_chk", "read", "__read_chk", "dup", "dup2", "dup3", "close",
            "socket", "connect", "bind", "sendto", "sendmsg", "ioctl", "fcntl")),
    ("files", "C++ file streams", re.compile(r"^std::(__cxx11::)?basic_(i|o)?f(stream|ilebuf)<.*>::")),
    ("files", "std::filesystem", re.compile(r"^std::(__cxx11::)?filesystem::")),
    ("clocks", "clocks and timers (the grader times the stage; a stage has nothing to time)",
     _names(r"clock_gettime", "clock", "gettimeofday", "time", r"timespec_get", r"std::chrono::.*",
            r"clock_nanosleep")),
    ("device", "device-wide CUDA calls that destroy or switch the grader's GPU context",
     _names("cudaDeviceReset", "cudaThreadExit", "cudaSetDevice", "cudaSetValidDevices", "cudaSetDeviceFlags",
            "cudaDeviceSetLimit", "cudaDeviceSetCacheConfig", r"cuCtx\w+", r"cuDevicePrimaryCtx\w+", r"cuInit")),
    ("host_memory", "mapped, pinned, managed or shared memory (a channel around the timed call)",
     _names("cudaMallocHost", "cudaHostAlloc", "cudaHostRegister", "cudaHostUnregister", "cudaHostGetDevicePointer",
            "cudaMallocManaged", r"cudaIpc\w+", "cudaFreeHost")),
    ("callbacks", "host callbacks and graphs (code that runs later, outside the stage's call)",
     _names("cudaLaunchHostFunc", "cudaStreamAddCallback", r"cudaGraph\w+", r"cudaStreamBeginCapture\w*",
            r"cudaStreamEndCapture")),
    ("grader_libraries", "the libraries the grader uses to measure (NVML, CUPTI, cuRAND, the driver API)",
     re.compile(r"^(nvml|cupti|curand|cu[A-Z])")),
]

WHY = {
    "grader_internal": "stage code sees the stage API only (gemmlab/stage_api.h); the grader's own functions "
                       "are not part of it",
    "library_gemm": "a stage must compute the product itself; a library GEMM is not your work",
    "dynamic_loading": "it hides what a stage runs from this check: a stage runs only the code its own files "
                       "hold, as compiled with them",
    "process": "a stage must not start, signal or watch processes or threads, or change memory protections",
    "files": "a stage must not touch files, descriptors or the network (printf for debugging is fine)",
    "clocks": "the grader times every call itself; a stage needs no clock",
    "device": "the grader owns the GPU context; resetting or switching it breaks the check",
    "host_memory": "a stage computes on the device operands it is given",
    "callbacks": "a stage's work is the kernels it launches during its call",
    "grader_libraries": "these are the grader's instruments, not a stage's",
    "not_allowed": "it is not on the list of what a stage may call",
    "defines_protected": "a stage may define only its own names; a definition of a library's function "
                         "would replace it for the grader too",
    "tensor_cores": "only the tensor stage may use the tensor cores for anything but FP64 (DMMA)",
}


def bare(name):
    return name.split("@")[0]


def explain_reference(name):
    """(rule, what) for a refused reference: the most specific explanation, else not_allowed."""
    b = bare(name)
    for rule, what, pattern in EXPLAINED:
        if pattern.search(b):
            return rule, what
    return "not_allowed", "not on the allowlist"


def allowed_reference(mangled, demangled, math=frozenset()):
    """The allowlist group a reference belongs to, or None."""
    for b in (bare(demangled), bare(mangled)):
        for group, _why, pattern in ALLOWED_REFERENCES:
            if pattern.search(b):
                return group
        if b in math:
            return MATH_GROUP[0]
    return None


def classify(name, math=frozenset()):
    """For one referenced name on its own: None when a stage may call it, else (rule, what)."""
    if allowed_reference(name, name, math):
        return None
    return explain_reference(name)


def qualified_name(demangled):
    """The entity a demangled symbol names, without return type and parameters:
    "gemmlab::Status gemmlab::submission::gemm_naive<float>(...)" -> "gemmlab::submission::gemm_naive<float>"."""
    demangled = demangled.replace("(anonymous namespace)", "{anonymous}")
    depth, cut = 0, len(demangled)
    for i, ch in enumerate(demangled):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            cut = i
            break
    head, depth, start = demangled[:cut], 0, 0
    for i, ch in enumerate(head):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == " " and depth == 0 and not head.startswith(("typeinfo", "vtable", "VTT", "guard", "TLS"), 0):
            start = i + 1
    return head[start:]


# The libraries' own prefixes, protected whether or not this machine has the library to read
# (NVML comes with the driver, which a build machine may lack; new versions add names).
PROTECTED_PREFIXES = [("NVML", re.compile(r"^nvml[A-Z]")), ("CUPTI", re.compile(r"^cupti[A-Z]")),
                      ("cuRAND", re.compile(r"^curand[A-Z]")), ("cuBLAS", re.compile(r"^cublas(Lt)?[A-Z]")),
                      ("the CUDA runtime", re.compile(r"^cuda[A-Z]")), ("the CUDA driver API", re.compile(r"^cu[A-Z]"))]


def definition_problem(mangled, demangled, sym_type, kernels, protected):
    """None when an object may define this global symbol, else (rule, what)."""
    b = qualified_name(bare(demangled))
    owner = protected.get(bare(mangled)) or next(
        (lib for lib, pattern in PROTECTED_PREFIXES if pattern.search(bare(mangled))), None)
    if owner:
        return "defines_protected", f"a function or variable {owner} exports"
    if b.startswith("gemmlab::submission::") or re.match(r"^(typeinfo|typeinfo name|vtable|VTT|guard variable) for "
                                                         r"gemmlab::submission::", b):
        return None
    if re.match(r"^((TLS init function|TLS wrapper function) for )?gemmlab::last_stage_error$", b):
        return None
    if b.startswith("__device_stub__") or bare(mangled) in kernels:
        return None  # a kernel (nvcc defines a host stub beside each)
    if bare(mangled) in ("DW.ref.__gxx_personality_v0", "__dso_handle") or bare(mangled).startswith(
            ("__fatbinwrap", "__nv_", "__cudaRegisterLinkedBinary", "_GLOBAL__")):
        return None
    if "gemmlab::" in b:
        return "grader_internal", "a name of the grader's"
    # Anything else is the submission's own: its helpers (a __device__ function gets a host
    # definition too), inline functions and template instances from headers. None of it can take
    # the place of anything outside the library (RTLD_LOCAL, one exported symbol).
    return None


# ---- the launch machinery, called only where nvcc calls it ---------------------------------------------
# Every object references the functions that register its GPU code with the CUDA runtime
# (__cudaRegisterFatBinary, __cudaRegisterFunction, ...; the "cuda_launch" group above): nvcc calls them
# from the file's own registration code, static functions of fixed names that a stage file cannot
# define (they would clash with nvcc's own in the same file). Called from anywhere else — a function of
# the stage, or an address kept in data — they register GPU code the stage carries as bytes, which
# neither the tensor-core rule nor the stage's library shows: refused like loading code from memory.
REGISTRATION = re.compile(r"^__cuda(RegisterFatBinary(End)?|UnregisterFatBinary|RegisterFunction|RegisterVar|"
                          r"RegisterManagedVar|RegisterSurface|RegisterTexture|RegisterLinkedBinary\w*|InitModule)$")
NVCC_REGISTRATION_CODE = {"_ZL24__sti____cudaRegisterAllv", "_ZL26__cudaUnregisterBinaryUtilv",
                          "_ZL31__nv_cudaEntityRegisterCallbackPPv", "_ZL32__nv_init_managed_rt_with_modulePPv"}


