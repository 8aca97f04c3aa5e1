// PMIx_Publish, PMIx_Lookup and PMIx_Unpublish through the DVM's store at
// the controller, from real PMIx clients and Open MPI programs on real
// daemons (src/daemon/publish_service.h).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <regex>

#include "dvm_harness.h"

using namespace grove::test;

namespace {

std::string publish_client() {
  return binary_from_env("GROVE_PMIX_PUBLISH_CLIENT");
}

}  // namespace

TEST_CASE("ranks on different daemons publish, wait for, look up and unpublish names",
          "[pmix][publish]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  // Rank 0 on the controller's daemon publishes; ranks 1 and 3 (the other
  // daemon) and 2 look up with PMIX_WAIT, perhaps before the publication.
  auto job =
      dvm.grove({"run", "-n", "4", "--map-by", "node", publish_client(), "--scenario", "within"});
  INFO(job.out << job.err);
  REQUIRE(job.exit_code == 0);
  CHECK_THAT(job.out, Catch::Contains("rank 0: publish ok"));
  CHECK_THAT(job.out, Catch::Contains("rank 0: duplicate publish refused ok"));
  for (const char* rank : {"1", "2", "3"}) {
    const std::string prefix = std::string("rank ") + rank + ": ";
    CHECK_THAT(job.out, Catch::Contains(prefix + "lookup value and publisher ok"));
    CHECK_THAT(job.out, Catch::Contains(prefix + "lookup of a missing key ok"));
    CHECK_THAT(job.out,
               Catch::Contains(prefix + "lookup waiting for a key that never comes times out ok"));
    CHECK_THAT(job.out, Catch::Contains(prefix + "a value published for its publisher alone is "
                                                 "not found by another rank ok"));
    CHECK_THAT(job.out, Catch::Contains(prefix + "lookup after unpublish ok"));
  }
}

TEST_CASE("published names stay as long as asked: the DVM's life, the job's, or its nspace only",
          "[pmix][publish]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  auto first = dvm.grove(
      {"run", "-n", "2", "--map-by", "node", publish_client(), "--scenario", "publisher"});
  INFO(first.out << first.err);
  REQUIRE(first.exit_code == 0);
  auto second =
      dvm.grove({"run", "-n", "2", "--map-by", "node", publish_client(), "--scenario", "reader"});
  INFO(second.out << second.err);
  REQUIRE(second.exit_code == 0);
  CHECK_THAT(second.out, Catch::Contains("rank 0: an earlier job's value ok"));
  CHECK_THAT(second.out, Catch::Contains("rank 0: a value kept for its job's life is gone ok"));
  CHECK_THAT(second.out,
             Catch::Contains("rank 0: another job's namespace-range value is not seen ok"));
  std::smatch match;
  REQUIRE(std::regex_search(second.out, match, std::regex(R"(published by rank 0 of (\S+))")));
  CHECK(match[1] != "");
  // A second publisher job may not take the DVM-wide name while it is held.
  auto again = dvm.grove({"run", "-n", "1", publish_client(), "--scenario", "publisher"});
  CHECK(again.exit_code == 1);
  CHECK_THAT(again.err, Catch::Contains("DUPLICATE"));
}

TEST_CASE("MPI_Publish_name on one rank, MPI_Lookup_name on the others", "[pmix][publish][mpi]") {
  const char* program = std::getenv("GROVE_MPI_PUBLISH");
  if (program == nullptr) {
    WARN("Open MPI is not installed: skipped");
    return;
  }
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  auto job = dvm.grove({"run", "-n", "3", "--map-by", "node", program});
  INFO(job.out << job.err);
  REQUIRE(job.exit_code == 0);
  CHECK_THAT(job.out, Catch::Contains("rank 0: publish rc=0"));
  CHECK_THAT(job.out, Catch::Contains("rank 1: lookup rc=0 found the port"));
  CHECK_THAT(job.out, Catch::Contains("rank 2: lookup rc=0 found the port"));
  CHECK_THAT(job.out, Catch::Contains("rank 0: unpublish rc=0"));
}
