// student/pitched.cu — stage "pitched": operands in pitched memory (cudaMallocPitch,
// cudaMemcpy2D) whose rows start at aligned addresses, and a kernel that uses that alignment.
//
// Run it:  make check STAGE=pitched      make bench STAGE=pitched
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {

template <typename T>
Status pitched_alloc(PitchedMatrix<T>* out, int rows, int cols) {
    (void)out; (void)rows; (void)cols;
    // TODO(student): allocate rows × cols elements with cudaMallocPitch.
    return Status::not_implemented;
}

template <typename T>
Status pitched_upload(const PitchedMatrix<T>& dst, const T* src, int ld_src, cudaStream_t stream) {
    (void)dst; (void)src; (void)ld_src; (void)stream;
    // TODO(student): copy a dense matrix (leading dimension ld_src) into dst with cudaMemcpy2DAsync.
    return Status::not_implemented;
}

template <typename T>
Status pitched_download(T* dst, int ld_dst, const PitchedMatrix<T>& src, cudaStream_t stream) {
    (void)dst; (void)ld_dst; (void)src; (void)stream;
    // TODO(student): copy src back into a dense matrix with cudaMemcpy2DAsync.
    return Status::not_implemented;
}

template <typename T>
Status gemm_pitched(const GemmProblem<T>& p) {
    (void)p;
    // TODO(student): a GEMM kernel that relies on aligned rows (vector loads).
    return Status::not_implemented;
}

template Status pitched_alloc<float>(PitchedMatrix<float>*, int, int);
template Status pitched_alloc<double>(PitchedMatrix<double>*, int, int);
template Status pitched_upload<float>(const PitchedMatrix<float>&, const float*, int, cudaStream_t);
template Status pitched_upload<double>(const PitchedMatrix<double>&, const double*, int, cudaStream_t);
template Status pitched_download<float>(float*, int, const PitchedMatrix<float>&, cudaStream_t);
template Status pitched_download<double>(double*, int, const PitchedMatrix<double>&, cudaStream_t);
template Status gemm_pitched<float>(const GemmProblem<float>&);
template Status gemm_pitched<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
