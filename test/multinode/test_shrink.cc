// grove shrink on a real DVM, as a user runs it: a daemon leaves, its vpid
// becomes a hole the trees route around, and the rest go on; one hosting
// ranks is refused (naming the job) unless --force ends that job first; a
// job fencing in a loop on other daemons is untouched while one leaves.
#include <catch2/catch.hpp>

#include <signal.h>

#include <fstream>
#include <string>
#include <vector>

#include "dvm_harness.h"
#include "support/temp_dir.h"
#include "support/wait.h"

using namespace grove::test;

TEST_CASE("grove shrink: a daemon with ranks is refused unless --force; the DVM goes on without it",
          "[dvm]") {
  Dvm dvm(4);
  REQUIRE(dvm.ready());
  const std::string host = dvm.status()["daemons"][2]["host"];
  const std::string daemon2 = "daemon 2 (" + host + ")";

  // Bad requests, each with its reason.
  RunResult nothing = dvm.grove({"shrink"});
  CHECK(nothing.exit_code == 1);
  CHECK_THAT(nothing.err, Catch::Contains("--host H[,H...] or --daemon N[,N...]"));
  RunResult controller = dvm.grove({"shrink", "--daemon", "0"});
  CHECK(controller.exit_code == 1);
  CHECK_THAT(controller.err, Catch::Contains("is the controller: it cannot leave"));
  RunResult beyond = dvm.grove({"shrink", "--daemon", "9"});
  CHECK(beyond.exit_code == 1);
  CHECK_THAT(beyond.err, Catch::Contains("this DVM has daemons 0 to 3"));
  RunResult garbled = dvm.grove({"shrink", "--daemon", "two"});
  CHECK(garbled.exit_code == 1);
  CHECK_THAT(garbled.err, Catch::Contains("expected daemon numbers"));

  // A job with a rank on every daemon: the shrink is refused, naming it.
  auto job = dvm.start_grove(
      {"run", "-n", "4", "--map-by", "node", "sh", "-c", "echo ready $PMIX_RANK; exec sleep 120"});
  for (int rank = 0; rank < 4; ++rank)
    REQUIRE(job->wait_for("ready " + std::to_string(rank), std::chrono::seconds(30)));
  const std::string nspace = dvm.status()["jobs"][0]["nspace"];
  RunResult refused = dvm.grove({"shrink", "--daemon", "2"});
  CHECK(refused.exit_code == 1);
  CHECK_THAT(refused.err, Catch::Contains(daemon2 + " hosts ranks of job 1 (" + nspace +
                                          "): give --force to end it first"));
  CHECK(dvm.daemon_state(2) == "up");

  // --force ends the job first, then the daemon leaves.
  RunResult forced = dvm.grove({"shrink", "--daemon", "2", "--force"}, std::chrono::seconds(60));
  INFO(forced.out << forced.err);
  CHECK(forced.exit_code == 0);
  CHECK_THAT(forced.out,
             Catch::Contains(daemon2 + " left the DVM") && Catch::Contains("3 daemons remain"));
  CHECK(job->wait_exit(std::chrono::seconds(30)) == 143);
  CHECK_THAT(job->err(),
             Catch::Contains("killed: " + daemon2 + " left the DVM (grove shrink --force)"));

  // Its vpid is a hole: removed, in the failed set every daemon adopted.
  nlohmann::json status = dvm.status();
  CHECK(status["daemons"][2]["state"] == "removed");
  CHECK(status["daemons"][2]["failure"] == "removed by grove shrink");
  CHECK(status["failed"] == nlohmann::json::array({2}));
  RunResult again = dvm.grove({"shrink", "--daemon", "2"});
  CHECK(again.exit_code == 1);
  CHECK_THAT(again.err, Catch::Contains(daemon2 + " is not in the DVM: removed"));

  // A PMIx job over the three left: no rank on daemon 2, its fences complete.
  RunResult after = dvm.grove({"run", "-n", "3", "--map-by", "node", "--display-map",
                               binary_from_env("GROVE_PMIX_FENCE_CLIENT"), "--rounds", "20"});
  INFO(after.out << after.err);
  CHECK(after.exit_code == 0);
  CHECK(count_occurrences(after.out, "20 rounds ok") == 3);
  CHECK_THAT(after.out + after.err, !Catch::Contains("daemon 2 "));

  RunResult stopped = dvm.stop();
  CHECK(stopped.exit_code == 0);
  INFO(dvm.controller().err());
  CHECK_THAT(dvm.controller().err(), !Catch::Contains("lost"));
}

