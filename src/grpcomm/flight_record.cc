#include "grpcomm/flight_record.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "rml/tag_registry.h"

namespace grove {
namespace {

std::uint32_t crc_of(std::uint32_t crc, std::span<const std::byte> bytes) {
  // zlib takes a uInt length: large payloads go in pieces.
  while (!bytes.empty()) {
    const std::size_t piece = std::min<std::size_t>(bytes.size(), 1u << 30);
    crc = static_cast<std::uint32_t>(
        crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(piece)));
    bytes = bytes.subspan(piece);
  }
  return crc;
}

std::uint32_t crc_of_frame(const WireFrame& frame) {
  return crc_of(crc_of(0, frame.header), *frame.payload);
}

constexpr std::size_t kFixedPrefix = 8 + 4;  // magic, version

}  // namespace

std::uint32_t flight_crc(std::span<const std::byte> bytes) {
  return crc_of(0, bytes);
}
std::uint32_t flight_crc_update(std::uint32_t crc, std::span<const std::byte> bytes) {
  return crc_of(crc, bytes);
}
std::uint32_t flight_crc(const WireFrame& frame) {
  return crc_of_frame(frame);
}

std::string_view flight_input_name(FlightInputKind kind) {
  switch (kind) {
    case FlightInputKind::frame:
      return "frame";
    case FlightInputKind::timer:
      return "timer";
    case FlightInputKind::departure:
      return "departure";
    case FlightInputKind::return_:
      return "return";
    case FlightInputKind::release:
      return "release";
    case FlightInputKind::contribute:
      return "contribution";
    case FlightInputKind::end_scope:
      return "end of fence scope";
  }
  return "?";
}

void append_flight_input(WireWriter& writer, const FlightInputHead& input, const Outbox& out) {
  writer.put(input);
  writer.put(static_cast<std::uint32_t>(out.effects().size()));
  for (const Effect& effect : out.effects())
    writer.put(summarize_effect(effect));
}

FlightEffect summarize_effect(const Effect& effect) {
  // Numbers the effect holds, no checksums: this runs for every input of a
  // live daemon. A frame's bytes are checked where it was received.
  FlightEffect out;
  out.kind = static_cast<std::uint8_t>(effect.index());
  std::visit(
      [&out](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, SendFrame>) {
          auto header = decode_frame_header(e.frame.header, UINT64_MAX);
          out.target = e.target;
          if (header) {
            out.frame_type = static_cast<std::uint8_t>(header->type);
            out.tag = header->tag;
            out.topology = static_cast<std::uint8_t>(header->topology);
            out.op = header->op_id;
          }
          out.size = static_cast<std::uint32_t>(e.frame.size());
          out.detail = static_cast<std::uint32_t>(e.path);
        } else if constexpr (std::is_same_v<T, DeliverBroadcast>) {
          out.tag = e.tag;
          out.topology = static_cast<std::uint8_t>(e.topology);
          out.op = e.op_id;
          out.size = static_cast<std::uint32_t>(e.payload->size());
        } else if constexpr (std::is_same_v<T, FenceDone>) {
          out.target = e.lost;
          out.op = e.key.generation;
          out.tag = static_cast<std::uint16_t>(e.status);
          out.size = e.release ? static_cast<std::uint32_t>(e.release->size()) : 0;
          out.detail = static_cast<std::uint32_t>(e.key.signature.size());
        } else if constexpr (std::is_same_v<T, BroadcastDone>) {
          out.tag = e.tag;
          out.topology = static_cast<std::uint8_t>(e.topology);
          out.op = e.op_id;
          out.size = static_cast<std::uint32_t>(e.wire_bytes);
          out.target = static_cast<std::uint32_t>(e.completed_ns - e.started_ns);
          out.detail = (static_cast<std::uint32_t>(e.ok) << 16) | e.flags;
        } else if constexpr (std::is_same_v<T, SetTimer> || std::is_same_v<T, CancelTimer>) {
          out.tag = static_cast<std::uint16_t>(e.id.kind);
          out.topology = static_cast<std::uint8_t>(e.id.topology);
          out.op = e.id.op_id;
          if constexpr (std::is_same_v<T, SetTimer>)
            out.detail = static_cast<std::uint32_t>(e.deadline_ns);
        } else if constexpr (std::is_same_v<T, ShowHelpTopic>) {
          out.size = static_cast<std::uint32_t>(e.args.size());
          out.detail = static_cast<std::uint32_t>(e.topic.size());
        } else if constexpr (std::is_same_v<T, MembershipChanged>) {
          out.op = e.epoch;
          out.size = static_cast<std::uint32_t>(e.failed.size());
          out.detail = static_cast<std::uint32_t>(e.tree_version);
        }
      },
      effect);
  return out;
}

