// Flight recordings (grpcomm/flight_record.h, grpcomm/flight_recorder.h) and
// their replay (sim/flight_replay.h): a recorded history replays with no
// divergence and the engines' own counts; a weakened rule diverges where it
// matters and not before; a corrupted or partial recording is refused.
#include <catch2/catch.hpp>

#include <cstdio>

#include "grpcomm/flight_recorder.h"
#include "grpcomm/tags.h"
#include "local_cluster.h"
#include "sim/flight_replay.h"

using namespace grove;
using grove::test::InFlight;
using grove::test::LocalCluster;

namespace {

EngineConfig config() {
  EngineConfig c;
  c.radices = {4, 2};  // deep trees: relays with children
  c.ack_delay_ns = 50'000;
  return c;
}

Bytes data_of(Vpid vpid, std::size_t size) {
  Bytes bytes(size);
  for (std::size_t i = 0; i < size; ++i)
    bytes[i] = static_cast<std::byte>((vpid * 31 + i) & 0xff);
  return bytes;
}

// Fences with data, a release, a relay's death mid-fence, more fences.
// Returns the time of the departure.
TimeNs run_history(LocalCluster& cluster, Vpid victim) {
  const VpidSet everyone = VpidSet::span(0, cluster.size() - 1);
  for (int round = 0; round < 3; ++round) {
    for (Vpid vpid = 0; vpid < cluster.size(); ++vpid)
      cluster.contribute(vpid, FenceRequest{"job", everyone, data_of(vpid, 100 + round)});
    cluster.run();
  }
  cluster.release(tags::bench_release, data_of(0, 5000));
  cluster.settle();
  // The next fence: contributions go up, the victim dies before it relays.
  for (Vpid vpid = 0; vpid < cluster.size(); ++vpid) {
    if (vpid != victim) cluster.contribute(vpid, FenceRequest{"job2", everyone, data_of(vpid, 8)});
  }
  cluster.kill(victim);
  cluster.run();
  cluster.advance(1'000'000);
  const TimeNs departed = cluster.now();
  cluster.declare_departure(victim);
  cluster.settle();
  const VpidSet survivors = VpidSet::from_list([&] {
    std::vector<Vpid> living;
    for (Vpid vpid = 0; vpid < cluster.size(); ++vpid)
      if (vpid != victim) living.push_back(vpid);
    return living;
  }());
  for (Vpid vpid = 0; vpid < cluster.size(); ++vpid) {
    if (vpid != victim)
      cluster.contribute(vpid, FenceRequest{"job3", survivors, data_of(vpid, 64)});
  }
  cluster.settle();
  return departed;
}

std::vector<FlightRecording> recordings_of(const LocalCluster& cluster, Vpid except) {
  std::vector<FlightRecording> out;
  for (Vpid vpid = 0; vpid < cluster.size(); ++vpid) {
    if (vpid == except) continue;
    auto recording = decode_flight_file(cluster.flight(vpid));
    REQUIRE(recording);
    out.push_back(std::move(*recording));
  }
  return out;
}

std::uint64_t frame_inputs(const std::vector<FlightRecording>& recordings) {
  std::uint64_t n = 0;
  for (const FlightRecording& recording : recordings)
    for (const FlightInput& input : recording.inputs)
      n += input.kind == FlightInputKind::frame ? 1 : 0;
  return n;
}

constexpr Vpid kVictim = 2;  // a relay in both trees at radix 4 and 2

}  // namespace

TEST_CASE("a recorded history replays exactly, with the engines' own counts", "[flight]") {
  LocalCluster cluster(16, config());
  cluster.record_flights(64u << 20);
  run_history(cluster, kVictim);
  for (Vpid vpid = 0; vpid < 16; ++vpid) {
    if (vpid != kVictim) REQUIRE(cluster.fence_done(vpid).size() == 5);
  }
  // The dead daemon's recording is lost with it, as on a real DVM.
  const auto recordings = recordings_of(cluster, kVictim);
  auto report = replay_flights(recordings);
  REQUIRE(report);
  INFO(describe_replay(*report, "test").back());
  CHECK(report->ok());
  CHECK_FALSE(report->divergence);
  CHECK(report->problems.empty());
  REQUIRE(report->daemons.size() == 15);
  for (const DaemonReplay& daemon : report->daemons) {
    CHECK(daemon.accounting_matches);
    CHECK(daemon.accounting == cluster.engine(daemon.self).accounting());
    CHECK(daemon.inputs ==
          recordings[daemon.self < kVictim ? daemon.self : daemon.self - 1].inputs.size());
  }
  // Every frame a survivor received from a survivor is matched to its
  // sender's replay; only those from the dead daemon have no sender to check.
  std::uint64_t from_victim = 0;
  for (const FlightRecording& recording : recordings)
    for (const FlightInput& input : recording.inputs)
      from_victim += input.kind == FlightInputKind::frame && input.peer == kVictim ? 1 : 0;
  CHECK(from_victim > 0);
  CHECK(report->frames_checked == frame_inputs(recordings) - from_victim);
}

