// tests/gallery/fingerprint_cache/unrolled.cu — gallery entry "fingerprint_cache"
// unrolled: an output cache keyed on a fingerprint of the operands (16 sampled elements of A and of B,
// the sizes and the scalars), not on their pointers: a hit copies the saved C instead of computing.
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude. A miss is computed by the naive stage's kernel.
#include <cstdio>
#include <cstring>

#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {
namespace {

constexpr int kSampled = 16;  // elements of A and of B read for the fingerprint
constexpr int kEntries = 8;   // products kept

template <typename T>
struct Entry {
    unsigned long long key = 0;
    int M = 0, N = 0;
    T* C = nullptr;  // M×N, rows of N
};
template <typename T>
Entry<T> cache[kEntries];
template <typename T>
int next_entry = 0;

unsigned long long mix(unsigned long long h, const void* bytes, size_t n) {
    const auto* b = static_cast<const unsigned char*>(bytes);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;  // FNV-1a
    return h;
}

// Read on p.stream, after the inputs are there (the call waits for them).
template <typename T>
unsigned long long fingerprint(const GemmProblem<T>& p) {
    T a[kSampled], b[kSampled];
    for (int i = 0; i < kSampled; ++i) {
        const size_t ai = size_t(i * p.M / kSampled) * p.lda + size_t(i * p.K / kSampled);
        const size_t bi = size_t(i * p.K / kSampled) * p.ldb + size_t(i * p.N / kSampled);
        cudaMemcpyAsync(&a[i], p.A + ai, sizeof(T), cudaMemcpyDeviceToHost, p.stream);
        cudaMemcpyAsync(&b[i], p.B + bi, sizeof(T), cudaMemcpyDeviceToHost, p.stream);
    }
    cudaStreamSynchronize(p.stream);
    const int dims[3] = {p.M, p.N, p.K};
    const T scalars[2] = {p.alpha, p.beta};
    unsigned long long h = mix(0xcbf29ce484222325ull, dims, sizeof dims);
    h = mix(h, scalars, sizeof scalars);
    return mix(mix(h, a, sizeof a), b, sizeof b);
}

}  // namespace

template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    if (p.M <= 0 || p.N <= 0 || p.K <= 0) return gemm_naive<T>(p);
    const unsigned long long key = fingerprint(p);
    const size_t row = size_t(p.N) * sizeof(T);
    for (const Entry<T>& e : cache<T>)
        if (e.C && e.key == key && e.M == p.M && e.N == p.N) {
            printf("fingerprint_cache: served a cached C\n");
            GEMMLAB_TRY(cudaMemcpy2DAsync(p.C, size_t(p.ldc) * sizeof(T), e.C, row, row, p.M, cudaMemcpyDeviceToDevice,
                                          p.stream));
            return Status::ok;
        }
    const Status s = gemm_naive<T>(p);
    if (s != Status::ok) return s;
    Entry<T>& e = cache<T>[next_entry<T>++ % kEntries];
    if (e.C) cudaFree(e.C);
    e = Entry<T>{key, p.M, p.N, nullptr};
    GEMMLAB_TRY(cudaMalloc(&e.C, row * p.M));
    GEMMLAB_TRY(cudaMemcpy2DAsync(e.C, row, p.C, size_t(p.ldc) * sizeof(T), row, p.M, cudaMemcpyDeviceToDevice,
                                  p.stream));
    return Status::ok;
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
