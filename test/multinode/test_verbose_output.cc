// Verbose output as a user reads it: tags by name, heartbeats at a level of
// their own.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "dvm_harness.h"
#include "support/wait.h"

using namespace grove::test;

namespace {

// Waits until the controller has had an answered heartbeat from daemon 1.
bool heartbeat_answered(Dvm& dvm) {
  return wait_until(
      [&dvm] {
        RunResult tree = dvm.grove({"status", "--tree", "--json"});
        if (tree.exit_code != 0) return false;
        auto states = nlohmann::json::parse(tree.out)["tree_states"];
        return states["1"]["controller_rtt_us"].get<int>() > 0;
      },
      std::chrono::seconds(20), std::chrono::milliseconds(50));
}

}  // namespace

TEST_CASE("rml verbose lines name tags; heartbeats show only from level 5", "[dvm]") {
  for (const int level : {3, 5}) {
    Dvm dvm(2, {"--mca", "rml_base_verbose", std::to_string(level), "--mca", "daemon_heartbeat_ms",
                "50"});
    REQUIRE(dvm.ready());
    REQUIRE(heartbeat_answered(dvm));
    CHECK(dvm.grove({"run", "-n", "2", "--map-by", "node", "true"}).exit_code == 0);
    REQUIRE(dvm.stop().exit_code == 0);
    const std::string& log = dvm.controller().err();
    CHECK_THAT(log, Catch::Contains("RML-RECV from 1 tag job-exited topology routing"));
    CHECK_THAT(log, Catch::Contains("RML-SEND-DIRECT to 1 tag welcome"));
    CHECK((log.find("tag heartbeat") != std::string::npos) == (level >= 5));
  }
}

TEST_CASE("grove start --daemonize --verbose-to-terminal: the log comes to the terminal too",
          "[dvm]") {
  TempDir tmp("grove-verbose");
  BackgroundProcess start({grove_binary(), "start", "--local", "2", "--daemonize",
                           "--verbose-to-terminal", "--mca", "daemon_base_verbose", "1"},
                          {tmp.env()});
  REQUIRE(start.wait_for("grove: DVM ready: 2 daemons, controller pid ", std::chrono::seconds(60)));
  std::smatch pid_match;
  const std::string out = start.out();
  REQUIRE(std::regex_search(out, pid_match, std::regex(R"(controller pid (\d+))")));
  const pid_t controller = std::stoi(pid_match[1]);
  DaemonizedController guard(controller);  // whatever happens below

  CHECK(start.wait_for("daemon: DVM ready with 2 daemons", std::chrono::seconds(30)));
  RunOptions options;
  options.extra_env = {tmp.env()};
  RunResult stop =
      run_program({grove_binary(), "stop", "--dvm", std::to_string(controller)}, options);
  CHECK(stop.exit_code == 0);
  CHECK(start.wait_for("daemon: DVM stopped (grove stop)", std::chrono::seconds(30)));
  // The copier ends with the last writer: grove start's output closes.
  CHECK(start.wait_exit(std::chrono::seconds(30)) == 0);

  std::string log;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(tmp.path())) {
    if (entry.path().filename() == "dvm-" + std::to_string(controller) + ".log") {
      std::ifstream file(entry.path());
      log.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
    }
  }
  CHECK_THAT(log, Catch::Contains("daemon: DVM ready with 2 daemons") &&
                      Catch::Contains("daemon: DVM stopped (grove stop)"));
  CHECK(start.err() == log);  // the same lines, in the same order
}

