// What the CLI takes for a running DVM: a controller that was killed is not
// one, even while it is a zombie nobody has reaped yet.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "dvm_harness.h"
#include "support/process_probe.h"
#include "support/wait.h"

using namespace grove::test;

namespace {

// Reaps `pid` (ours while we adopt orphans) once it has ended.
bool reaped(int pid) {
  return waitpid(pid, nullptr, WNOHANG) == pid || (kill(pid, 0) != 0 && errno == ESRCH);
}

}  // namespace

TEST_CASE("a DVM whose controller was killed is gone for the CLI before it is reaped", "[dvm]") {
  // The test adopts the DVM's orphans (a subreaper) and reaps the killed
  // controller only at the end, as an init that reaps late would.
  REQUIRE(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
  struct Unadopt {
    ~Unadopt() { prctl(PR_SET_CHILD_SUBREAPER, 0); }
  } unadopt;
  TempDir tmpdir;
  RunOptions options;
  options.extra_env = {tmpdir.env()};
  options.timeout = std::chrono::seconds(60);
  auto started = run_program({grove_binary(), "start", "--local", "2", "--daemonize"}, options);
  REQUIRE(started.exit_code == 0);
  const int killed = controller_pid_in(started.out);
  REQUIRE(killed > 0);
  DaemonizedController first_guard(killed);
  auto status = run_program({grove_binary(), "status", "--json"}, options);
  REQUIRE(status.exit_code == 0);
  const auto json = nlohmann::json::parse(status.out);
  const std::string session = json["session"];
  std::vector<int> daemons;
  for (const auto& daemon : json["daemons"])
    daemons.push_back(daemon["pid"].get<int>());

  REQUIRE(kill(killed, SIGKILL) == 0);
  REQUIRE(wait_until([&] { return state_of(killed) == 'Z'; }, std::chrono::seconds(30)));
  auto after = run_program({grove_binary(), "status"}, options);
  CHECK(after.exit_code == 1);
  CHECK_THAT(after.err, Catch::Contains("no running DVM"));
  // A new start is not refused, and clears the dead DVM's directory.
  auto again = run_program({grove_binary(), "start", "--local", "2", "--daemonize"}, options);
  CHECK(again.exit_code == 0);
  CHECK_THAT(again.out, Catch::Contains("DVM ready: 2 daemons"));
  CHECK_FALSE(std::filesystem::exists(session));
  CHECK(state_of(killed) == 'Z');  // the check above ran against the zombie
  const int second = controller_pid_in(again.out);
  DaemonizedController second_guard(second);
  if (second > 0) {
    CHECK(run_program({grove_binary(), "stop"}, options).exit_code == 0);
    CHECK(wait_until([&] { return reaped(second); }, std::chrono::seconds(30)));
  }
  CHECK(wait_until([&] { return reaped(killed); }, std::chrono::seconds(30)));
  // The killed controller's daemons leave without it.
  for (int pid : daemons)
    CHECK(wait_until([&] { return reaped(pid); }, std::chrono::seconds(30)));
  for (int pid : daemons)
    kill(pid, SIGKILL);  // whatever a failed check left
}
