// Where mpirun users expect their ranks: the default binding, -c/pe=K for
// hybrid jobs, --rank-by, and -H/--hostfile on a running DVM and on one
// grove run starts. Through the CLI, as a user types them.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <thread>

#include "dvm_harness.h"

using namespace grove::test;

namespace {

// The CPUs the kernel lets the rank run on: "R LIST" lines by rank.
const char* kAllowedScript =
    "echo \"$GROVE_RANK $(grep Cpus_allowed_list /proc/self/status | cut -f2)\"";

std::map<int, std::string> allowed_by_rank(const std::string& out) {
  std::map<int, std::string> found;
  const std::regex line(R"((\d+) ([0-9,-]+)\n)");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line); it != std::sregex_iterator();
       ++it)
    found[std::stoi((*it)[1])] = (*it)[2];
  return found;
}

int host_cores(Dvm& dvm) {
  return dvm.status()["daemons"][0]["cores"].get<int>();
}

}  // namespace

TEST_CASE("without --bind-to, ranks are bound as mpirun binds them", "[run]") {
  Dvm dvm(1);
  REQUIRE(dvm.ready());
  const int cores = host_cores(dvm);
  REQUIRE(cores >= 2);  // these machines have two at least
  RunResult two = dvm.grove(
      {"run", "-n", "2", "--report-bindings", "--display-map", "sh", "-c", kAllowedScript});
  INFO(two.out << two.err);
  REQUIRE(two.exit_code == 0);
  CHECK_THAT(two.err, Catch::Contains("--bind-to core)"));
  CHECK(count_occurrences(two.err, "bound to core ") == 2);
  const auto allowed = allowed_by_rank(two.out);
  REQUIRE(allowed.size() == 2);
  CHECK(allowed.at(0) != allowed.at(1));
  // More ranks than cores: nobody is bound (they would share), as mpirun.
  RunResult over = dvm.grove(
      {"run", "-n", std::to_string(cores + 1), "--report-bindings", "--display-map", "true"});
  REQUIRE(over.exit_code == 0);
  CHECK_THAT(over.err, Catch::Contains("--bind-to none)"));
  CHECK(over.err.find("bound to") == std::string::npos);
  // --bind-to none opts out.
  RunResult none = dvm.grove({"run", "-n", "1", "--bind-to", "none", "--report-bindings", "true"});
  REQUIRE(none.exit_code == 0);
  CHECK(none.err.find("bound to") == std::string::npos);
}

TEST_CASE("a bound job takes the cores the DVM's running jobs leave free", "[run]") {
  Dvm dvm(1);
  REQUIRE(dvm.ready());
  REQUIRE(host_cores(dvm) >= 2);
  const std::string go = dvm.tmpdir() + "/first-may-end";
  BackgroundProcess first({grove_binary(), "run", "--dvm", std::to_string(dvm.controller().pid()),
                           "-n", "1", "--report-bindings", "sh", "-c",
                           "echo first-up; while [ ! -e " + go + " ]; do sleep 0.05; done"},
                          {"TMPDIR=" + dvm.tmpdir()});
  REQUIRE(first.wait_for("first-up", std::chrono::seconds(30)));
  RunResult second = dvm.grove({"run", "-n", "1", "--report-bindings", "true"});
  std::ofstream(go).put('\n');
  CHECK(first.wait_exit(std::chrono::seconds(30)) == 0);
  INFO(first.err() << second.err);
  CHECK_THAT(first.err(), Catch::Contains("rank 0 bound to core 0 "));
  CHECK_THAT(second.err, Catch::Contains("rank 0 bound to core 1 "));
}

TEST_CASE("-c K gives each rank K cores and OMP_NUM_THREADS=K", "[run]") {
  Dvm dvm(1);
  REQUIRE(dvm.ready());
  const int cores = host_cores(dvm);
  REQUIRE(cores >= 2);
  const std::string omp = "echo \"omp=$OMP_NUM_THREADS\"; " + std::string(kAllowedScript);
  RunResult job = dvm.grove(
      {"run", "-n", "1", "-c", "2", "--report-bindings", "--display-map", "sh", "-c", omp});
  INFO(job.out << job.err);
  REQUIRE(job.exit_code == 0);
  CHECK_THAT(job.out, Catch::Contains("omp=2\n"));
  CHECK_THAT(job.err, Catch::Contains("(--map-by slot:pe=2, --bind-to core)"));
  CHECK_THAT(job.err, Catch::Contains("rank 0 bound to cores 0-1 (cpus "));
  const auto allowed = allowed_by_rank(job.out);
  REQUIRE(allowed.size() == 1);
  CHECK(allowed.at(0).find_first_of(",-") != std::string::npos);  // two CPUs, not one
  // The user's OMP_NUM_THREADS stands; --map-by slot:pe=2 says the same as -c 2.
  RunResult own = dvm.grove(
      {"run", "-n", "1", "--map-by", "slot:pe=2", "--env", "OMP_NUM_THREADS=5", "sh", "-c", omp});
  REQUIRE(own.exit_code == 0);
  CHECK_THAT(own.out, Catch::Contains("omp=5\n"));
  // Each rank takes K slots: a rank per K cores without -n, and --bind-to
  // core refuses ranks whose cores the host does not have.
  RunResult filled = dvm.grove({"run", "-c", "2", "sh", "-c", "echo size=$GROVE_SIZE"});
  REQUIRE(filled.exit_code == 0);
  CHECK(count_occurrences(filled.out, "size=" + std::to_string(cores / 2) + "\n") ==
        static_cast<std::size_t>(cores / 2));
  RunResult refused = dvm.grove(
      {"run", "-n", std::to_string(cores / 2 + 1), "-c", "2", "--bind-to", "core", "true"});
  CHECK(refused.exit_code == 1);
  CHECK_THAT(refused.err, Catch::Contains("ranks of 2 cores each"));
  RunResult both = dvm.grove({"run", "-n", "1", "-c", "2", "--map-by", "slot:pe=2", "true"});
  CHECK(both.exit_code == 125);
  CHECK_THAT(both.err, Catch::Contains("give one"));
}

