// Tests of symbol_scan.h: reading symbols.json and rejecting the stages it names.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

#include "judge/symbol_scan.h"

using namespace gemmlab;
using nlohmann::json;

namespace {

std::string write_temp(const std::string& text) {
    char name[] = "/tmp/gemmlab-symbols-test-XXXXXX";
    const int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    close(fd);
    std::ofstream(name) << text;
    return name;
}

}  // namespace

TEST_CASE("a missing symbols.json is an empty scan") {
    const SymbolScan s = load_symbol_scan("/nonexistent/symbols.json");
    CHECK(s.path.empty());
    CHECK(s.rejected.empty());
}

TEST_CASE("a rejected stage is rejected in every variant and precision, with the scan's problem") {
    const json file = {{"schema", "gemmlab.symbols/2"},
                       {"stages", {{"unrolled", {{"disposition", "rejected"},
                                                 {"problem", "unrolled.cu references cublasSgemm_v2 (cuBLAS)"}}}}}};
    const std::string path = write_temp(file.dump());
    const SymbolScan s = load_symbol_scan(path);
    std::remove(path.c_str());
    CHECK(s.path == path);
    REQUIRE(s.rejected.count("unrolled") == 1);

    json results = json::array({{{"stage", "naive"}, {"precision", "float"}, {"disposition", "passed"}},
                                {{"stage", "unrolled"}, {"precision", "float"}, {"disposition", "passed"},
                                 {"cases", json::array({1, 2})}},
                                {{"stage", "unrolled"}, {"precision", "double"}, {"disposition", "failed"}}});
    CHECK(apply_symbol_scan(s, results) == 2);
    CHECK(results[0]["disposition"] == "passed");
    CHECK(results[1]["disposition"] == "rejected");
    CHECK(results[1]["problem"].get<std::string>().find("cublasSgemm_v2") != std::string::npos);
    CHECK(results[1]["cases"].size() == 2);  // what the check found is kept
    CHECK(results[2]["disposition"] == "rejected");
    CHECK(to_json(s)["rejected"]["unrolled"].is_string());
}

TEST_CASE("a file that is not a symbol scan is an error, not a silent pass") {
    const std::string path = write_temp("{\"schema\": \"something else\"}");
    CHECK_THROWS_AS(load_symbol_scan(path), std::runtime_error);
    std::remove(path.c_str());
}

TEST_CASE("a stage file that does not compile rejects its stage, whatever its runs say (no_gpu included)") {
    const json file = {{"schema", "gemmlab.symbols/2"},
                       {"stages", {{"tiled", {{"disposition", "rejected"}, {"rules", {"does_not_compile"}},
                                              {"problem", "tiled.cu does not compile: student/tiled.cu:42: error: "
                                                          "expected a \";\""}}}}}};
    const std::string path = write_temp(file.dump());
    const SymbolScan s = load_symbol_scan(path);
    std::remove(path.c_str());
    json results = json::array({{{"stage", "tiled"}, {"variant", "8"}, {"precision", "float"}, {"disposition", "no_gpu"}},
                                {{"stage", "naive"}, {"variant", ""}, {"precision", "float"}, {"disposition", "no_gpu"}}});
    CHECK(apply_symbol_scan(s, results) == 1);
    CHECK(results[0]["disposition"] == "rejected");
    CHECK(results[0]["problem"].get<std::string>().find("student/tiled.cu:42") != std::string::npos);
    CHECK(results[1]["disposition"] == "no_gpu");
}

TEST_CASE("a missing explicit instantiation rejects only the runs that lack it") {
    const std::string fix = "unrolled.cu does not define gemm_unrolled<double>: keep its explicit instantiation";
    const json file = {{"schema", "gemmlab.symbols/2"},
                       {"stages", {{"unrolled", {{"disposition", "rejected"}, {"problem", fix},
                                                 {"runs", json::array({{{"variant", ""}, {"precision", "double"},
                                                                        {"problem", fix}}})}}}}}};
    const std::string path = write_temp(file.dump());
    const SymbolScan s = load_symbol_scan(path);
    std::remove(path.c_str());
    CHECK(s.rejected.empty());
    CHECK(scan_rejection(s, "unrolled", "", "double") == fix);
    CHECK(scan_rejection(s, "unrolled", "", "float").empty());
    json results = json::array({{{"stage", "unrolled"}, {"variant", ""}, {"precision", "float"}, {"disposition", "passed"}},
                                {{"stage", "unrolled"}, {"variant", ""}, {"precision", "double"}, {"disposition", "rejected"}}});
    CHECK(apply_symbol_scan(s, results) == 1);
    CHECK(results[0]["disposition"] == "passed");
    CHECK(results[1]["problem"] == fix);
    CHECK(to_json(s)["rejected_runs"].size() == 1);
}
