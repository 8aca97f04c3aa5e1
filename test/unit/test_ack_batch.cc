// Fence-release acks that share frames (EngineConfig::ack_delay_ns,
// grpcomm/ack_batch.cc): the frame counts per fence, pinned, and what an
// ack still has to do (complete the release at its root, survive a repair).
#include <catch2/catch.hpp>

#include "grpcomm/engine.h"
#include "grpcomm/tags.h"
#include "local_cluster.h"

using namespace grove;
using grove::test::InFlight;
using grove::test::LocalCluster;

namespace {

EngineConfig config(TimeNs ack_delay_ns) {
  EngineConfig c;
  c.radices = {64, 4};
  c.ack_delay_ns = ack_delay_ns;
  return c;
}

std::size_t count(LocalCluster& cluster, FrameType type) {
  std::size_t n = 0;
  for (const InFlight& frame : cluster.sent())
    n += frame.header.type == type ? 1 : 0;
  return n;
}

// Frames a DVM of `n` daemons sends for `fences` back-to-back barriers.
struct FenceFrames {
  std::size_t rollups = 0, releases = 0, acks = 0;
  std::size_t total() const { return rollups + releases + acks; }
};

FenceFrames barriers(std::uint32_t n, std::size_t fences, TimeNs ack_delay_ns) {
  LocalCluster cluster(n, config(ack_delay_ns));
  for (std::size_t round = 0; round < fences; ++round) {
    cluster.contribute_all("job");
    cluster.run();  // released everywhere; the acks may still wait
    for (Vpid vpid = 0; vpid < n; ++vpid)
      REQUIRE(cluster.fence_done(vpid).size() == round + 1);
  }
  cluster.settle();
  CHECK(cluster.engine(0).open_ops(TopologyKind::release) == 0);
  return {count(cluster, FrameType::fence_rollup), count(cluster, FrameType::xcast_data),
          count(cluster, FrameType::xcast_ack)};
}

}  // namespace

TEST_CASE("frames per fence, pinned: acks of back-to-back releases share one frame per daemon",
          "[ack_batch]") {
  // Acks at once (grpcomm_release_ack_delay_us 0): 3(N-1) frames a fence,
  // a third of them acks: 45 at 16 daemons, 93 at 32.
  for (std::uint32_t n : {8u, 16u, 32u}) {
    INFO("N " << n);
    const FenceFrames at_once = barriers(n, 10, 0);
    CHECK(at_once.rollups == 10 * (n - 1));
    CHECK(at_once.releases == 10 * (n - 1));
    CHECK(at_once.acks == 10 * (n - 1));
    // Acks that wait: ten fences inside the delay cost each daemon one ack
    // frame in all, so a fence costs 2(N-1) frames and (N-1)/10 acks.
    const FenceFrames batched = barriers(n, 10, 10'000'000);
    CHECK(batched.rollups == 10 * (n - 1));
    CHECK(batched.releases == 10 * (n - 1));
    CHECK(batched.acks == n - 1);
    CHECK(batched.total() == 21 * (n - 1));
  }
}

TEST_CASE("a single waiting ack is a plain ack; several are one batch naming each op",
          "[ack_batch]") {
  LocalCluster cluster(3, config(1'000'000));  // 0 -> 1, 2 on the release tree
  cluster.contribute_all("job");
  cluster.run();
  CHECK(count(cluster, FrameType::xcast_ack) == 0);  // waiting
  CHECK(cluster.engine(0).open_ops(TopologyKind::release) == 1);
  cluster.fire_timers();
  cluster.run();
  REQUIRE(count(cluster, FrameType::xcast_ack) == 2);
  for (const InFlight& frame : cluster.sent()) {
    if (frame.header.type != FrameType::xcast_ack) continue;
    CHECK(wire_decode<XcastAck>(*frame.frame.payload));
  }
  CHECK(cluster.engine(0).open_ops(TopologyKind::release) == 0);

  for (int round = 0; round < 3; ++round) {
    cluster.contribute_all("job");
    cluster.run();
  }
  CHECK(cluster.engine(0).open_ops(TopologyKind::release) == 3);
  cluster.fire_timers();
  cluster.run();
  std::size_t batches = 0;
  for (const InFlight& frame : cluster.sent()) {
    if (frame.header.type != FrameType::xcast_ack) continue;
    if (auto batch = wire_decode<XcastAckBatch>(*frame.frame.payload)) {
      ++batches;
      CHECK(batch->more.size() == 2);  // the header names the first of the three
    }
  }
  CHECK(batches == 2);
  CHECK(cluster.engine(0).open_ops(TopologyKind::release) == 0);
}

