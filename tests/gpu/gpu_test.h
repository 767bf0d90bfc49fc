// gpu_test.h — GPU_TEST_CASE: a doctest case that is skipped (and counted as skipped) without a GPU.
#pragma once

#include <doctest/doctest.h>

#include "judge/gpu_context.h"
#include "common/gpu_probe.h"

namespace gemmlab::testing {
inline bool no_gpu() {
    static const bool missing = !gpu_available();
    return missing;
}
}  // namespace gemmlab::testing

#define GPU_TEST_CASE(name) TEST_CASE(name * doctest::skip(::gemmlab::testing::no_gpu()) * doctest::timeout(120))
