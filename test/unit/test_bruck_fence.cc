// Fences as a Bruck exchange (grpcomm_fence_topology bruck), driven directly
// over the in-order local network: exact frame counts, subsets, a member's
// death before and after its block spread, the rejoin of a daemon that had
// ended the round, a mismatched daemon and a round too large for a frame.
#include <catch2/catch.hpp>

#include "grpcomm/engine.h"
#include "grpcomm/tags.h"
#include "local_cluster.h"
#include "rml/bruck_schedule.h"

using namespace grove;
using grove::test::InFlight;
using grove::test::LocalCluster;

namespace {

EngineConfig bruck_config() {
  EngineConfig c;
  c.fence_topology = FenceTopology::bruck;
  return c;
}

Bytes contribution_of(Vpid vpid, std::size_t size = 24) {
  Bytes out(size);
  for (std::size_t i = 0; i < size; ++i)
    out[i] = static_cast<std::byte>((vpid * 31 + i * 7) & 0xFF);
  return out;
}

FenceRequest request(Vpid vpid, const VpidSet& participants, std::size_t size = 24) {
  return FenceRequest{"job", participants, contribution_of(vpid, size)};
}

std::vector<const InFlight*> exchange_frames(LocalCluster& cluster) {
  std::vector<const InFlight*> frames;
  for (const InFlight& frame : cluster.sent()) {
    if (frame.header.type == FrameType::fence_exchange) frames.push_back(&frame);
  }
  return frames;
}

// Every listed daemon ended round 1 once, the same way, with the same bytes.
FenceDone same_ending(LocalCluster& cluster, const std::vector<Vpid>& daemons) {
  REQUIRE(!daemons.empty());
  const auto first = cluster.fence_done(daemons.front());
  REQUIRE(first.size() == 1);
  for (Vpid vpid : daemons) {
    INFO("daemon " << vpid);
    const auto done = cluster.fence_done(vpid);
    REQUIRE(done.size() == 1);
    CHECK(done[0].status == first[0].status);
    CHECK(done[0].lost == first[0].lost);
    if (first[0].release) {
      REQUIRE(done[0].release);
      CHECK(*done[0].release == *first[0].release);
    }
  }
  return first[0];
}

std::vector<Vpid> contributors(const FenceDone& done) {
  std::vector<Vpid> out;
  auto release = wire_decode<FenceRelease>(*done.release);
  REQUIRE(release);
  for (const auto& [vpid, data] : release->contributions) {
    CHECK(data == contribution_of(vpid));
    out.push_back(vpid);
  }
  return out;
}

}  // namespace

TEST_CASE("a Bruck fence: ceil(log2 N) frames per daemon, the schedule's blocks, no release",
          "[engine][bruck]") {
  for (std::uint32_t n : {1u, 2u, 3u, 8u, 13u, 33u}) {
    INFO("N " << n);
    LocalCluster cluster(n, bruck_config());
    const VpidSet everyone = VpidSet::span(0, n - 1);
    for (Vpid vpid = 0; vpid < n; ++vpid)
      cluster.contribute(vpid, request(vpid, everyone));
    cluster.run();
    std::vector<Vpid> all;
    for (Vpid vpid = 0; vpid < n; ++vpid)
      all.push_back(vpid);
    const FenceDone done = same_ending(cluster, all);
    CHECK(done.status == FenceStatus::ok);
    CHECK(contributors(done).size() == n);
    // Exactly the schedule: each daemon one frame per round, to i + 2^k,
    // carrying the round's blocks; nothing on any tree.
    const auto frames = exchange_frames(cluster);
    CHECK(frames.size() == std::size_t{n} * bruck::rounds(n));
    CHECK(frames.size() == cluster.sent().size());
    for (const InFlight* frame : frames) {
      auto round = wire_decode<BruckRound>(*frame->frame.payload);
      REQUIRE(round);
      CHECK(frame->header.topology == TopologyKind::bruck);
      CHECK(frame->to == bruck::send_to(frame->from, round->round, n));
      CHECK(round->contributions.size() == bruck::blocks_sent(round->round, n));
    }
  }
}

TEST_CASE("a subset's Bruck fence runs among the participants' daemons only", "[engine][bruck]") {
  LocalCluster cluster(12, bruck_config());
  const std::vector<Vpid> hosts = {0, 2, 5, 7, 11};
  const VpidSet participants = VpidSet::from_list(hosts);
  for (Vpid vpid : hosts)
    cluster.contribute(vpid, request(vpid, participants));
  cluster.run();
  const FenceDone done = same_ending(cluster, hosts);
  CHECK(done.status == FenceStatus::ok);
  CHECK(contributors(done) == hosts);
  CHECK(exchange_frames(cluster).size() == hosts.size() * bruck::rounds(hosts.size()));
  for (const InFlight* frame : exchange_frames(cluster))
    CHECK(participants.contains(frame->to));
  for (Vpid vpid : {1u, 3u, 4u, 6u, 8u, 9u, 10u})
    CHECK(cluster.engine(vpid).fence_generation("job") == 0);
}

