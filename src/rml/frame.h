// Wire frames: a versioned fixed header followed by an opaque payload. The
// codec is pure (bytes in, values out) so it can be fuzzed alone; every field
// is validated before use, and a bad frame is an Error, never an assertion.
//
// Header layout, big-endian, 64 bytes:
//   magic u32 | version u8 | type u8 | flags u16 | tag u16 | topology u8 |
//   reserved u8 | radix u16 | op_id u64 | origin u32 | destination u32 |
//   sender u32 | tree_version u64 | epoch u64 | watermark u64 |
//   payload_length u32 | reserved u16
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "rml/membership.h"
#include "rml/topology.h"
#include "util/bytes.h"
#include "util/result.h"

namespace grove {

inline constexpr std::uint32_t kFrameMagic = 0x47525631;  // "GRV1"
inline constexpr std::uint8_t kFrameVersion = 1;
inline constexpr std::size_t kFrameHeaderSize = 64;

enum class FrameType : std::uint8_t {
  xcast_data = 1,      // a broadcast payload travelling down a topology
  xcast_ack = 2,       // "my subtree has it", to whoever sent the data
  fence_rollup = 3,    // fence contributions travelling up the routing tree
  op_report = 4,       // a daemon's report to the controller (routed)
  control = 5,         // daemon-level traffic outside the engine (routed or direct)
  fence_exchange = 6,  // one round of a fence's Bruck exchange, over a direct link
};
inline constexpr std::uint8_t kFrameTypeMax = 6;
template <>
struct WireEnum<FrameType> {
  static constexpr FrameType first = FrameType::xcast_data, last = FrameType::fence_exchange;
};

enum FrameFlag : std::uint16_t {
  kFrameCompressed = 1u << 0,  // payload is deflated (grpcomm/messages.h)
  // A release whose acks may wait to share frames (grpcomm/ack_batch.cc):
  // set by the originator, kept by every relay.
  kFrameAcksMayWait = 1u << 1,
};
inline constexpr std::uint16_t kFrameKnownFlags = kFrameCompressed | kFrameAcksMayWait;

struct FrameHeader {
  FrameType type = FrameType::xcast_data;
  std::uint16_t flags = 0;
  std::uint16_t tag = 0;
  TopologyKind topology = TopologyKind::routing;
  std::uint16_t radix = 0;  // the radix of `topology` at the sender
  std::uint64_t op_id = 0;
  Vpid origin = 0;                 // who started it
  Vpid destination = 0;            // final target of a routed frame
  Vpid sender = 0;                 // the hop that sent these bytes
  std::uint64_t tree_version = 0;  // sender's tree version
  std::uint64_t epoch = 0;         // sender's recovery epoch
  std::uint64_t watermark = 0;     // ops of this topology below this id are complete
  std::uint32_t payload_length = 0;
};

struct FrameView {
  FrameHeader header;
  std::span<const std::byte> payload;  // borrows from the decoded bytes
};

std::string_view frame_type_name(FrameType type);

// Payloads are shared, immutable buffers: a relay forwards the very bytes it
// received (the originator compresses once), and a broadcast of a megabyte to
// ten thousand simulated daemons is not ten gigabytes of copies.
using SharedBytes = std::shared_ptr<const Bytes>;
SharedBytes share_bytes(Bytes bytes);
SharedBytes share_bytes(std::span<const std::byte> bytes);

using FrameHeaderBytes = std::array<std::byte, kFrameHeaderSize>;

// An encoded frame as header bytes plus a shared payload (scatter-gather).
struct WireFrame {
  FrameHeaderBytes header{};
  SharedBytes payload;  // never null

  std::size_t size() const { return kFrameHeaderSize + payload->size(); }
  // Contiguous header + payload, with room for `spare` more bytes.
  Bytes flatten(std::size_t spare = 0) const;
};

FrameHeaderBytes encode_frame_header(const FrameHeader& header, std::size_t payload_length);
WireFrame make_wire_frame(const FrameHeader& header, SharedBytes payload);
// Splits contiguous bytes into a WireFrame (copies the payload once). The
// bytes must hold at least a header; no validation happens here.
WireFrame wire_frame_from_bytes(std::span<const std::byte> bytes);

std::vector<std::byte> encode_frame(const FrameHeader& header, std::span<const std::byte> payload);
// Rewrites the sender field of an encoded header in place (relays forward bytes
// untouched otherwise).
void set_frame_sender(std::span<std::byte> frame, Vpid sender);

// Validates a WireFrame: header fields and that the payload length matches.
Result<FrameHeader> decode_wire_frame(const WireFrame& frame, std::uint64_t max_payload);

// Validates a header (magic, version, type, topology, flags, reserved bytes,
// payload length against max_payload). `bytes` must hold at least the header.
Result<FrameHeader> decode_frame_header(std::span<const std::byte> bytes,
                                        std::uint64_t max_payload);
// Decodes one whole frame: the header and exactly payload_length bytes after it.
Result<FrameView> decode_frame(std::span<const std::byte> bytes, std::uint64_t max_payload);

// For stream splitting: nullopt while fewer than a header's bytes are present,
// else the total frame length, or an Error if the header is invalid.
Result<std::optional<std::size_t>> frame_length(std::span<const std::byte> bytes,
                                                std::uint64_t max_payload);

}  // namespace grove
