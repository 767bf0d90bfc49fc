// tests/gallery/tensor_by_pointer/reuse.cu — gallery entry "tensor_by_pointer"
// reuse: in float, calls whatever fast_float_gemm points to, a pointer no line of this file fills:
// tensor.cu's static initializer sets it to the tensor stage's 3xTF32 entry point. No name in this
// file reaches tensor.cu, so the tensor-core rule, which reads the files a stage calls into by name,
// never sees the path. Not a model to follow: a submission the grader must survive and see through;
// README.md says what the grader has to conclude. Double is the naive stage's own kernel.
#include <cstdio>
#include <type_traits>

#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {

// The table another file fills: null unless that file's code was loaded with this one.
Status (*fast_float_gemm)(const GemmProblem<float>&) = nullptr;

template <typename T>
Status gemm_reuse(const GemmProblem<T>& p) {
    if constexpr (std::is_same_v<T, float>) {
        if (!fast_float_gemm) {
            printf("tensor_by_pointer: reuse found no tensor kernel in its process\n");
            return Status::unsupported;
        }
        printf("tensor_by_pointer: reuse ran the tensor stage's kernel\n");
        return fast_float_gemm(p);
    } else {
        return gemm_naive<double>(p);
    }
}

template Status gemm_reuse<float>(const GemmProblem<float>&);
template Status gemm_reuse<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
