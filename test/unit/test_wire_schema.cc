// Payload schemas (util/wire.h): one field list per message gives both its
// encoder and its validating decoder. These tests pin the byte layout (peers
// of one version must agree on it), each field form's checks, and a round
// trip of every message a daemon sends.
#include <catch2/catch.hpp>

#include "daemon/control_plane/control_messages.h"
#include "grpcomm/messages.h"
#include "jobs/job_messages.h"
#include "pmix/publish_messages.h"
#include "pmix/spawn_messages.h"

using namespace grove;

namespace {

Bytes hex(std::initializer_list<int> values) {
  Bytes out;
  for (int value : values)
    out.push_back(static_cast<std::byte>(value));
  return out;
}

template <typename M>
M round_trip(const M& message) {
  const Bytes once = encode(message);
  auto decoded = wire_decode<M>(once);
  REQUIRE(decoded);
  CHECK(encode(*decoded) == once);
  // Every strict prefix is refused, and so is a trailing byte.
  for (std::size_t cut = 0; cut < once.size(); ++cut) {
    INFO("cut at " << cut << " of " << once.size());
    CHECK_FALSE(wire_decode<M>(std::span<const std::byte>(once).first(cut)));
  }
  Bytes longer = once;
  longer.push_back(std::byte{0});
  CHECK_FALSE(wire_decode<M>(longer));
  return *decoded;
}

}  // namespace

TEST_CASE("the byte layout is big-endian fields in declaration order", "[wire]") {
  CHECK(encode(OutputAck{7, 0x0102030405060708ULL}) == hex({0, 0, 0, 7, 1, 2, 3, 4, 5, 6, 7, 8}));
  // Signed as two's complement at its width; enums at theirs; text as u32 length + bytes.
  CHECK(
      encode(JobAbort{1, 2, -1, "ab", "c"}) ==
      hex({0, 0, 0, 1, 0, 0, 0, 2, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 2, 'a', 'b', 0, 0, 0, 1, 'c'}));
  CHECK(encode(JobOutput{1, 0, OutputStream::err, "", 0x0102}) ==
        hex({0, 0, 0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2}));
  // An optional: a presence byte, then the value.
  OpAbort plain{TopologyKind::release, 9, 3, FenceStatus::participant_lost, std::nullopt};
  CHECK(encode(plain) == hex({1, 0, 0, 0, 0, 0, 0, 0, 9, 0, 3, 1, 0}));
  OpAbort fence = plain;
  fence.fence = FenceKey{"s", 2};
  CHECK(encode(fence) ==
        hex({1, 0, 0, 0, 0, 0, 0, 0, 9, 0, 3, 1, 1, 0, 0, 0, 1, 's', 0, 0, 0, 0, 0, 0, 0, 2}));
  // A vector: a u32 count, then the items.
  CHECK(encode(MembershipNotice{5, {3, 4}, 9, {}, 2}) ==
        hex({0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0,
             0, 4, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}));
}

TEST_CASE("an encoded message is allocated once, at its exact size", "[wire]") {
  // encode() measures first; a buffer that doubled field by field would end
  // with spare capacity (and took an allocation per doubling).
  FenceRollup rollup{FenceKey{"job-7/fence", 3}, VpidSet::from_list({1, 2, 5}), 0, {}, false};
  for (Vpid vpid : {1u, 2u, 5u})
    rollup.contributions.emplace_back(vpid, Bytes(33 + vpid, std::byte{7}));
  const Bytes bytes = encode(rollup);
  CHECK(bytes.capacity() == bytes.size());
  CHECK(wire_decode<FenceRollup>(bytes));
  const Bytes ack = encode(XcastAck{12});
  CHECK(ack.size() == 4);
  CHECK(ack.capacity() == 4);
}