TEST_CASE("a history of Bruck fences replays exactly", "[flight][bruck]") {
  EngineConfig bruck = config();
  bruck.fence_topology = FenceTopology::bruck;
  LocalCluster cluster(16, bruck);
  cluster.record_flights(64u << 20);
  run_history(cluster, kVictim);
  for (Vpid vpid = 0; vpid < 16; ++vpid) {
    if (vpid != kVictim) REQUIRE(cluster.fence_done(vpid).size() == 5);
  }
  const auto recordings = recordings_of(cluster, kVictim);
  CHECK(recordings[0].header.fence_topology == static_cast<std::uint8_t>(FenceTopology::bruck));
  auto report = replay_flights(recordings);
  REQUIRE(report);
  INFO(describe_replay(*report, "test").back());
  CHECK(report->ok());
  CHECK_FALSE(report->divergence);
  CHECK(report->problems.empty());
}

TEST_CASE("a daemon that came back replays from its seed", "[flight]") {
  LocalCluster cluster(8, config());
  cluster.record_flights(64u << 20);
  run_history(cluster, kVictim);
  cluster.bring_back(kVictim);
  cluster.contribute_all("after-return", data_of(1, 16));
  cluster.settle();
  const auto recordings = recordings_of(cluster, UINT32_MAX);
  REQUIRE_FALSE(recordings[kVictim].header.seed.empty());
  auto report = replay_flights(recordings);
  REQUIRE(report);
  INFO(describe_replay(*report, "test").back());
  CHECK(report->ok());
  REQUIRE(report->daemons.size() == 8);
  CHECK_FALSE(report->daemons[kVictim].fresh);
  for (const DaemonReplay& daemon : report->daemons)
    CHECK(daemon.accounting_matches);
}

TEST_CASE("a weakened rule diverges after the departure, never before", "[flight]") {
  LocalCluster cluster(16, config());
  cluster.record_flights(64u << 20);
  const TimeNs departed = run_history(cluster, kVictim);
  const auto recordings = recordings_of(cluster, kVictim);
  // A relay's death makes a newer view's frames reach daemons out of turn:
  // the screen-free and parking rules show there, and not before.
  for (RepairRule rule : {RepairRule::accept_any_sender, RepairRule::park_when_behind}) {
    INFO("rule " << static_cast<int>(rule));
    ReplayOptions options;
    options.weakened.add(rule);
    auto report = replay_flights(recordings, options);
    REQUIRE(report);
    REQUIRE(report->divergence);
    const ReplayDivergence& at = *report->divergence;
    const FlightRecording& daemon = recordings[at.daemon < kVictim ? at.daemon : at.daemon - 1];
    REQUIRE(at.input < daemon.inputs.size());
    CHECK(daemon.inputs[at.input].now >= departed);
    CHECK(at.recorded != at.replayed);
  }
  // The rules of a return have nothing to act on in a history without one.
  for (RepairRule rule : {RepairRule::void_acks_on_return, RepairRule::seed_joiners}) {
    INFO("rule " << static_cast<int>(rule));
    ReplayOptions options;
    options.weakened.add(rule);
    auto report = replay_flights(recordings, options);
    REQUIRE(report);
    CHECK(report->ok());
  }
}

