// interval_verdict.cpp — the verdict of one timed interval from its sample and the full check
// (interval_verdict.h).
#include "judge/interval_verdict.h"

#include <sstream>

namespace gemmlab {

namespace {

// "timed call 3 said it was" or "timed calls 3–6 (one interval) said they were".
std::string said_done(const IntervalSample& s) {
    std::ostringstream os;
    if (s.calls > 1) os << "timed calls " << s.first_call << "–" << s.first_call + s.calls - 1 << " (one interval) said they were";
    else os << "timed call " << s.first_call << " said it was";
    os << " done while ";
    return os.str();
}

const char* const kFinishOnStream =
    ": a call must finish its work on its stream before it returns (work left running, or on another stream, is "
    "not allowed)";

}  // namespace

SampleFinding sample_finding(const IntervalSample& s) {
    if (s.poisoned > 0) return SampleFinding::unwritten;
    if (s.unanswered > 0) return SampleFinding::unanswered;
    return SampleFinding::complete;
}

std::string interval_problem(const IntervalSample& s, const std::optional<WrongCall>& wrong) {
    const SampleFinding finding = sample_finding(s);
    std::ostringstream os;
    if (finding == SampleFinding::unwritten) {
        os << said_done(s) << s.poisoned << " of " << s.sampled
           << " elements of C the judge sampled were still unwritten (they still held the judge's poison)" << kFinishOnStream;
        return os.str();
    }
    if (wrong) {
        os << "timed call " << wrong->call << " gave wrong values: " << wrong->wrong << " of " << wrong->elements
           << " elements outside the bound (worst C[" << wrong->row << "][" << wrong->col << "] expected " << wrong->expected
           << ", got " << wrong->got << "); the stage must compute every call from its inputs";
        return os.str();
    }
    if (finding == SampleFinding::unanswered) {
        os << said_done(s) << "elements of C were still unwritten or not yet their answer: none of the " << s.sampled
           << " the judge sampled held its poison any more, but " << s.unanswered << " of the " << s.checked
           << " whose values it checked were not yet their answer, and were right only later, after the device was "
              "synchronized (something written into C first while the work still ran)"
           << kFinishOnStream;
        return os.str();
    }
    return "";
}

}  // namespace gemmlab
