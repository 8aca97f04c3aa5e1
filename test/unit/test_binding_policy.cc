// mpirun's default binding and the cores concurrent jobs leave to each other.
#include <catch2/catch.hpp>

#include "jobs/binding_policy.h"

#include <set>

using namespace grove;

namespace {
std::vector<MapDaemon> two_hosts(std::uint32_t cores) {
  std::vector<MapDaemon> daemons = {{0, cores, "a"}, {1, cores, "a"}, {2, cores, "b"}};
  for (MapDaemon& daemon : daemons)
    daemon.cores = cores;
  return daemons;
}
}  // namespace

TEST_CASE("no --bind-to: core for one or two ranks, socket for more, none when cores run out",
          "[jobs]") {
  std::vector<MapDaemon> daemons = {{0, 8, "a"}, {1, 8, "b"}};
  for (MapDaemon& daemon : daemons)
    daemon.cores = 8;
  auto bind = [&](std::uint32_t np, MapSpec spec, const HostCoresInUse& in_use) {
    auto map = map_ranks(np, daemons, spec);
    REQUIRE(map);
    return default_binding(*map, daemons, spec, in_use);
  };
  CHECK(bind(1, MapSpec{}, {}) == "core");
  CHECK(bind(2, MapSpec{}, {}) == "core");
  CHECK(bind(3, MapSpec{}, {}) == "socket");
  CHECK(bind(16, MapSpec{}, {}) == "socket");                    // 8 on each host
  CHECK(bind(17, MapSpec{}, {}) == "none");                      // oversubscribed: host a holds 9
  CHECK(bind(4, MapSpec{MapPolicy::slot, 0, 2}, {}) == "core");  // pe=2: cores, not a socket
  CHECK(bind(8, MapSpec{MapPolicy::slot, 0, 2}, {}) == "core");  // 4 x 2 on each host
  CHECK(bind(9, MapSpec{MapPolicy::slot, 0, 2}, {}) == "none");  // 5 x 2 > 8 on host a
  // Another job's 7 ranks on host a: one more fits, two do not.
  CHECK(bind(1, MapSpec{}, {{"a", 7}}) == "core");
  CHECK(bind(2, MapSpec{}, {{"a", 7}}) == "none");
  CHECK(bind(2, MapSpec{}, {{"b", 7}}) == "core");  // the job runs on a only
  // Cores unknown: the slots stand in.
  std::vector<MapDaemon> unknown = {{0, 2, "c"}};
  auto three = map_ranks(3, unknown, MapSpec{});
  REQUIRE(three);
  CHECK(default_binding(*three, unknown, MapSpec{}, {}) == "none");
}

TEST_CASE("a core-bound job takes the first free cores the running jobs leave", "[jobs]") {
  const auto daemons = two_hosts(8);
  auto map = map_ranks(3, daemons, MapSpec{MapPolicy::node, 0});
  REQUIRE(map);
  // Ranks 0 and 1 on host a (daemons 0 and 1), rank 2 on b.
  CHECK(map->ranks[0].host_rank == 0);
  CHECK(map->ranks[1].host_rank == 1);
  CHECK(map->ranks[2].host_rank == 0);
  // Host a: cores 0 to 2 held.
  place_on_free_cores(*map, daemons, 1, {{"a", {0, 1, 2}}});
  CHECK(map->ranks[0].host_rank == 3);
  CHECK(map->ranks[1].host_rank == 4);
  CHECK(map->ranks[2].host_rank == 0);  // nothing runs on b
  // A job that ended left cores 0-1 free while 2-3 are held: the next job
  // takes 0-1, not the cores after the count of those in use.
  auto next = map_ranks(2, daemons, MapSpec{});
  REQUIRE(next);
  place_on_free_cores(*next, daemons, 1, {{"a", {2, 3}}});
  CHECK(next->ranks[0].host_rank == 0);
  CHECK(next->ranks[1].host_rank == 1);
  // pe=2: runs of two, aligned: cores 0-1 and 4-5 free, 2-3 held.
  auto wide = map_ranks(2, daemons, MapSpec{MapPolicy::slot, 0, 2});
  REQUIRE(wide);
  place_on_free_cores(*wide, daemons, 2, {{"a", {2, 3, 6}}});
  CHECK(wide->ranks[0].host_rank == 0);  // cores 0-1
  CHECK(wide->ranks[1].host_rank == 2);  // cores 4-5 (6-7 holds 6)
  // No free run left: a rank keeps its own index (binding wraps, shared).
  std::set<std::uint32_t> all;
  for (std::uint32_t core = 0; core < 8; ++core)
    all.insert(core);
  auto full = map_ranks(1, daemons, MapSpec{});
  REQUIRE(full);
  place_on_free_cores(*full, daemons, 1, {{"a", all}});
  CHECK(full->ranks[0].host_rank == 0);
}
