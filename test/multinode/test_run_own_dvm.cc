// The DVM `grove run` starts for its own job (none running) belongs to that
// job: another `grove run` does not use it, `grove start` does not count it,
// and it ends with its `grove run`, even one killed by SIGKILL.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dvm_harness.h"
#include "support/process_probe.h"
#include "support/wait.h"

using namespace grove::test;

namespace {

// The controllers with a session directory under `tmpdir`, and how many of
// them carry the one-job mark.
std::pair<std::vector<int>, int> controllers_in(const TempDir& tmpdir) {
  std::vector<int> pids;
  int one_job = 0;
  const auto base = tmpdir.path() + "/grove-" + std::to_string(getuid());
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(base, error)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || name.rfind("dvm-", 0) != 0) continue;
    pids.push_back(std::stoi(name.substr(4)));
    one_job += std::filesystem::exists(entry.path() / "one-job") ? 1 : 0;
  }
  return {pids, one_job};
}

// A job that says it is up and runs until `file` exists.
std::vector<std::string> run_until(const std::string& name, const std::string& file) {
  return {grove_binary(),
          "run",
          "-n",
          "1",
          "sh",
          "-c",
          "echo " + name + "-up; while [ ! -e " + file + " ]; do sleep 0.05; done; echo " + name +
              "-done"};
}

}  // namespace

TEST_CASE("grove run does not use another grove run's own DVM", "[run]") {
  TempDir tmpdir;
  const std::string a_may_end = tmpdir.path() + "/a-may-end";
  const std::string b_may_end = tmpdir.path() + "/b-may-end";
  BackgroundProcess a(run_until("A", a_may_end), {tmpdir.env()});
  REQUIRE(a.wait_for("A-up", std::chrono::seconds(60)));
  BackgroundProcess b(run_until("B", b_may_end), {tmpdir.env()});
  REQUIRE(b.wait_for("B-up", std::chrono::seconds(60)));
  // Each started a DVM of its own, marked as such.
  const auto [controllers, one_job] = controllers_in(tmpdir);
  CHECK(controllers.size() == 2);
  CHECK(one_job == 2);

  // Neither is in the way of a DVM started on purpose, which the next
  // grove run then uses (it starts none: no "DVM stopped" after its job).
  RunOptions options;
  options.extra_env = {tmpdir.env()};
  options.timeout = std::chrono::seconds(60);
  auto started = run_program({grove_binary(), "start", "--local", "2", "--daemonize"}, options);
  CHECK(started.exit_code == 0);
  DaemonizedController shared_guard(controller_pid_in(started.out));
  auto on_shared = run_program({grove_binary(), "run", "-n", "2", "true"}, options);
  CHECK(on_shared.exit_code == 0);
  CHECK_THAT(on_shared.err, !Catch::Contains("DVM stopped"));
  CHECK(run_program({grove_binary(), "stop"}, options).exit_code == 0);

  // A ends first and stops its DVM; B's job, on its own DVM, goes on.
  std::ofstream(a_may_end).put('\n');
  CHECK(a.wait_exit(std::chrono::seconds(60)) == 0);
  CHECK_THAT(a.out(), Catch::Contains("A-done"));
  CHECK_THAT(a.err(), Catch::Contains("DVM stopped"));
  CHECK(b.running());
  std::ofstream(b_may_end).put('\n');
  CHECK(b.wait_exit(std::chrono::seconds(60)) == 0);
  CHECK_THAT(b.out(), Catch::Contains("B-done"));
  CHECK_THAT(b.err(), Catch::Contains("DVM stopped"));
}

TEST_CASE("grove run's own DVM ends with it when it is killed by SIGKILL", "[run]") {
  TempDir tmpdir;
  BackgroundProcess run({grove_binary(), "run", "-n", "2", "--daemons", "2", "--map-by", "node",
                         "sh", "-c", "echo rank-pid $$; exec sleep 300"},
                        {tmpdir.env()});
  REQUIRE(run.wait_for("rank-pid", std::chrono::seconds(60)));
  REQUIRE(wait_until([&] { return count_occurrences(run.out(), "rank-pid ") == 2; },
                     std::chrono::seconds(30)));
  std::vector<int> pids = controllers_in(tmpdir).first;
  REQUIRE(pids.size() == 1);
  const std::string out = run.out();
  for (auto at = out.find("rank-pid "); at != std::string::npos; at = out.find("rank-pid ", at + 1))
    pids.push_back(std::stoi(out.substr(at + 9)));
  REQUIRE(pids.size() == 3);

  REQUIRE(kill(run.pid(), SIGKILL) == 0);
  for (int pid : pids)
    CHECK(wait_until([pid] { return ended(pid); }, std::chrono::seconds(30)));
  for (int pid : pids)
    kill(pid, SIGKILL);  // whatever a failed check left
}

TEST_CASE("a one-shot grove run leaves nothing behind unless it failed, then its DVM's log",
          "[run]") {
  TempDir tmpdir;
  RunOptions options;
  options.extra_env = {tmpdir.env()};
  const auto base = tmpdir.path() + "/grove-" + std::to_string(getuid());
  auto left = [&base] {
    std::vector<std::string> names;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(base, error))
      names.push_back(entry.path().filename().string());
    return names;
  };
  auto ok = run_program({grove_binary(), "run", "-n", "2", "true"}, options);
  CHECK(ok.exit_code == 0);
  CHECK(ok.err.find("log") == std::string::npos);
  const auto after_ok = left();
  INFO("left: " << after_ok.size() << (after_ok.empty() ? "" : " " + after_ok.front()));
  CHECK(after_ok.empty());
  // A failed job keeps the DVM's log, which says what ran and how it ended.
  auto missing = run_program({grove_binary(), "run", "-n", "1", "/nonexistent/program"}, options);
  CHECK(missing.exit_code == 127);
  const auto after_failure = left();
  REQUIRE(after_failure.size() == 1);
  const std::string log = base + "/" + after_failure.front();
  CHECK_THAT(
      missing.err,
      Catch::Contains("grove: the log of the DVM started for this job is kept: " + log + "\n"));
  std::ifstream file(log);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  CHECK_THAT(text, Catch::Contains("jobs: job 1 (") &&
                       Catch::Contains("started: 1 ranks on 1 daemons") &&
                       Catch::Contains("ended after ") && Catch::Contains("failed, status 127"));
}
