// shapes.h — the shapes the checker runs: the ones that break naive code (1, primes, tile ± 1,
// tall-skinny, K = 1, leading dimension > width, large) with several alpha/beta pairs, plus a few
// random shapes drawn from the run's seed so no submission can special-case the set.
#pragma once

#include <cstdint>
#include <vector>

#include "common/vocabulary.h"

namespace gemmlab {

struct AlphaBeta {
    double alpha, beta;
};

// The alpha/beta pairs the checker uses; beta == 0 appears (C is then filled with NaN).
const std::vector<AlphaBeta>& alpha_beta_pairs();

// quick = the subset for fast iteration (`make check`); otherwise the full grading set.
std::vector<Shape> check_shapes(bool quick, uint64_t seed);

// A small shape for `make sanitize` (compute-sanitizer is slow): odd sizes, padded rows.
Shape sanitize_shape();

}  // namespace gemmlab
