// grove ps and grove kill as a user runs them, against jobs of a real DVM.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "dvm_harness.h"
#include "support/process_probe.h"
#include "support/wait.h"

using namespace grove::test;

namespace {

BackgroundProcess run_in_background(Dvm& dvm, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {grove_binary(), "run", "--dvm",
                                   std::to_string(dvm.controller().pid())};
  argv.insert(argv.end(), args.begin(), args.end());
  return BackgroundProcess(argv, {"TMPDIR=" + dvm.tmpdir()});
}

nlohmann::json jobs_of(Dvm& dvm) {
  RunResult listed = dvm.grove({"ps", "--json"});
  REQUIRE(listed.exit_code == 0);
  return nlohmann::json::parse(listed.out);
}

}  // namespace

TEST_CASE("grove ps lists a DVM's jobs; grove kill signals one or ends it", "[run]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  RunResult none = dvm.grove({"ps"});
  CHECK(none.exit_code == 0);
  CHECK(none.out == "no running jobs\n");

  // The trap is set before "ready": a signal after it reaches the trap.
  const std::string trapping =
      "trap 'echo got USR1 $PMIX_RANK' USR1; echo ready $PMIX_RANK; "
      "while :; do sleep 0.05; done";
  {
    auto job = run_in_background(dvm, {"-n", "2", "--map-by", "node", "sh", "-c", trapping});
    REQUIRE(job.wait_for("ready 0", std::chrono::seconds(30)));
    REQUIRE(job.wait_for("ready 1", std::chrono::seconds(30)));

    nlohmann::json jobs = jobs_of(dvm);
    REQUIRE(jobs.size() == 1);
    CHECK(jobs[0]["job"] == 1);
    CHECK(jobs[0]["state"] == "running");
    CHECK(jobs[0]["np"] == 2);
    CHECK(jobs[0]["daemons"] == 2);
    CHECK(jobs[0]["ranks_running"] == 2);
    CHECK_THAT(jobs[0]["command"].get<std::string>(), Catch::StartsWith("sh -c 'trap '\\''echo"));
    CHECK_FALSE(jobs[0].contains("ended"));
    RunResult table = dvm.grove({"jobs"});  // the alias
    CHECK(table.exit_code == 0);
    CHECK_THAT(table.out, Catch::Contains("running") && Catch::Contains("sh -c 'trap"));
    CHECK(dvm.status()["jobs"].size() == 1);

    // A namespace names its DVM: another DVM's job 1 is not this one.
    const std::string nspace = jobs[0]["nspace"];
    const std::string elsewhere = "grove-elsewhere-x" + nspace.substr(nspace.rfind('.'));
    RunResult wrong = dvm.grove({"kill", elsewhere, "--signal", "usr1"});
    CHECK(wrong.exit_code == 1);
    CHECK_THAT(wrong.err, Catch::Contains("no job with namespace '" + elsewhere + "'"));

    // A signal alone leaves the job running: its ranks trap it and go on.
    RunResult signalled = dvm.grove({"kill", nspace, "--signal", "usr1"});
    CHECK(signalled.exit_code == 0);
    CHECK_THAT(signalled.out, Catch::Contains("SIGUSR1 sent to the ranks of job 1"));
    CHECK(job.wait_for("got USR1 0", std::chrono::seconds(30)));
    CHECK(job.wait_for("got USR1 1", std::chrono::seconds(30)));
    jobs = jobs_of(dvm);
    REQUIRE(jobs.size() == 1);
    CHECK(jobs[0]["state"] == "running");
    CHECK(jobs[0]["ranks_running"] == 2);

    RunResult killed = dvm.grove({"kill", "1"});
    CHECK(killed.exit_code == 0);
    CHECK(job.wait_exit(std::chrono::seconds(30)) == 143);
    CHECK_THAT(job.err(), Catch::Contains("grove: job 1: killed by grove kill"));
  }
  nlohmann::json jobs = jobs_of(dvm);
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0]["state"] == "killed");
  CHECK(jobs[0]["status"] == 143);
  CHECK(jobs[0]["ranks_running"] == 0);
  CHECK(jobs[0].contains("ended"));
  CHECK_THAT(dvm.grove({"ps"}).out,
             Catch::Contains("no running jobs (1 ended: grove ps --all lists them)"));

  CHECK(dvm.grove({"run", "-n", "1", "sh", "-c", "exit 3"}).exit_code == 3);
  CHECK(dvm.grove({"run", "-n", "1", "true"}).exit_code == 0);
  jobs = jobs_of(dvm);
  REQUIRE(jobs.size() == 3);
  CHECK(jobs[1]["state"] == "failed");
  CHECK(jobs[1]["status"] == 3);
  CHECK(jobs[2]["state"] == "done");
  CHECK(jobs[2]["status"] == 0);
  RunResult all = dvm.grove({"ps", "--all"});
  CHECK(all.exit_code == 0);
  CHECK_THAT(all.out, Catch::Contains("killed") && Catch::Contains("143") &&
                          Catch::Contains("failed") && Catch::Contains("done"));

  RunResult unknown = dvm.grove({"kill", "9"});
  CHECK(unknown.exit_code == 1);
  CHECK_THAT(unknown.err, Catch::Contains("no running job 9"));
  RunResult bad_signal = dvm.grove({"kill", "1", "--signal", "BOGUS"});
  CHECK(bad_signal.exit_code == 1);
  CHECK_THAT(bad_signal.err, Catch::Contains("unknown signal 'BOGUS'"));
  RunResult bad_job = dvm.grove({"kill", "one"});
  CHECK(bad_job.exit_code == 1);
  CHECK_THAT(bad_job.err, Catch::Contains("'one' is not a job"));
}