TEST_CASE("decoders refuse what the schema does not allow", "[wire]") {
  SECTION("an enum outside its bounds") {
    CHECK_FALSE(wire_decode<JobOutput>(hex({0, 0, 0, 1, 0, 0, 0, 0, 3, 0, 0, 0, 0})));
    CHECK_FALSE(wire_decode<JobOutput>(hex({0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0})));
    Bytes status = encode(OpAbort{});
    status[11] = std::byte{4};  // FenceStatus ends at 3
    CHECK_FALSE(wire_decode<OpAbort>(status));
  }
  SECTION("a presence byte that is neither 0 nor 1") {
    Bytes bytes = encode(OpAbort{});
    bytes[12] = std::byte{2};
    CHECK_FALSE(wire_decode<OpAbort>(bytes));
  }
  SECTION("a count the remaining bytes cannot hold, before any allocation") {
    // Two vpids claimed, one present.
    CHECK_FALSE(
        wire_decode<MembershipNotice>(hex({0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 2, 0, 0, 0, 3})));
    ByteWriter huge;
    huge.u32(1).u32(0xffffffffu);
    CHECK_FALSE(wire_decode<EndpointTable>(huge.take()));
  }
  SECTION("what a message's own check refuses") {
    JobSpec spec;
    spec.ranks = {RankPlacement{0, 1, 0, 0, 0}};
    CHECK_FALSE(wire_decode<JobSpec>(encode(spec)));  // no program
    spec.apps = {JobApp{{}, {}, "", 1}};
    CHECK_FALSE(wire_decode<JobSpec>(encode(spec)));  // an app without one
    spec.apps[0].argv = {"true"};
    CHECK(wire_decode<JobSpec>(encode(spec)));
    spec.apps.push_back(JobApp{{"false"}, {}, "", 1});
    CHECK_FALSE(wire_decode<JobSpec>(encode(spec)));  // two apps' ranks, one rank
    spec.ranks.push_back(RankPlacement{1, 1, 1, 1, 0});
    CHECK(wire_decode<JobSpec>(encode(spec)));
    CHECK(spec.app_of(0) == 0);
    CHECK(spec.app_of(1) == 1);
    spec.apps[1].np = 0;  // an app with no ranks
    spec.apps[0].np = 2;
    CHECK_FALSE(wire_decode<JobSpec>(encode(spec)));
    spec.apps.pop_back();
    CHECK(wire_decode<JobSpec>(encode(spec)));
    spec.ranks[0].rank = 1;  // rank i must sit at index i
    CHECK_FALSE(wire_decode<JobSpec>(encode(spec)));

    FenceRollup rollup{FenceKey{"s", 1}, VpidSet::span(1, 2), 0, {{2, {}}, {1, {}}}, false};
    CHECK_FALSE(wire_decode<FenceRollup>(encode(rollup)));  // not ascending
    rollup.contributions = {{1, {}}, {1, {}}};
    CHECK_FALSE(wire_decode<FenceRollup>(encode(rollup)));  // a vpid twice

    ShowHelpTopic help{"f", "t", std::vector<std::string>(65, "x")};
    CHECK_FALSE(wire_decode<ShowHelpTopic>(encode(help)));
    help.args.resize(64);
    CHECK(wire_decode<ShowHelpTopic>(encode(help)));
  }
  SECTION("custom forms: overlapping vpid ranges, repeated traffic keys") {
    ByteWriter ranges;
    ranges.text("s").u32(2).u32(1).u32(5).u32(5).u32(6);  // [1,5] then [5,6]
    CHECK_FALSE(wire_decode<BenchBarrier>(ranges.take()));

    CountersReply reply;
    reply.engine.count(TrafficKey{FrameType::xcast_data, 1, TopologyKind::routing}, 64);
    Bytes bytes = encode(reply);
    // Append the same entry again: patch the count from 1 to 2 and repeat the entry.
    const std::size_t count_at = 8 + 4 + 8 + 8;
    const std::size_t entry_size = 1 + 2 + 1 + 8 + 8;
    Bytes twice(bytes.begin(), bytes.begin() + count_at + 4 + entry_size);
    twice[count_at + 3] = std::byte{2};
    twice.insert(twice.end(), bytes.begin() + count_at + 4,
                 bytes.begin() + count_at + 4 + entry_size);
    twice.insert(twice.end(), bytes.begin() + count_at + 4 + entry_size, bytes.end());
    CHECK(wire_decode<CountersReply>(bytes));
    CHECK_FALSE(wire_decode<CountersReply>(twice));
  }
  SECTION("the error names the message") {
    auto failed = wire_decode<JobOutput>(Bytes{});
    REQUIRE_FALSE(failed);
    CHECK(failed.error().message == "malformed job output payload");
  }
}

