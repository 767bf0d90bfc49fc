// gpu_probe.h — whether this machine has a usable CUDA GPU (the parent asks before it starts any
// child; results files record the answer).
#pragma once

#include <string>

namespace gemmlab {

// Whether a CUDA GPU is usable here; `why` says what is missing when not.
bool gpu_available(std::string* why = nullptr);

}  // namespace gemmlab
