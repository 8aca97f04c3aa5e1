// The collective engine driven directly, over an in-order local network.
#include <catch2/catch.hpp>

#include "grpcomm/engine.h"
#include "grpcomm/tags.h"
#include "local_cluster.h"

using namespace grove;
using grove::test::InFlight;
using grove::test::LocalCluster;

namespace {

EngineConfig config(std::uint32_t radix, std::uint32_t radix2, bool low = true) {
  EngineConfig c;
  c.radices = {radix, radix2};
  c.low_radix_release = low;
  return c;
}

std::size_t count_sent(LocalCluster& cluster, FrameType type, std::uint16_t tag,
                       std::optional<Vpid> from = std::nullopt) {
  std::size_t n = 0;
  for (const InFlight& frame : cluster.sent()) {
    if (frame.header.type == type && frame.header.tag == tag && (!from || frame.from == *from)) {
      ++n;
    }
  }
  return n;
}

Bytes pattern(std::size_t size, unsigned seed) {
  Bytes out(size);
  std::uint32_t state = seed * 2654435761u + 1;
  for (auto& byte : out) {
    state = state * 1664525u + 1013904223u;
    byte = static_cast<std::byte>(state >> 24);
  }
  return out;
}

}  // namespace

TEST_CASE("a fence without faults sends N-1 rollups, N-1 releases and N-1 acks", "[engine]") {
  for (std::uint32_t n : {1u, 2u, 5u, 10u, 33u, 100u}) {
    for (auto [radix, radix2] : {std::pair{64u, 4u}, std::pair{2u, 2u}, std::pair{3u, 64u}}) {
      INFO("N " << n << " radix " << radix << " radix2 " << radix2);
      LocalCluster cluster(n, config(radix, radix2));
      cluster.contribute_all("job", to_bytes("0123456789"));
      cluster.run();
      CHECK(count_sent(cluster, FrameType::fence_rollup, tags::fence_rollup) == n - 1);
      CHECK(count_sent(cluster, FrameType::xcast_data, tags::fence_release) == n - 1);
      CHECK(count_sent(cluster, FrameType::xcast_ack, tags::fence_release) == n - 1);
      // The root's fanout is the release radix, capped by the daemons there are.
      CHECK(count_sent(cluster, FrameType::xcast_data, tags::fence_release, Vpid{0}) ==
            std::min<std::size_t>(radix2, n - 1));
      for (Vpid vpid = 0; vpid < n; ++vpid) {
        auto done = cluster.fence_done(vpid);
        REQUIRE(done.size() == 1);
        CHECK(done[0].status == FenceStatus::ok);
        auto release = wire_decode<FenceRelease>(*done[0].release);
        REQUIRE(release);
        REQUIRE(release->contributions.size() == n);
        CHECK(to_string(release->contributions[n - 1].second) == "0123456789");
      }
      CHECK(cluster.engine(0).open_ops(TopologyKind::release) == 0);
      CHECK(cluster.engine(0).open_fences() == 0);
    }
  }
}

TEST_CASE("a fence whose data would not fit in a frame fails everywhere, and no frame is too large",
          "[engine]") {
  constexpr std::uint64_t kLimit = 64 * 1024;
  // One daemon's part alone too large (a leaf, then the controller's own);
  // every part small but the whole too large (the release); or a subtree's
  // rollup too large (radix 2: a relay's own rollup carries its subtree).
  struct Case {
    std::uint32_t n, radix;
    Vpid big;
    std::size_t big_bytes, each_bytes;
  };
  const Case cases[] = {{6, 64, 5, 2 * kLimit, 10},
                        {6, 64, 0, 2 * kLimit, 10},
                        {12, 64, 0, 0, 8 * 1024},
                        {15, 2, 0, 0, 10 * 1024}};
  for (const Case& c : cases) {
    INFO("N " << c.n << " radix " << c.radix << " big " << c.big << " " << c.big_bytes);
    LocalCluster cluster(c.n, config(c.radix, 4),
                         [&](EngineConfig& engine) { engine.max_payload = kLimit; });
    for (Vpid vpid = 0; vpid < c.n; ++vpid) {
      const std::size_t bytes = vpid == c.big && c.big_bytes > 0 ? c.big_bytes : c.each_bytes;
      cluster.contribute(vpid,
                         FenceRequest{"job", VpidSet::span(0, c.n - 1), pattern(bytes, vpid)});
    }
    cluster.run();
    for (Vpid vpid = 0; vpid < c.n; ++vpid) {
      auto done = cluster.fence_done(vpid);
      REQUIRE(done.size() == 1);
      CHECK(done[0].status == FenceStatus::too_large);
    }
    for (const InFlight& frame : cluster.sent())
      CHECK(frame.header.payload_length <= kLimit);
    CHECK(cluster.engine(0).open_fences() == 0);
    // The next round of the same fence, small, goes through.
    cluster.contribute_all("job", to_bytes("small"));
    cluster.run();
    for (Vpid vpid = 0; vpid < c.n; ++vpid) {
      auto done = cluster.fence_done(vpid);
      REQUIRE(done.size() == 2);
      CHECK(done[1].status == FenceStatus::ok);
    }
  }
}

