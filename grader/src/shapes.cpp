// shapes.cpp — the checker's shape sets (see shapes.h).
#include "shapes.h"

#include <random>

namespace gemmlab {

const std::vector<AlphaBeta>& alpha_beta_pairs() {
    static const std::vector<AlphaBeta> pairs = {
        {1.0, 0.0},     // the plain product; C starts as NaN and must not be read
        {1.5, -0.75},   // both scalars matter
        {-0.5, 1.0},    // accumulate into C
        {2.0, 0.0},     // beta == 0 with a scale
        {0.0, 2.0},     // alpha == 0: C = beta·C exactly, A and B still passed
    };
    return pairs;
}

namespace {

Shape make(int M, int N, int K, int pair, const char* why, int lda = 0, int ldb = 0, int ldc = 0) {
    const AlphaBeta ab = alpha_beta_pairs()[pair];
    Shape s;
    s.M = M, s.N = N, s.K = K, s.lda = lda, s.ldb = ldb, s.ldc = ldc;
    s.alpha = ab.alpha, s.beta = ab.beta;
    s.why = why;
    return s;
}

// A random shape with random row padding, different on every run (the seed is printed).
Shape random_shape(std::mt19937_64& rng, int max_dim, int pair) {
    std::uniform_int_distribution<int> dim(1, max_dim), pad(0, 9);
    Shape s = make(dim(rng), dim(rng), dim(rng), pair, "random shape with random padding");
    s.lda = s.K + pad(rng);
    s.ldb = s.N + pad(rng);
    s.ldc = s.N + pad(rng);
    return s;
}

}  // namespace

std::vector<Shape> check_shapes(bool quick, uint64_t seed) {
    std::mt19937_64 rng(seed ^ 0x5eedc0ffee123457ULL);
    std::vector<Shape> s;
    if (quick) {
        s.push_back(make(1, 1, 1, 1, "smallest possible"));
        s.push_back(make(7, 5, 3, 0, "small primes"));
        s.push_back(make(31, 33, 17, 2, "tile size - 1 / + 1"));
        s.push_back(make(33, 31, 65, 3, "tile size + 1 / - 1"));
        s.push_back(make(129, 127, 131, 1, "128 +/- 1 with padded rows", 136, 130, 133));
        s.push_back(make(128, 128, 1, 0, "K = 1"));
        s.push_back(make(1000, 8, 200, 1, "tall and skinny"));
        s.push_back(make(8, 1000, 16, 0, "short and wide"));
        s.push_back(make(256, 256, 256, 2, "square, multiple of every tile"));
        s.push_back(random_shape(rng, 300, 1));
        s.push_back(random_shape(rng, 300, 0));
        return s;
    }
    for (int p = 0; p < static_cast<int>(alpha_beta_pairs().size()); ++p)
        s.push_back(make(1, 1, 1, p, "smallest possible"));
    s.push_back(make(7, 5, 3, 0, "small primes"));
    s.push_back(make(61, 59, 53, 1, "primes"));
    s.push_back(make(251, 241, 239, 2, "primes"));
    s.push_back(make(509, 503, 499, 3, "primes"));
    for (int t : {8, 16, 32, 64, 128}) {
        s.push_back(make(t - 1, t - 1, t - 1, 1, "tile size - 1"));
        s.push_back(make(t + 1, t + 1, t + 1, 0, "tile size + 1"));
    }
    s.push_back(make(31, 33, 127, 2, "tile size +/- 1 mixed"));
    s.push_back(make(129, 127, 131, 1, "128 +/- 1 with padded rows", 136, 130, 133));
    s.push_back(make(96, 80, 72, 2, "rows padded by odd amounts", 75, 83, 85));
    s.push_back(make(520, 264, 136, 1, "rows padded to a multiple of 8", 144, 272, 272));
    s.push_back(make(1000, 8, 2000, 1, "tall and skinny"));
    s.push_back(make(8, 3000, 16, 0, "short and wide"));
    s.push_back(make(4097, 129, 65, 3, "above 4096 rows"));
    s.push_back(make(3, 2000, 5, 2, "three rows"));
    s.push_back(make(2000, 3, 7, 1, "three columns"));
    s.push_back(make(128, 128, 1, 0, "K = 1"));
    s.push_back(make(67, 45, 1, 1, "K = 1, odd sizes"));
    s.push_back(make(5, 7, 4099, 2, "long K, tiny C"));
    s.push_back(make(40, 40, 40, 4, "alpha = 0"));
    s.push_back(make(1024, 1024, 1024, 0, "large, beta = 0"));
    s.push_back(make(2048, 2048, 2048, 1, "large"));
    for (int i = 0; i < 3; ++i) s.push_back(random_shape(rng, 700, i % 4));
    return s;
}

Shape sanitize_shape() {
    Shape s = make(67, 45, 37, 1, "odd sizes with padded rows", 40, 48, 47);
    return s;
}

}  // namespace gemmlab
