// An elastic DVM on a namespace swarm, through the CLI: a host leaves a DVM
// started over ssh (grove shrink --host), its vpid a hole the trees route
// around, and a PMIx job then runs over the hosts left; hosts join a
// running DVM (grove grow --host) while a job fences, and a host whose
// daemon died gets one back at its old vpid (by grove grow --host, or by the
// controller itself with dvm_respawn_lost), never beside a predecessor that
// may still run.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <signal.h>

#include <chrono>
#include <fstream>
#include <string>

#include "support/dvm.h"
#include "support/wait.h"
#include "swarm/swarm_checks.h"
#include "swarm/swarm_harness.h"

using namespace grove::test;
using namespace std::chrono_literals;

TEST_CASE("grove shrink --host: a relay of the routing tree leaves; a PMIx job runs on the rest",
          "[swarm]") {
  Swarm swarm(5);
  REQUIRE(swarm.ok());
  INFO(swarm.error());
  DvmStart start;
  start.args = {"--hostfile",
                swarm.write("hosts-elastic",
                            "node0 slots=2\nnode1 slots=2\nnode2 slots=2\n"
                            "node3 slots=2\nnode4 slots=2\n"),
                "--mca",
                "plm_ssh_agent",
                swarm.ssh_agent(),
                "--mca",
                "rml_base_radix",
                "2"};
  Dvm dvm(swarm.place(0), start);
  REQUIRE(dvm.ready());

  // node1 is vpid 1: at radix 2 the parent of 3 and 4 in the routing tree.
  RunResult shrunk = dvm.grove({"shrink", "--host", "node1"});
  INFO(shrunk.out << shrunk.err);
  REQUIRE(shrunk.exit_code == 0);
  CHECK_THAT(shrunk.out, Catch::Contains("daemon 1 (node1) left the DVM") &&
                             Catch::Contains("4 daemons remain"));
  const nlohmann::json status = dvm.status();
  CHECK(status["daemons"][1]["state"] == "removed");
  CHECK(status["failed"] == nlohmann::json::array({1}));
  // Its groved is gone from node1, and only from there.
  auto groved_on_node1 = [&] {
    for (const std::string& process : swarm.processes(1)) {
      if (process.find("groved") != std::string::npos) return true;
    }
    return false;
  };
  CHECK(wait_until([&] { return !groved_on_node1(); }, 15s, 50ms));
  CHECK(swarm.find_processes("groved").size() == 4);

  // Ranks on the four hosts left, two each, in vpid order; their fences
  // cross the repaired trees (node1's children now hang elsewhere).
  RunResult job =
      dvm.grove({"run", "-n", "8", binary_from_env("GROVE_PMIX_FENCE_CLIENT"), "--rounds", "5"});
  INFO(job.out << job.err);
  REQUIRE(job.exit_code == 0);
  auto results = fence_results(job.out);
  REQUIRE(results.size() == 8);
  const char* hosts[] = {"node0", "node2", "node3", "node4"};
  for (const auto& [rank, entry] : results) {
    CHECK(entry.first == results[0].first);  // everyone saw the same data
    CHECK(entry.second == hosts[rank / 2]);
  }
  RunResult tree = dvm.grove({"status", "--tree"});
  INFO(tree.out);
  CHECK_THAT(tree.out, Catch::Contains("\nremoved: 1 (node1)\n"));
  CHECK_THAT(tree.out, !Catch::Contains("lost:"));

  dvm.stop();
  CHECK(dvm.controller().wait_exit(30s) == 0);
  CHECK_THAT(dvm.controller().err(), !Catch::Contains(" lost"));
  CHECK(wait_gone(swarm, "groved").empty());
}

