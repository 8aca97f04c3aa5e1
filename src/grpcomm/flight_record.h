// A flight recording: every input one daemon's engine was given, in order,
// with the `now` of each, and a short account of what the engine did with
// it. The engine is a plain state machine, so a fresh one fed the same
// inputs must do the same: sim/flight_replay.h checks that, input by input.
// docs/simulator.md, "Flight recordings", has the why and the how.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "grpcomm/effects.h"
#include "grpcomm/engine.h"
#include "rml/traffic.h"
#include "rml/vpid_set.h"
#include "util/bytes.h"
#include "util/result.h"
#include "util/wire.h"

namespace grove {

// Raised when the file's layout changes; a reader refuses other versions,
// naming the build that wrote the file.
inline constexpr std::uint32_t kFlightFormatVersion = 2;  // 2: the fence topology
inline constexpr std::string_view kFlightMagic = "GROVEFLT";

enum class FlightInputKind : std::uint8_t {
  frame,       // on_frame: peer sent data
  timer,       // on_timer
  departure,   // declare_departure(peer)
  return_,     // declare_return(peer)
  release,     // release_bcast(tag, data, flags)
  contribute,  // contribute(FenceRequest{text, participants, data, number})
  end_scope,   // end_fence_scope(text)
};
template <>
struct WireEnum<FlightInputKind> {
  static constexpr FlightInputKind first = FlightInputKind::frame,
                                   last = FlightInputKind::end_scope;
};
std::string_view flight_input_name(FlightInputKind kind);

// One effect in short: what it did and to whom, with the numbers it
// carried (no checksum: a frame's bytes are checked where it was received).
struct FlightEffect {
  std::uint8_t kind = 0;        // the index in the Effect variant
  std::uint32_t target = 0;     // a frame's destination, a lost daemon, a span
  std::uint8_t frame_type = 0;  // a frame's
  std::uint16_t tag = 0;
  std::uint8_t topology = 0;
  std::uint64_t op = 0;      // op id, fence round, timer's op, epoch
  std::uint32_t size = 0;    // a frame's or payload's bytes
  std::uint32_t detail = 0;  // a frame's path, a timer's deadline, ...
  bool operator==(const FlightEffect&) const = default;

  static constexpr const char* wire_name = "flight effect";
  static auto wire_fields(auto& m) {
    return std::tie(m.kind, m.target, m.frame_type, m.tag, m.topology, m.op, m.size, m.detail);
  }
};

// An effect's kind as recorded (FlightEffect::kind): its index in the
// Effect variant, named by its type.
template <typename T, typename V>
struct FlightEffectKind;
template <typename T, typename... Ts>
struct FlightEffectKind<T, std::variant<Ts...>> {
  static constexpr std::uint8_t value = [] {
    std::uint8_t index = 0;
    (void)((std::is_same_v<T, Ts> || (++index, false)) || ...);
    return index;
  }();
};
template <typename T>
constexpr std::uint8_t flight_effect_kind = FlightEffectKind<T, Effect>::value;

FlightEffect summarize_effect(const Effect& effect);
std::string describe_effect(const FlightEffect& effect);
// CRC-32 of bytes, and of a frame's header and payload as one (a replay's
// check that what a daemon received is what its sender sent).
std::uint32_t flight_crc(std::span<const std::byte> bytes);
// The same, going on from `crc` (0 to begin): a file's CRC over its pieces.
std::uint32_t flight_crc_update(std::uint32_t crc, std::span<const std::byte> bytes);
std::uint32_t flight_crc(const WireFrame& frame);

// An input as a driver hands it to the recorder: its bytes are a view of
// the driver's (a frame it still holds), copied only into the recording.
struct FlightInputHead {
  FlightInputKind kind = FlightInputKind::frame;
  std::uint64_t now = 0;
  Vpid peer = 0;            // frame: the hop it came from; departure, return: who
  std::uint16_t tag = 0;    // release
  std::uint16_t flags = 0;  // release
  std::uint8_t timer_kind = 0, timer_topology = 0;  // timer: its TimerId
  std::uint64_t number = 0;                         // timer's op; contribute's placed epoch
  std::string text{};                               // contribute's signature; end_scope's scope
  VpidSet participants{};                           // contribute
  ByteView data{};                                  // frame bytes; release payload; contribution
  // Made by the driver while it carried out an earlier input's effects (a
  // delivery's hook that contributes): that input's number plus one (0:
  // none), and where in them: 0 before the first, k during the k-th. The
  // frames of this input went out there, ahead of the earlier input's later
  // ones: a replay puts them back in that order to check each link.
  std::uint64_t parent = 0;
  std::uint32_t at = 0;

