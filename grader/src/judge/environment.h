// environment.h — what produced a result: the GPU, its clocks, driver, CUDA and cuBLAS versions,
// the host. Recorded with every results file so a TA can see where numbers came from.
#pragma once

#include <nlohmann/json.hpp>

namespace gemmlab {

// Describes the machine and GPU 0 (or says that there is no GPU, and why).
nlohmann::json describe_environment();

}  // namespace gemmlab
