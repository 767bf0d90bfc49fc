// guard.h — where C lives inside its allocation, and what to call a position outside it.
//
// The grader allocates C as  [front guard | M rows of ldc elements | back guard].  The guards and
// the padding columns N..ldc-1 of every row are filled with a canary bit pattern before the stage
// runs and checked after it: any change is an out-of-bounds write, reported with where it landed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gemmlab {

struct GuardedLayout {
    int rows = 0, cols = 0, ld = 0;
    size_t guard = 0;  // elements before and after the matrix

    // Guards are at least four rows and keep C's first element 256-byte aligned.
    static GuardedLayout make(int rows, int cols, int ld);
    size_t total() const { return 2 * guard + static_cast<size_t>(rows) * ld; }
    size_t first() const { return guard; }  // index of C[0][0] in the allocation

    enum class Region { front_guard, inside, padding, back_guard };
    Region region(size_t index) const;
    // Words for a student: "row 3, column 130 (a padding column: N = 129, ldc = 136)".
    std::string describe(size_t index) const;
};

// Canary bit patterns: signalling NaNs with a payload no arithmetic produces.
constexpr uint32_t kCanary32 = 0x7FBADBADu;
constexpr uint64_t kCanary64 = 0x7FF4BADBADBADBADull;

}  // namespace gemmlab
