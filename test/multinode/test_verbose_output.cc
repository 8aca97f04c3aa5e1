// Verbose output as a user reads it: tags by name, heartbeats at a level of
// their own.
#include <catch2/catch.hpp>

#include <thread>

#include "dvm_harness.h"

using namespace grove::test;

namespace {

// Waits until the controller has had an answered heartbeat from daemon 1.
bool heartbeat_answered(Dvm& dvm) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    RunResult tree = dvm.grove({"status", "--tree", "--json"});
    if (tree.exit_code == 0 &&
        nlohmann::json::parse(tree.out)["tree_states"]["1"]["controller_rtt_us"].get<int>() > 0) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace

TEST_CASE("rml verbose lines name tags; heartbeats show only from level 5", "[dvm]") {
  for (const int level : {3, 5}) {
    Dvm dvm(2, {"--mca", "rml_base_verbose", std::to_string(level), "--mca", "daemon_heartbeat_ms",
                "50"});
    REQUIRE(dvm.ready());
    REQUIRE(heartbeat_answered(dvm));
    CHECK(dvm.grove({"run", "-n", "2", "--map-by", "node", "true"}).exit_code == 0);
    REQUIRE(dvm.stop().exit_code == 0);
    const std::string& log = dvm.controller().err();
    CHECK_THAT(log, Catch::Contains("RML-RECV from 1 tag job-exited topology routing"));
    CHECK_THAT(log, Catch::Contains("RML-SEND-DIRECT to 1 tag welcome"));
    CHECK((log.find("tag heartbeat") != std::string::npos) == (level >= 5));
  }
}
