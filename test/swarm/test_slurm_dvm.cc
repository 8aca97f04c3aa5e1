// DVMs inside a Slurm allocation: a real Slurm (Debian's slurmctld, slurmd
// and munge) on the namespace swarm, `grove start` under salloc starting its
// daemons with one srun step, real PMIx clients and Open MPI programs; a
// DVM grown onto the rest of its allocation (grove grow --activate), and a
// node shrunk away and brought back at its old vpid.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <regex>

#include "support/dvm.h"
#include "swarm/swarm_checks.h"

using namespace grove::test;
using namespace std::chrono_literals;

namespace {

// `salloc ALLOCATION... grove start ARGS...` on node0.
DvmStart in_allocation(const Swarm& swarm, std::vector<std::string> allocation,
                       std::vector<std::string> args) {
  DvmStart start;
  start.wrapper = {"salloc"};
  start.wrapper.insert(start.wrapper.end(), allocation.begin(), allocation.end());
  start.args = {"--mca", "plm_base_verbose", "1"};
  start.args.insert(start.args.end(), args.begin(), args.end());
  start.env = {swarm.slurm_conf_env()};
  return start;
}

// What is left of the DVM's step in Slurm's view ("" when none).
std::string dvm_steps(Swarm& swarm) {
  RunOptions options;
  options.extra_env = {swarm.slurm_conf_env()};
  return swarm.run(0, {"squeue", "--steps", "--noheader", "--name", "grove-dvm"}, options).out;
}

}  // namespace

TEST_CASE("inside salloc, grove start uses Slurm: one srun step, a PMIx job, a clean stop",
          "[swarm][slurm]") {
  Swarm swarm(4, true);
  INFO(swarm.error());
  REQUIRE(swarm.ok());
  // No --host, no --launcher: the allocation decides. node0 runs salloc's
  // command and is in the allocation, so the controller holds its ranks.
  Dvm dvm(swarm.place(0), in_allocation(swarm, {"-N", "4", "--ntasks-per-node=2"}, {}));
  REQUIRE(dvm.ready());
  const std::string log = dvm.controller().err();
  INFO(log);
  CHECK(std::regex_search(log,
                          std::regex(R"(starting 3 daemons: 'srun' [^\n]*'--nodes=3' )"
                                     R"('--ntasks=3' '--ntasks-per-node=1' )"
                                     R"('--nodelist=node1,node2,node3' '--kill-on-bad-exit=1')")));
  // Every daemon's "up" line comes through srun (it may trail the ready).
  CHECK(dvm.controller().wait_for("3 of 3 daemons up", 30s));

  auto status = dvm.status();
  REQUIRE(status["daemons"].size() == 4);
  for (const auto& daemon : status["daemons"]) {
    // Each vpid on the node srun numbered for it, with the allocation's 2 CPUs.
    CHECK(daemon["host"] == "node" + std::to_string(daemon["vpid"].get<unsigned>()));
    CHECK(daemon["state"] == "up");
  }
  CHECK_FALSE(dvm_steps(swarm).empty());

  auto job = dvm.grove({"run", "-n", "8", binary_from_env("GROVE_PMIX_FENCE_CLIENT"), "--rounds",
                        "3", "--max-bytes", "4096"});
  INFO(job.out << job.err);
  REQUIRE(job.exit_code == 0);
  auto results = fence_results(job.out);
  REQUIRE(results.size() == 8);
  for (const auto& [rank, entry] : results) {
    CHECK(entry.first == results[0].first);
    CHECK(entry.second == "node" + std::to_string(rank / 2));  // the allocation's 2 slots a node
  }

  dvm.stop();
  CHECK(dvm.controller().wait_exit(30s) == 0);
  CHECK(wait_gone(swarm, "groved").empty());
  CHECK(dvm_steps(swarm).empty());
}