TEST_CASE("release frame bytes are exactly header plus payload on every edge", "[engine]") {
  LocalCluster cluster(10, config(64, 2));
  cluster.contribute_all("job");  // a barrier: empty contributions
  cluster.run();
  Bytes expected = encode(FenceRelease{FenceKey{"job", 1}, FenceStatus::ok, 0, [] {
                                         std::vector<std::pair<Vpid, Bytes>> all;
                                         for (Vpid v = 0; v < 10; ++v)
                                           all.emplace_back(v, Bytes{});
                                         return all;
                                       }()});
  for (const InFlight& frame : cluster.sent()) {
    if (frame.header.type != FrameType::xcast_data) continue;
    CHECK(frame.frame.size() == kFrameHeaderSize + expected.size());
    CHECK(*frame.frame.payload == expected);
    CHECK(frame.path == SendPath::direct);  // release-tree edges are direct
    CHECK(frame.header.topology == TopologyKind::release);
    CHECK(frame.header.radix == 2);
  }
  const Accounting& root = cluster.engine(0).accounting();
  CHECK(root.of(FrameType::xcast_data, tags::fence_release).frames == 2);
  CHECK(root.of(FrameType::xcast_data, tags::fence_release).bytes ==
        2 * (kFrameHeaderSize + expected.size()));
}

TEST_CASE("the release seam picks the topology by tag", "[engine]") {
  SECTION("low-radix release on: fence releases on the release tree, groups on routing") {
    LocalCluster cluster(12, config(64, 2));
    std::uint64_t fence_op = cluster.release(tags::bench_release, to_bytes("x"));
    std::uint64_t group_op = cluster.release(tags::group_release, to_bytes("y"));
    cluster.run();
    // Each topology has its own counter: both ops are number 1, and they do not alias.
    CHECK(fence_op == 1);
    CHECK(group_op == 1);
    for (Vpid vpid = 1; vpid < 12; ++vpid) {
      auto got = cluster.delivered(vpid);
      REQUIRE(got.size() == 2);
      CHECK(got[0].topology != got[1].topology);
    }
    for (const InFlight& frame : cluster.sent()) {
      if (frame.header.type != FrameType::xcast_data) continue;
      if (frame.header.tag == tags::group_release) {
        CHECK(frame.header.topology == TopologyKind::routing);
        CHECK(frame.path == SendPath::routed);
      } else {
        CHECK(frame.header.topology == TopologyKind::release);
        CHECK(frame.path == SendPath::direct);
      }
    }
  }
  SECTION("low-radix release off: everything on the routing tree") {
    LocalCluster cluster(12, config(64, 2, /*low=*/false));
    cluster.contribute_all("job");
    cluster.run();
    for (const InFlight& frame : cluster.sent()) {
      CHECK(frame.header.topology == TopologyKind::routing);
    }
    CHECK(count_sent(cluster, FrameType::xcast_data, tags::fence_release, Vpid{0}) == 11);
  }
}

TEST_CASE("equal radices emit release-radix-noop once and carry on", "[engine]") {
  LocalCluster cluster(6, config(4, 4));
  for (int round = 0; round < 3; ++round) {
    cluster.contribute_all("job");
    cluster.run();
  }
  std::size_t shown = 0;
  for (const Effect& effect : cluster.effects(0)) {
    if (const auto* help = std::get_if<ShowHelpTopic>(&effect)) {
      CHECK(help->topic == "release-radix-noop");
      CHECK(help->args == std::vector<std::string>{"4", "4"});
      ++shown;
    }
  }
  CHECK(shown == 1);
  CHECK(cluster.fence_done(5).size() == 3);
}

