// os/timer.h: a timer owns its callback; arming, re-arming, cancelling, and
// a callback that drops its own timer.
#include <catch2/catch.hpp>

#include "os/timer.h"

using namespace grove;

TEST_CASE("a timer fires once per arm, repeats when asked, and stays quiet when cancelled",
          "[timer]") {
  EventBasePtr base(event_base_new());
  REQUIRE(base);
  int once = 0, every = 0, cancelled = 0;
  Timer single(base.get(), [&] { ++once; });
  Timer repeating;
  repeating = Timer(base.get(), [&] {
    if (++every == 3) {
      repeating.cancel();
      event_base_loopbreak(base.get());
    }
  });
  Timer quiet(base.get(), [&] { ++cancelled; });
  CHECK_FALSE(single.pending());
  single.arm(0);
  CHECK(single.pending());
  quiet.arm(0);
  quiet.cancel();
  repeating.arm_every(1);
  event_base_dispatch(base.get());
  CHECK(once == 1);
  CHECK(every == 3);
  CHECK(cancelled == 0);
  CHECK_FALSE(repeating.pending());
}

TEST_CASE("a timer's callback may re-arm it, or drop it", "[timer]") {
  EventBasePtr base(event_base_new());
  int fired = 0;
  Timer rearmed;
  rearmed = Timer(base.get(), [&] {
    if (++fired < 3) rearmed.arm(0);
  });
  rearmed.arm(0);
  Timer dropped;
  bool dropped_ran = false;
  dropped = Timer(base.get(), [&] {
    dropped = Timer();  // its own timer goes while it runs
    dropped_ran = true;
  });
  dropped.arm(0);
  event_base_dispatch(base.get());  // returns once nothing is pending
  CHECK(fired == 3);
  CHECK(dropped_ran);
  CHECK_FALSE(static_cast<bool>(dropped));
}
