// What the engine asks its driver to do. The engine appends effects to an
// Outbox; the driver drains them in order. Effects are values: the engine
// never calls out.
#pragma once

#include <compare>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "rml/frame.h"
#include "rml/membership.h"
#include "rml/send_path.h"
#include "rml/topology.h"
#include "util/bytes.h"
#include "util/clock.h"
#include "util/wire.h"

namespace grove {

// release_hold: an op held by grpcomm_release_delay_ms; ack_flush: the
// fence-release acks waiting to go together (grpcomm_release_ack_delay_us).
enum class TimerKind : std::uint8_t { release_hold, ack_flush };

struct TimerId {
  TimerKind kind = TimerKind::release_hold;
  TopologyKind topology = TopologyKind::routing;
  std::uint64_t op_id = 0;
  auto operator<=>(const TimerId&) const = default;
};

struct FenceKey {
  std::string signature;
  std::uint64_t generation = 0;
  auto operator<=>(const FenceKey&) const = default;

  static constexpr const char* wire_name = "fence key";
  static auto wire_fields(auto& m) { return std::tie(m.signature, m.generation); }
};

enum class FenceStatus : std::uint8_t {
  ok = 0,
  participant_lost = 1,   // a daemon hosting participants died
  topology_mismatch = 2,  // a daemon configured with another release topology
  too_large = 3,          // its data would not fit in a frame (rml_base_max_frame_size)
};
template <>
struct WireEnum<FenceStatus> {
  static constexpr FenceStatus first = FenceStatus::ok, last = FenceStatus::too_large;
};

std::string_view fence_status_name(FenceStatus status);

// Send an encoded frame to a peer (never to self: the engine loops those back itself).
struct SendFrame {
  Vpid target = 0;
  SendPath path = SendPath::routed;
  WireFrame frame;
};

// A broadcast reached this daemon: exactly once per op, with the originator's bytes.
struct DeliverBroadcast {
  std::uint16_t tag = 0;
  TopologyKind topology = TopologyKind::routing;
  std::uint64_t op_id = 0;
  SharedBytes payload;  // decompressed; identical bytes on every daemon
};

// A fence this daemon contributed to has ended.
struct FenceDone {
  FenceKey key;
  FenceStatus status = FenceStatus::ok;
  Vpid lost = 0;  // with participant_lost: the daemon that died
  // With ok: the whole fence-release payload (wire_decode<FenceRelease> gives every
  // daemon's contribution, by vpid ascending). Shared, not copied per daemon.
  SharedBytes release;
};

// The originator's census of a broadcast: started when it left, completed when
// the last daemon's acknowledgement arrived, both on the originator's clock.
struct BroadcastDone {
  std::uint16_t tag = 0;
  TopologyKind topology = TopologyKind::routing;
  std::uint64_t op_id = 0;
  std::uint64_t wire_bytes = 0;  // payload bytes on the wire (after compression)
  TimeNs started_ns = 0;
  TimeNs completed_ns = 0;
  bool ok = true;
  std::uint16_t flags = 0;  // the op's frame flags (kFrameAcksMayWait: a job's fence release)
};

struct SetTimer {
  TimerId id;
  TimeNs deadline_ns = 0;
};

struct CancelTimer {
  TimerId id;
};

// A help topic for the user; daemons forward these to the controller.
struct ShowHelpTopic {
  std::string file;
  std::string topic;
  std::vector<std::string> args;

  static constexpr const char* wire_name = "help topic";
  static auto wire_fields(auto& m) { return std::tie(m.file, m.topic, m.args); }
  bool wire_valid() const { return args.size() <= 64; }
};

// The failed set changed (the driver updates links, logs, status).
struct MembershipChanged {
  std::uint64_t epoch = 0;
  std::uint64_t tree_version = 0;
  std::vector<Vpid> failed;
};

using Effect = std::variant<SendFrame, DeliverBroadcast, FenceDone, BroadcastDone, SetTimer,
                            CancelTimer, ShowHelpTopic, MembershipChanged>;

class Outbox {
 public:
  void push(Effect effect) { effects_.push_back(std::move(effect)); }
  std::span<const Effect> effects() const { return effects_; }
  std::vector<Effect>& mutable_effects() { return effects_; }
  bool empty() const { return effects_.empty(); }
  void clear() { effects_.clear(); }

 private:
  std::vector<Effect> effects_;
};

}  // namespace grove
