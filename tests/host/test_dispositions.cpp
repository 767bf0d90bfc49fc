// Tests of collect_stage_run (pipeline.h): how a child's reports and the way it ended turn
// into a stage's disposition — without running any child.
#include <doctest/doctest.h>

#include <string>

#include "common/check_result.h"
#include "judge/check_engine.h"
#include "judge/pipeline.h"

using namespace gemmlab;
using nlohmann::json;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

Shape shape(int M, int N, int K) {
    Shape s;
    s.M = M, s.N = N, s.K = K, s.alpha = 1.5, s.beta = -0.75;
    return s;
}

json case_event(int index, const Shape& s, Disposition d, const std::string& problem = "") {
    CaseResult r;
    r.shape = s;
    r.disposition = d;
    r.problem = problem;
    return {{"event", "case"}, {"index", index}, {"result", to_json(r)}};
}
json start_event(int index, const Shape& s) {
    return {{"event", "case_start"}, {"index", index}, {"shape", shape_to_json(s)}};
}

// A child that ran `cases` with the given dispositions and then said it was done.
ChildOutcome finished(const std::vector<Disposition>& cases) {
    ChildOutcome o;
    o.events.push_back({{"event", "start"}, {"cases", cases.size()}});
    for (size_t i = 0; i < cases.size(); ++i) {
        o.events.push_back(start_event(int(i), shape(int(i) + 1, 2, 3)));
        o.events.push_back(case_event(int(i), shape(int(i) + 1, 2, 3), cases[i]));
    }
    o.events.push_back({{"event", "done"}});
    o.finished = true;
    o.exit_code = 0;
    return o;
}

json collect(const ChildOutcome& o, size_t expected) {
    return collect_stage_run("tiled", "16", Precision::f32, expected, o);
}

}  // namespace

TEST_CASE("all cases passed: passed") {
    const json r = collect(finished({Disposition::passed, Disposition::passed}), 2);
    CHECK(r["disposition"] == "passed");
    CHECK(r["problem"] == "");
    CHECK(r["cases"].size() == 2);
    CHECK(r["stage"] == "tiled");
    CHECK(r["variant"] == "16");
    CHECK(r["precision"] == "float");
}

TEST_CASE("the worst case decides; not implemented wins over everything a child reported") {
    CHECK(collect(finished({Disposition::passed, Disposition::failed}), 2)["disposition"] == "failed");
    CHECK(collect(finished({Disposition::failed, Disposition::out_of_bounds}), 2)["disposition"] == "out_of_bounds");
    CHECK(collect(finished({Disposition::not_implemented}), 5)["disposition"] == "not_implemented");
    CHECK(collect(finished({Disposition::passed, Disposition::crashed}), 5)["disposition"] == "crashed");
}

TEST_CASE("a stub the probe found is recorded as the check's own first case would be") {
    CheckRun run;
    run.stage = "tensor";
    run.variant = "tf32";
    run.precision = Precision::f32;
    run.shapes = check_shapes(true, 7);
    StubAnswer answer;
    answer.stub = true;
    answer.problem = "not implemented yet (the stage returns Status::not_implemented)";
    answer.seconds = 0.002;
    const json r = collect_stage_run("tensor", "tf32", Precision::f32, run.shapes.size(), stub_outcome(run, answer));
    CHECK(r["disposition"] == "not_implemented");
    CHECK(r["problem"] == answer.problem);
    CHECK(r["expected_cases"] == run.shapes.size());
    REQUIRE(r["cases"].size() == 1);  // the check stops at the first not-implemented case
    const json& c = r["cases"][0];
    CHECK(c["disposition"] == "not_implemented");
    CHECK(shape_from_json(c["shape"]).dims() == run.shapes.front().dims());
    CHECK(c["shape"]["alpha"] == run.shapes.front().alpha);
    CHECK(c["inputs"] == "tf32");  // the variant's bound, as a real run records it
    CHECK(c["bound"].get<double>() > 32);
    CHECK(r["process"]["end"] == "exited with code 0");  // run_checks replaces it with kStubProbeEnd
}