TEST_CASE("a member that dies before contributing ends the round participant-lost everywhere",
          "[engine][bruck]") {
  LocalCluster cluster(8, bruck_config());
  const VpidSet everyone = VpidSet::span(0, 7);
  cluster.kill(5);
  for (Vpid vpid = 0; vpid < 8; ++vpid) {
    if (vpid != 5) cluster.contribute(vpid, request(vpid, everyone));
  }
  cluster.run();
  for (Vpid vpid = 0; vpid < 8; ++vpid)
    CHECK(cluster.fence_done(vpid).empty());  // 5's block is missing: nobody ends it
  cluster.declare_departure(5);
  cluster.run();
  const FenceDone done = same_ending(cluster, {0, 1, 2, 3, 4, 6, 7});
  CHECK(done.status == FenceStatus::participant_lost);
  CHECK(done.lost == 5);
  CHECK(cluster.engine(0).stats().bruck_runs == 1);  // one run after the first
}

TEST_CASE("a member that dies after its block left: the next run carries it, the round is ok",
          "[engine][bruck]") {
  LocalCluster cluster(8, bruck_config());
  const VpidSet everyone = VpidSet::span(0, 7);
  // 5 contributes first: its round 0 reaches 6 (which keeps it until it
  // contributes), and then 5 dies with the rest of its rounds unsent.
  cluster.contribute(5, request(5, everyone));
  cluster.run();
  cluster.kill(5);
  for (Vpid vpid = 0; vpid < 8; ++vpid) {
    if (vpid != 5) cluster.contribute(vpid, request(vpid, everyone));
  }
  cluster.run();
  cluster.declare_departure(5);
  cluster.run();
  const FenceDone done = same_ending(cluster, {0, 1, 2, 3, 4, 6, 7});
  CHECK(done.status == FenceStatus::ok);
  CHECK(contributors(done).size() == 8);  // 5's too: 6 held it, and it travelled as an outsider
}

TEST_CASE("a daemon that ended the round rejoins the run a death started", "[engine][bruck]") {
  // Five members, three rounds: 1 hears nothing, so it sends only its
  // round 0; 3 (who hears from 1 in round 1) never sends its round 2, and
  // 0 (round 2 from 1) and 2 (round 2 from 3) cannot end the round; only 4
  // does. Then 3 dies: 0, 1 and 2 start a new run, whose frames bring 4
  // back in with everything it holds.
  for (bool weakened : {false, true}) {
    INFO((weakened ? "rejoin weakened" : "as it runs"));
    LocalCluster cluster(5, bruck_config(), [&](EngineConfig& c) {
      if (weakened) c.weakened.add(RepairRule::bruck_rejoin);
    });
    const VpidSet everyone = VpidSet::span(0, 4);
    for (Vpid vpid = 0; vpid < 5; ++vpid)
      cluster.contribute(vpid, request(vpid, everyone));
    cluster.run([](const InFlight& frame) {
      return frame.to == 1 && frame.header.type == FrameType::fence_exchange;
    });
    CHECK(cluster.fence_done(4).size() == 1);
    for (Vpid vpid : {0u, 1u, 2u, 3u})
      CHECK(cluster.fence_done(vpid).empty());
    cluster.kill(3);
    cluster.declare_departure(3);
    cluster.run([](const InFlight& frame) {
      return frame.to == 1 && frame.header.type == FrameType::fence_exchange;
    });
    cluster.release_held();  // the old run's frames reach 1 late: dropped
    cluster.run();
    if (weakened) {
      CHECK(cluster.fence_done(0).empty());  // waits for ever for 4's block
      continue;
    }
    const FenceDone done = same_ending(cluster, {0, 1, 2, 4});
    CHECK(done.status == FenceStatus::ok);
    CHECK(contributors(done).size() == 5);  // 3's came from the one that had ended
    CHECK(cluster.engine(4).stats().bruck_runs == 1);
    CHECK(cluster.engine(1).stats().bruck_stale >= 1);
    for (Vpid vpid : {0u, 1u, 2u, 4u})
      CHECK(cluster.engine(vpid).check_invariants());
  }
}

TEST_CASE("a Bruck frame at a daemon whose fences take the trees is refused with help",
          "[engine][bruck]") {
  LocalCluster cluster(4, bruck_config(), [](EngineConfig& c) {
    if (c.self == 1) c.fence_topology = FenceTopology::tree;
  });
  const VpidSet everyone = VpidSet::span(0, 3);
  for (Vpid vpid : {0u, 2u, 3u})
    cluster.contribute(vpid, request(vpid, everyone));
  cluster.run();
  CHECK(cluster.engine(1).stats().mismatches >= 1);
  bool helped = false;
  for (const Effect& effect : cluster.effects(1)) {
    if (const auto* help = std::get_if<ShowHelpTopic>(&effect))
      helped = helped || help->topic == "fence-topology-mismatch";
  }
  CHECK(helped);
}

TEST_CASE("a Bruck round too large for a frame ends too-large on every daemon", "[engine][bruck]") {
  // Each contribution fits alone; the blocks of later rounds do not.
  LocalCluster cluster(8, bruck_config(), [](EngineConfig& c) { c.max_payload = 2'000; });
  const VpidSet everyone = VpidSet::span(0, 7);
  for (Vpid vpid = 0; vpid < 8; ++vpid)
    cluster.contribute(vpid, request(vpid, everyone, 600));
  cluster.run();
  const FenceDone done = same_ending(cluster, {0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(done.status == FenceStatus::too_large);
  for (const InFlight* frame : exchange_frames(cluster))
    CHECK(frame->frame.payload->size() <= 2'000);
}
