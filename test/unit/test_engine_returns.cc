// Membership that moves both ways, at the engine: a daemon that comes back at
// its vpid or joins past the end gets what is in flight, starts from the
// controller's rounds, and is counted lost to a fence placed before it came.
#include <catch2/catch.hpp>

#include "grpcomm/engine.h"
#include "grpcomm/tags.h"
#include "local_cluster.h"

using namespace grove;
using grove::test::InFlight;
using grove::test::LocalCluster;

namespace {

EngineConfig config(std::uint32_t radix, std::uint32_t radix2) {
  EngineConfig c;
  c.radices = {radix, radix2};
  return c;
}

FenceRequest placed_at_start(const std::string& signature, VpidSet participants) {
  return FenceRequest{signature, std::move(participants), {}, 0};
}

}  // namespace

TEST_CASE("a daemon that comes back while a release is held gets it in its new life",
          "[engine][returns]") {
  // Release radix 2 over 12: 1 holds the release for slots 3 and 4, and 3's
  // subtree is 7 and 8. 3 dies (8 stands in for it) and comes back before 1
  // lets the release go: 3 takes its slot back and must get it.
  EngineConfig base = config(64, 2);
  base.release_delay_ns = 1'000'000;
  base.release_delay_target = 1;
  LocalCluster cluster(12, base);
  cluster.kill(3);
  cluster.declare_departure(3);
  cluster.run();
  REQUIRE(cluster.engine(0).tree(TopologyKind::release).slot(8) == 3u);
  // The job's ranks are on every daemon but the dead one.
  const VpidSet hosts = VpidSet::from_list({0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11});
  hosts.for_each([&](Vpid vpid) { cluster.contribute(vpid, placed_at_start("job", hosts)); });
  cluster.run();
  REQUIRE(cluster.delivered(1).size() == 1);
  REQUIRE(cluster.delivered(4).empty());
  CHECK(cluster.bring_back(3) == 3);
  cluster.run();
  CHECK(cluster.engine(3).membership().epoch() == 2);
  CHECK(cluster.engine(0).tree(TopologyKind::release).slot(3) == 3u);
  CHECK(cluster.engine(0).tree(TopologyKind::release).slot(8) == 8u);
  CHECK(cluster.engine(0).open_ops(TopologyKind::release) == 1);  // 1 still holds it
  cluster.fire_timers();
  cluster.run();
  // Every daemon delivered the release once, 3 in its new life.
  for (Vpid vpid = 0; vpid < 12; ++vpid) {
    INFO("vpid " << vpid);
    CHECK(cluster.delivered(vpid).size() == 1);
  }
  // Both broadcasts (the notice and the release) are complete at the originator.
  CHECK(cluster.engine(0).open_ops(TopologyKind::release) == 0);
  CHECK(cluster.engine(0).open_ops(TopologyKind::routing) == 0);
  // The fence is done at every daemon that contributed, and 3, which hosts
  // none of the job, knows its round all the same.
  for (Vpid vpid = 0; vpid < 12; ++vpid) {
    if (vpid == 3) continue;
    INFO("vpid " << vpid);
    REQUIRE(cluster.fence_done(vpid).size() == 1);
  }
  CHECK(cluster.engine(3).fence_generation("job") == 1);
}

TEST_CASE("a joiner starts from the controller's rounds and gets every release after it",
          "[engine][returns]") {
  LocalCluster cluster(6, config(3, 2));
  const VpidSet first = VpidSet::span(0, 5);
  for (int round = 0; round < 3; ++round) {
    first.for_each([&](Vpid vpid) { cluster.contribute(vpid, placed_at_start("job", first)); });
    cluster.run();
  }
  REQUIRE(cluster.engine(5).fence_generation("job") == 3);
  const Vpid joiner = cluster.join();
  CHECK(joiner == 6);
  cluster.run();
  // The joined-late rule: it knows round 3 as the others do, so a round it
  // stamps is theirs.
  CHECK(cluster.engine(joiner).fence_generation("job") == 3);
  CHECK(cluster.engine(joiner).membership().vpid_end() == 7);
  for (Vpid vpid = 0; vpid < 6; ++vpid) {
    INFO("vpid " << vpid);
    CHECK(cluster.engine(vpid).membership().is_alive(joiner));
    CHECK(cluster.engine(vpid).membership().incarnation(joiner) == 1);
  }
  // A later round of the old job reaches it; a job placed over all seven runs.
  first.for_each([&](Vpid vpid) { cluster.contribute(vpid, placed_at_start("job", first)); });
  cluster.run();
  CHECK(cluster.engine(joiner).fence_generation("job") == 4);
  CHECK(cluster.delivered(joiner).size() == 1);
  const VpidSet all = VpidSet::span(0, 6);
  for (Vpid vpid = 0; vpid <= joiner; ++vpid)
    cluster.contribute(vpid, FenceRequest{"grown", all, to_bytes("x"), 1});
  cluster.run();
  for (Vpid vpid = 0; vpid <= joiner; ++vpid) {
    INFO("vpid " << vpid);
    auto done = cluster.fence_done(vpid);
    REQUIRE_FALSE(done.empty());
    CHECK(done.back().key == FenceKey{"grown", 1});
    CHECK(done.back().status == FenceStatus::ok);
  }
  CHECK(cluster.engine(0).open_ops(TopologyKind::release) == 0);
  CHECK(cluster.engine(0).open_ops(TopologyKind::routing) == 0);
}

