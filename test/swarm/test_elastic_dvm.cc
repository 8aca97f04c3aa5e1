// An elastic DVM on a namespace swarm, through the CLI: a host leaves a DVM
// started over ssh (grove shrink --host), its vpid a hole the trees route
// around, and a PMIx job then runs over the hosts left.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
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
