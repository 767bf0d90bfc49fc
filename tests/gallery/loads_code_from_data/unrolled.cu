// tests/gallery/loads_code_from_data/unrolled.cu — gallery entry "loads_code_from_data"
// unrolled: looks for a faster kernel that is not in its file — GPU code carried as bytes and loaded
// by the driver or the runtime, or registered with the launch machinery nvcc emits, source compiled
// with NVRTC or linked with nvJitLink at run time, a library opened with dlmopen, a program run from
// an anonymous memory file — and falls back on the naive stage's kernel. Not a model to follow: a submission the grader must survive and see through;
// README.md says what the grader has to conclude.
#include <cstddef>

#include "gemmlab/stages.h"

// Declared by hand, as a submission would (their headers are not the stage API).
extern "C" {
int cuModuleLoadData(void** module, const void* image);
int cuModuleLoadDataEx(void** module, const void* image, unsigned n, int* options, void** values);
int cuLibraryLoadData(void** library, const void* code, int* jit_options, void** jit_values, unsigned n_jit,
                      int* options, void** values, unsigned n);
int nvrtcCompileProgram(void* program, int n, const char* const* options);
int nvJitLinkCreate(void** handle, unsigned n, const char** options);
void* dlmopen(long namespace_id, const char* file, int mode);
int memfd_create(const char* name, unsigned flags);
int fexecve(int fd, char* const argv[], char* const envp[]);
void** __cudaRegisterFatBinary(void* fatCubin);  // as crt/host_runtime.h declares it
}

namespace gemmlab::GEMMLAB_NS {
namespace {

// A few bytes standing for a compiled kernel or its source: what a loader would be handed.
const unsigned char kCarried[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};

// A fat binary's wrapper as nvcc lays it out (magic, version, the image, no file name).
struct CarriedFatbin {
    int magic, version;
    const void* data;
    void* unused;
};
const CarriedFatbin kWrapper = {0x466243b1, 1, kCarried, nullptr};

// Whether any loader gave code: each one is a way to run what no stage file holds.
bool loaded_from_data() {
    void* handle = nullptr;
    cudaLibrary_t library = nullptr;
    const char* options[] = {"-arch=sm_90"};
    char* none[] = {nullptr};
    return cuModuleLoadData(&handle, kCarried) == 0 ||
           cuModuleLoadDataEx(&handle, kCarried, 0, nullptr, nullptr) == 0 ||
           cuLibraryLoadData(&handle, kCarried, nullptr, nullptr, 0, nullptr, nullptr, 0) == 0 ||
           cudaLibraryLoadData(&library, kCarried, nullptr, nullptr, 0, nullptr, nullptr, 0) == cudaSuccess ||
           nvrtcCompileProgram(handle, 1, options) == 0 || nvJitLinkCreate(&handle, 1, options) == 0 ||
           dlmopen(-1, "libgemmlab-fast.so", 2) != nullptr ||
           fexecve(memfd_create("gemmlab-gallery", 0), none, none) == 0 ||
           __cudaRegisterFatBinary(const_cast<CarriedFatbin*>(&kWrapper)) != nullptr;
}

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    if (p.M < 0 && loaded_from_data()) return Status::unsupported;  // never taken: the names are what count
    return gemm_naive<T>(p);
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