TEST_CASE("--rank-by node numbers the placed ranks round robin over the daemons", "[run]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  RunResult job = dvm.grove({"run", "-n", "4", "-N", "2", "--rank-by", "node", "--display-map",
                             "sh", "-c", "echo $GROVE_RANK:$GROVE_NODE_RANK"});
  INFO(job.out << job.err);
  REQUIRE(job.exit_code == 0);
  CHECK_THAT(job.err, Catch::Contains("daemon 0 (") && Catch::Contains("): ranks 0 2\n") &&
                          Catch::Contains("): ranks 1 3\n"));
  for (const char* line : {"0:0\n", "1:0\n", "2:1\n", "3:1\n"})
    CHECK_THAT(job.out, Catch::Contains(line));
  RunResult bad = dvm.grove({"run", "-n", "1", "--rank-by", "diagonal", "true"});
  CHECK(bad.exit_code == 125);
  CHECK_THAT(bad.err, Catch::Contains("--rank-by"));
}

TEST_CASE("-H and --hostfile choose the running DVM's hosts and their slots", "[run]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  RunResult nowhere = dvm.grove({"run", "-H", "nosuchhost", "-n", "1", "true"});
  CHECK(nowhere.exit_code == 1);
  CHECK(nowhere.out.empty());
  CHECK_THAT(nowhere.err, Catch::Contains("--host nosuchhost: no daemon of this DVM runs there"));
  // localhost:1: one slot of this host, which both daemons share.
  RunResult one = dvm.grove({"run", "-H", "localhost:1", "sh", "-c", "echo size=$GROVE_SIZE"});
  INFO(one.out << one.err);
  REQUIRE(one.exit_code == 0);
  CHECK(one.out == "size=1\n");
  RunResult refused =
      dvm.grove({"run", "-H", "localhost:1", "--nooversubscribe", "-n", "2", "true"});
  CHECK(refused.exit_code == 1);
  CHECK_THAT(refused.err, Catch::Contains("2 ranks are more than the 1 slots"));
  const std::string hostfile = dvm.tmpdir() + "/hosts";
  std::ofstream(hostfile) << "# mpirun's format\nlocalhost slots=3\n";
  RunResult three = dvm.grove({"run", "--hostfile", hostfile, "sh", "-c", "echo size=$GROVE_SIZE"});
  REQUIRE(three.exit_code == 0);
  CHECK(count_occurrences(three.out, "size=3\n") == 3);
  RunResult missing = dvm.grove({"run", "--hostfile", dvm.tmpdir() + "/none", "true"});
  CHECK(missing.exit_code == 125);
  CHECK_THAT(missing.err, Catch::Contains("/none"));
}

TEST_CASE("-H on a one-shot grove run makes the hosts of the DVM it starts", "[run]") {
  TempDir tmpdir;
  RunOptions options;
  options.extra_env = {tmpdir.env()};
  auto job = run_program({grove_binary(), "run", "-H", "localhost:3", "--display-map", "sh", "-c",
                          "echo size=$GROVE_SIZE"},
                         options);
  INFO(job.out << job.err);
  REQUIRE(job.exit_code == 0);
  CHECK(count_occurrences(job.out, "size=3\n") == 3);
  CHECK_THAT(job.err, Catch::Contains(", 3 slots): ranks 0 1 2\n"));
  auto both =
      run_program({grove_binary(), "run", "-H", "localhost", "--daemons", "2", "true"}, options);
  CHECK(both.exit_code == 125);
}

TEST_CASE("-- ends grove run's options: what follows is the program, whatever its name", "[run]") {
  Dvm dvm(1);
  REQUIRE(dvm.ready());
  RunResult plain =
      dvm.grove({"run", "-n", "1", "--bind-to", "none", "--", "echo", "a", "--", "b"});
  INFO(plain.err);
  CHECK(plain.exit_code == 0);
  CHECK(plain.out == "a -- b\n");
  // A program whose name starts with '-' is run (and here is not found),
  // not taken for an option.
  RunResult dashed = dvm.grove({"run", "-n", "1", "--", "-not-an-option"});
  CHECK(dashed.exit_code == 127);
  CHECK_THAT(dashed.err, Catch::Contains("cannot execute '-not-an-option'"));
  // After a repeatable option too (-x takes one value per use).
  RunResult exported = dvm.grove({"run", "-n", "1", "-x", "HOME", "--", "sh", "-c", "echo ok"});
  CHECK(exported.exit_code == 0);
  CHECK(exported.out == "ok\n");
  RunResult nothing = dvm.grove({"run", "-n", "1", "--"});
  CHECK(nothing.exit_code == 125);
  CHECK_THAT(nothing.err, Catch::Contains("no program given"));
}
