// --bind-to, --report-bindings, --display-map and --npernode as a user runs
// them: where the kernel lets each rank run, what PMIx tells it, what the
// CLI prints.
#include <catch2/catch.hpp>

#include <map>
#include <regex>
#include <sstream>

#include "dvm_harness.h"

using namespace grove::test;

namespace {

// "R value" lines of a job's output, by rank.
std::map<int, std::string> by_rank(const std::string& out, const std::regex& line) {
  std::map<int, std::string> found;
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line); it != std::sregex_iterator();
       ++it) {
    found[std::stoi((*it)[1])] = (*it)[2];
  }
  return found;
}

}  // namespace

TEST_CASE("--bind-to core binds each rank to a core of its host, round robin across daemons",
          "[run]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  RunResult job = dvm.grove({"run", "-n", "2", "--map-by", "node", "--bind-to", "core",
                             "--report-bindings", "--display-map", "sh", "-c",
                             "echo \"$PMIX_RANK $(grep Cpus_allowed_list /proc/self/status | cut "
                             "-f2)\""});
  INFO(job.out << job.err);
  REQUIRE(job.exit_code == 0);
  const auto allowed = by_rank(job.out, std::regex(R"((\d+) ([0-9,-]+)\n)"));
  const auto reported = by_rank(
      job.err, std::regex(R"(grove: rank (\d+) bound to core \d+ \(cpus ([0-9,-]+)\)[^\n]*\n)"));
  REQUIRE(allowed.size() == 2);
  CHECK(allowed == reported);  // what it says is what the kernel enforces
  // Two daemons of one host: their ranks are the host's ranks 0 and 1, on
  // different cores when there are two (this machine has at least two).
  CHECK(allowed.at(0) != allowed.at(1));
  CHECK_THAT(job.err, Catch::Contains("grove: job 1: 2 ranks on 2 daemons (--map-by node, "
                                      "--bind-to core)"));
  CHECK_THAT(job.err, Catch::Contains("grove:   daemon 0 (") && Catch::Contains("): ranks 0\n") &&
                          Catch::Contains("): ranks 1\n"));

  // Unbound, a rank may run wherever the job's caller may.
  RunResult unbound =
      dvm.grove({"run", "-n", "1", "--bind-to", "none", "sh", "-c",
                 "echo \"$PMIX_RANK $(grep Cpus_allowed_list /proc/self/status | cut -f2)\""});
  REQUIRE(unbound.exit_code == 0);
  CHECK(by_rank(unbound.out, std::regex(R"((\d+) ([0-9,-]+)\n)")).at(0) != allowed.at(0));
  CHECK(unbound.err.find("bound to") == std::string::npos);
}

TEST_CASE("a bound rank learns its cpuset and locality through PMIx", "[run]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  // -N: mpirun's spelling of --npernode.
  RunResult job = dvm.grove({"run", "-n", "2", "-N", "1", "--bind-to", "hwthread",
                             "--report-bindings", binary_from_env("GROVE_PMIX_KEY_DUMP")});
  INFO(job.out << job.err);
  REQUIRE(job.exit_code == 0);
  const auto cpusets =
      by_rank(job.out, std::regex(R"(rank (\d+): self pmix\.cpuset = ([^\n]+)\n)"));
  const auto reported = by_rank(
      job.err, std::regex(R"(grove: rank (\d+) bound to hwthread \d+ \(cpus ([0-9,-]+)\)\n)"));
  REQUIRE(cpusets.size() == 2);
  CHECK(cpusets == reported);
  CHECK(count_occurrences(job.out, "self pmix.locstr = ") == 2);
  CHECK(count_occurrences(job.out, "job pmix.bindto = hwthread") == 2);
  CHECK(count_occurrences(job.out, "job pmix.mapby = ppr:1:node") == 2);
}

TEST_CASE("--bind-to core refuses more ranks than a host's cores unless overload is allowed",
          "[run]") {
  // As mpirun: ranks bound to cores they would share are refused before
  // anything runs. Two daemons of one host: the host's cores count once.
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  const int cores = dvm.status()["daemons"][0]["cores"].get<int>();
  REQUIRE(cores >= 1);
  const std::string too_many = std::to_string(cores + 1);
  RunResult refused =
      dvm.grove({"run", "-n", too_many, "--map-by", "node", "--bind-to", "core", "echo", "ran"});
  CHECK(refused.exit_code == 1);
  CHECK(refused.out.empty());
  CHECK_THAT(refused.err, Catch::Contains("would bind " + too_many + " ranks to its " +
                                          std::to_string(cores) + " cores") &&
                              Catch::Contains("core:overload-allowed"));
  RunResult allowed = dvm.grove({"run", "-n", too_many, "--map-by", "node", "--bind-to",
                                 "core:overload-allowed", "--report-bindings", "echo", "ran"});
  INFO(allowed.out << allowed.err);
  CHECK(allowed.exit_code == 0);
  CHECK(count_occurrences(allowed.out, "ran") == static_cast<std::size_t>(cores + 1));
  CHECK(count_occurrences(allowed.err, "bound to core") == static_cast<std::size_t>(cores + 1));
  RunResult fits = dvm.grove(
      {"run", "-n", std::to_string(cores), "--map-by", "node", "--bind-to", "core", "true"});
  CHECK(fits.exit_code == 0);
}

TEST_CASE("binding and mapping options refuse what they cannot do", "[run]") {
  Dvm dvm(1);
  REQUIRE(dvm.ready());
  RunResult both = dvm.grove({"run", "-n", "1", "--npernode", "1", "--map-by", "node", "true"});
  CHECK(both.exit_code == 125);  // a usage error, before anything ran
  CHECK_THAT(both.err, Catch::Contains("excludes"));
  RunResult per_socket =
      dvm.grove({"run", "-n", "1", "--map-by", "ppr:1:socket", "--display-map", "true"});
  CHECK(per_socket.exit_code == 0);
  // One rank and no --bind-to: mpirun's default, a core.
  CHECK_THAT(per_socket.err, Catch::Contains("(--map-by ppr:1:socket, --bind-to core)"));
  RunResult beyond = dvm.grove({"run", "-n", "64", "--map-by", "ppr:1:socket", "true"});
  CHECK(beyond.exit_code == 1);
  CHECK_THAT(beyond.err, Catch::Contains("ranks on the sockets of 1 daemons; -n is 64"));
  RunResult bad = dvm.grove({"run", "-n", "1", "--bind-to", "numa", "true"});
  CHECK(bad.exit_code != 0);
  CHECK_THAT(bad.err, Catch::Contains("--bind-to"));
}
