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

TEST_CASE("a timing above the ceiling says which ceiling, and what can pass it") {
    const GpuShape h100{132, 1980, 9, 0};
    const std::string fp32 = above_peak_problem(Precision::f32, false, 121800.4, peak_gflops(Precision::f32, h100));
    CHECK(fp32.find("measured 121800 GFLOPS, above this GPU's FP32 peak on the CUDA cores of 66908 GFLOPS") !=
          std::string::npos);
    CHECK(fp32.find("outside the judge's interval") != std::string::npos);
    CHECK(fp32.find("the tensor cores, which only the tensor stage may use") != std::string::npos);
    CHECK(fp32.find("cannot be real") == std::string::npos);
    const std::string tensor =
        above_peak_problem(Precision::f32, true, 2e6, tensor_peak_gflops(Precision::f32, h100));
    CHECK(tensor.find("FP16 tensor-core peak") != std::string::npos);
    CHECK(tensor.find("only the tensor stage") == std::string::npos);
    const std::string fp64 = above_peak_problem(Precision::f64, false, 1e5, peak_gflops(Precision::f64, h100));
    CHECK(fp64.find("FP64 peak (its FP64 units and FP64 tensor cores together)") != std::string::npos);
    CHECK(fp64.find("tensor stage") == std::string::npos);
}
