// MPICH and PMI-2 across hosts: a DVM over ssh on the namespace swarm (each
// host its own hostname), and a one-shot grove run -H. PMI_process_mapping
// is checked against where every rank really ran.
#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <regex>
#include <set>

#include "support/dvm.h"
#include "support/pmi_mapping.h"
#include "support/wait.h"
#include "swarm/swarm_checks.h"
#include "swarm/swarm_harness.h"

using namespace grove::test;
using namespace std::chrono_literals;

namespace {

// Each "mpich rank R of N on HOST: ring ok allreduce S alltoall ok" line: rank -> host.
std::map<int, std::string> mpich_hosts(const std::string& out, int size) {
  std::map<int, std::string> hosts;
  std::regex line("mpich rank (\\d+) of " + std::to_string(size) +
                  " on (\\S+): ring ok allreduce " + std::to_string(size * (size - 1) / 2) +
                  " alltoall ok");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line); it != std::sregex_iterator();
       ++it)
    hosts[std::stoi((*it)[1])] = (*it)[2];
  return hosts;
}

}  // namespace

TEST_CASE("MPICH and PMI-2 across hosts: a DVM over ssh, and one-shot", "[swarm][mpich]") {
  const std::string checks = binary_from_env("GROVE_MPICH_CHECKS");
  const std::string pmi2 = binary_from_env("GROVE_PMI2_CLIENT");
  Swarm swarm(5);
  REQUIRE(swarm.ok());
  const std::string hosts =
      swarm.write("mpich-hostfile", "node1 slots=2\nnode2 slots=2\nnode3 slots=2\nnode4 slots=2\n");
  DvmStart start;
  start.args = {"--hostfile", hosts, "--mca", "plm_ssh_agent", swarm.ssh_agent()};
  {
    Dvm dvm(swarm.place(0), start);
    const bool ready = dvm.ready();
    INFO(dvm.controller().err());
    REQUIRE(ready);
    // Where each rank runs: by slot two per host in order, by node round robin.
    for (const char* map_by : {"slot", "node", "ppr:1:node"}) {
      INFO("--map-by " << map_by);
      const int np = std::string(map_by) == "ppr:1:node" ? 4 : 8;
      auto run = dvm.grove({"run", "-n", std::to_string(np), "--map-by", map_by, checks}, 120s);
      INFO(run.out << run.err);
      CHECK(run.exit_code == 0);
      const auto where = mpich_hosts(run.out, np);
      REQUIRE(where.size() == static_cast<std::size_t>(np));
      for (const auto& [rank, host] : where) {
        const int expected = std::string(map_by) == "slot" ? 1 + rank / 2 : 1 + rank % 4;
        CHECK(host == "node" + std::to_string(expected));
      }
      // PMI-2's view of the same mapping, checked against where its ranks ran.
      auto client =
          dvm.grove({"run", "-n", std::to_string(np), "--mpi", "pmi2", "--map-by", map_by, pmi2});
      CHECK(client.exit_code == 0);
      std::regex line(
          R"(pmi2 rank (\d+)/\d+ \S+ \d+ \S+ \d+ jobid \S+ host (\S+) mapping (\S+): kvs ok leader (\d+))");
      std::map<int, std::string> pmi_hosts;
      std::set<std::string> mappings;
      for (auto it = std::sregex_iterator(client.out.begin(), client.out.end(), line);
           it != std::sregex_iterator(); ++it) {
        pmi_hosts[std::stoi((*it)[1])] = (*it)[2];
        mappings.insert((*it)[3]);
      }
      INFO(client.out << client.err);
      REQUIRE(pmi_hosts.size() == static_cast<std::size_t>(np));
      REQUIRE(mappings.size() == 1);
      CHECK(mapping_matches(*mappings.begin(), pmi_hosts));
    }
    dvm.stop();
    CHECK(dvm.controller().wait_exit(30s) == 0);
  }
  CHECK(wait_gone(swarm, "groved").empty());
  // One-shot: grove run starts its DVM over ssh for this job and stops it.
  auto once = swarm.run(0,
                        {grove_binary(), "run", "--hostfile", hosts, "--mca", "plm_ssh_agent",
                         swarm.ssh_agent(), "-n", "8", "--map-by", "node", checks},
                        RunOptions{{"TMPDIR=" + swarm.dir()}, {}, 120s, ""});
  INFO(once.out << once.err);
  CHECK(once.exit_code == 0);
  CHECK(mpich_hosts(once.out, 8).size() == 8);
  CHECK(wait_gone(swarm, "groved").empty());
}