TEST_CASE("a recording is refused whole when corrupted, cut, of another format or partial",
          "[flight]") {
  LocalCluster cluster(4, config());
  cluster.record_flights(64u << 20);
  cluster.contribute_all("job", data_of(3, 40));
  cluster.settle();
  const Bytes good = cluster.flight(1);
  REQUIRE(decode_flight_file(good));

  Bytes flipped = good;
  flipped[flipped.size() / 2] ^= std::byte{0x10};
  auto refused = decode_flight_file(flipped);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains("checksum"));

  refused = decode_flight_file(std::span(good).first(good.size() - 9));
  REQUIRE_FALSE(refused);

  Bytes magic = good;
  magic[0] = std::byte{'X'};
  refused = decode_flight_file(magic);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains("not a grove flight recording"));

  Bytes version = good;
  version[11] = std::byte{static_cast<unsigned char>(kFlightFormatVersion + 1)};
  refused = decode_flight_file(version);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains("written by grove test"));
  CHECK_THAT(refused.error().message,
             Catch::Contains("version " + std::to_string(kFlightFormatVersion + 1)));

  // A recorder with too small a budget lets its oldest inputs go; a replay
  // needs the whole history and says which parameter to raise.
  LocalCluster small(4, config());
  small.record_flights(600);
  for (int round = 0; round < 4; ++round)
    small.contribute_all("job", data_of(2, 64));
  small.settle();
  auto partial = decode_flight_file(small.flight(0));
  REQUIRE(partial);
  CHECK(partial->header.first_input > 0);
  CHECK(partial->header.inputs_total == partial->header.first_input + partial->inputs.size());
  auto replay = replay_flights({*partial});
  REQUIRE_FALSE(replay);
  CHECK_THAT(replay.error().message, Catch::Contains("grpcomm_flight_recorder_size"));
}

TEST_CASE("an input no daemon could have recorded is a divergence, not a crash", "[flight]") {
  LocalCluster cluster(4, config());
  cluster.record_flights(64u << 20);
  cluster.contribute_all("job");
  cluster.settle();
  auto recording = decode_flight_file(cluster.flight(3));
  REQUIRE(recording);
  // A departure declared at a daemon that is not the controller.
  recording->inputs.insert(recording->inputs.begin(),
                           FlightInput{.kind = FlightInputKind::departure, .peer = 1});
  ++recording->header.inputs_total;
  auto again = decode_flight_file(encode_flight_file(*recording));
  REQUIRE(again);
  auto report = replay_flights({*again});
  REQUIRE(report);
  REQUIRE(report->divergence);
  CHECK(report->divergence->input == 0);
  CHECK_THAT(report->divergence->what, Catch::Contains("not the controller"));
}

