// stage_runner.cpp — which binary the grader starts its children from (sides.h).
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "parent/isolation.h"
#include "common/sides.h"

namespace gemmlab {

std::string stage_runner_executable() {
    const std::string self = self_executable();
    if (submission::code_linked()) return self;
    const std::string runner = self.substr(0, self.find_last_of('/') + 1) + kStageRunnerName;
    if (access(runner.c_str(), X_OK) != 0)
        throw std::runtime_error("cannot run " + runner + " (" + strerror(errno) +
                                 "): it holds the submission's stages and is built beside " + self +
                                 " by the same make target; rebuild with `make grader`");
    return runner;
}

}  // namespace gemmlab
