// stream_memops.h — the two stream memory operations the judge and its runners synchronize with: a
// stream waits until a word in device memory reaches a value, or writes one (cuStreamWaitValue32,
// cuStreamWriteValue32). They are driver API calls, resolved through the CUDA runtime at run time,
// so no binary links libcuda (which a machine without a GPU does not have).
#pragma once

#include <cstdint>
#include <string>

#include <cuda_runtime.h>

namespace gemmlab {

class StreamMemOps {
public:
    // "" when both calls are available on this driver, else why not.
    std::string load();
    // Enqueue on `stream`: wait until *word >= value / write value into *word.
    cudaError_t wait_geq(cudaStream_t stream, const uint32_t* word, uint32_t value) const;
    cudaError_t write(cudaStream_t stream, uint32_t* word, uint32_t value) const;

private:
    void* wait_ = nullptr;
    void* write_ = nullptr;
};

}  // namespace gemmlab