TEST_CASE("a release-topology mismatch ends the fence with an error everywhere", "[engine]") {
  // Daemon 3 believes the release radix is 3; everyone else uses 2.
  LocalCluster cluster(10, config(64, 2), [](EngineConfig& c) {
    if (c.self == 3) c.radices.release = 3;
  });
  cluster.contribute_all("job");
  cluster.run();
  std::size_t mismatch_help = 0;
  for (const Effect& effect : cluster.effects(3)) {
    if (const auto* help = std::get_if<ShowHelpTopic>(&effect)) {
      CHECK(help->topic == "release-topology-mismatch");
      ++mismatch_help;
    }
  }
  CHECK(mismatch_help == 1);
  CHECK(cluster.engine(3).stats().mismatches == 1);
  // Nobody hangs: every daemon ended round 1, the ones that never had the
  // release (3 and its subtree) with a topology-mismatch error.
  for (Vpid vpid = 0; vpid < 10; ++vpid) {
    INFO("vpid " << vpid);
    auto done = cluster.fence_done(vpid);
    REQUIRE(done.size() == 1);
    CHECK(cluster.engine(vpid).fence_generation("job") == 1);
    CHECK(cluster.engine(vpid).open_fences() == 0);
  }
  CHECK(cluster.fence_done(3)[0].status == FenceStatus::topology_mismatch);
  CHECK(cluster.fence_done(7)[0].status == FenceStatus::topology_mismatch);  // 3's child
  CHECK(cluster.fence_done(4)[0].status == FenceStatus::ok);
  CHECK(cluster.engine(0).open_ops(TopologyKind::release) == 0);
  CHECK(cluster.engine(0).open_ops(TopologyKind::routing) == 0);
  bool aborted = false;
  for (const Effect& effect : cluster.effects(0)) {
    if (const auto* done = std::get_if<BroadcastDone>(&effect)) {
      if (done->tag == tags::fence_release) aborted = !done->ok;
    }
  }
  CHECK(aborted);
}

TEST_CASE("large payloads are deflated once and relays forward the same bytes", "[engine]") {
  EngineConfig base = config(2, 2);
  base.compress_threshold = 1024;
  LocalCluster cluster(7, base);
  Bytes payload(64 * 1024);
  for (std::size_t i = 0; i < payload.size(); ++i)
    payload[i] = static_cast<std::byte>(i % 7);
  cluster.release(tags::bench_release, payload);
  cluster.run();
  const SharedBytes* first = nullptr;
  for (const InFlight& frame : cluster.sent()) {
    if (frame.header.type != FrameType::xcast_data) continue;
    CHECK((frame.header.flags & kFrameCompressed) != 0);
    CHECK(frame.frame.payload->size() < payload.size() / 8);
    if (!first) first = &frame.frame.payload;
    CHECK(frame.frame.payload == *first);  // the very same buffer: no re-compression
  }
  for (Vpid vpid = 1; vpid < 7; ++vpid) {
    auto got = cluster.delivered(vpid);
    REQUIRE(got.size() == 1);
    CHECK(*got[0].payload == payload);
  }
  SECTION("random bytes that do not shrink travel as they are") {
    LocalCluster plain(3, base);
    plain.release(tags::bench_release, pattern(8192, 3));
    plain.run();
    for (const InFlight& frame : plain.sent()) {
      if (frame.header.type == FrameType::xcast_data) CHECK(frame.header.flags == 0);
    }
  }
}

TEST_CASE("compressibility of a large payload is judged on a sample spread across it", "[engine]") {
  // Random bytes (a rank's endpoint keys in fence_timing) are not worth a pass.
  CHECK_FALSE(worth_deflating(pattern(256 * 1024, 5)));
  Bytes structured(256 * 1024);
  for (std::size_t i = 0; i < structured.size(); ++i)
    structured[i] = static_cast<std::byte>("key=value;"[i % 10]);
  CHECK(worth_deflating(structured));
  // The sample reaches past the head: a compressible header (half a slice)
  // does not make random bytes worth it, nor does a random head spoil the rest.
  Bytes head_only = pattern(256 * 1024, 6);
  std::fill_n(head_only.begin(), 256, std::byte{0});
  CHECK_FALSE(worth_deflating(head_only));
  Bytes random_head = structured;
  std::copy_n(pattern(2048, 7).begin(), 2048, random_head.begin());
  CHECK(worth_deflating(random_head));
  // Small payloads are deflated whole; the attempt decides.
  CHECK(worth_deflating(pattern(2048, 8)));
  CHECK_FALSE(worth_deflating(pattern(2049, 8)));
}

