// PMIx_Spawn from a running job: the controller maps and launches the new
// job on the DVM (src/daemon/controller_spawn.cc), its ranks learn their
// parent (PMIX_PARENT_ID), its output reaches the spawning job's `grove run`,
// and that job ends after it, failing when it fails.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>

#include "dvm_harness.h"

using namespace grove::test;

namespace {

std::string spawn_client() {
  return binary_from_env("GROVE_PMIX_SPAWN_CLIENT");
}

}  // namespace

TEST_CASE("a rank spawns a job whose ranks know their parent; the spawning job ends after it",
          "[pmix][spawn]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  // Rank 1 runs on the second daemon: its request travels to the controller.
  auto job = dvm.grove({"run", "-n", "2", "--map-by", "node", spawn_client(), "--scenario",
                        "parent", "--spawner", "1", "--np", "3"});
  INFO(job.out << job.err);
  REQUIRE(job.exit_code == 0);
  CHECK_THAT(job.out, Catch::Contains("rank 1: spawn ok"));
  std::smatch spawned;
  REQUIRE(std::regex_search(job.out, spawned, std::regex(R"((?:^|\n)rank 1: spawned (\S+))")));
  const std::string child = spawned[1];
  // The spawning rank exits right after its fence; the children's lines
  // reach the CLI only because the job waited for them.
  std::string parent;
  for (int rank = 0; rank < 3; ++rank) {
    std::smatch line;
    const std::regex pattern("child rank " + std::to_string(rank) + " of " + child +
                             R"(: parent (\S+) rank 1)");
    REQUIRE(std::regex_search(job.out, line, pattern));
    parent = line[1];
    const std::string prefix = "child rank " + std::to_string(rank) + ": ";
    CHECK_THAT(job.out, Catch::Contains(prefix + "PMIX_SPAWNED ok"));
    CHECK_THAT(job.out, Catch::Contains(prefix + "environment ok"));
    CHECK_THAT(job.out, Catch::Contains(prefix + "fence ok"));
  }
  CHECK(parent != child);
  CHECK(parent.rfind(child.substr(0, child.rfind('.')), 0) == 0);  // the same DVM's prefix
  // The DVM runs the next job as before.
  auto after = dvm.grove({"run", "-n", "2", "true"});
  CHECK(after.exit_code == 0);
}

TEST_CASE("a spawned job that fails fails the job that spawned it", "[pmix][spawn]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  auto job = dvm.grove({"run", "-n", "2", "--map-by", "node", spawn_client(), "--scenario",
                        "parent", "--np", "2", "--exit", "3"});
  INFO(job.out << job.err);
  CHECK(job.exit_code == 3);
  CHECK_THAT(job.err, Catch::Contains("spawned job") && Catch::Contains("exited with status 3"));
  CHECK_THAT(job.out, Catch::Contains("child rank 1: fence ok"));
}

TEST_CASE(
    "a spawn of two programs makes one job of two apps, each with its ranks, environment "
    "and directory",
    "[pmix][spawn]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  auto job = dvm.grove({"run", "-n", "2", spawn_client(), "--scenario", "multiple"});
  INFO(job.out << job.err);
  REQUIRE(job.exit_code == 0);
  CHECK_THAT(job.out, Catch::Contains("rank 0: spawn of two apps ok"));
  // The job-wide facts every rank reads, then each app's own.
  const std::string facts = ", 2 apps, job size 3, GROVE_APP=";
  const std::string own_cwd = std::filesystem::current_path().string();
  CHECK_THAT(job.out, Catch::Contains("app rank 0: appnum 0 app rank 0 of 2" + facts +
                                      "first, cwd " + own_cwd + "\n"));
  CHECK_THAT(job.out, Catch::Contains("app rank 1: appnum 0 app rank 1 of 2" + facts +
                                      "first, cwd " + own_cwd + "\n"));
  CHECK_THAT(job.out,
             Catch::Contains("app rank 2: appnum 1 app rank 0 of 1" + facts + "second, cwd /\n"));
  for (int rank = 0; rank < 3; ++rank)
    CHECK_THAT(job.out, Catch::Contains("app rank " + std::to_string(rank) + ": fence ok"));
}

