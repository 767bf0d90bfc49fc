// tests/gallery/tensor_cores_outside_tensor/tensor.cu — gallery entry "tensor_cores_outside_tensor"
// tensor: an honest tensor/3xtf32 kernel (split_tf32.h: WMMA, TF32 split in two parts), which reuse.cu
// calls too. Not a model to follow: a submission the grader must survive and see through; README.md
// says what the grader has to conclude. Here the tensor stage itself is allowed its tensor cores and
// passes; the other variants and double are not written.
#include "split_tf32.h"

namespace gemmlab::GEMMLAB_NS {

template Status gemm_tensor<float, InputPrecision::fp16>(const GemmProblem<float>&);
template Status gemm_tensor<float, InputPrecision::tf32>(const GemmProblem<float>&);
template Status gemm_tensor<float, InputPrecision::full>(const GemmProblem<float>&);
template Status gemm_tensor<double, InputPrecision::full>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