TEST_CASE("a leading decode reads the header and leaves the tail", "[wire]") {
  FenceRelease release{FenceKey{"pmix:ns:*", 4},
                       FenceStatus::participant_lost,
                       7,
                       {{1, to_bytes("abc")}, {3, to_bytes("de")}}};
  Bytes bytes = encode(release);
  auto header = decode_fence_release_header(bytes);
  REQUIRE(header);
  CHECK(header->key == release.key);
  CHECK(header->status == release.status);
  CHECK(header->lost == 7);
  CHECK(header->contributions.empty());
  // The tail is not read, so a broken tail does not fail the header...
  bytes.resize(bytes.size() - 1);
  CHECK(decode_fence_release_header(bytes));
  // ...but the whole decode refuses it.
  CHECK_FALSE(wire_decode<FenceRelease>(bytes));
}

TEST_CASE("every message survives a round trip", "[wire]") {
  JobSpec spec{3,
               "grove.3",
               {"A=1"},
               true,
               {JobApp{{"a.out", "-x"}, {"B=2"}, "/tmp", 2}},
               {RankPlacement{0, 1, 0, 0, 0}, RankPlacement{1, 2, 0, 0, 1}},
               {"n0", "n1"},
               {2, 1},
               "ppr:1:node",
               "grove.1",
               5,
               0,
               "none",
               false,
               false,
               UINT64_MAX,
               "pmi1",
               {"PARENT_ROOT_PORT_NAME=tag#0$"}};
  auto spec_back = round_trip(spec);
  CHECK(spec_back.env_replaces);
  CHECK(spec_back.map_by == "ppr:1:node");
  CHECK(spec_back.mpi == "pmi1");
  CHECK(spec_back.pmi_preput == std::vector<std::string>{"PARENT_ROOT_PORT_NAME=tag#0$"});
  CHECK(spec_back.parent_nspace == "grove.1");
  CHECK(spec_back.parent_rank == 5);
  REQUIRE(spec_back.apps.size() == 1);
  CHECK(spec_back.apps[0].argv == spec.apps[0].argv);
  CHECK(spec_back.apps[0].env == spec.apps[0].env);
  CHECK(spec_back.apps[0].cwd == "/tmp");
  CHECK(spec_back.ranks.size() == 2);
  CHECK(spec_back.ranks[1].daemon == 2);
  CHECK(spec_back.hostnames == spec.hostnames);
  CHECK(spec_back.node_slots == spec.node_slots);
  CHECK_FALSE(spec_back.node_oversubscribed(0));  // one rank, two slots
  spec.node_slots = {2};                          // not one per node
  CHECK_FALSE(wire_decode<JobSpec>(encode(spec)));

  CHECK(round_trip(JobOutput{1, 2, OutputStream::err, "line\n"}).text == "line\n");
  CHECK(round_trip(JobOutput{1, 2, OutputStream::out, "x\n", -5}).read_at_us == -5);
  auto exit =
      round_trip(RankExit{1, 2, ExitKind::left_without_finalize, -3, "gone", {FenceRound{"s", 9}}});
  CHECK(exit.kind == ExitKind::left_without_finalize);
  CHECK(exit.status == -3);
  CHECK(exit.released == std::vector<FenceRound>{FenceRound{"s", 9}});
  CHECK(round_trip(JobAbort{1, 2, 7, "why"}).message == "why");
  CHECK(round_trip(OutputAck{4, 1ULL << 40}).bytes == 1ULL << 40);
  CHECK(round_trip(RanksGone{2, {GoneRank{5, {}}}}).ranks.size() == 1);
  CHECK(round_trip(RanksStarted{2, {0, 3}}).ranks == std::vector<std::uint32_t>{0, 3});
  CHECK(round_trip(JobRef{77}).job == 77);
  CHECK(round_trip(JobSignal{3, 10}).signal == 10);
  CHECK(round_trip(JobStdin{3, 9, std::string("a\0b", 3), true}).data == std::string("a\0b", 3));
  CHECK(round_trip(StdinAck{3, 9, true}).open);
  CHECK_FALSE(wire_decode<JobSignal>(encode(JobSignal{3, 0})));
  CHECK_FALSE(wire_decode<JobSignal>(encode(JobSignal{3, 65})));
  CHECK(round_trip(ModexRequest{9, "ns", 3}).nspace == "ns");
  CHECK(round_trip(ModexReply{9, -25, to_bytes("blob")}).status == -25);
  auto published = round_trip(PublishMessage{
      5, "ns", 2, PublishRange::nspace, PublishPersistence::first_read, {{"k", to_bytes("v")}}});
  CHECK(published.range == PublishRange::nspace);
  CHECK(published.persistence == PublishPersistence::first_read);
  CHECK(published.values.at(0).value == to_bytes("v"));
  auto lookup = round_trip(LookupMessage{6, "ns", 1, {"a", "b"}, PublishRange::local, 2, 30});
  CHECK(lookup.range == PublishRange::local);
  CHECK(lookup.wait_for == 2);
  CHECK(lookup.timeout_seconds == 30);
  CHECK(round_trip(UnpublishMessage{7, "ns", 1, {}, std::nullopt}).range == std::nullopt);
  CHECK(round_trip(PublishReply{8, PublishStatus::duplicate_key}).status ==
        PublishStatus::duplicate_key);
  auto found = round_trip(LookupReply{9, PublishStatus::ok, true, {{"k", "ns", 4, to_bytes("v")}}});
  CHECK(found.timed_out);
  CHECK(found.found.at(0).rank == 4);
  auto spawn = round_trip(SpawnMessage{
      10, "ns", 3, {{{"a.out", "-v"}, {"A=1"}, "/tmp", 2}, {{"b"}, {}, "", 1}}, "node", {"K=v"}});
  CHECK(spawn.apps.size() == 2);
  CHECK(spawn.pmi_preput == std::vector<std::string>{"K=v"});
  CHECK(spawn.apps[0].argv == std::vector<std::string>{"a.out", "-v"});
  CHECK(spawn.apps[0].np == 2);
  CHECK(spawn.map_by == "node");
  CHECK(round_trip(SpawnReply{10, true, "grove.2", ""}).nspace == "grove.2");
  CHECK(round_trip(SpawnReply{11, false, "", "no slots"}).error == "no slots");

  DaemonReport report{4, "10.0.0.1:5000", "node4", 8, 1234, true};
  CHECK(round_trip(report).endpoint == report.endpoint);
  CHECK(round_trip(report).topology_imported);
  CHECK(round_trip(EndpointTable{{report, report}}).daemons.size() == 2);
  CHECK(round_trip(LaunchFailure{3, "ssh refused"}).reason == "ssh refused");
  CHECK(round_trip(LinkLost{6}).peer == 6);
  CHECK(round_trip(Eviction{"daemon 2 lost its link to it"}).reason ==
        "daemon 2 lost its link to it");
  CountersReply reply;
  reply.request = 5;
  reply.engine.count(TrafficKey{FrameType::xcast_data, 1, TopologyKind::release}, 100);
  reply.transport_sent.count(TrafficKey{FrameType::control, 300, TopologyKind::routing}, 80);
  reply.footprint = EngineFootprint{1, 2, 3};
  reply.controller_rtt_ns = 42;
  reply.heap_bytes = 7 << 20;
  reply.resident_bytes = 9 << 20;
  reply.wakes = WakeCounts{11, 12, 13, 14};
  auto reply_back = round_trip(reply);
  CHECK(reply_back.wakes.loop_passes == 11);
  CHECK(reply_back.wakes.pmix_answers == 14);
  CHECK(reply_back.heap_bytes == 7u << 20);
  CHECK(reply_back.resident_bytes == 9u << 20);
  CHECK(reply_back.engine == reply.engine);
  CHECK(reply_back.transport_sent == reply.transport_sent);
  CHECK(reply_back.footprint.fence_signatures == 3);
  CHECK(round_trip(ShowHelpTopic{"help-grove.txt", "topic", {"a", "b"}}).args.size() == 2);
  auto bench = round_trip(BenchBarrier{"bench:1", VpidSet::from_list({1, 2, 3, 7})});
  CHECK(bench.participants.ranges() == VpidSet::from_list({1, 2, 3, 7}).ranges());
  CHECK(round_trip(Heartbeat{123}).sent_ns == 123);
  CHECK(round_trip(CountersRequest{8}).request == 8);
  CHECK(round_trip(CountersRequest{8, true}).flight);
  CountersReply with_flight;
  with_flight.flight = Bytes{std::byte{1}, std::byte{2}, std::byte{3}};
  CHECK(round_trip(with_flight).flight == with_flight.flight);

  auto notice = round_trip(MembershipNotice{3, {1, 5}, 12, {{2, 3}, {11, 2}}, 4});
  CHECK(notice.failed == std::vector<Vpid>{1, 5});
  CHECK(notice.vpid_end == 12);
  CHECK(notice.incarnations.size() == 2);
  CHECK_FALSE(
      wire_decode<MembershipNotice>(encode(MembershipNotice{3, {}, 12, {{11, 2}, {2, 3}}, 4})));
  auto rollup = round_trip(
      FenceRollup{FenceKey{"s", 2}, VpidSet::span(0, 3), 7, {{0, to_bytes("x")}, {2, {}}}, false});
  CHECK(rollup.placed_epoch == 7);
  CHECK(rollup.contributions.size() == 2);
  CHECK(round_trip(FenceRelease{FenceKey{"s", 2}, FenceStatus::ok, 0, {{1, to_bytes("y")}}})
            .contributions[0]
            .second == to_bytes("y"));
  CHECK(round_trip(XcastAck{17}).slot == 17);
  {
    // The view reads the same schema and points into the payload it came from.
    const Bytes payload =
        encode(FenceRelease{FenceKey{"s", 3}, FenceStatus::ok, 0, {{1, to_bytes("ab")}, {4, {}}}});
    auto view = wire_decode<FenceReleaseView>(payload);
    REQUIRE(view);
    REQUIRE(view->contributions.size() == 2);
    CHECK(to_string(view->contributions[0].second) == "ab");
    CHECK(view->contributions[0].second.data() >= payload.data());
    CHECK(view->contributions[0].second.data() < payload.data() + payload.size());
    CHECK(view->contributions[1].second.empty());
    CHECK(encode(*view) == payload);
    // The same validation: contributions out of order are refused.
    const Bytes disordered =
        encode(FenceRelease{FenceKey{"s", 3}, FenceStatus::ok, 0, {{4, {}}, {1, {}}}});
    CHECK_FALSE(wire_decode<FenceReleaseView>(disordered));
  }
  CHECK(round_trip(OpReport{TopologyKind::release, 5, 2, 3, TopologyKind::routing, 4}).seen_radix ==
        4);
  auto abort = round_trip(OpAbort{TopologyKind::routing, 5, 2, FenceStatus::ok, FenceKey{"s", 1}});
  REQUIRE(abort.fence);
  CHECK(abort.fence->generation == 1);
}
