// When the controller dumps every daemon's flight recording by itself
// (daemon/control_plane/auto_flight_dumps.h).
#include <catch2/catch.hpp>

#include "daemon/control_plane/auto_flight_dumps.h"

using namespace grove;
using What = AutoFlightDumps::Decision::What;

namespace {
constexpr TimeNs kSecond = 1'000'000'000;
}

TEST_CASE("a problem starts a dump; problems while it gathers or soon after join it",
          "[auto_flight_dumps]") {
  AutoFlightDumps dumps("/d", 3);
  REQUIRE(dumps.on());
  auto first = dumps.problem_seen(2, "fence x timed out", 100 * kSecond);
  CHECK(first.what == What::gather);
  CHECK(first.dir == "/d/dump-1");
  // Every rank of a job timing out: one dump.
  auto same = dumps.problem_seen(3, "fence x timed out", 101 * kSecond);
  CHECK(same.what == What::joined);
  CHECK(same.dir == "/d/dump-1");
  dumps.finished(4, 1000, "");
  // Finished, but within the window: the recordings hold what led to it.
  CHECK(dumps.problem_seen(0, "late", 100 * kSecond + AutoFlightDumps::kJoinWindowNs - 1).what ==
        What::joined);
  REQUIRE(dumps.dumps().size() == 1);
  const auto& dump = dumps.dumps()[0];
  CHECK(dump.problems == std::vector<std::string>{"daemon 2: fence x timed out",
                                                  "daemon 3: fence x timed out", "daemon 0: late"});
  CHECK(dump.finished);
  CHECK(dump.files == 4);
  CHECK(dump.bytes == 1000);
  // After the window, a new one.
  auto second = dumps.problem_seen(1, "again", 100 * kSecond + AutoFlightDumps::kJoinWindowNs);
  CHECK(second.what == What::gather);
  CHECK(second.dir == "/d/dump-2");
}

TEST_CASE("a DVM makes at most its number of dumps; one that failed says why",
          "[auto_flight_dumps]") {
  AutoFlightDumps dumps("/d", 2);
  TimeNs now = 0;
  for (int i = 0; i < 2; ++i) {
    // A dump that failed is not joined, however soon after it.
    now += 1;
    CHECK(dumps.problem_seen(1, "p", now).what == What::gather);
    dumps.finished(0, 0, "another grove status is being answered");
  }
  now += AutoFlightDumps::kJoinWindowNs;
  CHECK(dumps.problem_seen(1, "p", now).what == What::dropped);
  CHECK(dumps.problem_seen(1, "p", now + AutoFlightDumps::kJoinWindowNs).what == What::dropped);
  CHECK(dumps.dropped() == 2);
  REQUIRE(dumps.dumps().size() == 2);
  CHECK(dumps.dumps()[1].error == "another grove status is being answered");
  // A second finish (a late answer) changes nothing.
  dumps.finished(3, 3, "");
  CHECK(dumps.dumps()[1].files == 0);
}

TEST_CASE("no dumps at all when the DVM keeps none", "[auto_flight_dumps]") {
  AutoFlightDumps dumps("/d", 0);
  CHECK_FALSE(dumps.on());
  CHECK(dumps.problem_seen(1, "p", 0).what == What::dropped);
  CHECK(dumps.dumps().empty());
}
