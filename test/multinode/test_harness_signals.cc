// A test program that meson's timeout ends with SIGTERM must not leave its
// DVMs (controller, daemons, ranks) running: support/child_groups.h.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "dvm_harness.h"
#include "os/proc_stat.h"
#include "support/process_probe.h"
#include "support/wait.h"

using namespace grove::test;

namespace {

constexpr char kChildVariable[] = "GROVE_TEST_SIGNAL_CHILD";

std::vector<pid_t> pids_in(const std::string& line) {
  std::istringstream words(line);
  std::vector<pid_t> pids;
  for (pid_t pid; words >> pid;)
    pids.push_back(pid);
  return pids;
}

std::string cmdline_of(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/cmdline");
  return std::string(std::istreambuf_iterator<char>(file), {});
}

// A child of `parent` that runs parent's program without having exec'd and
// leads its own group: child_groups' escalation helper.
bool has_forked_helper(pid_t parent) {
  const std::string program = cmdline_of(parent);
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    const auto stat = grove::read_proc_stat(pid);
    if (stat && stat->parent == parent && stat->group == pid && cmdline_of(pid) == program)
      return true;
  }
  return false;
}

// The pids a child running one of the signal-child cases below prints
// ("holding: PID...") once it holds what it started.
std::vector<pid_t> held_by_child(BackgroundProcess& child) {
  REQUIRE(child.wait_for("holding:", std::chrono::seconds(90)));
  REQUIRE(child.wait_for("\n", std::chrono::seconds(5)));
  const std::string out = child.out();
  const auto start = out.find("holding:") + 8;
  return pids_in(out.substr(start, out.find('\n', start) - start));
}

}  // namespace

// Run by the test below as a program of its own; does nothing otherwise.
TEST_CASE("signal child: holds a DVM and a job until it is ended", "[.signal-child]") {
  if (std::getenv(kChildVariable) == nullptr) return;
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  BackgroundProcess job({grove_binary(), "run", "--dvm", std::to_string(dvm.controller().pid()),
                         "-n", "2", "sh", "-c", "echo rank-pid $$; exec sleep 300"},
                        {"TMPDIR=" + dvm.tmpdir()});
  REQUIRE(wait_until([&job] { return count_occurrences(job.out(), "rank-pid ") == 2; },
                     std::chrono::seconds(30), std::chrono::milliseconds(50)));
  std::string pids = std::to_string(dvm.controller().pid()) + " " + std::to_string(job.pid());
  const auto status = dvm.status();
  for (const auto& daemon : status["daemons"])
    pids += " " + std::to_string(daemon["pid"].get<int>());
  std::istringstream lines(job.out());
  for (std::string line; std::getline(lines, line);)
    if (auto at = line.find("rank-pid "); at != std::string::npos)
      pids += " " + line.substr(at + 9);
  std::printf("holding: %s\n", pids.c_str());
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::seconds(120));
  FAIL("was not ended within 120 s");
}

TEST_CASE("a test program ended by SIGTERM ends the DVM and job it started first", "[harness]") {
  BackgroundProcess child({"/proc/self/exe", "[.signal-child]"},
                          {std::string(kChildVariable) + "=1"});
  const auto pids = held_by_child(child);
  INFO(child.out());
  // The controller, `grove run`, two daemons and two ranks.
  REQUIRE(pids.size() == 6);
  for (pid_t pid : pids)
    REQUIRE_FALSE(ended(pid));

  // As meson's timeout does: SIGTERM to the test program alone.
  REQUIRE(kill(child.pid(), SIGTERM) == 0);
  CHECK(child.wait_exit(std::chrono::seconds(20)) == -1);  // died of the signal
  CHECK_FALSE(child.running());
  std::vector<pid_t> left = pids;
  wait_until(
      [&left] {
        std::erase_if(left, ended);
        return left.empty();
      },
      std::chrono::seconds(10), std::chrono::milliseconds(50));
  CHECK(left.empty());
  for (pid_t pid : left)
    kill(pid, SIGKILL);  // never leave one behind, even when the check fails
}

// Run by the test below as a program of its own; does nothing otherwise.
TEST_CASE("signal child: holds a group that ignores SIGTERM", "[.signal-child-deaf]") {
  if (std::getenv(kChildVariable) == nullptr) return;
  BackgroundProcess deaf({"/bin/sh", "-c", "trap '' TERM; echo deaf $$; exec sleep 300"}, {});
  REQUIRE(deaf.wait_for("deaf ", std::chrono::seconds(30)));
  REQUIRE(deaf.wait_for("\n", std::chrono::seconds(5)));
  std::printf("holding: %s", deaf.out().substr(5).c_str());
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::seconds(120));
  FAIL("was not ended within 120 s");
}

TEST_CASE("what a test program started ends even if meson SIGKILLs the program after its SIGTERM",
          "[harness]") {
  BackgroundProcess child({"/proc/self/exe", "[.signal-child-deaf]"},
                          {std::string(kChildVariable) + "=1"});
  const auto pids = held_by_child(child);
  INFO(child.out());
  REQUIRE(pids.size() == 1);
  const pid_t deaf = pids.front();
  REQUIRE_FALSE(ended(deaf));

  // meson's timeout: SIGTERM to the program's group, SIGKILL to it soon after
  // (0.5 s). Here as soon as the program has forked its helper, the worst
  // case, whatever the machine's load.
  REQUIRE(kill(-child.pid(), SIGTERM) == 0);
  CHECK(wait_until([&] { return has_forked_helper(child.pid()); }, std::chrono::seconds(10)));
  kill(-child.pid(), SIGKILL);
  CHECK(child.wait_exit(std::chrono::seconds(20)) == -1);
  // The group ignores SIGTERM: only the helper's SIGKILL, after three
  // seconds, ends it.
  CHECK(wait_until([deaf] { return ended(deaf); }, std::chrono::seconds(15)));
  kill(deaf, SIGKILL);  // never leave it behind, even when the check fails
}
