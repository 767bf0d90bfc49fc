// The host unit tests' main (doctest). Each tests/host/test_*.cpp holds the tests of one unit.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
