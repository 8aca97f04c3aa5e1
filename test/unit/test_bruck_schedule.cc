// The Bruck schedule's arithmetic (rml/bruck_schedule.h) and the fence cost
// model that prices it (grpcomm/fence_cost_model.h).
#include <catch2/catch.hpp>

#include <set>
#include <vector>

#include "grpcomm/fence_cost_model.h"
#include "rml/bruck_schedule.h"

using namespace grove;

TEST_CASE("Bruck rounds are ceil(log2 P)", "[bruck]") {
  CHECK(bruck::rounds(0) == 0);
  CHECK(bruck::rounds(1) == 0);
  CHECK(bruck::rounds(2) == 1);
  CHECK(bruck::rounds(3) == 2);
  CHECK(bruck::rounds(4) == 2);
  CHECK(bruck::rounds(5) == 3);
  CHECK(bruck::rounds(16) == 4);
  CHECK(bruck::rounds(17) == 5);
  CHECK(bruck::rounds(1u << 20) == 20);
  CHECK(bruck::rounds((1u << 20) + 1) == 21);
}

TEST_CASE("every member ends the Bruck schedule with every block, each sent once", "[bruck]") {
  for (std::uint64_t members = 1; members <= 70; ++members) {
    INFO(members << " members");
    // held[i]: the owners of the blocks member i holds, starting with its own.
    std::vector<std::set<std::uint64_t>> held(members);
    for (std::uint64_t i = 0; i < members; ++i)
      held[i].insert(i);
    std::uint64_t sent_each = 0;
    for (std::uint32_t round = 0; round < bruck::rounds(members); ++round) {
      // Everyone sends from what it held before the round (a synchronous round).
      std::vector<std::set<std::uint64_t>> before = held;
      const std::uint64_t blocks = bruck::blocks_sent(round, members);
      sent_each += blocks;
      for (std::uint64_t i = 0; i < members; ++i) {
        const std::uint64_t to = bruck::send_to(i, round, members);
        CHECK(bruck::hear_from(to, round, members) == i);
        for (std::uint64_t offset = 0; offset < blocks; ++offset) {
          const std::uint64_t owner = bruck::block_owner(i, offset, members);
          REQUIRE(before[i].count(owner) == 1);  // a sender holds what it sends
          CHECK(held[to].insert(owner).second);  // and the receiver lacked it
        }
      }
    }
    for (std::uint64_t i = 0; i < members; ++i)
      CHECK(held[i].size() == members);
    CHECK(sent_each == members - 1);
    CHECK(bruck::blocks_per_member(members) == members - 1);
  }
}

TEST_CASE("the last Bruck round sends only what its receiver lacks", "[bruck]") {
  CHECK(bruck::blocks_sent(0, 5) == 1);
  CHECK(bruck::blocks_sent(1, 5) == 2);
  CHECK(bruck::blocks_sent(2, 5) == 1);  // 5 - 4
  CHECK(bruck::blocks_sent(3, 5) == 0);  // past the schedule
  CHECK(bruck::blocks_sent(3, 16) == 8);
}

TEST_CASE("the fence cost model prices Bruck against the trees", "[bruck][model]") {
  const CostConstants at_1_gbit{100.0, 25.0, 8, 1.25e8};
  // 16 daemons: Bruck 4 rounds of one copy; the trees one hop up (radix
  // 64) and two down (radix 4).
  const FenceCostLine bruck = bruck_fence_cost(16, at_1_gbit);
  CHECK(bruck.latency_us == Approx(4 * 125.0));
  CHECK(bruck.per_byte_us == Approx(15.0 / 16.0 / 125.0));  // (N-1)/N of D at 125 bytes/us
  const FenceCostLine trees = tree_fence_cost(16, 64, 4, at_1_gbit);
  CHECK(trees.latency_us == Approx(125.0 + 2 * 125.0));
  CHECK(trees.per_byte_us == Approx((1 + 2 * 4) / 125.0));
  // The trees win a barrier, Bruck a modex: the crossover is where the lines meet.
  const auto from = wins_from(bruck, trees);
  REQUIRE(from);
  CHECK(*from == Approx(125.0 / (9 / 125.0 - 15.0 / 16.0 / 125.0)));
  CHECK(trees.at(33) < bruck.at(33));
  CHECK(bruck.at(*from * 1.01) < trees.at(*from * 1.01));
  CHECK(trees.at(*from * 0.99) < bruck.at(*from * 0.99));
}

TEST_CASE("wins_from: always, from a size on, or never", "[bruck][model]") {
  CHECK(wins_from({1, 1}, {2, 2}) == 0.0);
  CHECK(wins_from({3, 1}, {1, 2}) == 2.0);
  CHECK_FALSE(wins_from({3, 2}, {1, 2}));
  CHECK_FALSE(wins_from({1, 3}, {2, 2}));   // it wins small sizes only
  CHECK(wins_from({1, 2}, {1, 2}) == 0.0);  // the same line never loses
}
