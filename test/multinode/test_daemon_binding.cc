// Daemons of a local DVM each on a CPU of their own (daemon_bind_local), and
// ranks started with every CPU the daemon was given.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <sched.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "dvm_harness.h"

using namespace grove;
using namespace grove::test;

namespace {

std::vector<pid_t> threads_of(int pid) {
  std::vector<pid_t> tids;
  DIR* tasks = opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
  if (tasks == nullptr) return tids;
  while (dirent* entry = readdir(tasks)) {
    if (entry->d_name[0] != '.') tids.push_back(static_cast<pid_t>(std::stol(entry->d_name)));
  }
  closedir(tasks);
  return tids;
}

cpu_set_t affinity_of(pid_t tid) {
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(tid, sizeof set, &set) == 0);
  return set;
}

// The n-th CPU (round robin) of a set.
int nth_cpu(const cpu_set_t& set, int n) {
  n %= CPU_COUNT(&set);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set) && n-- == 0) return cpu;
  }
  return -1;
}

std::string own_cpus_allowed_line() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Cpus_allowed_list:", 0) == 0) return line;
  }
  return {};
}

}  // namespace

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
      cpu_set_t set = affinity_of(tid);
      INFO("thread " << tid);
      CHECK(CPU_COUNT(&set) == 1);
      CHECK(CPU_ISSET(nth_cpu(mine, vpid), &set));
    }
  }
  // Ranks: forked by bound daemons, started with the whole set again.
  auto run = dvm.grove({"run", "-n", "4", "--map-by", "node", "sh", "-c",
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
