// Daemons of a local DVM each on a CPU of their own (daemon_bind_local), and
// ranks started with every CPU the daemon was given.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "dvm_harness.h"
#include "support/cpu_affinity.h"

using namespace grove;
using namespace grove::test;

TEST_CASE("a local DVM binds each daemon to a CPU of its own; its ranks get every CPU",
          "[dvm][binding]") {
  const cpu_set_t mine = affinity_of(0);
  if (CPU_COUNT(&mine) < 2) {
    WARN("this process may run on one CPU only: nothing to bind apart");
    return;
  }
  Dvm dvm(4);
  REQUIRE(dvm.ready());
  auto status = dvm.status();
  REQUIRE(status["daemons"].size() == 4);
  for (const auto& daemon : status["daemons"]) {
    const int vpid = daemon["vpid"].get<int>();
    const int pid = daemon["pid"].get<int>();
    const auto tids = threads_of(pid);
    INFO("vpid " << vpid << " pid " << pid);
    REQUIRE(tids.size() >= 2);  // the loop and libpmix's: every thread, not only the first
    for (pid_t tid : tids) {
      const cpu_set_t set = affinity_of(tid);
      INFO("thread " << tid);
      CHECK(CPU_COUNT(&set) == 1);
      CHECK(CPU_ISSET(nth_cpu(mine, vpid), &set));
    }
  }
  // Ranks: forked by bound daemons, started with the whole set again.
  auto run = dvm.grove({"run", "-n", "4", "--map-by", "node", "--bind-to", "none", "sh", "-c",
                        "grep Cpus_allowed_list /proc/self/status"});
  REQUIRE(run.exit_code == 0);
  const std::string expected = own_cpus_allowed_line();
  REQUIRE_FALSE(expected.empty());
  std::size_t lines = 0;
  std::istringstream out(run.out);
  for (std::string line; std::getline(out, line); ++lines)
    CHECK(line == expected);
  CHECK(lines == 4);
}

TEST_CASE("daemon_bind_local false leaves every daemon thread on every CPU", "[dvm][binding]") {
  const cpu_set_t mine = affinity_of(0);
  Dvm dvm(3, {"--mca", "daemon_bind_local", "false"});
  REQUIRE(dvm.ready());
  const auto status = dvm.status();
  REQUIRE(status["daemons"].size() == 3);
  for (const auto& daemon : status["daemons"]) {
    for (pid_t tid : threads_of(daemon["pid"].get<int>())) {
      cpu_set_t set = affinity_of(tid);
      CHECK(CPU_EQUAL(&set, &mine));
    }
  }
}