TEST_CASE("part of an allocation, the controller outside it: an Open MPI job on the chosen nodes",
          "[swarm][slurm][mpi]") {
  Swarm swarm(4, true);
  INFO(swarm.error());
  REQUIRE(swarm.ok());
  // salloc's command runs on node0, which is not in the allocation: the
  // controller holds no ranks; --host picks two of the three nodes.
  Dvm dvm(swarm.place(0),
          in_allocation(swarm, {"-N", "3", "-w", "node[1-3]"}, {"--host", "node3,node2"}));
  REQUIRE(dvm.ready());
  const std::string log = dvm.controller().err();
  INFO(log);
  // In the allocation's order, whatever the order given.
  CHECK_THAT(log, Catch::Contains("'--nodes=2' '--ntasks=2' '--ntasks-per-node=1' "
                                  "'--nodelist=node2,node3'"));
  auto status = dvm.status();
  REQUIRE(status["daemons"].size() == 3);
  CHECK(status["daemons"][1]["host"] == "node2");
  CHECK(status["daemons"][2]["host"] == "node3");

  auto mpi = dvm.grove(
      {"run", "-n", "4", "--map-by", "ppr:2:node", binary_from_env("GROVE_MPI_COLLECTIVES")});
  INFO(mpi.out << mpi.err);
  CHECK(mpi.exit_code == 0);
  for (int rank = 0; rank < 4; ++rank) {
    CHECK_THAT(mpi.out, Catch::Contains("mpi rank " + std::to_string(rank) +
                                        " of 4: allreduce 10 alltoall ok barrier ok"));
  }
  auto where = dvm.grove({"run", "-n", "4", "--map-by", "ppr:2:node", "/bin/hostname"});
  CHECK(where.exit_code == 0);
  CHECK_THAT(where.out, Catch::Contains("node2") && Catch::Contains("node3") &&
                            !Catch::Contains("node0") && !Catch::Contains("node1"));
  dvm.stop();
  CHECK(wait_gone(swarm, "groved").empty());
}

TEST_CASE("Slurm start failures and a lost step stop the DVM, naming what happened",
          "[swarm][slurm]") {
  Swarm swarm(4, true);
  INFO(swarm.error());
  REQUIRE(swarm.ok());
  SECTION("a node without groved") {
    const std::string groved = binary_from_env("GROVE_GROVED");
    REQUIRE(swarm.hide(2, groved.substr(0, groved.rfind('/'))));
    Dvm dvm(swarm.place(0), in_allocation(swarm, {"-N", "4"}, {}));
    CHECK(dvm.controller().wait_exit(60s) != 0);
    const std::string err = dvm.controller().err();
    INFO(err);
    // srun's own words (kept, not dropped as PRRTE did) name the node.
    CHECK(std::regex_search(
        err, std::regex(R"(error: srun (exited with status|was killed by signal) \d+ before )")));
    CHECK_THAT(err, Catch::Contains("daemon 2 (node2)"));
    CHECK_THAT(err, Catch::Contains("its last lines:"));
    CHECK(std::regex_search(err, std::regex(R"(node2[^\n]*(task 1|execve|No such file))")));
  }
  SECTION("the step ends under a running DVM") {
    Dvm dvm(swarm.place(0), in_allocation(swarm, {"-N", "4"}, {}));
    REQUIRE(dvm.ready());
    // srun told to end (as when the allocation is revoked): Slurm ends the
    // step's daemons, and the DVM stops instead of lingering on node0.
    // srun and the helper it forks carry the same command line.
    auto srun = swarm.find_processes("--job-name=grove-dvm");
    REQUIRE_FALSE(srun.empty());
    std::vector<std::string> kill = {"/bin/kill", "-TERM"};
    for (const std::string& line : srun) {
      const std::string rest = line.substr(line.find(": ") + 2);
      kill.push_back(rest.substr(0, rest.find(' ')));
    }
    REQUIRE(swarm.run(0, kill).exit_code == 0);
    CHECK(dvm.controller().wait_exit(60s) != -1);
    INFO(dvm.controller().err());
    CHECK_THAT(dvm.controller().err(), Catch::Contains("the daemons' Slurm step ended (srun ") &&
                                           Catch::Contains("stopping the DVM"));
  }
  CHECK(wait_gone(swarm, "groved").empty());
  CHECK(dvm_steps(swarm).empty());
}