TEST_CASE("grove run --verbose-to-terminal shows the log of the DVM it starts", "[dvm]") {
  TempDir tmp("grove-verbose-run");
  RunOptions options;
  options.extra_env = {tmp.env()};
  options.timeout = std::chrono::seconds(60);
  RunResult run = run_program({grove_binary(), "run", "--verbose-to-terminal", "--mca",
                               "daemon_base_verbose", "1", "-n", "2", "echo", "hi"},
                              options);
  CHECK(run.exit_code == 0);
  CHECK(run.out == "hi\nhi\n");
  // A job's start and end are logged at the default verbosity too.
  CHECK_THAT(run.err, Catch::Contains("jobs: job 1 (") && Catch::Contains(") ended after ") &&
                          Catch::Contains("daemon: DVM stopped (grove stop)") &&
                          Catch::Contains("grove: DVM stopped (1 daemon)\n"));
}

TEST_CASE("grove log prints a background DVM's log, by daemon, and follows it", "[dvm]") {
  TempDir tmp("grove-log");
  RunOptions options;
  options.extra_env = {tmp.env()};
  RunResult start = run_program(
      {grove_binary(), "start", "--local", "2", "--daemonize", "--mca", "daemon_base_verbose", "1"},
      options);
  DaemonizedController guard(controller_pid_in(start.out));
  REQUIRE(start.exit_code == 0);
  auto grove = [&](std::vector<std::string> args) {
    args.insert(args.begin(), grove_binary());
    return run_program(args, options);
  };
  RunResult status = grove({"status"});
  const std::string log_path = tmp.path() + "/grove-" + std::to_string(getuid()) + "/dvm-" +
                               std::to_string(controller_pid_in(start.out)) + ".log";
  CHECK_THAT(status.out, Catch::Contains("log: " + log_path + " (grove log prints it)\n"));
  REQUIRE(grove({"run", "-n", "2", "--map-by", "node", "true"}).exit_code == 0);

  RunResult all = grove({"log"});
  INFO(all.out << all.err);
  REQUIRE(all.exit_code == 0);
  CHECK_THAT(all.out, Catch::Contains("] ") && Catch::Contains("jobs: job 1 (") &&
                          Catch::Contains("started: 2 ranks on 2 daemons") &&
                          Catch::Contains("ended after ") && Catch::Contains("done, status 0"));
  CHECK_THAT(all.out, Catch::Contains("[groved vpid 1 "));
  RunResult daemon1 = grove({"log", "--daemon", "1"});
  REQUIRE(daemon1.exit_code == 0);
  CHECK_FALSE(daemon1.out.empty());
  std::istringstream lines(daemon1.out);
  for (std::string line; std::getline(lines, line);)
    CHECK(line.rfind("[groved vpid 1 ", 0) == 0);
  RunResult controller = grove({"log", "--daemon", "0"});
  CHECK(count_occurrences(controller.out, "jobs: job 1 (") == 2);
  CHECK(controller.out.find("[groved vpid") == std::string::npos);
  RunResult beyond = grove({"log", "--daemon", "2"});
  CHECK(beyond.exit_code == 1);
  CHECK_THAT(beyond.err, Catch::Contains("--daemon 2: the DVM has daemons 0 to 1"));

  // --follow prints what comes later and ends when the DVM stops.
  BackgroundProcess follow({grove_binary(), "log", "--follow", "--daemon", "0"}, {tmp.env()});
  REQUIRE(grove({"run", "-n", "1", "true"}).exit_code == 0);
  CHECK(follow.wait_for("jobs: job 2 (", std::chrono::seconds(30)));
  REQUIRE(grove({"stop"}).exit_code == 0);
  CHECK(follow.wait_exit(std::chrono::seconds(30)) == 0);
  CHECK_THAT(follow.out(), Catch::Contains("DVM stopped"));
}

TEST_CASE("grove log on a foreground DVM says its log is on that terminal", "[dvm]") {
  Dvm dvm(1);
  REQUIRE(dvm.ready());
  RunResult log = dvm.grove({"log"});
  CHECK(log.exit_code == 1);
  CHECK_THAT(log.err, Catch::Contains("writes its log to the terminal"));
  CHECK_THAT(dvm.grove({"status"}).out,
             Catch::Contains("log: the terminal of the grove start that runs it"));
}
