// gpu_record_marker.h — the marker kernel that bounds a window of the GPU's record (gpu_record.h).
#pragma once

#include <cuda_runtime.h>

namespace gemmlab {

// Part of the marker kernel's name, as the GPU's record reports it.
constexpr const char* kWindowMarkerName = "gemmlab_window_marker";

// Launches the one-thread marker kernel on `stream` (does not wait).
void launch_window_marker(cudaStream_t stream);

}  // namespace gemmlab
