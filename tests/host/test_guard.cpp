// Tests of guard.h: where C sits in its guarded allocation and how stray positions are named.
#include <doctest/doctest.h>

#include <string>

#include "judge/guard.h"

using namespace gemmlab;

namespace {
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("guards are at least four rows, keep C aligned, and total adds up") {
    for (int ld : {1, 7, 33, 136, 2048, 4099}) {
        CAPTURE(ld);
        const GuardedLayout g = GuardedLayout::make(5, ld, ld);
        CHECK(g.guard >= 4 * static_cast<size_t>(ld));
        CHECK(g.guard % 64 == 0);  // 256-byte aligned C[0][0] for float, 512 for double
        CHECK(g.first() == g.guard);
        CHECK(g.total() == 2 * g.guard + 5 * static_cast<size_t>(ld));
    }
}

TEST_CASE("region() tells the guards, the padding columns and C apart") {
    const GuardedLayout g = GuardedLayout::make(3, 5, 8);  // 3 rows of 5, rows 8 apart
    using R = GuardedLayout::Region;
    CHECK(g.region(0) == R::front_guard);
    CHECK(g.region(g.first() - 1) == R::front_guard);
    CHECK(g.region(g.first()) == R::inside);              // C[0][0]
    CHECK(g.region(g.first() + 4) == R::inside);          // C[0][4], last column
    CHECK(g.region(g.first() + 5) == R::padding);         // column 5 = N
    CHECK(g.region(g.first() + 7) == R::padding);         // column 7 = ldc - 1
    CHECK(g.region(g.first() + 8) == R::inside);          // C[1][0]
    CHECK(g.region(g.first() + 2 * 8 + 4) == R::inside);  // C[2][4], the last element
    CHECK(g.region(g.first() + 2 * 8 + 5) == R::padding);
    CHECK(g.region(g.first() + 3 * 8) == R::back_guard);  // row 3 = M
    CHECK(g.region(g.total() - 1) == R::back_guard);
}

TEST_CASE("a tight C has no padding columns") {
    const GuardedLayout g = GuardedLayout::make(4, 6, 6);
    for (size_t i = g.first(); i < g.first() + 4 * 6; ++i) CHECK(g.region(i) == GuardedLayout::Region::inside);
}

TEST_CASE("describe() says where a stray write landed, in a student's words") {
    const GuardedLayout g = GuardedLayout::make(3, 5, 8);
    const std::string before = g.describe(g.first() - 1);
    CHECK(contains(before, "1 element(s) before C[0][0]"));
    CHECK(contains(g.describe(g.first() - 10), "10 element(s) before"));

    const std::string pad = g.describe(g.first() + 8 + 6);
    CHECK(contains(pad, "row 1, column 6"));
    CHECK(contains(pad, "padding column"));
    CHECK(contains(pad, "N = 5, ldc = 8"));

    const std::string past = g.describe(g.first() + 3 * 8 + 2);
    CHECK(contains(past, "row 3, column 2"));
    CHECK(contains(past, "past the last row: M = 3"));

    CHECK(contains(g.describe(g.first() + 2 * 8 + 4), "row 2, column 4 (inside C)"));
}

TEST_CASE("a pitched matrix is a layout without guards whose ld is the pitch") {
    GuardedLayout g;
    g.rows = 2, g.cols = 3, g.ld = 32, g.guard = 0;
    CHECK(g.region(0) == GuardedLayout::Region::inside);
    CHECK(g.region(3) == GuardedLayout::Region::padding);
    CHECK(contains(g.describe(32 + 31), "row 1, column 31"));
    CHECK(g.region(64) == GuardedLayout::Region::back_guard);
}

TEST_CASE("canaries are NaN patterns arithmetic does not produce") {
    CHECK((kCanary32 & 0x7F800000u) == 0x7F800000u);  // exponent all ones
    CHECK((kCanary32 & 0x007FFFFFu) != 0);            // non-zero payload: NaN, not infinity
    CHECK((kCanary32 & 0x00400000u) == 0);            // signalling: no operation returns it
    CHECK((kCanary64 & 0x7FF0000000000000ull) == 0x7FF0000000000000ull);
    CHECK((kCanary64 & 0x000FFFFFFFFFFFFFull) != 0);
    CHECK((kCanary64 & 0x0008000000000000ull) == 0);
}
