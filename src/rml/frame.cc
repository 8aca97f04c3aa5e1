#include "rml/frame.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <string>

namespace grove {
namespace {

// Big-endian fields into the fixed header, in place (a header costs no
// allocation: every frame has one).
class Writer {
 public:
  explicit Writer(FrameHeaderBytes& out) : out_(out) {}
  template <typename T>
  void put(T value) {
    for (int shift = static_cast<int>(sizeof(T)) * 8 - 8; shift >= 0; shift -= 8) {
      out_[offset_++] = static_cast<std::byte>((static_cast<std::uint64_t>(value) >> shift) & 0xFF);
    }
  }
  std::size_t offset() const { return offset_; }

 private:
  FrameHeaderBytes& out_;
  std::size_t offset_ = 0;
};

class Reader {
 public:
  explicit Reader(std::span<const std::byte> in) : in_(in) {}
  template <typename T>
  T get() {
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      value = (value << 8) | std::to_integer<std::uint64_t>(in_[offset_ + i]);
    }
    offset_ += sizeof(T);
    return static_cast<T>(value);
  }

 private:
  std::span<const std::byte> in_;
  std::size_t offset_ = 0;
};

constexpr std::size_t kSenderOffset = 4 + 1 + 1 + 2 + 2 + 1 + 1 + 2 + 8 + 4 + 4;

}  // namespace

std::string_view frame_type_name(FrameType type) {
  switch (type) {
    case FrameType::xcast_data:
      return "xcast-data";
    case FrameType::xcast_ack:
      return "xcast-ack";
    case FrameType::fence_rollup:
      return "fence-rollup";
    case FrameType::op_report:
      return "op-report";
    case FrameType::control:
      return "control";
    case FrameType::fence_exchange:
      return "fence-exchange";
  }
  return "unknown";
}

SharedBytes share_bytes(Bytes bytes) {
  return std::make_shared<const Bytes>(std::move(bytes));
}

SharedBytes share_bytes(std::span<const std::byte> bytes) {
  return std::make_shared<const Bytes>(bytes.begin(), bytes.end());
}

Bytes WireFrame::flatten(std::size_t spare) const {
  Bytes out;
  out.reserve(size() + spare);
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), payload->begin(), payload->end());
  return out;
}

FrameHeaderBytes encode_frame_header(const FrameHeader& header, std::size_t payload_length) {
  FrameHeaderBytes bytes{};
  Writer writer(bytes);
  writer.put<std::uint32_t>(kFrameMagic);
  writer.put<std::uint8_t>(kFrameVersion);
  writer.put<std::uint8_t>(static_cast<std::uint8_t>(header.type));
  writer.put<std::uint16_t>(header.flags);
  writer.put<std::uint16_t>(header.tag);
  writer.put<std::uint8_t>(static_cast<std::uint8_t>(header.topology));
  writer.put<std::uint8_t>(0);
  writer.put<std::uint16_t>(header.radix);
  writer.put<std::uint64_t>(header.op_id);
  writer.put<std::uint32_t>(header.origin);
  writer.put<std::uint32_t>(header.destination);
  writer.put<std::uint32_t>(header.sender);
  writer.put<std::uint64_t>(header.tree_version);
  writer.put<std::uint64_t>(header.epoch);
  writer.put<std::uint64_t>(header.watermark);
  writer.put<std::uint32_t>(static_cast<std::uint32_t>(payload_length));
  writer.put<std::uint16_t>(0);
  assert(writer.offset() == kFrameHeaderSize);
  return bytes;
}

WireFrame make_wire_frame(const FrameHeader& header, SharedBytes payload) {
  return WireFrame{encode_frame_header(header, payload->size()), std::move(payload)};
}

WireFrame wire_frame_from_bytes(std::span<const std::byte> bytes) {
  WireFrame frame;
  std::copy(bytes.begin(), bytes.begin() + kFrameHeaderSize, frame.header.begin());
  frame.payload = share_bytes(bytes.subspan(kFrameHeaderSize));
  return frame;
}

std::vector<std::byte> encode_frame(const FrameHeader& header, std::span<const std::byte> payload) {
  FrameHeaderBytes head = encode_frame_header(header, payload.size());
  std::vector<std::byte> out(kFrameHeaderSize + payload.size());
  std::copy(head.begin(), head.end(), out.begin());
  std::copy(payload.begin(), payload.end(), out.begin() + kFrameHeaderSize);
  return out;
}

