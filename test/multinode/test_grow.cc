// grove grow on a real DVM, as a user runs it: daemons join a running DVM
// (each at the next vpid, declared in an epoch of its own and seeded with
// the DVM's state), a job fencing in a loop meanwhile is untouched, and the
// next job uses the newcomers; a joiner that dies is lost like any daemon.
#include <catch2/catch.hpp>

#include <signal.h>

#include <fstream>
#include <string>

#include "dvm_harness.h"
#include "support/temp_dir.h"
#include "support/wait.h"

using namespace grove::test;

TEST_CASE("grove grow: daemons join while a job fences, and the next job uses them", "[dvm]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  TempDir files;
  const std::string go = files.path() + "/go";
  // One rank on each of the two daemons, 400 barriers; rank 0 stops before
  // fence 200 (rank 1 waits inside it) until the DVM has grown.
  auto job = dvm.start_grove({"run", "-n", "2", "--map-by", "node",
                              binary_from_env("GROVE_PMIX_FENCE_CLIENT"), "--rounds", "400",
                              "--barrier", "--progress", "--pause-at", "200:" + go});
  REQUIRE(job->wait_for("rank 0: connected, waiting for " + go, std::chrono::seconds(60)));
  REQUIRE(job->wait_for("rank 1: round 199 done", std::chrono::seconds(60)));

  RunResult grown = dvm.grove({"grow", "--local", "2"}, std::chrono::seconds(90));
  INFO(grown.out << grown.err);
  REQUIRE(grown.exit_code == 0);
  CHECK_THAT(grown.out, Catch::Contains("grove: daemon 2 (") &&
                            Catch::Contains("grove: daemon 3 (") &&
                            Catch::Contains("4 daemons in the DVM"));
  // Nobody has passed fence 200 (rank 1 waits in it for rank 0); the job
  // fences on after both joins: no round lost or failed.
  CHECK_THAT(job->out(), !Catch::Contains("round 200 done"));
  std::ofstream(go).put('\n');
  INFO(job->out() << job->err());
  CHECK(job->wait_exit(std::chrono::seconds(60)) == 0);
  CHECK(count_occurrences(job->out(), "400 rounds ok") == 2);

  // Each join is an epoch every daemon adopts; nothing failed.
  const nlohmann::json status = dvm.status();
  CHECK(status["size"] == 4);
  CHECK(status["epoch"] == 2);
  CHECK(status["failed"] == nlohmann::json::array());
  CHECK(dvm.daemon_state(2) == "up");
  CHECK(dvm.daemon_state(3) == "up");

  // A PMIx job over all four: ranks on the newcomers fence with the rest.
  RunResult after = dvm.grove({"run", "-n", "4", "--map-by", "node",
                               binary_from_env("GROVE_PMIX_FENCE_CLIENT"), "--rounds", "20"});
  INFO(after.out << after.err);
  CHECK(after.exit_code == 0);
  CHECK(count_occurrences(after.out, "20 rounds ok") == 4);
  CHECK_THAT(after.out, Catch::Contains(".n2") && Catch::Contains(".n3"));

  RunResult stopped = dvm.stop();
  CHECK(stopped.exit_code == 0);
  CHECK_THAT(stopped.out, Catch::Contains("4 daemons"));
  INFO(dvm.controller().err());
  CHECK_THAT(dvm.controller().err(), !Catch::Contains("lost"));
}

TEST_CASE("a daemon that joined and dies is lost like any other; the DVM goes on", "[dvm]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  RunResult bad = dvm.grove({"grow"});
  CHECK(bad.exit_code == 1);
  CHECK_THAT(bad.err, Catch::Contains("--local N"));
  // Hosts over ssh grow a DVM started on a host list, not this one.
  RunResult hosts = dvm.grove({"grow", "--host", "node9"});
  CHECK(hosts.exit_code == 1);
  CHECK_THAT(hosts.err, Catch::Contains("runs on this host only: use --local N"));
  RunResult grown = dvm.grove({"grow", "--local", "1"}, std::chrono::seconds(90));
  INFO(grown.out << grown.err);
  REQUIRE(grown.exit_code == 0);
  const pid_t joiner = dvm.status()["daemons"][2]["pid"].get<int>();
  REQUIRE(kill(joiner, SIGKILL) == 0);
  CHECK(wait_until([&] { return dvm.daemon_state(2) == "failed"; }, std::chrono::seconds(30),
                   std::chrono::milliseconds(50)));
  CHECK(dvm.status()["failed"] == nlohmann::json::array({2}));
  RunResult after = dvm.grove({"run", "-n", "2", "--map-by", "node",
                               binary_from_env("GROVE_PMIX_FENCE_CLIENT"), "--rounds", "5"});
  INFO(after.out << after.err);
  CHECK(after.exit_code == 0);
  CHECK(count_occurrences(after.out, "5 rounds ok") == 2);
  CHECK(dvm.stop().exit_code == 0);
}
