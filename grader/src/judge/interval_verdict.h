// interval_verdict.h — what the judge concludes from one timed interval: its sample of C, taken after
// the done word and before the second clock stamp, and, where the sample does not settle it, the full
// check of every call's C made afterwards (docs/timing.md, "Work on another stream").
//
// The sample keeps two counts. Poisoned: sampled elements that still held the judge's poison, the bit
// pattern it wrote into C before the go word — never written when the call said it was done. Unanswered:
// elements whose value was compared with their answer and was not it (the poison counts here too). The
// order of the decision matters: poison is "unwritten" whatever the full check says afterwards (an
// element never written is NaN there, and would otherwise read as a wrong value); only a sample with no
// poison and values that were not yet the answer asks the full check, which tells a wrong answer from a
// late one. No GPU here: bench_engine.cpp takes the counts, this turns them into the verdict
// (tests/host/test_interval_verdict.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gemmlab {

// The sample of one interval's C's.
struct IntervalSample {
    int first_call = 1, calls = 1;  // the interval's timed calls, first_call … first_call + calls − 1
    int sampled = 0;                // elements looked at for the poison (every sampled element)
    unsigned poisoned = 0;          // of them, still the judge's poison
    int checked = 0;                // of them, also compared with their answer (none for the grader's own items)
    unsigned unanswered = 0;        // of those, not their answer (poison included)
};

// What the sample alone says.
enum class SampleFinding {
    complete,    // no poison, every checked element its answer
    unwritten,   // poison left: the call said it was done before it wrote those elements
    unanswered,  // no poison, but checked elements were not their answer: wrong, or right only later
};
SampleFinding sample_finding(const IntervalSample& s);

// Whether the full check has anything to say before the verdict: not when the sample found poison.
inline bool full_check_decides(const IntervalSample& s) { return sample_finding(s) != SampleFinding::unwritten; }

// The first call of the interval whose C the full check found wrong.
struct WrongCall {
    int call = 0;  // its timed call number
    int64_t wrong = 0, elements = 0;
    int64_t row = 0, col = 0;  // the worst element
    double expected = 0, got = 0;
};

// The interval's verdict: empty when it passes, else the problem of a `failed` item — "unwritten"
// (poison in the sample), "gave wrong values" (the full check), or "not yet their answer" (the sample
// saw values the full check later found right). `wrong` is the full check's finding (nullopt: every
// call right, or no full check).
std::string interval_problem(const IntervalSample& s, const std::optional<WrongCall>& wrong);

}  // namespace gemmlab
