// shapes.cpp — the checker's shape sets (see shapes.h).
//
// Every fixed shape is here because it breaks a common mistake: 1 catches kernels that assume a
// whole tile; primes and tile sizes ± 1 catch missing edge guards (the tiles the grader runs are 8,
// 16, 32, and register tiles are usually 64 or 128 wide); K = 1 catches a K loop that runs a whole
// tile; tall-skinny shapes catch swapped M and N; padded rows (ld > width) catch kernels that
// assume ld == width; the large shapes catch int overflow of indices, grids that run out of
// blocks, and races that small shapes are too short to show. Random shapes, drawn from the run's
// seed, keep a submission from special-casing the list.
#include "common/shapes.h"

#include <random>

namespace gemmlab {

const std::vector<AlphaBeta>& alpha_beta_pairs() {
    // Powers of two and their sums only: every value is exact in float, so the float and double
    // runs compute the same product and the reference is not perturbed by converting alpha/beta.
    static const std::vector<AlphaBeta> pairs = {
        {1.0, 0.0},     // the plain product; C starts as NaN and must not be read
        {1.5, -0.75},   // both scalars matter, and neither is 1
        {-0.5, 1.0},    // accumulate into C
        {2.0, 0.0},     // beta == 0 with a scale
        {0.0, 2.0},     // alpha == 0: C = beta·C exactly, A and B still passed
    };
    return pairs;
}

namespace {

enum Pair : int { plain = 0, both_scaled = 1, accumulate = 2, scaled_no_c = 3, alpha_zero = 4 };

// The largest random size of each set: big enough to cross every tile size several times, small
// enough that a random shape costs milliseconds.
constexpr int kQuickRandomMax = 300;
constexpr int kFullRandomMax = 700;
// Random "near a tile edge" sizes are kTileStep·n + {-1, 0, +1}, n >= 1, up to the set's maximum.
constexpr int kTileStep = 16;
// Random shapes pad rows by 0..kMaxPad elements (0 keeps tight rows in the mix).
constexpr int kMaxPad = 9;
// The shape generator's own stream, distinct from the data generator seeded with the same seed.
constexpr uint64_t kShapeStream = 0x5eedc0ffee123457ULL;

Shape make(int M, int N, int K, Pair pair, const char* why, int lda = 0, int ldb = 0, int ldc = 0) {
    const AlphaBeta ab = alpha_beta_pairs()[pair];
    Shape s;
    s.M = M, s.N = N, s.K = K, s.lda = lda, s.ldb = ldb, s.ldc = ldc;
    s.alpha = ab.alpha, s.beta = ab.beta;
    s.why = why;
    return s;
}

Pair random_pair(std::mt19937_64& rng) {
    // alpha == 0 is left to its fixed shape: a random shape should exercise the product.
    std::uniform_int_distribution<int> pick(plain, scaled_no_c);
    return static_cast<Pair>(pick(rng));
}

void pad_randomly(std::mt19937_64& rng, Shape& s) {
    std::uniform_int_distribution<int> pad(0, kMaxPad);
    s.lda = s.K + pad(rng);
    s.ldb = s.N + pad(rng);
    s.ldc = s.N + pad(rng);
}

// Any size from 1 to max_dim, random padding, a random alpha/beta pair.
Shape random_shape(std::mt19937_64& rng, int max_dim) {
    std::uniform_int_distribution<int> dim(1, max_dim);
    const int M = dim(rng), N = dim(rng), K = dim(rng);
    Shape s = make(M, N, K, random_pair(rng), "random shape with random padding");
    pad_randomly(rng, s);
    return s;
}

// Sizes one below, at or one above a multiple of 16: where edge guards are wrong if anywhere.
Shape random_tile_edge_shape(std::mt19937_64& rng, int max_dim) {
    std::uniform_int_distribution<int> steps(1, (max_dim - 1) / kTileStep), offset(-1, 1);
    auto near_edge = [&] { return kTileStep * steps(rng) + offset(rng); };
    const int M = near_edge(), N = near_edge(), K = near_edge();
    Shape s = make(M, N, K, random_pair(rng), "random size next to a tile edge, random padding");
    pad_randomly(rng, s);
    return s;
}

}  // namespace

std::vector<Shape> check_shapes(bool quick, uint64_t seed) {
    std::mt19937_64 rng(seed ^ kShapeStream);
    std::vector<Shape> s;
    if (quick) {
        s.push_back(make(1, 1, 1, both_scaled, "smallest possible"));
        s.push_back(make(7, 5, 3, plain, "small primes"));
        s.push_back(make(31, 33, 17, accumulate, "tile size - 1 / + 1"));
        s.push_back(make(33, 31, 65, scaled_no_c, "tile size + 1 / - 1"));
        s.push_back(make(129, 127, 131, both_scaled, "128 +/- 1 with padded rows", 136, 130, 133));
        s.push_back(make(128, 128, 1, plain, "K = 1"));
        s.push_back(make(1000, 8, 2000, both_scaled, "tall and skinny"));
        s.push_back(make(8, 1000, 16, plain, "short and wide"));
        s.push_back(make(256, 256, 256, accumulate, "square, multiple of every tile"));
        s.push_back(random_shape(rng, kQuickRandomMax));
        s.push_back(random_tile_edge_shape(rng, kQuickRandomMax));
        return s;
    }
    for (Pair p : {plain, both_scaled, accumulate, scaled_no_c, alpha_zero})
        s.push_back(make(1, 1, 1, p, "smallest possible"));
    s.push_back(make(7, 5, 3, plain, "small primes"));
    s.push_back(make(61, 59, 53, both_scaled, "primes"));
    s.push_back(make(251, 241, 239, accumulate, "primes"));
    s.push_back(make(509, 503, 499, scaled_no_c, "primes"));
    for (int t : {8, 16, 32, 64, 128}) {
        s.push_back(make(t - 1, t - 1, t - 1, both_scaled, "tile size - 1"));
        s.push_back(make(t + 1, t + 1, t + 1, plain, "tile size + 1"));
    }
    s.push_back(make(31, 33, 127, accumulate, "tile size +/- 1 mixed"));
    s.push_back(make(129, 127, 131, both_scaled, "128 +/- 1 with padded rows", 136, 130, 133));
    s.push_back(make(96, 80, 72, accumulate, "rows padded by odd amounts", 75, 83, 85));
    s.push_back(make(520, 264, 136, both_scaled, "rows padded to a multiple of 8", 144, 272, 272));
    s.push_back(make(1000, 8, 2000, both_scaled, "tall and skinny"));
    s.push_back(make(8, 3000, 16, plain, "short and wide"));
    s.push_back(make(4097, 129, 65, scaled_no_c, "above 4096 rows"));
    s.push_back(make(65, 4099, 33, both_scaled, "above 4096 columns"));
    s.push_back(make(3, 2000, 5, accumulate, "three rows"));
    s.push_back(make(2000, 3, 7, both_scaled, "three columns"));
    s.push_back(make(128, 128, 1, plain, "K = 1"));
    s.push_back(make(67, 45, 1, both_scaled, "K = 1, odd sizes"));
    s.push_back(make(5, 7, 4099, accumulate, "long K, tiny C"));
    s.push_back(make(67, 97, 16411, both_scaled, "very long K: honest rounding error does not grow with K"));
    s.push_back(make(40, 40, 40, alpha_zero, "alpha = 0"));
    s.push_back(make(1024, 1024, 1024, plain, "large, beta = 0"));
    s.push_back(make(2048, 2048, 2048, both_scaled, "large"));
    for (int i = 0; i < 2; ++i) s.push_back(random_shape(rng, kFullRandomMax));
    s.push_back(random_tile_edge_shape(rng, kFullRandomMax));
    return s;
}

Shape sanitize_shape() {
    // Odd sizes that cross a 32-wide tile edge, padded rows, both scalars in play: small enough
    // that memcheck and racecheck finish in seconds.
    return make(67, 45, 37, both_scaled, "odd sizes with padded rows", 40, 48, 47);
}

}  // namespace gemmlab
