// Where a job's ranks go: slot, node, ppr:N:node and ppr:N:socket mapping.
#include <catch2/catch.hpp>

#include "jobs/job_map.h"
#include "jobs/job_messages.h"

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

TEST_CASE("map-by parses slot, node, ppr:N:node and ppr:N:socket", "[jobs]") {
  CHECK(*parse_map_policy("slot") == MapSpec{MapPolicy::slot, 0});
  CHECK(*parse_map_policy("core") == MapSpec{MapPolicy::slot, 0});
  CHECK(*parse_map_policy("node") == MapSpec{MapPolicy::node, 0});
  CHECK(*parse_map_policy("ppr:3:node") == MapSpec{MapPolicy::ppr, 3});
  CHECK(*parse_map_policy("ppr:2:socket") == MapSpec{MapPolicy::ppr_socket, 2});
  CHECK(map_policy_text(MapSpec{MapPolicy::ppr_socket, 2}) == "ppr:2:socket");
  for (const char* bad : {"ppr", "ppr:0:node", "ppr:x:node", "ppr:2:numa", "ppr::node", "rank"}) {
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

TEST_CASE("ppr:N:socket puts N ranks on every socket of each daemon's host", "[jobs]") {
  // Daemon 1's host has two sockets, the others one.
  const std::vector<MapDaemon> daemons = {{0, 4, "a", 1}, {1, 8, "b", 2}, {2, 4, "c", 1}};
  auto map = map_ranks(7, daemons, MapSpec{MapPolicy::ppr_socket, 2});
  REQUIRE(map);
  CHECK(owners(*map) == std::vector<Vpid>{0, 0, 1, 1, 1, 1, 2});
  CHECK_FALSE(map->oversubscribed);
  CHECK(map->ranks[5].local_rank == 3);
  auto over = map_ranks(9, daemons, MapSpec{MapPolicy::ppr_socket, 2});
  REQUIRE_FALSE(over);
  CHECK_THAT(over.error().message,
             Catch::Contains("places at most 8 ranks on the sockets of 3 daemons; -n is 9"));
}

TEST_CASE("host ranks count a job's ranks per host name, across daemons", "[jobs]") {
  // Daemons 0 and 1 share host "a": --bind-to counts their ranks together.
  const std::vector<MapDaemon> daemons = {{0, 2, "a"}, {1, 2, "a"}, {2, 2, "b"}};
  auto map = map_ranks(5, daemons, MapSpec{MapPolicy::node, 0});
  REQUIRE(map);
  std::vector<std::uint32_t> host_ranks;
  for (const auto& rank : map->ranks)
    host_ranks.push_back(rank.host_rank);
  CHECK(host_ranks == std::vector<std::uint32_t>{0, 1, 0, 2, 3});
}

TEST_CASE("a job that would put more ranks on a daemon than it can host is refused, naming it",
          "[jobs]") {
  CHECK(max_ranks_for_open_files(0) == kMaxRanksPerDaemon);
  CHECK(max_ranks_for_open_files(1024) == 1);
  CHECK(max_ranks_for_open_files(20000) == (20000 - kDescriptorsKept) / kDescriptorsPerRank);
  CHECK(max_ranks_for_open_files(1u << 30) == kMaxRanksPerDaemon);
  std::vector<MapDaemon> daemons = {{0, 2, "a", 1, 100}, {1, 2, "b", 1, 40}};
  auto fits = map_ranks(80, daemons, MapSpec{MapPolicy::node, 0});
  REQUIRE(fits);
  auto over = map_ranks(82, daemons, MapSpec{MapPolicy::node, 0});
  REQUIRE_FALSE(over);
  CHECK_THAT(over.error().message,
             Catch::Contains("would put 41 on daemon 1 (b), which can host at most 40 ranks"));
  CHECK_THAT(over.error().message, Catch::Contains("open-file limit"));
  // Past the 16-bit numbering of local ranks, whatever the descriptors.
  std::vector<MapDaemon> one = {{0, 1, "a", 1, kMaxRanksPerDaemon}};
  auto huge = map_ranks(kMaxRanksPerDaemon + 1, one, MapSpec{});
  REQUIRE_FALSE(huge);
  CHECK_THAT(huge.error().message, Catch::Contains("numbered in 16 bits"));
  REQUIRE(map_ranks(kMaxRanksPerDaemon, one, MapSpec{}));
}

TEST_CASE("daemons that share a host share its slots: oversubscription is per host", "[jobs]") {
  // `grove start --local 4` on a 2-core host: every daemon reports the
  // host's 2 cores. 8 ranks are 2 per daemon but 8 on 2 cores: every rank of
  // the host must be told it is oversubscribed, and all alike.
  const std::vector<MapDaemon> shared = {{0, 2, "vm"}, {1, 2, "vm"}, {2, 2, "vm"}, {3, 2, "vm"}};
  auto map = map_ranks(8, shared, MapSpec{MapPolicy::node, 0});
  REQUIRE(map);
  CHECK(map->oversubscribed);
  JobSpec spec;
  spec.apps = {JobApp{{"true"}, {}, "", 8}};
  spec.ranks = map->ranks;
  spec.node_slots = map->node_slots;
  spec.hostnames = {"vm", "vm", "vm", "vm"};
  for (std::uint32_t node = 0; node < 4; ++node)
    CHECK(spec.node_oversubscribed(node));
  // Two ranks on the host's two cores are not, whichever daemons hold them.
  auto fits = map_ranks(2, shared, MapSpec{MapPolicy::node, 0});
  REQUIRE(fits);
  CHECK_FALSE(fits->oversubscribed);
  // Separate hosts keep their own slots: 2 ranks on each of 4 hosts fit.
  const std::vector<MapDaemon> hosts = {{0, 2, "a"}, {1, 2, "b"}, {2, 2, "c"}, {3, 2, "d"}};
  auto spread = map_ranks(8, hosts, MapSpec{MapPolicy::node, 0});
  REQUIRE(spread);
  CHECK_FALSE(spread->oversubscribed);
  spec.ranks = spread->ranks;
  spec.node_slots = spread->node_slots;
  spec.hostnames = {"a", "b", "c", "d"};
  for (std::uint32_t node = 0; node < 4; ++node)
    CHECK_FALSE(spec.node_oversubscribed(node));
}

TEST_CASE("without -n a job fills the slots of the DVM's hosts, each host counted once", "[jobs]") {
  const std::vector<MapDaemon> shared = {{0, 2, "vm"}, {1, 2, "vm"}, {2, 2, "vm"}};
  CHECK(ranks_to_fill(shared, MapSpec{}) == 2);  // three daemons of one 2-core host
  const std::vector<MapDaemon> hosts = {{0, 4, "a"}, {1, 2, "b"}, {2, 2, "b"}};
  CHECK(ranks_to_fill(hosts, MapSpec{}) == 6);
  CHECK(ranks_to_fill(hosts, MapSpec{MapPolicy::ppr, 3}) == 9);  // N per daemon
  const std::vector<MapDaemon> sockets = {{0, 4, "a", 2}, {1, 4, "b", 1}};
  CHECK(ranks_to_fill(sockets, MapSpec{MapPolicy::ppr_socket, 2}) == 6);
  auto filled = map_ranks(ranks_to_fill(hosts, MapSpec{}), hosts, MapSpec{});
  REQUIRE(filled);
  CHECK_FALSE(filled->oversubscribed);
}

TEST_CASE("--bind-to core: more ranks than a host's cores is named, per host", "[jobs]") {
  // Two daemons of a 2-core host and a 4-core host of its own.
  std::vector<MapDaemon> daemons = {{0, 2, "vm"}, {1, 2, "vm"}, {2, 4, "big"}};
  for (MapDaemon& daemon : daemons)
    daemon.cores = daemon.hostname == "vm" ? 2 : 4;
  auto six = map_ranks(6, daemons, MapSpec{MapPolicy::node, 0});
  REQUIRE(six);
  // By node: ranks 0, 3 on daemon 0, 1, 4 on daemon 1 (both vm), 2, 5 on big.
  auto over = check_core_overload(*six, daemons);
  REQUIRE_FALSE(over);
  CHECK_THAT(over.error().message, Catch::Contains("host vm would bind 4 ranks to its 2 cores"));
  auto three = map_ranks(3, daemons, MapSpec{MapPolicy::node, 0});
  REQUIRE(three);
  CHECK(check_core_overload(*three, daemons));  // vm 2, big 1
  daemons[0].cores = daemons[1].cores = 0;      // not known: nothing to refuse
  CHECK(check_core_overload(*six, daemons));
}

TEST_CASE(":pe=K gives each rank K cores: K slots each, K cores to bind", "[jobs]") {
  auto spec = parse_map_policy("slot:pe=2");
  REQUIRE(spec);
  CHECK(*spec == MapSpec{MapPolicy::slot, 0, 2});
  CHECK(*parse_map_policy("ppr:2:node:pe=3") == MapSpec{MapPolicy::ppr, 2, 3});
  CHECK(map_policy_text(*spec) == "slot:pe=2");
  CHECK(*parse_map_policy("slot:PE=2") == *spec);  // Open MPI's spelling
  CHECK(map_policy_text(MapSpec{MapPolicy::ppr, 2, 3}) == "ppr:2:node:pe=3");
  for (const char* bad : {"slot:pe=0", "slot:pe=x", "slot:pe=", "diagonal:pe=2"}) {
    INFO(bad);
    CHECK_FALSE(parse_map_policy(bad));
  }
  // Four 4-core hosts' worth of slots, two ranks each at pe=2.
  std::vector<MapDaemon> daemons = {{0, 4, "a"}, {1, 4, "b"}};
  for (MapDaemon& daemon : daemons)
    daemon.cores = 4;
  CHECK(ranks_to_fill(daemons, *spec) == 4);
  auto four = map_ranks(4, daemons, *spec);
  REQUIRE(four);
  CHECK(owners(*four) == std::vector<Vpid>{0, 0, 1, 1});
  CHECK_FALSE(four->oversubscribed);
  CHECK(four->node_slots == std::vector<std::uint32_t>{2, 2});
  auto five = map_ranks(5, daemons, *spec);
  REQUIRE(five);
  CHECK(five->oversubscribed);
  CHECK(check_core_overload(*four, daemons, 2));
  auto over = check_core_overload(*five, daemons, 2);
  REQUIRE_FALSE(over);
  CHECK_THAT(over.error().message, Catch::Contains("would bind 3 ranks of 2 cores each to its 4"));
  // One rank of 8 cores on a 2-slot host: more cores than slots.
  auto wide = map_ranks(1, {{0, 2, "small"}}, MapSpec{MapPolicy::slot, 0, 8});
  REQUIRE(wide);
  CHECK(wide->oversubscribed);
}

TEST_CASE("--rank-by renumbers the placed ranks: by slot contiguous, by node round robin",
          "[jobs]") {
  MapSpec by_node{MapPolicy::slot, 0};
  by_node.rank_by = RankBy::node;
  auto dealt = map_ranks(5, kDaemons, by_node);
  REQUIRE(dealt);
  // The slots as --map-by slot fills them (2, 2, 1), numbered across daemons.
  CHECK(owners(*dealt) == std::vector<Vpid>{0, 1, 2, 0, 1});
  CHECK(dealt->ranks[3].local_rank == 1);
  MapSpec by_slot{MapPolicy::node, 0};
  by_slot.rank_by = RankBy::slot;
  auto contiguous = map_ranks(5, kDaemons, by_slot);
  REQUIRE(contiguous);
  CHECK(owners(*contiguous) == std::vector<Vpid>{0, 0, 1, 1, 2});
  CHECK(*parse_rank_by("node") == RankBy::node);
  CHECK(*parse_rank_by("slot") == RankBy::slot);
  auto bad = parse_rank_by("socket");
  REQUIRE_FALSE(bad);
  CHECK_THAT(bad.error().message, Catch::Contains("expected slot or node"));
}

TEST_CASE("-H on a running DVM keeps the named hosts' daemons, with the slots given", "[jobs]") {
  const std::vector<MapDaemon> daemons = {
      {0, 2, "vm.example.org"}, {1, 2, "vm.example.org"}, {2, 4, "big"}};
  auto local = restrict_to_hosts(daemons, {{"localhost", 1}}, "vm.example.org");
  REQUIRE(local);
  REQUIRE(local->size() == 2);  // both daemons of the host
  CHECK((*local)[0].slots == 1);
  CHECK((*local)[1].vpid == 1);
  auto short_name = restrict_to_hosts(daemons, {{"big", 0}, {"vm", 0}}, "vm.example.org");
  REQUIRE(short_name);
  CHECK(short_name->size() == 3);
  CHECK(short_name->back().slots == 4);  // not given: the daemon's own
  // An address is matched whole: 10.0.0.6 is not 10.0.0.5's "short name".
  auto address = restrict_to_hosts({{0, 2, "10.0.0.5"}}, {{"10.0.0.6", 0}}, "10.0.0.5");
  CHECK_FALSE(address);
  auto missing = restrict_to_hosts(daemons, {{"big", 0}, {"nowhere", 2}}, "vm.example.org");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message ==
        "--host nowhere: no daemon of this DVM runs there (its hosts: big, vm.example.org)");
}
