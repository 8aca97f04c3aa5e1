// The PMIx tests' main: Catch2's session, then the shared daemon's
// PMIx_server_finalize (libpmix allows one server per process, see
// one_daemon.h), so the process ends with nothing of PMIx left running.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "one_daemon.h"

int main(int argc, char** argv) {
  int result = Catch::Session().run(argc, argv);
  grove::pmix_test::destroy_shared_daemon();
  return result;
}
