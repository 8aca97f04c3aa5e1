// MPICH programs and PMI-1/PMI-2 clients under grove run, on real daemons:
// Hydra's simple PMI served beside PMIx, a barrier as a fence of the DVM,
// and bad input costing its rank only.
#include <catch2/catch.hpp>

#include <map>
#include <regex>
#include <set>

#include "dvm_harness.h"
#include "support/pmi_mapping.h"

using namespace grove::test;

namespace {

// Every "mpich rank R of N on H: ring ok allreduce S alltoall ok" line's rank.
std::set<int> mpich_ok(const std::string& out, int size) {
  std::set<int> ranks;
  const int sum = size * (size - 1) / 2;
  std::regex line("mpich rank (\\d+) of " + std::to_string(size) + " on \\S+: ring ok allreduce " +
                  std::to_string(sum) + " alltoall ok");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line); it != std::sregex_iterator();
       ++it)
    ranks.insert(std::stoi((*it)[1]));
  return ranks;
}

std::set<int> all_ranks(int size) {
  std::set<int> ranks;
  for (int rank = 0; rank < size; ++rank)
    ranks.insert(rank);
  return ranks;
}

}  // namespace

TEST_CASE("MPICH programs run under grove unchanged, on 1, 2 and 4 daemons", "[pmi][mpi]") {
  const std::string checks = binary_from_env("GROVE_MPICH_CHECKS");
  for (int daemons : {1, 2, 4}) {
    INFO(daemons << " daemons");
    Dvm dvm(daemons);
    REQUIRE(dvm.ready());
    for (const char* map_by : {"slot", "node"}) {
      INFO("--map-by " << map_by);
      auto run =
          dvm.grove({"run", "-n", "8", "--map-by", map_by, checks}, std::chrono::seconds(120));
      CHECK(run.exit_code == 0);
      INFO(run.out << run.err);
      CHECK(mpich_ok(run.out, 8) == all_ranks(8));
    }
    // --mpi pmi1 serves PMI-1 only, and MPICH needs no more.
    auto pmi1 = dvm.grove({"run", "-n", "3", "--mpi", "pmi1", checks}, std::chrono::seconds(120));
    CHECK(pmi1.exit_code == 0);
    CHECK(mpich_ok(pmi1.out, 3) == all_ranks(3));
  }
}

TEST_CASE("--mpi pmix offers no PMI: MPICH's ranks run as singletons", "[pmi][mpi]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  auto run = dvm.grove({"run", "-n", "2", "--mpi", "pmix", binary_from_env("GROVE_MPICH_CHECKS")},
                       std::chrono::seconds(120));
  CHECK(run.exit_code == 0);
  CHECK(mpich_ok(run.out, 1) == std::set<int>{0});
  CHECK(count_occurrences(run.out, "mpich rank 0 of 1") == 2);
}

TEST_CASE("an MPICH rank's MPI_Abort ends its job with its code; the DVM goes on", "[pmi][mpi]") {
  const std::string checks = binary_from_env("GROVE_MPICH_CHECKS");
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  auto aborted = dvm.grove({"run", "-n", "4", checks, "abort", "7"}, std::chrono::seconds(120));
  CHECK(aborted.exit_code == 7);
  CHECK_THAT(aborted.err, Catch::Contains("rank 3 called PMI_Abort with status 7"));
  auto after = dvm.grove({"run", "-n", "4", checks}, std::chrono::seconds(120));
  CHECK(after.exit_code == 0);
  CHECK(mpich_ok(after.out, 4) == all_ranks(4));
}