namespace {

bool signal_pending(pid_t pid, int signal) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("ShdPnd:", 0) == 0)
      return (std::stoull(line.substr(7), nullptr, 16) >> (signal - 1) & 1) != 0;
  }
  return false;
}

}  // namespace

TEST_CASE("a job grove kill stopped stays stopped through other signals until CONT", "[run]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  const std::string trapping =
      "trap 'echo got USR1 $PMIX_RANK' USR1; trap 'echo got USR2 $PMIX_RANK' USR2; "
      "echo ready $PMIX_RANK $$; while :; do sleep 0.05; done";
  auto job = run_in_background(dvm, {"-n", "2", "--map-by", "node", "sh", "-c", trapping});
  REQUIRE(job.wait_for("ready 0 ", std::chrono::seconds(30)));
  REQUIRE(job.wait_for("ready 1 ", std::chrono::seconds(30)));
  std::vector<pid_t> ranks;
  for (const std::string tag : {"ready 0 ", "ready 1 "}) {
    // The pid is read once its line is whole: output may arrive mid-line.
    auto whole = [&] {
      const std::string out = job.out();
      const auto at = out.find(tag);
      return at != std::string::npos && out.find('\n', at) != std::string::npos;
    };
    REQUIRE(wait_until(whole, std::chrono::seconds(30)));
    const std::string out = job.out();
    ranks.push_back(std::stoi(out.substr(out.find(tag) + tag.size())));
  }

  REQUIRE(dvm.grove({"kill", "1", "--signal", "STOP"}).exit_code == 0);
  for (pid_t rank : ranks)
    REQUIRE(wait_until([rank] { return state_of(rank) == 'T'; }, std::chrono::seconds(30)));
  // Each signal waits in the stopped ranks, as under kill(1). The daemons
  // handle one request after another, so once USR2 is pending the USR1
  // request is over: a SIGCONT after it would have shown by then.
  REQUIRE(dvm.grove({"kill", "1", "--signal", "USR1"}).exit_code == 0);
  REQUIRE(dvm.grove({"kill", "1", "--signal", "USR2"}).exit_code == 0);
  for (pid_t rank : ranks) {
    REQUIRE(wait_until([rank] { return signal_pending(rank, SIGUSR2); }, std::chrono::seconds(30)));
    CHECK(signal_pending(rank, SIGUSR1));
    CHECK(state_of(rank) == 'T');
  }
  CHECK(job.out().find("got USR") == std::string::npos);
  CHECK(jobs_of(dvm)[0]["state"] == "running");

  // CONT lets them run on, and the waiting signals reach their traps.
  REQUIRE(dvm.grove({"kill", "1", "--signal", "CONT"}).exit_code == 0);
  for (const char* line : {"got USR1 0", "got USR1 1", "got USR2 0", "got USR2 1"})
    CHECK(job.wait_for(line, std::chrono::seconds(30)));

  // Stopped again, a plain grove kill still ends the job (TERM, then CONT).
  REQUIRE(dvm.grove({"kill", "1", "--signal", "TSTP"}).exit_code == 0);
  for (pid_t rank : ranks)
    REQUIRE(wait_until([rank] { return state_of(rank) == 'T'; }, std::chrono::seconds(30)));
  REQUIRE(dvm.grove({"kill", "1"}).exit_code == 0);
  CHECK(job.wait_exit(std::chrono::seconds(30)) == 143);
}

TEST_CASE("grove ps counts a rank as running once its program runs and not from its launch",
          "[run]") {
  // No heartbeats: the daemon held stopped below must not be declared lost.
  Dvm dvm(2, {"--mca", "daemon_heartbeat_ms", "0"});
  REQUIRE(dvm.ready());
  pid_t held = 0;
  const nlohmann::json status = dvm.status();
  for (const auto& daemon : status["daemons"]) {
    if (daemon["vpid"].get<int>() != 0) held = daemon["pid"].get<pid_t>();
  }
  REQUIRE(held > 0);
  // The daemon hosting one rank is stopped: it gets the launch but cannot
  // fork until it is let go. Let go whatever the checks below find.
  REQUIRE(kill(held, SIGSTOP) == 0);
  struct Resume {
    pid_t pid;
    ~Resume() { kill(pid, SIGCONT); }
  } resume{held};
  REQUIRE(wait_until([held] { return state_of(held) == 'T'; }, std::chrono::seconds(30)));

  auto job = run_in_background(
      dvm, {"-n", "2", "--map-by", "node", "sh", "-c", "echo ready $PMIX_RANK; exec sleep 60"});
  REQUIRE(job.wait_for("ready ", std::chrono::seconds(30)));
  nlohmann::json jobs = jobs_of(dvm);
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0]["np"] == 2);
  CHECK(jobs[0]["state"] == "running");
  CHECK(jobs[0]["ranks_running"] == 1);  // the stopped daemon's rank has not started

  kill(held, SIGCONT);
  CHECK(
      wait_until([&] { return jobs_of(dvm)[0]["ranks_running"] == 2; }, std::chrono::seconds(30)));
  CHECK(job.wait_for("ready 0", std::chrono::seconds(30)));
  CHECK(job.wait_for("ready 1", std::chrono::seconds(30)));
  REQUIRE(dvm.grove({"kill", "1"}).exit_code == 0);
  CHECK(job.wait_exit(std::chrono::seconds(30)) == 143);
  CHECK(jobs_of(dvm)[0]["ranks_running"] == 0);
}