TEST_CASE("ranks of two jobs connect, read each other's data, fence across both and disconnect",
          "[pmix][spawn]") {
  Dvm dvm(3);
  REQUIRE(dvm.ready());
  // Parents on daemons 0 and 1, children on 0, 1 and 2: daemon 2 hosts no
  // parent, so it learns the parents' job only through the connect.
  auto job = dvm.grove(
      {"run", "-n", "2", "--map-by", "node", spawn_client(), "--scenario", "connect", "--np", "3"});
  INFO(job.out << job.err);
  REQUIRE(job.exit_code == 0);
  for (int rank = 0; rank < 2; ++rank) {
    const std::string prefix = "rank " + std::to_string(rank) + ": ";
    CHECK_THAT(job.out, Catch::Contains(prefix + "connect ok"));
    CHECK_THAT(job.out, Catch::Contains(prefix + "rank 0 of the other job put child"));
    CHECK_THAT(job.out, Catch::Contains(prefix + "fence across both jobs ok"));
    CHECK_THAT(job.out, Catch::Contains(prefix + "disconnect ok"));
    CHECK_THAT(job.out, Catch::Contains(prefix + "the child job has 3 ranks"));
  }
  for (int rank = 0; rank < 3; ++rank) {
    const std::string prefix = "child rank " + std::to_string(rank) + ": ";
    CHECK_THAT(job.out, Catch::Contains(prefix + "rank 0 of the other job put parent"));
    CHECK_THAT(job.out, Catch::Contains(prefix + "fence across both jobs ok"));
    CHECK_THAT(job.out, Catch::Contains(prefix + "disconnect ok"));
  }
}

TEST_CASE("a fence across two jobs ends with an error for all when a rank of either has left",
          "[pmix][spawn]") {
  // The fence is named after the parents' job (the first nspace); the rank
  // that leaves is the children's. Before, the ranks-gone rule looked at
  // the named job only, so the others waited in the fence until the job was
  // killed, and when the children's job ended its fences were dropped
  // unanswered. Child rank 2 is on daemon 2, which hosts no parent.
  Dvm dvm(3);
  REQUIRE(dvm.ready());
  auto job = dvm.grove({"run", "-n", "2", "--map-by", "node", "--timeout", "30", spawn_client(),
                        "--scenario", "connect", "--np", "3", "--leaver", "2"});
  INFO(job.out << job.err);
  REQUIRE(job.exit_code == 0);
  CHECK_THAT(job.out, Catch::Contains("child rank 2: leave ok"));
  for (int rank = 0; rank < 2; ++rank) {
    const std::string prefix = "rank " + std::to_string(rank) + ": ";
    CHECK_THAT(job.out, Catch::Contains(prefix + "connect ok"));
    CHECK_THAT(job.out, Catch::Contains(prefix + "fence across both jobs refused ok"));
  }
  for (int rank = 0; rank < 2; ++rank) {
    const std::string prefix = "child rank " + std::to_string(rank) + ": ";
    CHECK_THAT(job.out, Catch::Contains(prefix + "fence across both jobs refused ok"));
  }
}

TEST_CASE("MPI_Comm_spawn: the children know their parent, share a barrier and disconnect",
          "[pmix][spawn][mpi]") {
  const char* program = std::getenv("GROVE_MPI_SPAWN");
  if (program == nullptr) {
    WARN("Open MPI is not installed: skipped");
    return;
  }
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  auto job = dvm.grove({"run", "-n", "2", "--map-by", "node", program});
  INFO(job.out << job.err);
  REQUIRE(job.exit_code == 0);
  CHECK_THAT(job.out, Catch::Contains("parent rank 0: spawn rc=0"));
  CHECK_THAT(job.out, Catch::Contains("parent rank 1: spawn rc=0"));
  CHECK_THAT(job.out, Catch::Contains("child rank 0 of 2: parent size 2"));
  CHECK_THAT(job.out, Catch::Contains("child rank 1 of 2: parent size 2"));
}

TEST_CASE("MPI_Comm_spawn_multiple: one child job of two commands, each rank knowing its appnum",
          "[pmix][spawn][mpi]") {
  const char* program = std::getenv("GROVE_MPI_SPAWN");
  if (program == nullptr) {
    WARN("Open MPI is not installed: skipped");
    return;
  }
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  auto job = dvm.grove({"run", "-n", "2", "--map-by", "node", program, "--multiple"});
  INFO(job.out << job.err);
  REQUIRE(job.exit_code == 0);
  CHECK_THAT(job.out, Catch::Contains("parent rank 0: spawn rc=0"));
  CHECK_THAT(job.out, Catch::Contains("parent rank 1: spawn rc=0"));
  for (int rank = 0; rank < 3; ++rank) {
    CHECK_THAT(job.out,
               Catch::Contains("child rank " + std::to_string(rank) + " of 3: parent size 2"));
  }
  CHECK_THAT(job.out, Catch::Contains("child rank 0: appnum 0 argument first"));
  CHECK_THAT(job.out, Catch::Contains("child rank 1: appnum 0 argument first"));
  CHECK_THAT(job.out, Catch::Contains("child rank 2: appnum 1 argument second"));
}