TEST_CASE("acks waiting when a daemon dies still let the repaired tree finish every release",
          "[ack_batch]") {
  // 16 daemons, radix 4: daemon 1 relays to its own children. Its children's
  // acks wait; 1 dies; the controller repairs, and the waiting acks (made in
  // the old view) and the repair's own must complete every release.
  LocalCluster cluster(16, config(5'000'000));
  for (int round = 0; round < 4; ++round) {
    cluster.contribute_all("job");
    cluster.run();
  }
  REQUIRE(cluster.engine(0).open_ops(TopologyKind::release) == 4);
  const std::size_t acks_before = count(cluster, FrameType::xcast_ack);
  cluster.kill(1);
  cluster.declare_departure(1);
  cluster.run();
  // The view changed: every waiting ack went before the repair, no timer needed.
  CHECK(count(cluster, FrameType::xcast_ack) > acks_before);
  cluster.settle();
  CHECK(cluster.engine(0).open_ops(TopologyKind::release) == 0);
  for (Vpid vpid = 0; vpid < 16; ++vpid) {
    if (vpid == 1) continue;
    CHECK(cluster.engine(vpid).check_invariants());
  }
}

TEST_CASE("a malformed ack batch is counted and changes nothing", "[ack_batch]") {
  LocalCluster cluster(3, config(1'000'000));
  cluster.contribute_all("job");
  cluster.run();
  const std::uint64_t before = cluster.engine(0).stats().malformed;
  FrameHeader header;
  header.type = FrameType::xcast_ack;
  header.tag = tags::fence_release;
  header.topology = TopologyKind::release;
  header.radix = 4;
  header.op_id = 1;
  header.sender = 1;
  header.origin = 1;
  header.destination = 0;
  header.epoch = cluster.engine(0).membership().epoch();
  header.tree_version = cluster.engine(0).membership().tree_version();
  Bytes truncated = encode(XcastAckBatch{1, {2, 3}});
  truncated.pop_back();
  Outbox out;
  cluster.engine(0).on_frame(cluster.now(), 1,
                             make_wire_frame(header, share_bytes(std::move(truncated))), out);
  CHECK(cluster.engine(0).stats().malformed == before + 1);
  CHECK(cluster.engine(0).open_ops(TopologyKind::release) == 1);
}

TEST_CASE("the prompt fence's releases are acked at once, and others' acks still wait",
          "[ack_batch]") {
  EngineConfig base = config(10'000'000);
  base.prompt_ack_signature = "bench-barrier";
  LocalCluster cluster(8, base);
  cluster.contribute_all("bench-barrier");
  cluster.run();
  CHECK(count(cluster, FrameType::xcast_ack) == 7);
  CHECK(cluster.engine(0).open_ops(TopologyKind::release) ==
        0);  // complete: the next round may start
  cluster.contribute_all("job");
  cluster.run();
  CHECK(count(cluster, FrameType::xcast_ack) == 7);
  CHECK(cluster.engine(0).open_ops(TopologyKind::release) == 1);
  cluster.settle();
  CHECK(count(cluster, FrameType::xcast_ack) == 14);
  CHECK(cluster.engine(0).open_ops(TopologyKind::release) == 0);
}

TEST_CASE("waiting acks go with the first input after the delay, without their timer",
          "[ack_batch]") {
  // A fence slower than the delay: the next release's arrival (a wake-up
  // the daemon has anyway) takes the last one's acks along, and the idle
  // timer is cancelled, so no fence costs a wake-up for its acks alone.
  LocalCluster cluster(8, config(1'000'000));
  cluster.contribute_all("job");
  cluster.run();
  CHECK(count(cluster, FrameType::xcast_ack) == 0);
  cluster.advance(2'000'000);  // past the delay, short of the idle timer (3 delays)
  cluster.contribute_all("job");
  cluster.run();
  // Radix 4: 0 relays to 1-4, 1 to 5-7. Each of the six leaves' first ack
  // went with its next input (its contribution); the relay's waits from the
  // moment its children's acks came, and the second fence's acks wait.
  CHECK(count(cluster, FrameType::xcast_ack) == 6);
  CHECK(cluster.engine(0).open_ops(TopologyKind::release) == 2);
  bool cancelled = false;
  for (Vpid vpid = 2; vpid < 8; ++vpid) {
    for (const Effect& effect : cluster.effects(vpid)) {
      if (const auto* cancel = std::get_if<CancelTimer>(&effect))
        cancelled = cancelled || cancel->id.kind == TimerKind::ack_flush;
    }
  }
  CHECK(cancelled);
  cluster.settle();
  CHECK(count(cluster, FrameType::xcast_ack) == 14);
  CHECK(cluster.engine(0).open_ops(TopologyKind::release) == 0);
}