TEST_CASE("grove grow --host: 4 hosts grow to 6 while a job fences; a killed daemon comes back",
          "[swarm]") {
  Swarm swarm(6);
  REQUIRE(swarm.ok());
  INFO(swarm.error());
  DvmStart start;
  start.args = {
      "--hostfile",
      swarm.write("hosts-grow", "node0 slots=2\nnode1 slots=2\nnode2 slots=2\nnode3 slots=2\n"),
      "--mca", "plm_ssh_agent", swarm.ssh_agent(),
      // Lifecycle lines: how far the stop below got, should it fail.
      "--mca", "daemon_base_verbose", "1"};
  Dvm dvm(swarm.place(0), start);
  REQUIRE(dvm.ready());
  const std::string fence_client = binary_from_env("GROVE_PMIX_FENCE_CLIENT");

  // A job on the four hosts, one rank each; rank 0 stops before fence 150
  // (the others wait inside it) until the DVM has grown.
  const std::string go = swarm.dir() + "/go";
  auto job = dvm.start_grove({"run", "-n", "4", "--map-by", "node", fence_client, "--rounds", "300",
                              "--barrier", "--progress", "--pause-at", "150:" + go});
  REQUIRE(job->wait_for("rank 0: connected, waiting for " + go, 60s));
  REQUIRE(job->wait_for("rank 3: round 149 done", 60s));
  RunResult taken = dvm.grove({"grow", "--host", "node4,node1"});
  CHECK(taken.exit_code == 1);
  CHECK_THAT(taken.err, Catch::Contains("--host node1: daemon 1 (node1) is in the DVM already"));
  RunResult grown = dvm.grove({"grow", "--host", "node4:2,node5:2"}, 90s);
  INFO(grown.out << grown.err);
  REQUIRE(grown.exit_code == 0);
  CHECK_THAT(grown.out, Catch::Contains("grove: daemon 4 (node4) joined the DVM") &&
                            Catch::Contains("grove: daemon 5 (node5) joined the DVM") &&
                            Catch::Contains("6 daemons in the DVM"));
  CHECK_THAT(job->out(), !Catch::Contains("round 150 done"));
  std::ofstream(go).put('\n');
  INFO(job->out() << job->err());
  CHECK(job->wait_exit(60s) == 0);
  CHECK(count_occurrences(job->out(), "300 rounds ok") == 4);

  auto run_everywhere = [&](const char* hosts[6]) {
    RunResult all = dvm.grove({"run", "-n", "12", fence_client, "--rounds", "5"});
    INFO(all.out << all.err);
    CHECK(all.exit_code == 0);
    auto results = fence_results(all.out);
    REQUIRE(results.size() == 12);
    for (const auto& [rank, entry] : results) {
      CHECK(entry.first == results[0].first);
      CHECK(entry.second == hosts[rank / 2]);
    }
  };
  const char* six[6] = {"node0", "node1", "node2", "node3", "node4", "node5"};
  run_everywhere(six);

  // node2's daemon dies; grove grow --host brings one back at vpid 2 (a
  // return: its failed bit cleared in a new epoch), and a job uses it.
  const int groved = pid_on(swarm, 2, "groved");
  REQUIRE(groved > 0);
  REQUIRE(kill(groved, SIGKILL) == 0);
  REQUIRE(wait_until([&] { return dvm.daemon_state(2) == "failed"; }, 30s, 50ms));
  RunResult back = dvm.grove({"grow", "--host", "node2"}, 90s);
  INFO(back.out << back.err);
  REQUIRE(back.exit_code == 0);
  CHECK_THAT(back.out,
             Catch::Contains("grove: daemon 2 (node2) is back in the DVM at its old vpid"));
  const nlohmann::json status = dvm.status();
  CHECK(status["size"] == 6);
  CHECK(status["failed"] == nlohmann::json::array());
  CHECK(status["epoch"] == 4);  // two joins, a departure, a return
  CHECK(status["daemons"][2]["history"] == nlohmann::json::array({"up", "lost", "back"}));
  CHECK(status["daemons"][4]["history"] == nlohmann::json::array({"joined"}));
  run_everywhere(six);
  RunResult text = dvm.grove({"status"});
  CHECK_THAT(text.out, Catch::Contains("up,lost,back"));

  // Should it fail, Dvm::stop prints what grove stop heard and the controller's log.
  CHECK(dvm.stop().exit_code == 0);
  CHECK(dvm.controller().wait_exit(30s) == 0);
  CHECK(wait_gone(swarm, "groved").empty());
}