TEST_CASE("the first failing case's problem becomes the stage's problem") {
    ChildOutcome o = finished({});
    o.events.insert(o.events.end() - 1, case_event(0, shape(1, 1, 1), Disposition::passed));
    o.events.insert(o.events.end() - 1, case_event(1, shape(7, 5, 3), Disposition::failed, "wrong values"));
    const json r = collect(o, 2);
    CHECK(r["disposition"] == "failed");
    CHECK(r["problem"] == "wrong values");
}

TEST_CASE("a child that exits in the middle crashed, and the running case is named") {
    ChildOutcome o;
    o.events = {start_event(0, shape(1, 1, 1)), case_event(0, shape(1, 1, 1), Disposition::passed),
                start_event(1, shape(33, 31, 65))};
    o.exit_code = 0;  // exit(0) from the stage
    const json r = collect(o, 3);
    CHECK(r["disposition"] == "crashed");
    const std::string problem = r["problem"];
    CHECK(contains(problem, "exited with code 0"));
    CHECK(contains(problem, "a stage must return, not exit"));
    CHECK(contains(problem, "while running 33x31x65"));
    REQUIRE(r["cases"].size() == 2);
    CHECK(r["cases"][1]["disposition"] == "crashed");
    CHECK(r["cases"][1]["shape"]["M"] == 33);
}

TEST_CASE("a signal is a crash that names the signal") {
    ChildOutcome o;
    o.events = {start_event(0, shape(8, 8, 8))};
    o.signal = 11;
    const json r = collect(o, 1);
    CHECK(r["disposition"] == "crashed");
    CHECK(contains(r["problem"].get<std::string>(), "killed by signal 11"));
}

TEST_CASE("a child killed for its time limit timed out") {
    ChildOutcome o;
    o.events = {start_event(0, shape(2048, 2048, 2048))};
    o.timed_out = true;
    o.timeout_reason = "10 s without progress";
    const json r = collect(o, 4);
    CHECK(r["disposition"] == "timed_out");
    const std::string problem = r["problem"];
    CHECK(contains(problem, "killed after 10 s without progress"));
    CHECK(contains(problem, "while running 2048x2048x2048"));
    CHECK_FALSE(contains(problem, "must return"));
}

TEST_CASE("a CUDA error reported as fatal is a crash that quotes the error") {
    ChildOutcome o;
    o.events = {start_event(0, shape(5, 5, 5)),
                {{"event", "fatal"}, {"error", "cudaErrorIllegalAddress (700): an illegal memory access"}},
                {{"event", "done"}}};
    o.finished = true;
    o.exit_code = 1;
    const json r = collect(o, 2);
    CHECK(r["disposition"] == "crashed");
    CHECK(contains(r["problem"].get<std::string>(), "cudaErrorIllegalAddress"));
    CHECK(r["cases"].size() == 1);
}

TEST_CASE("a child that says done too early has not passed") {
    const json r = collect(finished({Disposition::passed}), 3);
    CHECK(r["disposition"] == "crashed");
    CHECK(contains(r["problem"].get<std::string>(), "reported 1 of 3 cases"));
}

TEST_CASE("malformed reports are ignored, not trusted") {
    ChildOutcome o = finished({Disposition::passed});
    o.events.insert(o.events.begin(), json{{"event", "case"}, {"result", "passed"}});
    o.events.insert(o.events.begin(), json{{"event", "case"}, {"result", {{"disposition", "passed"}}}});
    const json r = collect(o, 1);
    CHECK(r["disposition"] == "passed");
    CHECK(r["cases"].size() == 1);
    const json short_of_one = collect(o, 2);
    CHECK(short_of_one["disposition"] == "crashed");
}

TEST_CASE("exit_status: 0 when every implemented stage passed") {
    CHECK(exit_status(json::array({{{"disposition", "passed"}}, {{"disposition", "not_implemented"}}})) == 0);
    CHECK(exit_status(json::array({{{"disposition", "passed"}}, {{"disposition", "timed_out"}}})) == 1);
    CHECK(exit_status(json::array({{{"disposition", "out_of_bounds"}}})) == 1);
}