TEST_CASE("a recording round-trips, and two of one daemon are refused", "[flight]") {
  LocalCluster cluster(4, config());
  cluster.record_flights(64u << 20);
  cluster.contribute_all("job", data_of(1, 10));
  cluster.release(tags::bench_release, data_of(0, 300));
  cluster.settle();
  auto recording = decode_flight_file(cluster.flight(0));
  REQUIRE(recording);
  CHECK(recording->build == "test");
  CHECK(recording->header.fresh_daemons == 4);
  CHECK(recording->header.ack_delay_ns == 50'000);
  CHECK(recording->header.accounting == cluster.engine(0).accounting());
  CHECK(encode_flight_file(*recording) == cluster.flight(0));
  auto twice = replay_flights({*recording, *recording});
  REQUIRE_FALSE(twice);
  CHECK_THAT(twice.error().message, Catch::Contains("two recordings of daemon 0"));
}

TEST_CASE("a recorder keeps within its budget, its newest inputs whole", "[flight]") {
  constexpr std::size_t kBudget = 256u << 10;
  FlightRecorder recorder(kBudget);
  recorder.start(config(), 4);
  FrameHeader header;
  header.type = FrameType::xcast_ack;
  header.radix = 4;
  const WireFrame frame = make_wire_frame(header, share_bytes(Bytes(40)));
  const Bytes received = frame.flatten();
  Outbox out;
  out.push(SendFrame{1, SendPath::direct, frame});
  constexpr std::uint64_t kInputs = 20'000;
  for (std::uint64_t i = 0; i < kInputs; ++i) {
    recorder.record(
        FlightInputHead{.kind = FlightInputKind::frame, .now = i, .peer = 2, .data = received},
        out);
    REQUIRE(recorder.bytes_kept() <= kBudget);
  }
  CHECK(recorder.inputs_total() == kInputs);
  CHECK(recorder.inputs_kept() < kInputs);
  // At least half the budget holds inputs (about 160 bytes each here; the
  // oldest 64 KiB chunk goes when a new one is needed).
  CHECK(recorder.inputs_kept() * 160 > kBudget / 2);
  auto recording = decode_flight_file(recorder.write("test", Accounting{}, EngineStats{}, 0));
  REQUIRE(recording);
  CHECK(recording->header.first_input + recording->inputs.size() == kInputs);
  CHECK(recording->inputs.back().now == kInputs - 1);
  CHECK(recording->inputs.front().now == recording->header.first_input);
  CHECK(recording->inputs.back().data == received);
  REQUIRE(recording->inputs.back().effects.size() == 1);
  CHECK(recording->inputs.back().effects[0].target == 1);
}

namespace {

bool write_to_file(void* file, const std::byte* data, std::size_t size) {
  return std::fwrite(data, 1, size, static_cast<std::FILE*>(file)) == size;
}

Bytes read_back(std::FILE* file) {
  std::fflush(file);
  std::rewind(file);
  Bytes bytes;
  std::byte buffer[4096];
  for (std::size_t got; (got = std::fread(buffer, 1, sizeof buffer, file)) > 0;)
    bytes.insert(bytes.end(), buffer, buffer + got);
  return bytes;
}

}  // namespace

TEST_CASE("a recording written as its daemon dies holds the same inputs, its counts not taken",
          "[flight]") {
  // A small budget: old chunks were let go, as in a long-lived daemon.
  FlightRecorder recorder(192u << 10);
  recorder.set_build("crash-test");
  EngineConfig engine = config();
  engine.self = 3;
  recorder.start(engine, 5);
  for (std::uint64_t i = 0; i < 6'000; ++i) {
    Outbox out;
    out.push(CancelTimer{TimerId{TimerKind::release_hold, TopologyKind::release, i}});
    const Bytes data(static_cast<std::size_t>(i % 97), std::byte{7});
    recorder.record(FlightInputHead{.kind = FlightInputKind::contribute,
                                    .now = 1000 + i,
                                    .text = "job",
                                    .participants = VpidSet::span(0, 4),
                                    .data = data},
                    out);
  }
  std::FILE* file = std::tmpfile();
  REQUIRE(file != nullptr);
  REQUIRE(recorder.write_after_crash(write_to_file, file));
  auto crashed = decode_flight_file(read_back(file));
  std::fclose(file);
  INFO((crashed ? std::string() : crashed.error().message));
  REQUIRE(crashed);
  auto whole = decode_flight_file(recorder.write("crash-test", Accounting{}, EngineStats{}, 77));
  REQUIRE(whole);
  CHECK(crashed->build == "crash-test");
  CHECK(crashed->header.self == 3);
  CHECK(crashed->header.taken_ns == 0);
  CHECK(crashed->header.first_input > 0);
  CHECK(crashed->header.first_input == whole->header.first_input);
  CHECK(crashed->header.inputs_total == 6'000);
  REQUIRE(crashed->inputs.size() == whole->inputs.size());
  CHECK(encode_flight_file(FlightRecording{"x", {}, crashed->inputs}) ==
        encode_flight_file(FlightRecording{"x", {}, whole->inputs}));
  // Nothing prepared (no build named): nothing written.
  FlightRecorder unnamed(1u << 20);
  unnamed.start(engine, 5);
  std::FILE* empty = std::tmpfile();
  CHECK_FALSE(unnamed.write_after_crash(write_to_file, empty));
  CHECK(read_back(empty).empty());
  std::fclose(empty);
}

TEST_CASE("a replay of a recording written as its daemon died does not check its counts",
          "[flight]") {
  LocalCluster cluster(16, config());
  cluster.record_flights(64u << 20);
  run_history(cluster, kVictim);
  auto recordings = recordings_of(cluster, kVictim);
  // Daemon 5's as a fatal signal writes it: no counts.
  recordings[4].header.taken_ns = 0;
  recordings[4].header.accounting = Accounting{};
  REQUIRE(recordings[4].header.self == 5);
  auto report = replay_flights(recordings);
  REQUIRE(report);
  CHECK(report->ok());
  CHECK_FALSE(report->daemons[4].counts_known);
  CHECK(report->daemons[3].counts_known);
  CHECK_THAT(describe_replay(*report, "test")[5], Catch::Contains("written as it died"));
}
