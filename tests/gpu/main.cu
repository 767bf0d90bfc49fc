// The GPU unit tests' main (doctest). Every GPU test is declared with GPU_TEST_CASE, which skips
// it — visibly, counted in the summary — when this machine has no usable GPU.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
