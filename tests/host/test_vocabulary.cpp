// Tests of vocabulary.h: shapes, precisions, dispositions.
#include <doctest/doctest.h>

#include "common/vocabulary.h"

using namespace gemmlab;

TEST_CASE("parse_shape reads MxNxK, cubes and leading dimensions") {
    auto s = parse_shape("129x127x131");
    REQUIRE(s);
    CHECK(s->M == 129);
    CHECK(s->N == 127);
    CHECK(s->K == 131);
    CHECK(s->eff_lda() == 131);
    CHECK(s->eff_ldb() == 127);
    CHECK(s->eff_ldc() == 127);

    auto cube = parse_shape("4096");
    REQUIRE(cube);
    CHECK(cube->M == 4096);
    CHECK(cube->K == 4096);

    auto padded = parse_shape("33x31x65:72,40,36");
    REQUIRE(padded);
    CHECK(padded->eff_lda() == 72);
    CHECK(padded->eff_ldb() == 40);
    CHECK(padded->eff_ldc() == 36);
    CHECK(padded->flops() == doctest::Approx(2.0 * 33 * 31 * 65));
}

TEST_CASE("parse_shape explains what is wrong") {
    std::string err;
    CHECK_FALSE(parse_shape("12x0x4", &err));
    CHECK(err.find("positive") != std::string::npos);
    CHECK_FALSE(parse_shape("12x4", &err));
    CHECK(err.find("three sizes") != std::string::npos);
    CHECK_FALSE(parse_shape("8x8x8:4,8,8", &err));
    CHECK(err.find("lda must be at least K") != std::string::npos);
    CHECK_FALSE(parse_shape("100000x100000x100000", &err));
    CHECK(err.find("does not fit") != std::string::npos);
    CHECK_FALSE(parse_shape("abc", &err));
    CHECK(err.find("MxNxK") != std::string::npos);
}

TEST_CASE("parse_shape_list splits on commas and rejects a bad item") {
    auto list = parse_shape_list("1024,2048x2048x2048,8x3000x16");
    REQUIRE(list.size() == 3);
    CHECK(list[2].N == 3000);
    std::string err;
    CHECK(parse_shape_list("1024,oops", &err).empty());
    CHECK(err.find("oops") != std::string::npos);
}

TEST_CASE("precisions: names, sizes and unit roundoff") {
    CHECK(parse_precision("float") == Precision::f32);
    CHECK(parse_precision("DOUBLE") == Precision::f64);
    CHECK(parse_precision("sgemm") == Precision::f32);
    CHECK_FALSE(parse_precision("half"));
    CHECK(precision_bytes(Precision::f64) == 8);
    CHECK(unit_roundoff(Precision::f32) == doctest::Approx(5.960464477539063e-08));
    CHECK(unit_roundoff(Precision::f64) == doctest::Approx(1.1102230246251565e-16));
}

TEST_CASE("dispositions round-trip through their names and combine by severity") {
    for (Disposition d : {Disposition::passed, Disposition::failed, Disposition::out_of_bounds,
                          Disposition::crashed, Disposition::timed_out, Disposition::not_implemented,
                          Disposition::rejected, Disposition::no_gpu, Disposition::skipped})
        CHECK(parse_disposition(disposition_name(d)) == d);
    CHECK_FALSE(parse_disposition("fine"));
    CHECK(combine({Disposition::passed, Disposition::passed}) == Disposition::passed);
    CHECK(combine({Disposition::passed, Disposition::failed}) == Disposition::failed);
    CHECK(combine({Disposition::failed, Disposition::out_of_bounds, Disposition::passed}) ==
          Disposition::out_of_bounds);
    CHECK(combine({Disposition::out_of_bounds, Disposition::crashed}) == Disposition::crashed);
    CHECK(combine({Disposition::crashed, Disposition::timed_out}) == Disposition::timed_out);
    CHECK(combine({Disposition::not_implemented}) == Disposition::not_implemented);
    CHECK(combine({}) == Disposition::skipped);
    CHECK(counts_as_correct(Disposition::passed));
    CHECK_FALSE(counts_as_correct(Disposition::not_implemented));
}