std::string describe_effect(const FlightEffect& e) {
  char line[256];
  const auto topology = static_cast<TopologyKind>(e.topology);
  const auto topology_text = [&] {
    return e.topology <= 2 ? std::string(topology_name(topology)) : "?";
  };
  switch (e.kind) {
    case flight_effect_kind<SendFrame>: {
      const auto type = static_cast<FrameType>(e.frame_type);
      std::snprintf(line, sizeof line, "send %s %s op %llu (%s) to %u, %u bytes, detail %u",
                    std::string(frame_type_name(type)).c_str(), topology_text().c_str(),
                    static_cast<unsigned long long>(e.op), std::string(tag_name(e.tag)).c_str(),
                    e.target, e.size, e.detail);
      break;
    }
    case flight_effect_kind<DeliverBroadcast>:
      std::snprintf(line, sizeof line, "deliver %s op %llu (%s), %u bytes, detail %u",
                    topology_text().c_str(), static_cast<unsigned long long>(e.op),
                    std::string(tag_name(e.tag)).c_str(), e.size, e.detail);
      break;
    case flight_effect_kind<FenceDone>:
      std::snprintf(line, sizeof line, "fence round %llu ends (%s, lost %u), %u bytes, detail %u",
                    static_cast<unsigned long long>(e.op),
                    std::string(fence_status_name(static_cast<FenceStatus>(e.tag))).c_str(),
                    e.target, e.size, e.detail);
      break;
    case flight_effect_kind<BroadcastDone>:
      std::snprintf(line, sizeof line, "broadcast %s op %llu (%s) done, detail %u",
                    topology_text().c_str(), static_cast<unsigned long long>(e.op),
                    std::string(tag_name(e.tag)).c_str(), e.detail);
      break;
    case flight_effect_kind<SetTimer>:
    case flight_effect_kind<CancelTimer>: {
      const bool set = e.kind == flight_effect_kind<SetTimer>;
      std::snprintf(line, sizeof line, "%s timer %u %s op %llu%s", set ? "set" : "cancel", e.tag,
                    topology_text().c_str(), static_cast<unsigned long long>(e.op),
                    set ? " (deadline in detail)" : "");
      break;
    }
    case flight_effect_kind<ShowHelpTopic>:
      std::snprintf(line, sizeof line, "help topic, detail %u", e.detail);
      break;
    case flight_effect_kind<MembershipChanged>:
      std::snprintf(line, sizeof line, "membership: epoch %llu, %u failed, detail %u",
                    static_cast<unsigned long long>(e.op), e.size, e.detail);
      break;
    default:
      std::snprintf(line, sizeof line, "effect of kind %u", e.kind);
      break;
  }
  return line;
}

bool FlightInput::wire_valid() const {
  switch (kind) {
    case FlightInputKind::frame:
      return data.size() >= kFrameHeaderSize;
    case FlightInputKind::timer:
      return timer_kind <= static_cast<std::uint8_t>(TimerKind::ack_flush) && timer_topology <= 1;
    default:
      return true;
  }
}

std::string describe_input(const FlightInput& input) {
  std::string text(flight_input_name(input.kind));
  char more[160] = "";
  switch (input.kind) {
    case FlightInputKind::frame:
      if (auto header = decode_frame_header(input.data, UINT64_MAX)) {
        std::snprintf(more, sizeof more, " from %u: %s %s op %llu (%s), %zu bytes", input.peer,
                      std::string(frame_type_name(header->type)).c_str(),
                      std::string(topology_name(header->topology)).c_str(),
                      static_cast<unsigned long long>(header->op_id),
                      std::string(tag_name(header->tag)).c_str(), input.data.size());
      } else {
        std::snprintf(more, sizeof more, " from %u: %zu bytes, no valid header", input.peer,
                      input.data.size());
      }
      break;
    case FlightInputKind::timer:
      std::snprintf(more, sizeof more, " %u on %s op %llu", input.timer_kind,
                    input.timer_topology == 0 ? "routing" : "release",
                    static_cast<unsigned long long>(input.number));
      break;
    case FlightInputKind::departure:
    case FlightInputKind::return_:
      std::snprintf(more, sizeof more, " of %u", input.peer);
      break;
    case FlightInputKind::release:
      std::snprintf(more, sizeof more, " (%s), %zu bytes", std::string(tag_name(input.tag)).c_str(),
                    input.data.size());
      break;
    case FlightInputKind::contribute:
    case FlightInputKind::end_scope:
      text += " \"" + input.text + "\"";
      break;
  }
  char at[48];
  std::snprintf(at, sizeof at, " at %llu ns", static_cast<unsigned long long>(input.now));
  return text + more + at;
}

