// dvm_respawn_lost on a real DVM: a daemon killed is started again by the
// controller at its old vpid (a return every daemon takes in, in an epoch of
// its own), and the next job uses it; a daemon that dies at every join
// (debug_fault's join point) is respawned dvm_respawn_max times, then stays
// lost, and the DVM goes on.
#include <catch2/catch.hpp>

#include <signal.h>

#include <string>

#include "dvm_harness.h"
#include "support/wait.h"

using namespace grove::test;
using namespace std::chrono_literals;

namespace {

nlohmann::json daemon_entry(Dvm& dvm, unsigned vpid) {
  const nlohmann::json status = dvm.status();  // kept: the loop walks into it
  for (const auto& daemon : status["daemons"]) {
    if (daemon["vpid"] == vpid) return daemon;
  }
  return {};
}

}  // namespace

TEST_CASE("dvm_respawn_lost: a killed daemon comes back at its vpid and the next job uses it",
          "[dvm]") {
  Dvm dvm(3, {"--mca", "dvm_respawn_lost", "true", "--mca", "dvm_respawn_delay_ms", "100"});
  REQUIRE(dvm.ready());
  const pid_t first = daemon_entry(dvm, 2)["pid"].get<int>();
  REQUIRE(kill(first, SIGKILL) == 0);
  const nlohmann::json back_history = nlohmann::json::array({"up", "lost", "back"});
  REQUIRE(wait_until([&] { return daemon_entry(dvm, 2)["history"] == back_history; }, 30s, 50ms));
  const nlohmann::json status = dvm.status();
  CHECK(status["daemons"][2]["state"] == "up");
  CHECK(status["daemons"][2]["pid"].get<int>() != first);
  CHECK(status["failed"] == nlohmann::json::array());
  CHECK(status["epoch"] == 2);  // the departure, then the return
  CHECK(status["size"] == 3);

  RunResult job = dvm.grove({"run", "-n", "3", "--map-by", "node",
                             binary_from_env("GROVE_PMIX_FENCE_CLIENT"), "--rounds", "20"});
  INFO(job.out << job.err);
  CHECK(job.exit_code == 0);
  CHECK(count_occurrences(job.out, "20 rounds ok") == 3);
  CHECK_THAT(job.out, Catch::Contains(".n2"));
  const std::string log = dvm.controller().err();
  INFO(log);
  CHECK_THAT(log, Catch::Contains("starting daemon 2 (") && Catch::Contains("(respawn 1 of 3)"));
  CHECK(dvm.stop().exit_code == 0);
}

TEST_CASE("dvm_respawn_max: a daemon that dies at each join is given up; the DVM goes on",
          "[dvm]") {
  // vpid 2 is the daemon grove grow adds; it dies as each welcome arrives,
  // after the controller declared it (the rest of the DVM took it in).
  Dvm dvm(2, {"--mca", "dvm_respawn_lost", "true", "--mca", "dvm_respawn_delay_ms", "50", "--mca",
              "dvm_respawn_max", "2", "--mca", "debug_fault", "2:join-welcomed"});
  REQUIRE(dvm.ready());
  dvm.grove({"grow", "--local", "1"}, 90s);  // it joins, then dies
  REQUIRE(
      wait_until([&] { return dvm.controller().err().find("it stays lost") != std::string::npos; },
                 60s, 50ms));
  const nlohmann::json status = dvm.status();
  CHECK(status["daemons"][2]["state"] == "failed");
  CHECK(status["daemons"][2]["history"] ==
        nlohmann::json::array({"joined", "lost", "back", "lost", "back", "lost"}));
  CHECK(status["failed"] == nlohmann::json::array({2}));
  CHECK(status["epoch"] == 6);  // a join, then two returns, each followed by a departure
  const std::string log = dvm.controller().err();
  INFO(log);
  CHECK(count_occurrences(log, "debug_fault: dying at join-welcomed") == 3);
  CHECK_THAT(log, Catch::Contains("was respawned 2 times (dvm_respawn_max): it stays lost"));

  RunResult job = dvm.grove({"run", "-n", "2", "--map-by", "node",
                             binary_from_env("GROVE_PMIX_FENCE_CLIENT"), "--rounds", "10"});
  INFO(job.out << job.err);
  CHECK(job.exit_code == 0);
  CHECK(count_occurrences(job.out, "10 rounds ok") == 2);
  CHECK(dvm.stop().exit_code == 0);
}
