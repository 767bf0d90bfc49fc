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
