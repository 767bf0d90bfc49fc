// submission_library.cpp — opens libgemmlab-submission.so (submission_library.h).
#include "runner/submission_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "common/report_channel.h"
#include "common/binary_names.h"

namespace gemmlab {
namespace {

const SubmissionAbi& open_library() {
    const char* override_path = std::getenv("GEMMLAB_SUBMISSION_LIBRARY");
    std::string path = override_path && *override_path ? override_path : self_executable();
    if (!(override_path && *override_path)) path = path.substr(0, path.find_last_of('/') + 1) + kSubmissionLibraryName;
    // RTLD_LOCAL: nothing the library defines joins the global scope, so it can replace no
    // function of the grader or of the libraries the grader calls. RTLD_NOW: a broken library
    // fails here, with the loader's words, not in the middle of a stage.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle)
        throw std::runtime_error("cannot load the submission's library " + path + ": " + dlerror() +
                                 " (rebuild it with `make grader`)");
    auto abi_fn = reinterpret_cast<SubmissionAbiFn>(dlsym(handle, kSubmissionAbiSymbol));
    const SubmissionAbi* abi = abi_fn ? abi_fn() : nullptr;
    if (!abi || abi->version != kSubmissionAbiVersion)
        throw std::runtime_error(path + " was built by another version of the grader (rebuild it with `make grader`)");
    return *abi;
}

}  // namespace

const SubmissionAbi& submission_library() {
    static const SubmissionAbi& abi = open_library();
    return abi;
}

}  // namespace gemmlab