TEST_CASE(
    "grove grow --activate: the allocation's unused nodes join in one more srun step, and "
    "one shrunk away comes back",
    "[swarm][slurm]") {
  Swarm swarm(4, true);
  INFO(swarm.error());
  REQUIRE(swarm.ok());
  // Two of the allocation's four nodes at the start.
  Dvm dvm(swarm.place(0),
          in_allocation(swarm, {"-N", "4", "--ntasks-per-node=2"}, {"--host", "node0,node1"}));
  REQUIRE(dvm.ready());
  REQUIRE(dvm.status()["daemons"].size() == 2);
  RunResult outside = dvm.grove({"grow", "--activate", "node7"});
  CHECK(outside.exit_code == 1);
  CHECK_THAT(outside.err, Catch::Contains("--activate node7: not a node of this allocation"));
  RunResult used = dvm.grove({"grow", "--activate", "node[1-2]"});
  CHECK(used.exit_code == 1);
  CHECK_THAT(used.err, Catch::Contains("--activate node1: daemon 1 (node1) is there already"));

  RunResult grown = dvm.grove({"grow", "--activate"}, 90s);
  INFO(grown.out << grown.err);
  REQUIRE(grown.exit_code == 0);
  CHECK_THAT(grown.out, Catch::Contains("grove: daemon 2 (node2) joined the DVM") &&
                            Catch::Contains("grove: daemon 3 (node3) joined the DVM") &&
                            Catch::Contains("4 daemons in the DVM"));
  const std::string log = dvm.controller().err();
  INFO(log);
  CHECK(std::regex_search(log, std::regex(R"(starting 2 daemons: 'srun' [^\n]*'--nodes=2' )"
                                          R"('--ntasks=2' '--ntasks-per-node=1' )"
                                          R"('--nodelist=node2,node3' [^\n]*)"
                                          R"('--vpid-from-slurm' '2' [^\n]*'--join')")));
  const nlohmann::json status = dvm.status();
  CHECK(status["epoch"] == 2);
  for (const auto& daemon : status["daemons"]) {
    CHECK(daemon["host"] == "node" + std::to_string(daemon["vpid"].get<unsigned>()));
    CHECK(daemon["state"] == "up");
  }

  auto job =
      dvm.grove({"run", "-n", "8", binary_from_env("GROVE_PMIX_FENCE_CLIENT"), "--rounds", "5"});
  INFO(job.out << job.err);
  REQUIRE(job.exit_code == 0);
  auto results = fence_results(job.out);
  REQUIRE(results.size() == 8);
  for (const auto& [rank, entry] : results) {
    CHECK(entry.first == results[0].first);
    CHECK(entry.second == "node" + std::to_string(rank / 2));  // the allocation's 2 CPUs a node
  }
  // node3 leaves (its daemon exits 0: the step goes on) and comes back at
  // vpid 3, in a step of its own.
  RunResult shrunk = dvm.grove({"shrink", "--host", "node3"});
  INFO(shrunk.out << shrunk.err);
  REQUIRE(shrunk.exit_code == 0);
  RunResult back = dvm.grove({"grow", "--activate"}, 90s);
  INFO(back.out << back.err << dvm.controller().err());
  REQUIRE(back.exit_code == 0);
  CHECK_THAT(back.out,
             Catch::Contains("grove: daemon 3 (node3) is back in the DVM at its old vpid"));
  CHECK(dvm.status()["daemons"][3]["history"] ==
        nlohmann::json::array({"joined", "removed", "back"}));
  auto again =
      dvm.grove({"run", "-n", "8", binary_from_env("GROVE_PMIX_FENCE_CLIENT"), "--rounds", "5"});
  INFO(again.out << again.err);
  CHECK(again.exit_code == 0);
  CHECK(fence_results(again.out).size() == 8);
  RunResult full = dvm.grove({"grow", "--activate"});
  CHECK(full.exit_code == 1);
  CHECK_THAT(full.err, Catch::Contains("every node of the allocation (4) runs a daemon"));

  dvm.stop();
  CHECK(dvm.controller().wait_exit(30s) == 0);
  CHECK(wait_gone(swarm, "groved").empty());
  CHECK(dvm_steps(swarm).empty());
}
