// Tests of shapes.h: the quick and full sets hold the shapes that break naive code, random shapes
// change with the seed, and every shape fits the int indexing of the stage API.
#include <doctest/doctest.h>

#include <algorithm>
#include <climits>
#include <functional>
#include <set>
#include <string>
#include <tuple>

#include "common/shapes.h"

using namespace gemmlab;

namespace {

constexpr uint64_t kSeed = 20240601;

bool has(const std::vector<Shape>& set, const std::function<bool(const Shape&)>& pred) {
    return std::any_of(set.begin(), set.end(), pred);
}
bool has_dims(const std::vector<Shape>& set, int M, int N, int K) {
    return has(set, [&](const Shape& s) { return s.M == M && s.N == N && s.K == K; });
}
bool is_prime(int n) {
    if (n < 2) return false;
    for (int d = 2; d * d <= n; ++d)
        if (n % d == 0) return false;
    return true;
}
std::vector<Shape> randoms(const std::vector<Shape>& set) {
    std::vector<Shape> r;
    for (const Shape& s : set)
        if (s.why.find("random") != std::string::npos) r.push_back(s);
    return r;
}

}  // namespace

TEST_CASE("both sets hold the shapes that break naive code") {
    for (bool quick : {true, false}) {
        CAPTURE(quick);
        const auto set = check_shapes(quick, kSeed);
        CHECK(has_dims(set, 1, 1, 1));
        CHECK(has(set, [](const Shape& s) { return is_prime(s.M) && is_prime(s.N) && is_prime(s.K); }));
        for (int edge : {31, 33}) {
            CAPTURE(edge);
            CHECK(has(set, [&](const Shape& s) { return s.M == edge || s.N == edge; }));
        }
        CHECK(has(set, [](const Shape& s) { return s.K == 1 && s.M > 1 && s.N > 1; }));
        CHECK(has_dims(set, 1000, 8, 2000));  // tall and skinny
        CHECK(has(set, [](const Shape& s) { return s.eff_lda() > s.K && s.eff_ldb() > s.N && s.eff_ldc() > s.N; }));
        CHECK(has(set, [](const Shape& s) { return s.beta == 0.0; }));
        CHECK(has(set, [](const Shape& s) { return s.beta != 0.0 && s.alpha != 1.0; }));
        CHECK(randoms(set).size() >= 2);
    }
}

TEST_CASE("the full set adds tile edges up to 129, wide and tall extremes, large shapes and alpha = 0") {
    const auto full = check_shapes(false, kSeed);
    for (int edge : {7, 9, 15, 17, 31, 33, 63, 65, 127, 129}) {
        CAPTURE(edge);
        CHECK(has(full, [&](const Shape& s) { return s.M == edge && s.N == edge && s.K == edge; }));
    }
    CHECK(has_dims(full, 8, 3000, 16));
    CHECK(has_dims(full, 4097, 129, 65));
    CHECK(has(full, [](const Shape& s) { return s.M > 4096 || s.N > 4096 || s.K > 4096; }));
    CHECK(has(full, [](const Shape& s) { return s.flops() >= 2.0 * 2048 * 2048 * 2048; }));
    CHECK(has(full, [](const Shape& s) { return s.K >= 16384; }));  // honest error must not grow with K
    CHECK(has(full, [](const Shape& s) { return s.alpha == 0.0 && s.beta != 0.0; }));
    for (const AlphaBeta& ab : alpha_beta_pairs()) {
        CAPTURE(ab.alpha);
        CAPTURE(ab.beta);
        CHECK(has(full, [&](const Shape& s) { return s.M == 1 && s.alpha == ab.alpha && s.beta == ab.beta; }));
    }
}

TEST_CASE("the quick set is a small, fast subset") {
    const auto quick = check_shapes(true, kSeed), full = check_shapes(false, kSeed);
    CHECK(quick.size() < full.size());
    double quick_flops = 0, full_flops = 0;
    for (const Shape& s : quick) quick_flops += s.flops();
    for (const Shape& s : full) full_flops += s.flops();
    CHECK(quick_flops < full_flops / 50);
    for (const Shape& s : quick) CHECK(s.flops() <= 2.0 * 1024 * 1024 * 1024);
}

TEST_CASE("random shapes follow the seed: the same seed gives the same set, others differ") {
    auto dims = [](const std::vector<Shape>& set) {
        std::vector<std::tuple<int, int, int, int, int, int>> d;
        for (const Shape& s : randoms(set)) d.emplace_back(s.M, s.N, s.K, s.eff_lda(), s.eff_ldb(), s.eff_ldc());
        return d;
    };
    for (bool quick : {true, false}) {
        CAPTURE(quick);
        CHECK(dims(check_shapes(quick, kSeed)) == dims(check_shapes(quick, kSeed)));
        std::set<decltype(dims({}))> seen;
        for (uint64_t seed = 1; seed <= 8; ++seed) seen.insert(dims(check_shapes(quick, seed)));
        CHECK(seen.size() == 8);
    }
}

TEST_CASE("alpha and beta are exact in float, so both precisions solve the same problem") {
    for (const AlphaBeta& ab : alpha_beta_pairs()) {
        CHECK(static_cast<double>(static_cast<float>(ab.alpha)) == ab.alpha);
        CHECK(static_cast<double>(static_cast<float>(ab.beta)) == ab.beta);
    }
}

TEST_CASE("every shape is valid and fits int indexing, for many seeds") {
    for (uint64_t seed : {uint64_t{0}, uint64_t{1}, kSeed, uint64_t{999999999}, ~uint64_t{0}}) {
        for (bool quick : {true, false}) {
            for (const Shape& s : check_shapes(quick, seed)) {
                CAPTURE(s.label());
                CHECK(s.M >= 1);
                CHECK(s.N >= 1);
                CHECK(s.K >= 1);
                CHECK(s.eff_lda() >= s.K);
                CHECK(s.eff_ldb() >= s.N);
                CHECK(s.eff_ldc() >= s.N);
                CHECK(double(s.M) * s.eff_lda() <= INT_MAX);
                CHECK(double(s.K) * s.eff_ldb() <= INT_MAX);
                CHECK(double(s.M) * s.eff_ldc() <= INT_MAX);
                CHECK_FALSE(s.why.empty());
            }
        }
    }
}

TEST_CASE("the sanitize shape is small, odd and padded") {
    const Shape s = sanitize_shape();
    CHECK(s.flops() < 2.0 * 128 * 128 * 128);
    CHECK(s.M % 2 == 1);
    CHECK(s.eff_lda() > s.K);
    CHECK(s.eff_ldc() > s.N);
    CHECK(s.beta != 0.0);
}
