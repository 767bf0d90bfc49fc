// Tests of judge/interval_verdict.h: what a timed interval's sample (poison left, values not yet their
// answer) and the full check after it make of the interval — in particular that poison is "unwritten"
// whatever the full check would say, and that only a sample without poison lets the full check tell a
// wrong answer from a late one.
#include <doctest/doctest.h>

#include <limits>
#include <string>

#include "judge/interval_verdict.h"

using namespace gemmlab;

namespace {

bool has(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

// The judge's sample of a stage's interval: 1024 positions looked at for the poison and 64 more that are
// also compared with their answer.
IntervalSample stage_sample(unsigned poisoned, unsigned unanswered, int first_call = 1, int calls = 1) {
    IntervalSample s;
    s.first_call = first_call, s.calls = calls;
    s.sampled = 1088, s.poisoned = poisoned;
    s.checked = 64, s.unanswered = unanswered;
    return s;
}

// What the full check sees in C when the stage never wrote an element: the judge's NaN poison.
WrongCall poison_in_full_check(int call) {
    WrongCall w;
    w.call = call;
    w.wrong = 3743744, w.elements = 4194304;
    w.row = 0, w.col = 0;
    w.expected = -13.6541, w.got = std::numeric_limits<double>::quiet_NaN();
    return w;
}

}  // namespace

TEST_CASE("a clean sample and a right answer pass") {
    const IntervalSample s = stage_sample(0, 0);
    CHECK(sample_finding(s) == SampleFinding::complete);
    CHECK(full_check_decides(s));
    CHECK(interval_problem(s, std::nullopt).empty());
}

TEST_CASE("poison in the sample is unwritten, not a wrong value, and the full check is not asked") {
    // A stage that said it was done before its side stream wrote C: 900 of the 1024 positions and every
    // one of the 64 answer positions still hold the poison.
    const IntervalSample s = stage_sample(900 + 64, 64);
    CHECK(sample_finding(s) == SampleFinding::unwritten);
    CHECK_FALSE(full_check_decides(s));
    // Even were a full check's NaN passed in, the verdict stays "unwritten".
    for (const auto& wrong : {std::optional<WrongCall>(), std::optional<WrongCall>(poison_in_full_check(1))}) {
        const std::string p = interval_problem(s, wrong);
        CHECK(has(p, "timed call 1 said it was done while 964 of 1088 elements of C the judge sampled were still unwritten"));
        CHECK(has(p, "judge's poison"));
        CHECK(has(p, "must finish its work on its stream"));
        CHECK_FALSE(has(p, "wrong values"));
        CHECK_FALSE(has(p, "nan"));
    }
}

TEST_CASE("poison outweighs the answer sample: one poisoned element makes the interval unwritten") {
    // No position of the answer sample was poison (they held zeros, say), one of the poison positions was.
    const IntervalSample s = stage_sample(1, 20);
    CHECK(sample_finding(s) == SampleFinding::unwritten);
    CHECK(has(interval_problem(s, std::nullopt), "still unwritten"));
}

TEST_CASE("no poison but values not yet their answer: the full check decides") {
    const IntervalSample s = stage_sample(0, 32, 5, 4);
    CHECK(sample_finding(s) == SampleFinding::unanswered);
    CHECK(full_check_decides(s));
    SUBCASE("right after the device was synchronized: late") {
        const std::string p = interval_problem(s, std::nullopt);
        CHECK(has(p, "timed calls 5–8 (one interval) said they were done while"));
        CHECK(has(p, "unwritten or not yet their answer"));  // the wording the gallery's fills_c_first expects
        CHECK(has(p, "32 of the 64 whose values it checked were not yet their answer"));
        CHECK(has(p, "right only later"));
        CHECK_FALSE(has(p, "wrong values"));
    }
    SUBCASE("wrong in the full check too: wrong values, with where") {
        WrongCall w;
        w.call = 6, w.wrong = 17, w.elements = 1 << 20, w.row = 3, w.col = 9, w.expected = 1.5, w.got = 0;
        const std::string p = interval_problem(s, w);
        CHECK(has(p, "timed call 6 gave wrong values: 17 of 1048576 elements outside the bound (worst C[3][9] expected 1.5, got 0)"));
        CHECK_FALSE(has(p, "not yet their answer"));
    }
}

TEST_CASE("a clean sample with a wrong answer in the full check is wrong values") {
    WrongCall w;
    w.call = 2, w.wrong = 1, w.elements = 64, w.row = 7, w.col = 0, w.expected = 2, w.got = 2.5;
    const std::string p = interval_problem(stage_sample(0, 0, 2), w);
    CHECK(has(p, "timed call 2 gave wrong values: 1 of 64 elements"));
    CHECK(has(p, "must compute every call from its inputs"));
}

TEST_CASE("the grader's own items: no values checked, poison alone decides") {
    IntervalSample s;
    s.sampled = 1088;
    CHECK(interval_problem(s, std::nullopt).empty());
    s.poisoned = s.unanswered = 7;  // their answer sample counts only the poison
    CHECK(has(interval_problem(s, std::nullopt), "7 of 1088 elements of C the judge sampled were still unwritten"));
}