TEST_CASE("a daemon lost while it may still run is not started beside itself", "[swarm]") {
  Swarm swarm(3);
  REQUIRE(swarm.ok());
  INFO(swarm.error());
  DvmStart start;
  start.args = {"--hostfile",
                swarm.write("hosts-stopped", "node0\nnode1\nnode2\n"),
                "--mca",
                "plm_ssh_agent",
                swarm.ssh_agent(),
                "--mca",
                "daemon_heartbeat_ms",
                "100",
                "--mca",
                "daemon_heartbeat_misses",
                "10",
                "--mca",
                "daemon_controller_timeout_ms",
                "60000"};
  Dvm dvm(swarm.place(0), start);
  REQUIRE(dvm.ready());
  // node2's daemon stops (SIGSTOP): silent, declared lost, told to leave;
  // it cannot hear that until it runs again, so it may still be there.
  const int groved = pid_on(swarm, 2, "groved");
  REQUIRE(groved > 0);
  REQUIRE(kill(groved, SIGSTOP) == 0);
  REQUIRE(wait_until([&] { return dvm.daemon_state(2) == "failed"; }, 30s, 50ms));
  RunResult refused = dvm.grove({"grow", "--host", "node2"});
  INFO(refused.out << refused.err);
  CHECK(refused.exit_code == 1);
  CHECK_THAT(refused.err, Catch::Contains("daemon 2 (node2) was declared lost while it may still "
                                          "run") &&
                              Catch::Contains("try again in"));
  // Running again, it reads its eviction and leaves.
  REQUIRE(kill(groved, SIGCONT) == 0);
  CHECK(wait_until([&] { return kill(groved, 0) != 0; }, 30s, 50ms));
  dvm.stop();
  CHECK(dvm.controller().wait_exit(30s) == 0);
  CHECK(wait_gone(swarm, "groved").empty());
}

TEST_CASE("dvm_respawn_lost over ssh: a killed daemon is started again on its host", "[swarm]") {
  Swarm swarm(3);
  REQUIRE(swarm.ok());
  INFO(swarm.error());
  DvmStart start;
  start.args = {"--hostfile",
                swarm.write("hosts-respawn", "node0\nnode1\nnode2\n"),
                "--mca",
                "plm_ssh_agent",
                swarm.ssh_agent(),
                "--mca",
                "dvm_respawn_lost",
                "true",
                "--mca",
                "dvm_respawn_delay_ms",
                "100"};
  Dvm dvm(swarm.place(0), start);
  REQUIRE(dvm.ready());
  const int groved = pid_on(swarm, 2, "groved");
  REQUIRE(groved > 0);
  REQUIRE(kill(groved, SIGKILL) == 0);
  const nlohmann::json back = nlohmann::json::array({"up", "lost", "back"});
  auto history = [&] {
    const nlohmann::json status = dvm.status();
    return status["daemons"][2]["history"];
  };
  REQUIRE(wait_until([&] { return history() == back; }, 30s, 50ms));
  CHECK(dvm.daemon_state(2) == "up");
  // On node2 again, a new process.
  const int respawned = pid_on(swarm, 2, "groved");
  CHECK(respawned > 0);
  CHECK(respawned != groved);
  RunResult job = dvm.grove({"run", "-n", "3", "--map-by", "node",
                             binary_from_env("GROVE_PMIX_FENCE_CLIENT"), "--rounds", "5"});
  INFO(job.out << job.err);
  CHECK(job.exit_code == 0);
  auto results = fence_results(job.out);
  REQUIRE(results.size() == 3);
  CHECK(results[2].second == "node2");
  dvm.stop();
  CHECK(dvm.controller().wait_exit(30s) == 0);
  CHECK(wait_gone(swarm, "groved").empty());
}
