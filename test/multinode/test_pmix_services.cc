// PMIx_Query_info and PMIx_Log from real PMIx clients on real daemons
// (src/daemon/pmix_bridge_services.cc).
#include <catch2/catch.hpp>

#include <signal.h>

#include <string>

#include "dvm_harness.h"

using namespace grove::test;

namespace {

std::string services_client() {
  return binary_from_env("GROVE_PMIX_SERVICES_CLIENT");
}

}  // namespace

TEST_CASE("PMIx_Query_info answers the running jobs, a job's size and nodes, the DVM's nodes",
          "[pmix][query]") {
  Dvm dvm(3);
  REQUIRE(dvm.ready());
  auto job =
      dvm.grove({"run", "-n", "2", "--map-by", "node", services_client(), "--scenario", "query"});
  INFO(job.out << job.err);
  REQUIRE(job.exit_code == 0);
  CHECK_THAT(job.out, Catch::Contains("rank 0: running jobs include this one ok"));
  CHECK_THAT(job.out, Catch::Contains("rank 0: job size 2"));
  CHECK_THAT(job.out, Catch::Contains("rank 0: job nodes 2"));
  CHECK_THAT(job.out, Catch::Contains("rank 0: dvm nodes 3"));
  CHECK_THAT(job.out, Catch::Contains("rank 0: unknown key refused ok"));
  CHECK_THAT(job.out, Catch::Contains("rank 0: no process sets ok"));
  CHECK_THAT(job.out, Catch::Contains("rank 0: unknown job refused ok"));
  CHECK_THAT(dvm.controller().err(), Catch::Contains("key grove.no.such.key not supported"));
}

TEST_CASE("PMIx_Log writes to the job's output as the rank's own lines", "[pmix][log]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  auto job = dvm.grove({"run", "-n", "2", "--map-by", "node", "--tag-output", services_client(),
                        "--scenario", "log"});
  INFO(job.out << job.err);
  REQUIRE(job.exit_code == 0);
  for (const char* rank : {"0", "1"}) {
    const std::string tag = std::string("[1,") + rank + "]";
    CHECK_THAT(job.out, Catch::Contains(tag + "<stdout>: log line from rank " + rank));
    CHECK_THAT(job.err, Catch::Contains(tag + "<stderr>: log error from rank " + rank));
    CHECK_THAT(job.out, Catch::Contains(std::string("rank ") + rank + ": syslog refused ok"));
  }
}

TEST_CASE(
    "events: a rank's notification reaches the other daemons' ranks, a job's end reaches "
    "ranks that registered for it",
    "[pmix][events]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  // Ranks 0 and 2 on daemon 0, rank 1 on daemon 1: the notifier (rank 2)
  // shares a daemon with rank 0 and not with rank 1.
  auto job =
      dvm.grove({"run", "-n", "3", "--map-by", "node", services_client(), "--scenario", "events"});
  INFO(job.out << job.err);
  REQUIRE(job.exit_code == 0);
  CHECK_THAT(job.out, Catch::Contains("rank 2: notified ok"));
  for (const char* rank : {"0", "1"}) {
    CHECK_THAT(job.out, Catch::Contains(std::string("rank ") + rank + ": event from ") &&
                            Catch::Contains(":2: hello from the last rank"));
    CHECK_THAT(job.out,
               Catch::Contains(std::string("rank ") + rank + ": event from another rank ok"));
  }
  CHECK_THAT(job.out, Catch::Contains("status 0 (job ") && Catch::Contains("ended with status 0)"));
  CHECK_THAT(job.out, Catch::Contains("rank 0: job end event ok"));
}

TEST_CASE("events: ranks that registered for PMIX_EVENT_NODE_DOWN hear of a lost daemon",
          "[pmix][events]") {
  Dvm dvm(3);
  REQUIRE(dvm.ready());
  // The job runs on daemons 0 and 1; daemon 2 dies once both ranks listen.
  BackgroundProcess job(
      {grove_binary(), "run", "--dvm", std::to_string(dvm.controller().pid()), "-n", "2",
       "--map-by", "node", services_client(), "--scenario", "node-down"},
      {"TMPDIR=" + dvm.tmpdir()});
  REQUIRE(job.wait_for("rank 0: registered", std::chrono::seconds(60)));
  REQUIRE(job.wait_for("rank 1: registered", std::chrono::seconds(60)));
  const int victim = dvm.status()["daemons"][2]["pid"].get<int>();
  REQUIRE(kill(victim, SIGKILL) == 0);
  const int status = job.wait_exit(std::chrono::seconds(90));
  INFO(job.out() << job.err());
  CHECK(status == 0);
  for (const char* rank : {"0", "1"}) {
    CHECK_THAT(job.out(), Catch::Contains(std::string("rank ") + rank +
                                          ": node down grove.daemons:2 (daemon 2"));
  }
}

TEST_CASE(
    "events: a job on a DVM that ran many jobs, ending, failing and aborting, hears none of their "
    "events",
    "[pmix][events]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  const std::string fence_client = binary_from_env("GROVE_PMIX_FENCE_CLIENT");
  // Each kind of end a job's ranks can have, across both daemons; and a
  // spawner whose child aborts.
  for (int round = 0; round < 3; ++round) {
    CHECK(dvm.grove({"run", "-n", "2", "--map-by", "node", fence_client, "2"}).exit_code == 0);
    CHECK(
        dvm.grove({"run", "-n", "2", "--map-by", "node", fence_client, "--abort", "5"}).exit_code ==
        5);
    CHECK(dvm.grove({"run", "-n", "2", "--map-by", "node", "sh", "-c", "exit 3"}).exit_code == 3);
    CHECK(
        dvm.grove({"run", "-n", "1", services_client(), "--scenario", "spawn-abort", fence_client})
            .exit_code == 7);
  }
  auto counter = dvm.grove(
      {"run", "-n", "4", "--map-by", "node", services_client(), "--scenario", "count-events"});
  INFO(counter.out << counter.err);
  REQUIRE(counter.exit_code == 0);
  for (const char* rank : {"0", "1", "2", "3"}) {
    CHECK_THAT(counter.out, Catch::Contains(std::string("rank ") + rank +
                                            ": markers 3, foreign events 0, events 3"));
  }
}