TEST_CASE("PMI-2: fullinit, job id, PMI_process_mapping, kvs fence and node attributes", "[pmi]") {
  const std::string client = binary_from_env("GROVE_PMI2_CLIENT");
  Dvm dvm(3);
  REQUIRE(dvm.ready());
  for (const char* map_by : {"slot", "node", "ppr:2:node"}) {
    INFO("--map-by " << map_by);
    auto run = dvm.grove({"run", "-n", "6", "--mpi", "pmi2", "--map-by", map_by, client},
                         std::chrono::seconds(120));
    CHECK(run.exit_code == 0);
    INFO(run.out << run.err);
    // A node is a daemon: ranks share a node in the mapping exactly when
    // they share the node attribute their daemon's first rank put.
    std::regex line(
        R"(pmi2 rank (\d+)/6 appnum 0 spawned 0 jobid (\S+) host \S+ mapping (\S+): kvs ok leader (\d+))");
    std::map<int, std::string> leaders;
    std::set<std::string> mappings;
    for (auto it = std::sregex_iterator(run.out.begin(), run.out.end(), line);
         it != std::sregex_iterator(); ++it) {
      leaders[std::stoi((*it)[1])] = (*it)[4];
      mappings.insert((*it)[3]);
    }
    REQUIRE(leaders.size() == 6);
    REQUIRE(mappings.size() == 1);
    CHECK(mapping_matches(*mappings.begin(), leaders));
  }
  auto aborted = dvm.grove({"run", "-n", "2", "--mpi", "pmi2", client, "abort"});
  CHECK(aborted.exit_code != 0);
  CHECK_THAT(aborted.err, Catch::Contains("rank 0 called PMI2_Abort"));
  CHECK_THAT(aborted.err, Catch::Contains("rank 0 gives up"));
}

TEST_CASE("a PMI-1 spawn starts a job whose ranks read what their spawner put", "[pmi]") {
  const std::string raw = binary_from_env("GROVE_PMI_RAW_CLIENT");
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  auto run = dvm.grove({"run", "-n", "1", "/usr/bin/python3", raw, "spawn"});
  INFO(run.out << run.err);
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::Contains("rank 0: cmd=spawn_result rc=0"));
  for (int child : {0, 1}) {
    CHECK(std::regex_search(run.out, std::regex("rank " + std::to_string(child) +
                                                ": child of \\S+ spawned=1 size=2: cmd=get_result "
                                                "rc=0 msg=success value=port-of-rank-0")));
  }
}

TEST_CASE("a malformed or unknown PMI command costs its rank an error, never the daemon", "[pmi]") {
  const std::string raw = binary_from_env("GROVE_PMI_RAW_CLIENT");
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  auto garbage =
      dvm.grove({"run", "-n", "2", "--map-by", "node", "/usr/bin/python3", raw, "garbage"});
  CHECK(garbage.exit_code == 0);
  for (int rank : {0, 1}) {
    const std::string who = "rank " + std::to_string(rank) + ": ";
    CHECK_THAT(garbage.out, Catch::Contains(who + "cmd=error rc=-1 msg='this'_is_not_key=value"));
    CHECK_THAT(garbage.out, Catch::Contains(who + "closed"));
  }
  auto unknown = dvm.grove({"run", "-n", "1", "/usr/bin/python3", raw, "unknown"});
  CHECK(unknown.exit_code == 0);
  CHECK_THAT(unknown.out,
             Catch::Contains("rank 0: cmd=frobnicate_result rc=-1 msg=unknown_command_frobnicate"));
  CHECK_THAT(unknown.out, Catch::Contains("rank 0: cmd=appnum rc=0 appnum=0"));
  CHECK_THAT(unknown.out, Catch::Contains("rank 0: cmd=finalize_ack rc=0"));
  auto v2 = dvm.grove({"run", "-n", "1", "/usr/bin/python3", raw, "v2garbage"});
  CHECK(v2.exit_code == 0);
  CHECK_THAT(v2.out, Catch::Contains("rank 0: cmd=response_to_init rc=0 pmi_version=2"));
  CHECK_THAT(v2.out, Catch::Contains("errmsg=a PMI-2 command must start with its length"));
  // A rank that initialized and exits 0 without finalize ends its job.
  auto left = dvm.grove({"run", "-n", "1", "/usr/bin/python3", raw, "nofinalize"});
  CHECK(left.exit_code == 1);
  CHECK_THAT(left.err, Catch::Contains("rank 0 exited with status 0 without calling PMI_Finalize"));
  // The DVM is whole: a job on both daemons runs.
  auto after = dvm.grove({"run", "-n", "4", binary_from_env("GROVE_MPICH_CHECKS")},
                         std::chrono::seconds(120));
  CHECK(after.exit_code == 0);
  CHECK(mpich_ok(after.out, 4) == all_ranks(4));
  RunResult stopped = dvm.stop();
  CHECK(stopped.exit_code == 0);
  CHECK_THAT(dvm.controller().err(), Catch::Contains("sent a malformed command"));
  CHECK_THAT(dvm.controller().err(), Catch::Contains("unknown PMI-1 command 'frobnicate'"));
}