TEST_CASE("a job fencing in a loop is untouched while a daemon it does not use leaves", "[dvm]") {
  Dvm dvm(4);
  REQUIRE(dvm.ready());
  TempDir files;
  const std::string go = files.path() + "/go";
  // Ranks on daemons 0 and 1 (one per daemon, in vpid order), 400 barriers.
  auto job = dvm.start_grove({"run", "-n", "2", "--map-by", "node",
                              binary_from_env("GROVE_PMIX_FENCE_CLIENT"), "--rounds", "400",
                              "--barrier", "--progress", "--wait-for", go});
  for (int rank = 0; rank < 2; ++rank)
    REQUIRE(
        job->wait_for("rank " + std::to_string(rank) + ": connected", std::chrono::seconds(60)));
  // The fences start, and daemon 3 leaves once ten have passed.
  std::ofstream(go).put('\n');
  REQUIRE(job->wait_for("rank 0: round 10 done", std::chrono::seconds(60)));
  RunResult shrunk = dvm.grove({"shrink", "--daemon", "3"});
  INFO(shrunk.out << shrunk.err);
  CHECK(shrunk.exit_code == 0);
  INFO(job->out() << job->err());
  CHECK(job->wait_exit(std::chrono::seconds(60)) == 0);
  CHECK(count_occurrences(job->out(), "400 rounds ok") == 2);
  CHECK(dvm.daemon_state(3) == "removed");
  CHECK(dvm.stop().exit_code == 0);
}

TEST_CASE("a forced shrink whose jobs cannot end in time goes on without them", "[dvm]") {
  // No heartbeats: a stopped daemon is never judged lost, and the exits of
  // its ranks never come while it is stopped.
  Dvm dvm(4, {"--mca", "daemon_heartbeat_ms", "0"});
  REQUIRE(dvm.ready());
  auto job = dvm.start_grove(
      {"run", "-n", "4", "--map-by", "node", "sh", "-c", "echo ready $PMIX_RANK; exec sleep 120"});
  for (int rank = 0; rank < 4; ++rank)
    REQUIRE(job->wait_for("ready " + std::to_string(rank), std::chrono::seconds(30)));
  const pid_t daemon2 = dvm.status()["daemons"][2]["pid"].get<int>();
  REQUIRE(kill(daemon2, SIGSTOP) == 0);
  struct Resume {
    pid_t pid;
    ~Resume() { kill(pid, SIGCONT); }
  } resume{daemon2};

  // The job's other ranks end at once; rank 2's exit cannot come. After the
  // drain's deadline (10 s) daemon 2 leaves anyway, its rank counted with it.
  RunResult forced = dvm.grove({"shrink", "--daemon", "2", "--force"}, std::chrono::seconds(60));
  INFO(forced.out << forced.err);
  CHECK(forced.exit_code == 0);
  CHECK_THAT(forced.out, Catch::Contains(" left the DVM") && Catch::Contains("3 daemons remain"));
  CHECK(job->wait_exit(std::chrono::seconds(30)) == 143);
  CHECK_THAT(dvm.controller().err(), Catch::Contains("did not end in 10 s; they leave anyway"));
  CHECK(dvm.status()["daemons"][2]["state"] == "removed");

  // Running again, it reads the removal waiting in its socket and leaves.
  REQUIRE(kill(daemon2, SIGCONT) == 0);
  CHECK(wait_until([&] { return kill(daemon2, 0) != 0; }, std::chrono::seconds(30),
                   std::chrono::milliseconds(50)));
  CHECK(dvm.stop().exit_code == 0);
}