TEST_CASE("the originator reports each finished broadcast with size, tag and span", "[engine]") {
  LocalCluster cluster(5, config(64, 4));
  cluster.release(tags::bench_release, Bytes(33));
  cluster.run();
  cluster.release(tags::group_release, Bytes(500));
  cluster.run();
  std::vector<BroadcastDone> done;
  for (const Effect& effect : cluster.effects(0)) {
    if (const auto* report = std::get_if<BroadcastDone>(&effect)) done.push_back(*report);
  }
  REQUIRE(done.size() == 2);
  CHECK(done[0].tag == tags::bench_release);
  CHECK(done[0].wire_bytes == 33);
  CHECK(done[0].topology == TopologyKind::release);
  CHECK(done[0].completed_ns > done[0].started_ns);
  CHECK(done[1].tag == tags::group_release);
  CHECK(done[1].wire_bytes == 500);
  // Only the originator reports; nothing is kept in the engine once reported.
  for (Vpid vpid = 1; vpid < 5; ++vpid) {
    for (const Effect& effect : cluster.effects(vpid))
      CHECK_FALSE(std::holds_alternative<BroadcastDone>(effect));
  }
  CHECK(cluster.engine(0).open_ops(TopologyKind::release) == 0);
}

TEST_CASE("grpcomm_release_delay_ms holds releases at the target only", "[engine]") {
  EngineConfig base = config(2, 2);
  base.release_delay_ns = 5'000'000;
  base.release_delay_target = 1;
  LocalCluster cluster(7, base);
  const TimeNs started = cluster.now();
  cluster.release(tags::bench_release, to_bytes("held"));
  cluster.run();
  // 1 delivered but holds; its subtree (3, 4) waits; 2's subtree is done.
  CHECK(cluster.delivered(1).size() == 1);
  CHECK(cluster.delivered(3).empty());
  CHECK(cluster.delivered(5).size() == 1);
  bool armed = false;
  for (const Effect& effect : cluster.effects(1)) {
    if (const auto* timer = std::get_if<SetTimer>(&effect)) {
      armed = timer->id.kind == TimerKind::release_hold;
      CHECK(timer->deadline_ns >= 5'000'000);
    }
  }
  CHECK(armed);
  // The controller's stall watch sees the held release as its oldest open
  // broadcast, with when it started; relays hold no broadcast of their own.
  cluster.advance(1'000'000);
  cluster.release(tags::group_release, to_bytes("after"));
  const auto open = cluster.engine(0).oldest_open_broadcast();
  REQUIRE(open.has_value());
  CHECK(open->tag == tags::bench_release);
  CHECK(open->kind == TopologyKind::release);
  CHECK(open->id == 1);
  CHECK(open->started_ns == started);
  CHECK_FALSE(cluster.engine(1).oldest_open_broadcast().has_value());
  cluster.run();
  cluster.fire_timers();
  cluster.run();
  CHECK(cluster.delivered(3).size() == 2);
  CHECK(cluster.delivered(4).size() == 2);
  CHECK(cluster.engine(0).open_ops(TopologyKind::release) == 0);
  CHECK_FALSE(cluster.engine(0).oldest_open_broadcast().has_value());
}

TEST_CASE("a relay killed while holding is repaired: only its subtree is replayed",
          "[engine][repair]") {
  // Radix-2 release tree of 12: 1 holds the release for 3,4 and (below them) 7..10.
  EngineConfig base = config(64, 2);
  base.release_delay_ns = 1'000'000;
  base.release_delay_target = 1;
  LocalCluster cluster(12, base);
  cluster.contribute_all("job");
  cluster.run();
  REQUIRE(cluster.delivered(1).size() == 1);
  REQUIRE(cluster.delivered(3).empty());
  std::size_t data_before = count_sent(cluster, FrameType::xcast_data, tags::fence_release);
  CHECK(data_before == 5);  // 0->1, 0->2, 2->5, 2->6, 5->11
  cluster.kill(1);
  cluster.declare_departure(1);
  cluster.run();
  for (Vpid vpid = 0; vpid < 12; ++vpid) {
    if (vpid == 1) continue;
    INFO("vpid " << vpid);
    auto done = cluster.fence_done(vpid);
    REQUIRE(done.size() == 1);
    CHECK(done[0].status == FenceStatus::ok);
  }
  // Every living daemon received the release exactly once: the repair sent it
  // to the orphaned subtree (10 takes 1's slot) and nowhere else.
  std::map<Vpid, int> received;
  for (const InFlight& frame : cluster.sent()) {
    if (frame.header.type == FrameType::xcast_data && frame.header.tag == tags::fence_release) {
      ++received[frame.to];
    }
  }
  for (Vpid vpid = 2; vpid < 12; ++vpid)
    CHECK(received[vpid] == 1);
  CHECK(cluster.engine(0).open_ops(TopologyKind::release) == 0);
  CHECK(cluster.engine(0).open_ops(TopologyKind::routing) == 0);
}

