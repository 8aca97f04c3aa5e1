// The one Catch2 main every test program links (compiled once, not per program).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
