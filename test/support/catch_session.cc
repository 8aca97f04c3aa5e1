// Catch2's implementation, compiled once for every test program (each
// program's main is catch_main.cc's, or its own, as the PMIx tests' is).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "catch_session.h"

namespace grove::test {

int run_catch_session(int argc, char** argv) {
  return Catch::Session().run(argc, argv);
}

}  // namespace grove::test
