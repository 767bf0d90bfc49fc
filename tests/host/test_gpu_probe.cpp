// Tests of gpu_probe.h: without a usable GPU, a student reads why in plain words first ("this
// machine has no GPU"), with CUDA's own reason kept in parentheses — not CUDA's text alone.
#include <doctest/doctest.h>

#include <cuda_runtime.h>

#include <string>

#include "common/gpu_probe.h"

using namespace gemmlab;

namespace {
bool starts_with(const std::string& text, const std::string& head) { return text.rfind(head, 0) == 0; }
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("no driver loaded: this machine has no GPU, CUDA's insufficient-driver error in parentheses") {
    const std::string why = explain_no_gpu(cudaErrorInsufficientDriver, 0, false, nullptr, 13000);
    CHECK(starts_with(why, "this machine has no GPU (no NVIDIA driver is loaded; "));
    CHECK(contains(why, "(no NVIDIA driver is loaded; CUDA: cudaErrorInsufficientDriver, \""));
    CHECK(contains(why, cudaGetErrorString(cudaErrorInsufficientDriver)));
    CHECK(why.back() == ')');
}

TEST_CASE("a loaded driver older than the runtime is named as such") {
    const std::string why = explain_no_gpu(cudaErrorInsufficientDriver, 0, true, nullptr, 13000);
    CHECK(starts_with(why, "this machine's NVIDIA driver is too old for CUDA 13.0 (CUDA: cudaErrorInsufficientDriver"));
}

TEST_CASE("no device: this machine has no GPU, or none visible when CUDA_VISIBLE_DEVICES hides them") {
    CHECK(explain_no_gpu(cudaErrorNoDevice, 0, true, nullptr, 13000) ==
          std::string("this machine has no GPU (CUDA: cudaErrorNoDevice, \"") + cudaGetErrorString(cudaErrorNoDevice) + "\")");
    CHECK(explain_no_gpu(cudaSuccess, 0, true, nullptr, 13000) == "this machine has no GPU (CUDA: 0 devices)");
    const std::string hidden = explain_no_gpu(cudaErrorNoDevice, 0, true, "", 13000);
    CHECK(starts_with(hidden, "no GPU is visible to this program (CUDA_VISIBLE_DEVICES=\"\" names none"));
    CHECK(contains(hidden, "cudaErrorNoDevice"));
}

TEST_CASE("any other CUDA error still leads with words, then CUDA's") {
    const std::string why = explain_no_gpu(cudaErrorDevicesUnavailable, 0, true, nullptr, 12050);
    CHECK(starts_with(why, "CUDA cannot use a GPU on this machine (CUDA: cudaErrorDevicesUnavailable, \""));
}

TEST_CASE("gpu_available's reason on this machine is explain_no_gpu's") {
    std::string why;
    if (gpu_available(&why)) return;  // a GPU here: nothing to explain
    CHECK((starts_with(why, "this machine has no GPU (") || starts_with(why, "no GPU is visible") ||
           starts_with(why, "this machine's NVIDIA driver") || starts_with(why, "CUDA cannot use a GPU")));
    CHECK(!starts_with(why, "cudaGetDeviceCount failed"));
}