TEST_CASE("a promoted daemon that hears of its promotion late parks the replay",
          "[engine][repair]") {
  // Seed scenario: 8 daemons, release radix 2, daemon 1 dies holding the
  // release. 7 takes 1's slot. Hold back the notice on its way to 7, so 0's
  // replay reaches 7 first: 7 still reads itself as a leaf and must not
  // retire the op as complete.
  EngineConfig base = config(64, 2);
  base.release_delay_ns = 1'000'000;
  base.release_delay_target = 1;
  LocalCluster cluster(8, base);
  cluster.contribute_all("job");
  cluster.run();
  cluster.kill(1);
  cluster.declare_departure(1);
  cluster.run(
      [](const InFlight& frame) { return frame.to == 7 && frame.header.tag == tags::membership; });
  CHECK(cluster.held() == 1);
  CHECK(cluster.engine(7).stats().parked == 1);
  CHECK(cluster.delivered(7).size() == 1);  // took the payload and delivered it
  CHECK(cluster.delivered(3).empty());      // but forwarded nothing on an old view
  // ... and did not answer 0 as if its subtree were done: the op stays open.
  CHECK(cluster.engine(0).open_ops(TopologyKind::release) == 1);
  cluster.release_held();
  cluster.run();
  for (Vpid vpid : {0u, 2u, 3u, 4u, 5u, 6u, 7u}) {
    INFO("vpid " << vpid);
    CHECK(cluster.fence_done(vpid).size() == 1);
  }
  CHECK(cluster.engine(0).open_ops(TopologyKind::release) == 0);
}

TEST_CASE("malformed frames are counted and ignored", "[engine]") {
  LocalCluster cluster(3, config(64, 4));
  Outbox out;
  Bytes garbage(100, std::byte{0x55});
  cluster.engine(1).on_frame(1, 0, garbage, out);
  Bytes short_frame(10);
  cluster.engine(1).on_frame(1, 0, short_frame, out);
  // A valid header whose sender does not match the link it came in on.
  FrameHeader header;
  header.type = FrameType::xcast_data;
  header.tag = tags::group_release;
  header.radix = 64;
  header.destination = 1;
  header.sender = 2;
  cluster.engine(1).on_frame(1, 0, encode_frame(header, {}), out);
  // A rollup with a payload that is not a rollup.
  header.type = FrameType::fence_rollup;
  header.tag = tags::fence_rollup;
  header.sender = 0;
  cluster.engine(1).on_frame(1, 0, encode_frame(header, to_bytes("nonsense")), out);
  // Frames that claim this daemon, or a vpid outside the DVM, as their hop
  // (the engine would answer them: itself, or a stranger).
  header.type = FrameType::xcast_data;
  header.tag = tags::group_release;
  header.sender = 1;
  cluster.engine(1).on_frame(1, 1, encode_frame(header, to_bytes("x")), out);
  header.sender = 9;
  cluster.engine(1).on_frame(1, 9, encode_frame(header, to_bytes("x")), out);
  // Data for the root, which originates every broadcast and is nobody's child.
  header.destination = 0;
  header.sender = 1;
  header.op_id = 14;
  cluster.engine(0).on_frame(1, 1, encode_frame(header, to_bytes("x")), out);
  CHECK(out.empty());
  CHECK(cluster.engine(1).stats().malformed == 6);
  CHECK(cluster.engine(0).stats().malformed == 1);
  CHECK(cluster.engine(0).open_ops(TopologyKind::routing) == 0);
  CHECK(cluster.engine(1).check_invariants());
  CHECK(cluster.engine(0).check_invariants());
}
