// PMIx_Query_info and PMIx_Log from real PMIx clients on real daemons
// (src/daemon/pmix_bridge_services.cc).
#include <catch2/catch.hpp>

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
