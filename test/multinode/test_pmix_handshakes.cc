// A connection to a PMIx port that never sends its handshake must hold up
// no job. libpmix 4.2 reads a handshake with a blocking receive on its
// progress thread; before the handshake watchdog one idle connection from
// `nobody` lost a daemon in 5 s (its loop waited on a registration while its
// heartbeats went unsent) and froze a running job's fences until the
// stranger left. The stranger here is pmix_fence_client
// --stall-in-handshake run by hand: it connects, sends nothing, and reports
// whether the server closed the connection.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>

#include "dvm_harness.h"

using namespace grove::test;

namespace {

// Every daemon's PMIx port, by vpid, as one rank per daemon sees it.
std::map<int, std::string> pmix_ports(Dvm& dvm, int daemons) {
  auto job = dvm.grove({"run", "-n", std::to_string(daemons), "--map-by", "node", "sh", "-c",
                        "echo \"$PMIX_RANK ${PMIX_SERVER_URI4##*:}\""});
  REQUIRE(job.exit_code == 0);
  std::map<int, std::string> ports;
  std::istringstream lines(job.out);
  int rank = 0;
  std::string port;
  while (lines >> rank >> port)
    ports[rank] = port;
  REQUIRE(ports.size() == static_cast<std::size_t>(daemons));
  return ports;
}

// An idle connection to `port` from `uid` (the test's own when it is ours).
std::unique_ptr<BackgroundProcess> stranger(const std::string& client, const std::string& port,
                                            uid_t uid) {
  std::vector<std::string> argv;
  if (uid != geteuid()) {
    argv = {"/usr/bin/setpriv", "--reuid=" + std::to_string(uid), "--regid=" + std::to_string(uid),
            "--clear-groups"};
  }
  argv.insert(argv.end(), {client, "--stall-in-handshake", "0"});
  return std::make_unique<BackgroundProcess>(
      argv,
      std::vector<std::string>{"PMIX_RANK=0", "PMIX_SERVER_URI4=grove;tcp4://127.0.0.1:" + port});
}

}  // namespace

TEST_CASE("another user's idle connection to a PMIx port holds up no job, before or during it",
          "[pmix]") {
  if (geteuid() != 0) {
    WARN("skipped: connecting as another user needs root");
    return;
  }
  TempDir files("grove-idle-stranger");
  chmod(files.path().c_str(), 0755);
  const std::string client =
      copy_for_everyone(binary_from_env("GROVE_PMIX_FENCE_CLIENT"), files.path());
  Dvm dvm(4);
  REQUIRE(dvm.ready());
  const std::map<int, std::string> ports = pmix_ports(dvm, 4);

  // Before the job, at a daemon's port: the job's ranks there connect and
  // fence as if nothing were there.
  auto first = stranger(client, ports.at(1), 65534);
  REQUIRE(first->wait_for("stalling in the handshake", std::chrono::seconds(30)));
  auto job = dvm.grove({"run", "-n", "8", "--map-by", "node", client, "3"});
  INFO(job.out << job.err);
  CHECK(job.exit_code == 0);
  CHECK(count_occurrences(job.out, "3 rounds ok") == 8);
  CHECK(first->wait_exit(std::chrono::seconds(30)) == 3);
  CHECK_THAT(first->out(), Catch::Contains("the server closed the connection"));

  // During a job, at the controller's port, once every rank has connected:
  // the fences that follow complete.
  const std::string go = files.path() + "/go";
  BackgroundProcess running(
      {grove_binary(), "run", "--dvm", std::to_string(dvm.controller().pid()), "-n", "4",
       "--map-by", "node", client, "--barrier", "--rounds", "200", "--wait-for", go},
      {"TMPDIR=" + dvm.tmpdir()});
  for (int rank = 0; rank < 4; ++rank) {
    REQUIRE(
        running.wait_for("rank " + std::to_string(rank) + ": connected", std::chrono::seconds(60)));
  }
  auto second = stranger(client, ports.at(0), 65534);
  REQUIRE(second->wait_for("stalling in the handshake", std::chrono::seconds(30)));
  std::ofstream(go).put('\n');
  INFO(running.out() << running.err());
  CHECK(running.wait_exit(std::chrono::seconds(60)) == 0);
  CHECK(count_occurrences(running.out(), "200 rounds ok") == 4);
  CHECK(second->wait_exit(std::chrono::seconds(30)) == 3);

  INFO(dvm.controller().err());
  CHECK(count_occurrences(dvm.controller().err(), "(uid 65534) that held the server") == 2);
  CHECK(dvm.status()["failed"].empty());
}

TEST_CASE("an idle connection of the DVM's own user is cut once it has waited the bound",
          "[pmix]") {
  Dvm dvm(2, {"--mca", "pmix_handshake_timeout_ms", "300"});
  REQUIRE(dvm.ready());
  const std::map<int, std::string> ports = pmix_ports(dvm, 2);
  const std::string client = binary_from_env("GROVE_PMIX_FENCE_CLIENT");
  auto idle = stranger(client, ports.at(1), geteuid());
  REQUIRE(idle->wait_for("stalling in the handshake", std::chrono::seconds(30)));
  auto job = dvm.grove({"run", "-n", "4", "--map-by", "node", client, "2"});
  INFO(job.out << job.err);
  CHECK(job.exit_code == 0);
  CHECK(count_occurrences(job.out, "2 rounds ok") == 4);
  CHECK(idle->wait_exit(std::chrono::seconds(30)) == 3);
  INFO(dvm.controller().err());
  CHECK_THAT(dvm.controller().err(), Catch::Contains("its handshake took too long"));
  CHECK(dvm.status()["failed"].empty());
}

TEST_CASE("a daemon whose libpmix stopped answering refuses new ranks at once, until it answers",
          "[pmix]") {
  // An idle connection of the DVM's own user holds libpmix's progress thread
  // (it reads the handshake with a blocking receive) until the watchdog cuts
  // it: long enough here for a registration to pass its deadline. Meanwhile
  // new ranks are refused with the reason instead of hanging in PMIx_Init.
  Dvm dvm(1,
          {"--mca", "pmix_handshake_timeout_ms", "10000", "--mca", "pmix_call_timeout_ms", "1000"});
  REQUIRE(dvm.ready());
  const std::map<int, std::string> ports = pmix_ports(dvm, 1);
  const std::string client = binary_from_env("GROVE_PMIX_FENCE_CLIENT");
  auto idle = stranger(client, ports.at(0), geteuid());
  REQUIRE(idle->wait_for("stalling in the handshake", std::chrono::seconds(30)));
  auto first = dvm.grove({"run", "-n", "1", "true"});
  INFO(first.err);
  CHECK(first.exit_code != 0);
  CHECK_THAT(first.err, Catch::Contains("no answer from PMIx within 1 s"));
  auto refused = dvm.grove({"run", "-n", "1", "true"});
  INFO(refused.err);
  CHECK(refused.exit_code != 0);
  CHECK_THAT(refused.err,
             Catch::Contains("this daemon's PMIx server (libpmix) stopped answering") &&
                 Catch::Contains("restart the DVM"));
  // The watchdog cuts the idle connection; libpmix answers the late call,
  // and ranks start again.
  CHECK(idle->wait_exit(std::chrono::seconds(30)) == 3);
  REQUIRE(dvm.controller().wait_for("after its deadline: this daemon starts ranks again",
                                    std::chrono::seconds(30)));
  CHECK(dvm.grove({"run", "-n", "1", "true"}).exit_code == 0);
}
