// SilenceWatch: a watcher's own stall is not the watched party's silence.
#include <catch2/catch.hpp>

#include "daemon/control_plane/liveness.h"

using namespace grove;

TEST_CASE("a watcher's own stall is credited, ordinary lateness is not", "[liveness]") {
  constexpr TimeNs ms = 1'000'000;
  SilenceWatch watch(100 * ms, 1000 * ms);
  CHECK(watch.check(1000 * ms) == 0);  // the first check has nothing to compare
  CHECK(watch.check(1100 * ms) == 0);  // on time
  CHECK(watch.check(1290 * ms) == 0);  // late by less than an interval: jitter
  // Stopped for 3 s: everything past the one interval due is the watcher's.
  CHECK(watch.check(4290 * ms) == 2900 * ms);
  TimeNs heard = 1250 * ms;
  CHECK(watch.silent_too_long(heard, 4290 * ms));
  CHECK_FALSE(watch.silent_too_long(heard + 2900 * ms, 4290 * ms));
  // A party silent for longer than the limit while the watcher ran is judged so.
  CHECK(watch.check(4390 * ms) == 0);
  CHECK(watch.silent_too_long(3000 * ms, 4390 * ms));
  CHECK_FALSE(watch.silent_too_long(3400 * ms, 4390 * ms));
}