  static constexpr const char* wire_name = "flight input";
  static auto wire_fields(auto& m) {
    return std::tie(m.kind, m.now, m.peer, m.tag, m.flags, m.timer_kind, m.timer_topology, m.number,
                    m.text, m.participants, m.data, m.parent, m.at);
  }
};

// An input as a recording holds it: the head's fields (the same wire form,
// the bytes owned), then what the engine did with it.
struct FlightInput {
  FlightInputKind kind = FlightInputKind::frame;
  std::uint64_t now = 0;
  Vpid peer = 0;
  std::uint16_t tag = 0;
  std::uint16_t flags = 0;
  std::uint8_t timer_kind = 0, timer_topology = 0;
  std::uint64_t number = 0;
  std::string text{};
  VpidSet participants{};
  Bytes data{};
  std::uint64_t parent = 0;
  std::uint32_t at = 0;
  std::vector<FlightEffect> effects{};

  static constexpr const char* wire_name = "flight input";
  static auto wire_fields(auto& m) {
    return std::tie(m.kind, m.now, m.peer, m.tag, m.flags, m.timer_kind, m.timer_topology, m.number,
                    m.text, m.participants, m.data, m.parent, m.at, m.effects);
  }
  bool wire_valid() const;
};

// Appends one input as a recording holds it: the head, then the summaries
// of `out`'s effects.
void append_flight_input(WireWriter& writer, const FlightInputHead& input, const Outbox& out);
std::string describe_input(const FlightInput& input);

// Who recorded, with which engine configuration, from which start, and what
// its engine had counted when the recording was taken.
struct FlightHeader {
  Vpid self = 0;
  std::uint32_t routing_radix = 0;
  std::uint32_t release_radix = 0;
  bool low_radix_release = true;
  std::uint8_t fence_topology = 0;  // FenceTopology: 0 tree, 1 bruck
  std::uint64_t compress_threshold = 0;
  std::uint64_t max_payload = 0;
  std::uint64_t release_delay_ns = 0;
  std::int64_t release_delay_target = -1;
  std::uint64_t ack_delay_ns = 0;
  std::string prompt_ack_signature;
  // The start: a fresh DVM of `fresh_daemons` (vpids 0..n-1), or, when 0,
  // the join seed (encode_join_seed) of a daemon that came back or joined.
  std::uint32_t fresh_daemons = 0;
  Bytes seed;
  std::uint64_t first_input = 0;   // inputs before it did not fit and were let go
  std::uint64_t inputs_total = 0;  // every input since the start
  std::uint64_t taken_ns = 0;      // the daemon's clock when it was written
  Accounting accounting;           // the engine's, when it was written
  EngineStats stats;

  static constexpr const char* wire_name = "flight header";
  static auto wire_fields(auto& m) {
    return std::tie(m.self, m.routing_radix, m.release_radix, m.low_radix_release, m.fence_topology,
                    m.compress_threshold, m.max_payload, m.release_delay_ns, m.release_delay_target,
                    m.ack_delay_ns, m.prompt_ack_signature, m.fresh_daemons, m.seed, m.first_input,
                    m.inputs_total, m.taken_ns, m.accounting, m.stats.parked, m.stats.replays,
                    m.stats.duplicates, m.stats.mismatches, m.stats.malformed,
                    m.stats.rollup_resends);
  }
  // What a daemon could have run with (the parameters' bounds).
  bool wire_valid() const {
    return first_input <= inputs_total && routing_radix >= 2 && routing_radix <= 65535 &&
           release_radix >= 2 && release_radix <= 65535 && max_payload >= 1024 &&
           fence_topology <= static_cast<std::uint8_t>(FenceTopology::bruck) &&
           fresh_daemons <= kMaxVpidEnd && (fresh_daemons > 0 || !seed.empty());
  }
};

// The header's last fields as encoded with no accounting (first_input,
// inputs_total, taken_ns, the accounting's entry count, the six stats): a
// recording written as its daemon died (FlightRecorder::write_after_crash)
// has taken_ns 0 and no accounting, its counts not taken.
inline constexpr std::size_t kCrashCountsBytes = 8 + 8 + 8 + 4 + 6 * 8;

FlightHeader flight_header_for(const EngineConfig& config);
EngineConfig engine_config_for(const FlightHeader& header);

struct FlightRecording {
  std::string build;  // the grove build that wrote it (versions.h)
  FlightHeader header;
  std::vector<FlightInput> inputs;
  bool complete() const { return header.first_input == 0; }
};

// The file: magic, format version, build, then the header and the inputs
// (util/wire.h), then a CRC-32 of all of it. `inputs`: `count` inputs,
// encoded one after another, in pieces (a recorder's chunks).
Bytes encode_flight_file(const std::string& build, const FlightHeader& header, std::uint64_t count,
                         const std::vector<ByteView>& inputs);
Bytes encode_flight_file(const FlightRecording& recording);
// Refuses, saying why, anything that is not a whole recording of this format.
Result<FlightRecording> decode_flight_file(std::span<const std::byte> bytes);

}  // namespace grove