Result<FrameHeader> decode_wire_frame(const WireFrame& frame, std::uint64_t max_payload) {
  auto header = decode_frame_header(frame.header, max_payload);
  if (!header) return header.error();
  if (header->payload_length != frame.payload->size()) {
    return Error{"inconsistent frame: header says " + std::to_string(header->payload_length) +
                 " payload bytes, frame holds " + std::to_string(frame.payload->size())};
  }
  return header;
}

void set_frame_sender(std::span<std::byte> frame, Vpid sender) {
  for (int i = 0; i < 4; ++i) {
    frame[kSenderOffset + static_cast<std::size_t>(i)] =
        static_cast<std::byte>((sender >> (24 - 8 * i)) & 0xFF);
  }
}

Result<FrameHeader> decode_frame_header(std::span<const std::byte> bytes,
                                        std::uint64_t max_payload) {
  if (bytes.size() < kFrameHeaderSize) {
    return Error{"short frame: " + std::to_string(bytes.size()) + " bytes, header needs " +
                 std::to_string(kFrameHeaderSize)};
  }
  Reader reader(bytes);
  if (auto magic = reader.get<std::uint32_t>(); magic != kFrameMagic) {
    return Error{"bad frame magic"};
  }
  if (auto version = reader.get<std::uint8_t>(); version != kFrameVersion) {
    return Error{"unsupported frame version " + std::to_string(version)};
  }
  FrameHeader header;
  auto type = reader.get<std::uint8_t>();
  if (type == 0 || type > kFrameTypeMax) {
    return Error{"unknown frame type " + std::to_string(type)};
  }
  header.type = static_cast<FrameType>(type);
  header.flags = reader.get<std::uint16_t>();
  if ((header.flags & ~kFrameKnownFlags) != 0) return Error{"unknown frame flags"};
  header.tag = reader.get<std::uint16_t>();
  auto topology = reader.get<std::uint8_t>();
  if (topology > static_cast<std::uint8_t>(TopologyKind::bruck)) {
    return Error{"unknown topology " + std::to_string(topology)};
  }
  header.topology = static_cast<TopologyKind>(topology);
  if (reader.get<std::uint8_t>() != 0) return Error{"nonzero reserved header byte"};
  header.radix = reader.get<std::uint16_t>();
  header.op_id = reader.get<std::uint64_t>();
  header.origin = reader.get<std::uint32_t>();
  header.destination = reader.get<std::uint32_t>();
  header.sender = reader.get<std::uint32_t>();
  header.tree_version = reader.get<std::uint64_t>();
  header.epoch = reader.get<std::uint64_t>();
  header.watermark = reader.get<std::uint64_t>();
  header.payload_length = reader.get<std::uint32_t>();
  if (reader.get<std::uint16_t>() != 0) return Error{"nonzero reserved header bytes"};
  if (header.payload_length > max_payload) {
    return Error{"oversized frame: payload of " + std::to_string(header.payload_length) +
                 " bytes exceeds the limit of " + std::to_string(max_payload)};
  }
  if (header.radix == 1) return Error{"inconsistent frame: radix 1"};
  return header;
}

Result<FrameView> decode_frame(std::span<const std::byte> bytes, std::uint64_t max_payload) {
  auto header = decode_frame_header(bytes, max_payload);
  if (!header) return header.error();
  if (bytes.size() != kFrameHeaderSize + header->payload_length) {
    return Error{"inconsistent frame: header says " + std::to_string(header->payload_length) +
                 " payload bytes, frame holds " + std::to_string(bytes.size() - kFrameHeaderSize)};
  }
  return FrameView{*header, bytes.subspan(kFrameHeaderSize)};
}

Result<std::optional<std::size_t>> frame_length(std::span<const std::byte> bytes,
                                                std::uint64_t max_payload) {
  if (bytes.size() < kFrameHeaderSize) return std::optional<std::size_t>{};
  auto header = decode_frame_header(bytes, max_payload);
  if (!header) return header.error();
  return std::optional<std::size_t>{kFrameHeaderSize + header->payload_length};
}

}  // namespace grove
