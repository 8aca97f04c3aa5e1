// PMIx_Spawn from a running job: the controller maps and launches the new
// job on the DVM (src/daemon/controller_spawn.cc), its ranks learn their
// parent (PMIX_PARENT_ID), its output reaches the spawning job's `grove run`,
// and that job ends after it, failing when it fails.
#include <catch2/catch.hpp>

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
  REQUIRE(std::regex_search(job.out, spawned, std::regex(R"(rank 1: spawned (\S+))")));
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
    CHECK_THAT(job.out, Catch::Contains(prefix + "spawned flag ok"));
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

TEST_CASE("a spawn of two programs at once is refused at once, not hung", "[pmix][spawn]") {
  Dvm dvm(1);
  REQUIRE(dvm.ready());
  auto job = dvm.grove({"run", "-n", "2", spawn_client(), "--scenario", "multiple"});
  INFO(job.out << job.err);
  CHECK(job.exit_code == 0);
  CHECK_THAT(job.out, Catch::Contains("rank 0: two programs refused ok"));
}
