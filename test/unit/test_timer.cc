// os/timer.h: a timer owns its callback; arming, re-arming, cancelling, and
// a callback that drops its own timer. run_later's one-shot callbacks, and
// the EventLoop that runs them (os/event_loop.h). No <event2/...> here:
// what the layers above os/ use is all a test needs.
#include <catch2/catch.hpp>

#include <signal.h>

#include <vector>

#include "os/event_loop.h"
#include "os/timer.h"

using namespace grove;

TEST_CASE("a timer fires once per arm, repeats when asked, and stays quiet when cancelled",
          "[timer]") {
  EventLoop loop;
  REQUIRE(loop);
  int once = 0, every = 0, cancelled = 0;
  Timer single(loop.base(), [&] { ++once; });
  Timer repeating;
  repeating = Timer(loop.base(), [&] {
    if (++every == 3) {
      repeating.cancel();
      loop.exit();
    }
  });
  Timer quiet(loop.base(), [&] { ++cancelled; });
  CHECK_FALSE(single.pending());
  single.arm(0);
  CHECK(single.pending());
  quiet.arm(0);
  quiet.cancel();
  repeating.arm_every(1);
  loop.run();
  CHECK(once == 1);
  CHECK(every == 3);
  CHECK(cancelled == 0);
  CHECK_FALSE(repeating.pending());
}

TEST_CASE("a timer's callback may re-arm it, or drop it", "[timer]") {
  EventLoop loop;
  int fired = 0;
  Timer rearmed;
  rearmed = Timer(loop.base(), [&] {
    if (++fired < 3) rearmed.arm(0);
  });
  rearmed.arm(0);
  Timer dropped;
  bool dropped_ran = false;
  dropped = Timer(loop.base(), [&] {
    dropped = Timer();  // its own timer goes while it runs
    dropped_ran = true;
  });
  dropped.arm(0);
  loop.run();  // returns once nothing is pending
  CHECK(fired == 3);
  CHECK(dropped_ran);
  CHECK_FALSE(static_cast<bool>(dropped));
}

TEST_CASE("run_later runs each callback once, in time order, and frees it", "[timer]") {
  EventLoop loop;
  std::vector<int> order;
  auto shared = std::make_shared<int>(0);
  run_later(loop.base(), 20, [&order, shared] { order.push_back(2); });
  run_later(loop.base(), 0, [&order] { order.push_back(1); });
  CHECK(shared.use_count() == 2);  // the loop holds the later one
  loop.run();                      // returns once both have run
  CHECK(order == std::vector<int>{1, 2});
  CHECK(shared.use_count() == 1);  // freed after it ran
}

TEST_CASE("an event loop stops at exit(), after a delay if asked", "[timer]") {
  EventLoop loop;
  int ticks = 0;
  Timer ticking(loop.base(), [&] { ++ticks; });
  ticking.arm_every(1);
  loop.exit(30);  // the loop would run for ever: it stops after 30 ms
  loop.run();
  CHECK(ticks >= 2);
  const int stopped_at = ticks;
  ticking.cancel();
  loop.run();  // nothing pending: returns at once
  CHECK(ticks == stopped_at);
}

TEST_CASE("a signal watch runs its callback on the loop", "[timer]") {
  EventLoop loop;
  int caught = 0;
  SignalWatch watch(loop.base(), SIGUSR2, [&] {
    ++caught;
    loop.exit();
  });
  Timer raise_it(loop.base(), [] { raise(SIGUSR2); });
  raise_it.arm(0);
  loop.run();
  CHECK(caught == 1);
  watch = SignalWatch();  // watching ends; libevent puts the old handler back
}
