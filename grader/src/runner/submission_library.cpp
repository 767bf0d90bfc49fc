// submission_library.cpp — opens a stage's libgemmlab-submission-<stage>.so (submission_library.h).
#include "runner/submission_library.h"

#include <dlfcn.h>

#include <map>
#include <stdexcept>
#include <string>

#include "common/report_channel.h"
#include "common/binary_names.h"

namespace gemmlab {
namespace {

const SubmissionAbi& open_library(const std::string& stage) {
    const std::string self = self_executable();
    const std::string path = self.substr(0, self.find_last_of('/') + 1) + submission_library_name(stage);
    // RTLD_LOCAL: nothing the library defines joins the global scope, so it can replace no
    // function of the grader or of the libraries the grader calls. RTLD_NOW: a broken library
    // fails here, with the loader's words, not in the middle of a stage.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle)
        throw std::runtime_error("cannot load the library of stage " + stage + ", " + path + ": " + dlerror() +
                                 " (rebuild it with `make grader`)");
    auto abi_fn = reinterpret_cast<SubmissionAbiFn>(dlsym(handle, kSubmissionAbiSymbol));
    const SubmissionAbi* abi = abi_fn ? abi_fn() : nullptr;
    if (!abi || abi->version != kSubmissionAbiVersion)
        throw std::runtime_error(path + " was built by another version of the grader (rebuild it with `make grader`)");
    return *abi;
}

}  // namespace

const SubmissionAbi& submission_library(const std::string& stage) {
    static std::map<std::string, const SubmissionAbi*> opened;
    const SubmissionAbi*& abi = opened[stage];
    if (!abi) abi = &open_library(stage);
    return *abi;
}

}  // namespace gemmlab
