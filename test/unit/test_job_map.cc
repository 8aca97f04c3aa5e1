// Where a job's ranks go: slot, node and ppr:N:node mapping.
#include <catch2/catch.hpp>

#include "jobs/job_map.h"

using namespace grove;

namespace {
std::vector<Vpid> owners(const JobMap& map) {
  std::vector<Vpid> list;
  for (const auto& rank : map.ranks)
    list.push_back(rank.daemon);
  return list;
}
const std::vector<MapDaemon> kDaemons = {{0, 2, "a"}, {1, 2, "b"}, {2, 2, "c"}};
}  // namespace

TEST_CASE("map-by parses slot, node and ppr:N:node", "[jobs]") {
  CHECK(*parse_map_policy("slot") == MapSpec{MapPolicy::slot, 0});
  CHECK(*parse_map_policy("core") == MapSpec{MapPolicy::slot, 0});
  CHECK(*parse_map_policy("node") == MapSpec{MapPolicy::node, 0});
  CHECK(*parse_map_policy("ppr:3:node") == MapSpec{MapPolicy::ppr, 3});
  for (const char* bad : {"ppr", "ppr:0:node", "ppr:x:node", "ppr:2:socket", "ppr::node", "rank"}) {
    INFO(bad);
    auto spec = parse_map_policy(bad);
    REQUIRE_FALSE(spec);
    CHECK_THAT(spec.error().message, Catch::Contains("ppr:N:node"));
  }
}

TEST_CASE("slot fills slots, node deals round robin, ppr puts N on each", "[jobs]") {
  auto slot = map_ranks(5, kDaemons, MapSpec{});
  REQUIRE(slot);
  CHECK(owners(*slot) == std::vector<Vpid>{0, 0, 1, 1, 2});
  CHECK_FALSE(slot->oversubscribed);
  auto node = map_ranks(5, kDaemons, MapSpec{MapPolicy::node, 0});
  REQUIRE(node);
  CHECK(owners(*node) == std::vector<Vpid>{0, 1, 2, 0, 1});
  auto ppr = map_ranks(3, kDaemons, MapSpec{MapPolicy::ppr, 1});
  REQUIRE(ppr);
  CHECK(owners(*ppr) == std::vector<Vpid>{0, 1, 2});
  auto ppr3 = map_ranks(9, kDaemons, MapSpec{MapPolicy::ppr, 3});
  REQUIRE(ppr3);
  CHECK(owners(*ppr3) == std::vector<Vpid>{0, 0, 0, 1, 1, 1, 2, 2, 2});
  CHECK_FALSE(ppr3->oversubscribed);
  CHECK(ppr3->ranks[4].local_rank == 1);
  CHECK(ppr3->ranks[4].node_id == 1);
  auto over = map_ranks(7, kDaemons, MapSpec{MapPolicy::ppr, 2});
  REQUIRE_FALSE(over);
  CHECK_THAT(over.error().message, Catch::Contains("places at most 6 ranks on 3 daemons"));
  auto wrapped = map_ranks(8, kDaemons, MapSpec{});
  REQUIRE(wrapped);
  CHECK(wrapped->oversubscribed);
}
