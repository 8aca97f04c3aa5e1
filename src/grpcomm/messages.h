// Payload formats of the engine's messages. Encoding is plain; decoding
// validates everything and returns an Error for a malformed payload (a peer's
// bytes are never trusted).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "grpcomm/effects.h"
#include "rml/vpid_set.h"
#include "util/bytes.h"
#include "util/result.h"
#include "util/wire.h"

namespace grove {

// Each message lists its fields once (wire_fields); util/wire.h derives
// `encode(message)` and `wire_decode<Message>(payload)` from that list.

// Contributions travel by vpid, strictly ascending (no vpid twice).
template <typename Blob>
bool contributions_ascend(const std::vector<std::pair<Vpid, Blob>>& contributions) {
  for (std::size_t i = 1; i < contributions.size(); ++i) {
    if (contributions[i].first <= contributions[i - 1].first) return false;
  }
  return true;
}

// tags::membership: the controller's complete view at an epoch: the failed
// set, the end of the daemon set (it grows by joins) and every incarnation
// (who came back or joined, and when).
struct MembershipNotice {
  std::uint64_t epoch = 0;
  std::vector<Vpid> failed;
  Vpid vpid_end = 0;
  std::vector<std::pair<Vpid, std::uint64_t>> incarnations;  // by vpid, strictly ascending
  std::uint64_t tree_version = 0;  // the controller's: every daemon at this epoch agrees

  static constexpr const char* wire_name = "membership notice";
  static auto wire_fields(auto& m) {
    return std::tie(m.epoch, m.failed, m.vpid_end, m.incarnations, m.tree_version);
  }
  bool wire_valid() const {
    if (vpid_end > kMaxVpidEnd || !contributions_ascend(incarnations)) return false;
    for (const auto& [vpid, incarnation] : incarnations) {
      if (incarnation > epoch) return false;
    }
    return true;
  }
};

// tags::fence_rollup: every contribution the sender holds for one fence, or
// (too_large) none: they would not fit in one frame, and the fence fails.
struct FenceRollup {
  FenceKey key;
  VpidSet participants;  // daemons hosting participants
  // The epoch the participants were placed in: a daemon that came back or
  // joined after it hosts none of them (UINT64_MAX: not stated).
  std::uint64_t placed_epoch = UINT64_MAX;
  std::vector<std::pair<Vpid, Bytes>> contributions;  // by vpid, strictly ascending
  bool too_large = false;

  static constexpr const char* wire_name = "fence rollup";
  static auto wire_fields(auto& m) {
    return std::tie(m.key, m.participants, m.placed_epoch, m.contributions, m.too_large);
  }
  bool wire_valid() const { return contributions_ascend(contributions); }
};

// tags::fence_release: how a fence ended, with every contribution if it
// succeeded. Blob is Bytes, or ByteView for a reader that only passes the
// contributions on (one schema, decoded without copying them).
template <typename Blob>
struct BasicFenceRelease {
  FenceKey key;
  FenceStatus status = FenceStatus::ok;
  Vpid lost = 0;
  std::vector<std::pair<Vpid, Blob>> contributions;  // by vpid, strictly ascending

  static constexpr const char* wire_name = "fence release";
  static auto wire_fields(auto& m) { return std::tie(m.key, m.status, m.lost, m.contributions); }
  bool wire_valid() const { return contributions_ascend(contributions); }
};
using FenceRelease = BasicFenceRelease<Bytes>;
using FenceReleaseView = BasicFenceRelease<ByteView>;

// tags::fence_exchange: one round of a fence's Bruck exchange (bruck_fence.cc),
// in the epoch stamped on the frame: the blocks the sender holds for its
// receiver, and every contribution it holds of a daemon outside that epoch's
// members (a participant that died or came back after contributing); or,
// too_large, none: the round's data would not fit in a frame.
// Blob is Bytes, or ByteView: the exchange holds views into the frames its
// blocks came in and encodes from them (bruck_fence.cc), copying each once.
template <typename Blob>
struct BasicBruckRound {
  FenceKey key;
  std::uint32_t round = 0;
  bool too_large = false;
  std::vector<std::pair<Vpid, Blob>> contributions;  // by vpid, strictly ascending

  static constexpr const char* wire_name = "bruck round";
  static auto wire_fields(auto& m) {
    return std::tie(m.key, m.round, m.too_large, m.contributions);
  }
  bool wire_valid() const { return round < 64 && contributions_ascend(contributions); }
};
using BruckRound = BasicBruckRound<Bytes>;
using BruckRoundView = BasicBruckRound<ByteView>;

// Every xcast ack: the slot the acker held in the tree of the epoch stamped
// on the frame; together they name the subtree the ack vouches for.
struct XcastAck {
  std::uint32_t slot = 0;

  static constexpr const char* wire_name = "xcast ack";
  static auto wire_fields(auto& m) { return std::tie(m.slot); }
};

// Acks of several fence releases in one frame (EngineConfig::ack_delay_ns):
// the header names the first op, `more` the others, all vouched for from
// the same slot in the same epoch. A single ack stays an XcastAck.
struct XcastAckBatch {
  std::uint32_t slot = 0;
  std::vector<std::uint64_t> more;

  static constexpr const char* wire_name = "xcast ack batch";
  static auto wire_fields(auto& m) { return std::tie(m.slot, m.more); }
};

// tags::op_report: a daemon tells the controller an op failed at it.
struct OpReport {
  TopologyKind topology = TopologyKind::routing;
  std::uint64_t op_id = 0;
  Vpid reporter = 0;
  std::uint16_t tag = 0;
  TopologyKind seen_topology = TopologyKind::routing;  // what the frame said
  std::uint16_t seen_radix = 0;

  static constexpr const char* wire_name = "op report";
  static auto wire_fields(auto& m) {
    return std::tie(m.topology, m.op_id, m.reporter, m.tag, m.seen_topology, m.seen_radix);
  }
};

// tags::op_abort: the controller ends an op with an error everywhere.
struct OpAbort {
  TopologyKind topology = TopologyKind::routing;
  std::uint64_t op_id = 0;
  std::uint16_t tag = 0;
  FenceStatus status = FenceStatus::topology_mismatch;
  std::optional<FenceKey> fence;  // when the op was a fence release

  static constexpr const char* wire_name = "op abort";
  static auto wire_fields(auto& m) {
    return std::tie(m.topology, m.op_id, m.tag, m.status, m.fence);
  }
};

// Only key, status and lost: what every daemon needs, without copying the aggregate.
Result<FenceRelease> decode_fence_release_header(std::span<const std::byte> payload);

// Payloads above the threshold travel deflated: an 8-byte original length,
// then zlib data. Compressed once by the originator; relays forward the bytes.
Bytes compress_payload(std::span<const std::byte> payload);
// Whether deflating is likely to save an eighth: payloads above 2 KiB are
// judged by deflating 2 KiB sampled across them, so random bytes do not cost
// a full pass.
bool worth_deflating(std::span<const std::byte> payload);
Result<Bytes> decompress_payload(std::span<const std::byte> wire, std::uint64_t max_bytes);

}  // namespace grove
