// The PMIx tests' main (Catch2 itself is test/support/catch_session.cc):
// Catch2's session, then the shared daemon's PMIx_server_finalize (libpmix
// allows one server per process, see one_daemon.h), so the process ends with
// nothing of PMIx left running.
#include "one_daemon.h"
#include "support/catch_session.h"

int main(int argc, char** argv) {
  int result = grove::test::run_catch_session(argc, argv);
  grove::pmix_test::destroy_shared_daemon();
  return result;
}