TEST_CASE("a participant that came back after its job was placed is lost to its fences",
          "[engine][returns]") {
  LocalCluster cluster(5, config(2, 2));
  const VpidSet hosts = VpidSet::span(0, 4);
  hosts.for_each([&](Vpid vpid) { cluster.contribute(vpid, placed_at_start("job", hosts)); });
  cluster.run();
  cluster.kill(3);
  cluster.declare_departure(3);
  cluster.run();
  cluster.bring_back(3);
  cluster.run();
  // Round 2: everyone but the new 3 (its ranks died with its predecessor).
  // 3 is alive, but it came back after the job was placed (epoch 0): the
  // round ends at once, naming it, instead of waiting for it for ever.
  for (Vpid vpid : {0u, 1u, 2u, 4u})
    cluster.contribute(vpid, placed_at_start("job", hosts));
  cluster.run();
  for (Vpid vpid : {0u, 1u, 2u, 4u}) {
    INFO("vpid " << vpid);
    auto done = cluster.fence_done(vpid);
    REQUIRE(done.size() == 2);
    CHECK(done[1].status == FenceStatus::participant_lost);
    CHECK(done[1].lost == 3);
  }
  // A job placed after the return counts on it.
  for (Vpid vpid = 0; vpid < 5; ++vpid)
    cluster.contribute(vpid, FenceRequest{"next", hosts, {}, 2});
  cluster.run();
  CHECK(cluster.fence_done(3).size() == 1);
  CHECK(cluster.fence_done(3)[0].status == FenceStatus::ok);
}

TEST_CASE("a relay does not wait for a participant that came back after its job was placed",
          "[engine][returns]") {
  // Routing radix 2 over 5: 1's subtree is 1, 3 and 4. The job is on 1 and 3
  // only (not the controller): 1 must not wait for the new 3, or the
  // controller would never hear of the round at all.
  LocalCluster cluster(5, config(2, 2));
  const VpidSet hosts = VpidSet::from_list({1, 3});
  cluster.kill(3);
  cluster.declare_departure(3);
  cluster.run();
  cluster.bring_back(3);
  cluster.run();
  cluster.contribute(1, placed_at_start("job", hosts));
  cluster.run();
  auto done = cluster.fence_done(1);
  REQUIRE(done.size() == 1);
  CHECK(done[0].status == FenceStatus::participant_lost);
  CHECK(done[0].lost == 3);
}

TEST_CASE("a frame from a joiner is taken only from a sender that has seen a newer epoch",
          "[engine][returns]") {
  LocalCluster cluster(4, config(2, 2));
  // A rollup from vpid 9 (past the end of every view here) to its parent, 1.
  // Stamped with a newer epoch it is from a joiner 1 has not heard of yet;
  // stamped with 1's own epoch it is from a stranger.
  EngineConfig stranger_config = config(2, 2);
  stranger_config.self = 9;
  // 9 joined at epoch 1 (4 to 8 never started), as the controller sees it.
  Membership grown = *Membership::create({0, 1, 2, 3});
  REQUIRE(grown.apply({MembershipEventKind::return_, 9, 1}));
  Engine stranger(stranger_config, grown);
  Outbox out;
  stranger.contribute(0, FenceRequest{"s", VpidSet::from_list({9}), {}, 0}, out);
  const auto* frame = std::get_if<SendFrame>(&out.effects().front());
  REQUIRE(frame != nullptr);
  REQUIRE(frame->target == 1);
  Engine& engine = cluster.engine(1);
  Outbox ignored;
  const std::uint64_t malformed = engine.stats().malformed;
  engine.on_frame(0, 9, frame->frame, ignored);
  CHECK(engine.stats().malformed == malformed);  // epoch 1 > 0: taken
  Membership not_newer = *Membership::create({0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  Engine same_epoch(stranger_config, not_newer);
  Outbox second;
  same_epoch.contribute(0, FenceRequest{"t", VpidSet::from_list({9}), {}, 0}, second);
  const auto* stale = std::get_if<SendFrame>(&second.effects().front());
  REQUIRE(stale != nullptr);
  engine.on_frame(0, 9, stale->frame, ignored);
  CHECK(engine.stats().malformed == malformed + 1);
  // A vpid inside the set's span that is no member (a hole) is a stranger
  // whatever its epoch: it is not a joiner. 2's rollup (epoch 1) to 0, at a
  // controller whose daemon set has a hole at 2.
  EngineConfig two_config = config(2, 2);
  two_config.self = 2;
  Membership two_view = *Membership::create({0, 1, 2, 3});
  two_view.apply({MembershipEventKind::departure, 3, 1});
  Engine two(two_config, two_view);
  Outbox from_two;
  two.contribute(0, FenceRequest{"h", VpidSet::from_list({2}), {}, 0}, from_two);
  const auto* rollup = std::get_if<SendFrame>(&from_two.effects().front());
  REQUIRE(rollup != nullptr);
  REQUIRE(rollup->target == 0);
  EngineConfig hole_config = config(2, 2);
  hole_config.self = 0;
  Engine with_hole(hole_config, *Membership::create({0, 1, 3}));
  Outbox third;
  with_hole.on_frame(0, 2, rollup->frame, third);
  CHECK(with_hole.stats().malformed == 1);
  CHECK(with_hole.open_fences() == 0);
}
