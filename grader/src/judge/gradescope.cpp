// gradescope.cpp — Gradescope's results format (see gradescope.h).
#include "judge/gradescope.h"

#include <cmath>
#include <sstream>

namespace gemmlab {

using nlohmann::json;

namespace {

std::string stage_name(const StageScore& s) {
    return s.stage + " (" + s.precision + (s.extra_credit ? ", extra credit" : "") + ")";
}

// Gradescope's extra credit: a test whose score may exceed its max_score. Extra-credit points
// (score.h) get max_score 0, so the tests' maxima still add up to the course's maximum.
double max_score(const StageScore& s, double points) { return s.extra_credit ? 0.0 : points; }

std::string extra_note(const StageScore& s, double points) {
    if (!s.extra_credit) return "";
    std::ostringstream os;
    os << "\nextra credit: up to " << points << " points on top of the maximum";
    return os.str();
}

}  // namespace

json gradescope_json(const Score& score, const std::string& summary, double execution_seconds,
                     const std::string& visibility, bool scored) {
    if (!scored) {
        // No score anywhere (the grading machine had no GPU): each stage says what is known without one
        // (a file refused at build time, or not run), with no points and no maximum.
        json tests = json::array();
        for (const StageScore& s : score.stages)
            if (s.correctness_max > 0 || s.performance_max > 0)
                tests.push_back({{"name", stage_name(s)},
                                 {"output", std::string(disposition_name(s.disposition)) + (s.note.empty() ? "" : ": " + s.note)},
                                 {"visibility", visibility}});
        return json{{"output", summary},
                    {"execution_time", static_cast<int>(std::ceil(execution_seconds))},
                    {"visibility", visibility},
                    {"stdout_visibility", "hidden"},
                    {"tests", tests}};
    }
    json tests = json::array();
    for (const StageScore& s : score.stages) {
        if (s.correctness_max > 0) {
            std::string out = std::string("correctness: ") + disposition_name(s.disposition);
            if (!s.note.empty()) out += "\n" + s.note;
            out += extra_note(s, s.correctness_max);
            tests.push_back({{"name", stage_name(s) + ": correctness"},
                             {"score", s.correctness},
                             {"max_score", max_score(s, s.correctness_max)},
                             {"status", s.correctness >= s.correctness_max ? "passed" : "failed"},
                             {"output", out},
                             {"visibility", visibility}});
        }
        if (s.performance_max > 0) {
            std::string out = s.disposition == Disposition::passed
                                  ? (s.variant_used.empty() ? "" : "best variant: " + s.variant_used + "\n") + s.note
                                  : std::string("no performance points: ") + disposition_name(s.disposition) +
                                        (s.note.empty() ? "" : " (" + s.note + ")");
            out += extra_note(s, s.performance_max);
            tests.push_back({{"name", stage_name(s) + ": performance"},
                             {"score", s.performance},
                             {"max_score", max_score(s, s.performance_max)},
                             {"status", s.performance >= s.performance_max ? "passed" : "failed"},
                             {"output", out},
                             {"visibility", visibility}});
        }
    }
    return json{{"score", score.total},
                {"output", summary},
                {"execution_time", static_cast<int>(std::ceil(execution_seconds))},
                {"visibility", visibility},
                {"stdout_visibility", "hidden"},
                {"tests", tests}};
}

}  // namespace gemmlab
