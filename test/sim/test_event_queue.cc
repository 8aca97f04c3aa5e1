// The simulator's event queue and link clock: a run is a pure function of
// its seed only if events pop in (time, scheduling order) and no frame
// overtakes an earlier one on its link.
#include <catch2/catch.hpp>

#include <queue>
#include <random>
#include <tuple>

#include "sim/event_queue.h"
#include "sim/network_model.h"

using namespace grove;

namespace {

// Against a reference heap of (time, sequence), with pushes between pops as
// the simulator does: each push at the last popped time plus up to `spread`
// (a spread of 8 makes many ties; a wide one fills the high buckets).
void check_pop_order(TimeNs (*spread)(std::mt19937_64&)) {
  EventQueue<std::uint64_t> queue;
  using Entry = std::tuple<TimeNs, std::uint64_t, std::uint64_t>;  // time, sequence, body
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> reference;
  std::mt19937_64 rng(7);
  std::uint64_t sequence = 0;
  TimeNs now = 0;
  std::size_t popped = 0;
  for (int step = 0; step < 20000; ++step) {
    const int pushes = static_cast<int>(rng() % 4);
    for (int i = 0; i < pushes; ++i) {
      const TimeNs at = now + spread(rng);
      const std::uint64_t body = rng();
      queue.push(at, body);
      reference.emplace(at, sequence++, body);
    }
    if (!reference.empty() && rng() % 3 != 0) {
      REQUIRE_FALSE(queue.empty());
      auto [at, body] = queue.pop();
      const auto [want_at, want_sequence, want_body] = reference.top();
      reference.pop();
      REQUIRE(at == want_at);
      REQUIRE(body == want_body);
      now = at;
      ++popped;
    }
    REQUIRE(queue.size() == reference.size());
  }
  while (!reference.empty()) {
    auto [at, body] = queue.pop();
    REQUIRE(body == std::get<2>(reference.top()));
    reference.pop();
  }
  CHECK(queue.empty());
  CHECK(popped > 10000);
}

}  // namespace

TEST_CASE("events pop by time, ties in the order they were scheduled", "[event-queue]") {
  SECTION("few distinct times") {
    check_pop_order([](std::mt19937_64& rng) -> TimeNs { return rng() % 8; });
  }
  SECTION("times from nanoseconds to years apart") {
    check_pop_order([](std::mt19937_64& rng) -> TimeNs {
      return rng() % 4 == 0 ? 0 : rng() % (TimeNs{1} << (rng() % 58));
    });
  }
}

TEST_CASE("a popped event's body is handed over, and its slot is reused", "[event-queue]") {
  EventQueue<std::shared_ptr<int>> queue;
  auto payload = std::make_shared<int>(5);
  queue.push(10, payload);
  queue.push(5, std::make_shared<int>(1));
  CHECK(payload.use_count() == 2);
  auto [first_at, first] = queue.pop();
  CHECK(first_at == 5);
  CHECK(*first == 1);
  auto [second_at, second] = queue.pop();
  CHECK(second_at == 10);
  CHECK(second == payload);
  second.reset();
  CHECK(payload.use_count() == 1);  // the queue keeps no copy
}

TEST_CASE("a frame never overtakes an earlier one on the same link", "[network]") {
  LinkClock links;
  CHECK(links.arrival(1, 2, 500) == 500);
  CHECK(links.arrival(1, 2, 300) == 500);  // sent later, would arrive earlier: waits
  CHECK(links.arrival(1, 3, 300) == 300);  // another link is not held up
  CHECK(links.arrival(2, 1, 100) == 100);  // nor is the reverse direction
  CHECK(links.arrival(1, 2, 700) == 700);
  CHECK(links.arrival(1000000, 0, 50) == 50);  // senders far apart
}