FlightHeader flight_header_for(const EngineConfig& config) {
  FlightHeader header;
  header.self = config.self;
  header.routing_radix = config.radices.routing;
  header.release_radix = config.radices.release;
  header.low_radix_release = config.low_radix_release;
  header.fence_topology = static_cast<std::uint8_t>(config.fence_topology);
  header.compress_threshold = config.compress_threshold;
  header.max_payload = config.max_payload;
  header.release_delay_ns = config.release_delay_ns;
  header.release_delay_target = config.release_delay_target;
  header.ack_delay_ns = config.ack_delay_ns;
  header.prompt_ack_signature = config.prompt_ack_signature;
  return header;
}

EngineConfig engine_config_for(const FlightHeader& header) {
  EngineConfig config;
  config.self = header.self;
  config.radices = {header.routing_radix, header.release_radix};
  config.low_radix_release = header.low_radix_release;
  config.fence_topology = static_cast<FenceTopology>(header.fence_topology);
  config.compress_threshold = header.compress_threshold;
  config.max_payload = header.max_payload;
  config.release_delay_ns = header.release_delay_ns;
  config.release_delay_target = header.release_delay_target;
  config.ack_delay_ns = header.ack_delay_ns;
  config.prompt_ack_signature = header.prompt_ack_signature;
  config.track_touched_ops = true;  // a replay checks every input's ops
  return config;
}

Bytes encode_flight_file(const std::string& build, const FlightHeader& header, std::uint64_t count,
                         const std::vector<ByteView>& inputs) {
  std::size_t size = 0;
  for (ByteView piece : inputs)
    size += piece.size();
  ByteWriter prefix;
  prefix.reserve(64 + build.size() + size);
  prefix.raw(std::as_bytes(std::span(kFlightMagic.data(), kFlightMagic.size())))
      .u32(kFlightFormatVersion)
      .text(build);
  WireWriter writer(prefix.take());
  writer.put(header);
  writer.put(static_cast<std::uint32_t>(count));
  Bytes out = writer.take();
  for (ByteView piece : inputs)
    out.insert(out.end(), piece.begin(), piece.end());
  ByteWriter trailer;
  trailer.u32(crc_of(0, out));
  Bytes crc = trailer.take();
  out.insert(out.end(), crc.begin(), crc.end());
  return out;
}

Bytes encode_flight_file(const FlightRecording& recording) {
  WireWriter writer;
  for (const FlightInput& input : recording.inputs)
    writer.put(input);
  Bytes inputs = writer.take();
  return encode_flight_file(recording.build, recording.header, recording.inputs.size(),
                            {ByteView(inputs)});
}

Result<FlightRecording> decode_flight_file(std::span<const std::byte> bytes) {
  if (bytes.size() < kFixedPrefix + 4 + 4 ||
      std::memcmp(bytes.data(), kFlightMagic.data(), kFlightMagic.size()) != 0) {
    return Error{"not a grove flight recording (no GROVEFLT magic at its start)"};
  }
  ByteReader prefix(bytes.subspan(kFlightMagic.size()));
  const std::uint32_t version = *prefix.u32();
  auto build = prefix.text();
  if (version != kFlightFormatVersion) {
    return Error{"a flight recording of format version " + std::to_string(version) +
                 (build ? " (written by grove " + *build + ")" : std::string()) +
                 "; this grove reads version " + std::to_string(kFlightFormatVersion)};
  }
  if (!build) return Error{"a flight recording cut short in its build name"};
  const std::span<const std::byte> covered = bytes.first(bytes.size() - 4);
  ByteReader trailer(bytes.last(4));
  if (crc_of(0, covered) != *trailer.u32()) {
    return Error{"a corrupted flight recording (written by grove " + *build +
                 "): its checksum does not match its bytes"};
  }
  const std::size_t body_at = bytes.size() - prefix.remaining();
  if (body_at > covered.size()) return Error{"a flight recording cut short in its build name"};
  WireReader reader(covered.subspan(body_at));
  FlightRecording recording;
  recording.build = std::move(*build);
  std::uint32_t count = 0;
  if (!reader.get(recording.header) || !reader.get(count)) {
    return Error{"a malformed flight recording header (written by grove " + recording.build + ")"};
  }
  recording.inputs.reserve(std::min<std::size_t>(count, covered.size() / 64));
  for (std::uint32_t i = 0; i < count; ++i) {
    FlightInput input;
    if (!reader.get(input)) {
      return Error{"a malformed flight recording: input " + std::to_string(i) + " of " +
                   std::to_string(count) + " does not decode"};
    }
    recording.inputs.push_back(std::move(input));
  }
  if (!reader.done()) return Error{"a malformed flight recording: bytes after its last input"};
  if (recording.header.inputs_total - recording.header.first_input != count) {
    return Error{"a malformed flight recording: its header counts " +
                 std::to_string(recording.header.inputs_total - recording.header.first_input) +
                 " inputs, and it holds " + std::to_string(count)};
  }
  return recording;
}

}  // namespace grove
