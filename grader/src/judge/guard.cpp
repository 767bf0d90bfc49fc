// guard.cpp — guard-band layout and the words for positions outside C (see guard.h).
#include "judge/guard.h"

#include <algorithm>
#include <sstream>

namespace gemmlab {

GuardedLayout GuardedLayout::make(int rows, int cols, int ld) {
    GuardedLayout g;
    g.rows = rows, g.cols = cols, g.ld = ld;
    const size_t want = std::max<size_t>(4 * static_cast<size_t>(ld), 4096);
    g.guard = (want + 63) / 64 * 64;  // 64 elements = 256 bytes (float) or 512 bytes (double)
    return g;
}

GuardedLayout::Region GuardedLayout::region(size_t index) const {
    if (index < guard) return Region::front_guard;
    const size_t rel = index - guard;
    if (rel >= static_cast<size_t>(rows) * ld) return Region::back_guard;
    return (rel % ld) < static_cast<size_t>(cols) ? Region::inside : Region::padding;
}

std::string GuardedLayout::describe(size_t index) const {
    std::ostringstream os;
    switch (region(index)) {
        case Region::front_guard:
            os << (guard - index) << " element(s) before C[0][0]";
            break;
        case Region::inside: {
            const size_t rel = index - guard;
            os << "row " << rel / ld << ", column " << rel % ld << " (inside C)";
            break;
        }
        case Region::padding: {
            const size_t rel = index - guard;
            os << "row " << rel / ld << ", column " << rel % ld << " (a padding column: N = " << cols
               << ", ldc = " << ld << ")";
            break;
        }
        case Region::back_guard: {
            const size_t rel = index - guard;
            os << "row " << rel / ld << ", column " << rel % ld << " (past the last row: M = " << rows
               << ")";
            break;
        }
    }
    return os.str();
}

}  // namespace gemmlab
