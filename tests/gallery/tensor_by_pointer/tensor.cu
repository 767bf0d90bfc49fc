// tests/gallery/tensor_by_pointer/tensor.cu — gallery entry "tensor_by_pointer"
// tensor: the honest tensor/3xtf32 kernel of tensor_cores_outside_tensor (split_tf32.h), and a static
// initializer that hands its entry point to reuse.cu through reuse's pointer fast_float_gemm.
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude.
#include "split_tf32.h"

namespace gemmlab::GEMMLAB_NS {

extern Status (*fast_float_gemm)(const GemmProblem<float>&);  // defined in reuse.cu

namespace {

// Runs wherever this file's code is loaded, before any stage is called.
struct HandOver {
    HandOver() { fast_float_gemm = &gemm_tensor<float, InputPrecision::full>; }
};
const HandOver hand_over;

}  // namespace

template Status gemm_tensor<float, InputPrecision::fp16>(const GemmProblem<float>&);
template Status gemm_tensor<float, InputPrecision::tf32>(const GemmProblem<float>&);
template Status gemm_tensor<float, InputPrecision::full>(const GemmProblem<float>&);
template Status gemm_tensor<double, InputPrecision::full>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
