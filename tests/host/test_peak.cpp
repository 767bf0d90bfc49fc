// Tests of peak.h: the peak GEMM rates that make a too-fast result `rejected`.
#include <doctest/doctest.h>

#include "common/peak.h"

using namespace gemmlab;

TEST_CASE("H100 SXM: 67 TFLOPS FP32, FP64 tensor cores count twice the FP64 FMA rate") {
    const GpuShape h100{132, 1980, 9, 0};
    CHECK(fma_lanes_per_sm(Precision::f32, 9, 0) == 128);
    CHECK(fma_lanes_per_sm(Precision::f64, 9, 0) == 64);
    CHECK(peak_gflops(Precision::f32, h100) == doctest::Approx(66908.16));
    CHECK(peak_gflops(Precision::f64, h100) == doctest::Approx(66908.16));  // 2 x 33.5 TFLOPS
}

TEST_CASE("A100 and consumer parts; unknown GPUs get generous rates") {
    const GpuShape a100{108, 1410, 8, 0};
    CHECK(peak_gflops(Precision::f32, a100) == doctest::Approx(19491.84));
    CHECK(peak_gflops(Precision::f64, a100) == doctest::Approx(19491.84));  // DMMA: 2 x 9.7
    CHECK(fma_lanes_per_sm(Precision::f64, 8, 9) == 2);
    CHECK(fma_lanes_per_sm(Precision::f32, 42, 7) == 128);
    CHECK(fma_lanes_per_sm(Precision::f64, 42, 7) == 64);
}

TEST_CASE("a tensor-core stage is held to the tensor cores' peak: FP16's rate for float") {
    const GpuShape h100{132, 1980, 9, 0};
    CHECK(tensor_fp16_fma_per_sm(9, 0) == 2048);
    // 1070 TFLOPS: above the datasheet's 989 dense FP16 (at 1830 MHz), so no honest kernel is rejected.
    CHECK(tensor_peak_gflops(Precision::f32, h100) == doctest::Approx(1070530.56));
    CHECK(tensor_peak_gflops(Precision::f32, h100) > 16 * peak_gflops(Precision::f32, h100) - 1);
    CHECK(tensor_peak_gflops(Precision::f64, h100) == peak_gflops(Precision::f64, h100));  // DMMA already
    const GpuShape a100{108, 1410, 8, 0};
    CHECK(tensor_peak_gflops(Precision::f32, a100) == doctest::Approx(311869.44));  // datasheet: 312 TFLOPS
    CHECK(tensor_fp16_fma_per_sm(42, 7) == 4096);  // unknown GPUs: generous
}
