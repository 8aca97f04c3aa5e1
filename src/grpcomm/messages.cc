#include "grpcomm/messages.h"

#include <zlib.h>

#include <algorithm>

namespace grove {
namespace {

// Limits on counts read from a peer, so a hostile length cannot make us allocate wildly.
constexpr std::uint32_t kMaxListEntries = 1u << 24;

void put_contributions(ByteWriter& writer, const std::vector<std::pair<Vpid, Bytes>>& list) {
  writer.u32(static_cast<std::uint32_t>(list.size()));
  for (const auto& [vpid, data] : list)
    writer.u32(vpid).blob(data);
}

bool get_contributions(ByteReader& reader, std::vector<std::pair<Vpid, Bytes>>& list) {
  auto count = reader.u32();
  if (!count || *count > kMaxListEntries) return false;
  std::optional<Vpid> previous;
  for (std::uint32_t i = 0; i < *count; ++i) {
    auto vpid = reader.u32();
    auto data = reader.blob();
    if (!vpid || !data) return false;
    if (previous && *vpid <= *previous) return false;  // ascending, no duplicates
    previous = vpid;
    list.emplace_back(*vpid, Bytes(data->begin(), data->end()));
  }
  return true;
}

bool get_vpids(ByteReader& reader, std::vector<Vpid>& list) {
  auto count = reader.u32();
  if (!count || *count > kMaxListEntries) return false;
  list.reserve(std::min<std::uint32_t>(*count, 4096));
  for (std::uint32_t i = 0; i < *count; ++i) {
    auto vpid = reader.u32();
    if (!vpid) return false;
    list.push_back(*vpid);
  }
  return true;
}

void put_vpids(ByteWriter& writer, const std::vector<Vpid>& list) {
  writer.u32(static_cast<std::uint32_t>(list.size()));
  for (Vpid vpid : list)
    writer.u32(vpid);
}

bool get_topology(ByteReader& reader, TopologyKind& out) {
  auto value = reader.u8();
  if (!value || *value > static_cast<std::uint8_t>(TopologyKind::release)) return false;
  out = static_cast<TopologyKind>(*value);
  return true;
}

bool get_status(ByteReader& reader, FenceStatus& out) {
  auto value = reader.u8();
  if (!value || *value > static_cast<std::uint8_t>(FenceStatus::topology_mismatch)) return false;
  out = static_cast<FenceStatus>(*value);
  return true;
}

void put_vpid_set(ByteWriter& writer, const VpidSet& set) {
  writer.u32(static_cast<std::uint32_t>(set.ranges().size()));
  for (const VpidRange& range : set.ranges())
    writer.u32(range.first).u32(range.last);
}

bool get_vpid_set(ByteReader& reader, VpidSet& set) {
  auto count = reader.u32();
  if (!count || *count > kMaxListEntries) return false;
  std::vector<VpidRange> ranges;
  for (std::uint32_t i = 0; i < *count; ++i) {
    auto first = reader.u32();
    auto last = reader.u32();
    if (!first || !last) return false;
    ranges.push_back({*first, *last});
  }
  return set.assign_ranges(std::move(ranges));
}

}  // namespace

std::string_view fence_status_name(FenceStatus status) {
  switch (status) {
    case FenceStatus::ok:
      return "ok";
    case FenceStatus::participant_lost:
      return "participant-lost";
    case FenceStatus::topology_mismatch:
      return "topology-mismatch";
  }
  return "unknown";
}

Bytes encode(const MembershipNotice& notice) {
  ByteWriter writer;
  writer.u64(notice.epoch);
  put_vpids(writer, notice.failed);
  return writer.take();
}

Result<MembershipNotice> decode_membership_notice(std::span<const std::byte> payload) {
  ByteReader reader(payload);
  MembershipNotice notice;
  auto epoch = reader.u64();
  if (!epoch || !get_vpids(reader, notice.failed) || !reader.done()) {
    return malformed_payload<MembershipNotice>("membership notice");
  }
  notice.epoch = *epoch;
  return notice;
}

Bytes encode(const FenceRollup& rollup) {
  ByteWriter writer;
  writer.text(rollup.key.signature).u64(rollup.key.generation);
  put_vpid_set(writer, rollup.participants);
  put_contributions(writer, rollup.contributions);
  return writer.take();
}

Result<FenceRollup> decode_fence_rollup(std::span<const std::byte> payload) {
  ByteReader reader(payload);
  FenceRollup rollup;
  auto signature = reader.text();
  auto generation = reader.u64();
  if (!signature || !generation || !get_vpid_set(reader, rollup.participants) ||
      !get_contributions(reader, rollup.contributions) || !reader.done()) {
    return malformed_payload<FenceRollup>("fence rollup");
  }
  rollup.key = FenceKey{*signature, *generation};
  return rollup;
}

Bytes encode(const FenceRelease& release) {
  ByteWriter writer;
  writer.text(release.key.signature).u64(release.key.generation);
  writer.u8(static_cast<std::uint8_t>(release.status)).u32(release.lost);
  put_contributions(writer, release.contributions);
  return writer.take();
}

Result<FenceRelease> decode_fence_release_header(std::span<const std::byte> payload) {
  ByteReader reader(payload);
  FenceRelease release;
  auto signature = reader.text();
  auto generation = reader.u64();
  if (!signature || !generation || !get_status(reader, release.status)) {
    return malformed_payload<FenceRelease>("fence release");
  }
  auto lost = reader.u32();
  if (!lost) return malformed_payload<FenceRelease>("fence release");
  release.key = FenceKey{*signature, *generation};
  release.lost = *lost;
  return release;
}

Result<FenceRelease> decode_fence_release(std::span<const std::byte> payload) {
  auto release = decode_fence_release_header(payload);
  if (!release) return release;
  // Skip what the header parse read: signature, generation, status, lost.
  ByteReader reader(payload);
  (void)reader.text();
  (void)reader.u64();
  (void)reader.u8();
  (void)reader.u32();
  if (!get_contributions(reader, release->contributions) || !reader.done()) {
    return malformed_payload<FenceRelease>("fence release");
  }
  return release;
}

Bytes encode(const XcastAck& ack) {
  ByteWriter writer;
  writer.u32(ack.slot);
  return writer.take();
}

Result<XcastAck> decode_xcast_ack(std::span<const std::byte> payload) {
  ByteReader reader(payload);
  auto slot = reader.u32();
  if (!slot || !reader.done()) return malformed_payload<XcastAck>("xcast ack");
  return XcastAck{*slot};
}

Bytes encode(const OpReport& report) {
  ByteWriter writer;
  writer.u8(static_cast<std::uint8_t>(report.topology)).u64(report.op_id).u32(report.reporter);
  writer.u16(report.tag).u8(static_cast<std::uint8_t>(report.seen_topology)).u16(report.seen_radix);
  return writer.take();
}

Result<OpReport> decode_op_report(std::span<const std::byte> payload) {
  ByteReader reader(payload);
  OpReport report;
  if (!get_topology(reader, report.topology)) return malformed_payload<OpReport>("op report");
  auto op_id = reader.u64();
  auto reporter = reader.u32();
  auto tag = reader.u16();
  if (!op_id || !reporter || !tag || !get_topology(reader, report.seen_topology)) {
    return malformed_payload<OpReport>("op report");
  }
  auto radix = reader.u16();
  if (!radix || !reader.done()) return malformed_payload<OpReport>("op report");
  report.op_id = *op_id;
  report.reporter = *reporter;
  report.tag = *tag;
  report.seen_radix = *radix;
  return report;
}

Bytes encode(const OpAbort& abort) {
  ByteWriter writer;
  writer.u8(static_cast<std::uint8_t>(abort.topology)).u64(abort.op_id).u16(abort.tag);
  writer.u8(static_cast<std::uint8_t>(abort.status)).u8(abort.fence ? 1 : 0);
  if (abort.fence) writer.text(abort.fence->signature).u64(abort.fence->generation);
  return writer.take();
}

Result<OpAbort> decode_op_abort(std::span<const std::byte> payload) {
  ByteReader reader(payload);
  OpAbort abort;
  if (!get_topology(reader, abort.topology)) return malformed_payload<OpAbort>("op abort");
  auto op_id = reader.u64();
  auto tag = reader.u16();
  if (!op_id || !tag || !get_status(reader, abort.status))
    return malformed_payload<OpAbort>("op abort");
  auto has_fence = reader.u8();
  if (!has_fence || *has_fence > 1) return malformed_payload<OpAbort>("op abort");
  abort.op_id = *op_id;
  abort.tag = *tag;
  if (*has_fence == 1) {
    auto signature = reader.text();
    auto generation = reader.u64();
    if (!signature || !generation) return malformed_payload<OpAbort>("op abort");
    abort.fence = FenceKey{*signature, *generation};
  }
  if (!reader.done()) return malformed_payload<OpAbort>("op abort");
  return abort;
}

Bytes compress_payload(std::span<const std::byte> payload) {
  uLongf bound = compressBound(static_cast<uLong>(payload.size()));
  Bytes out(8 + bound);
  ByteWriter header;
  header.u64(payload.size());
  Bytes prefix = header.take();
  std::copy(prefix.begin(), prefix.end(), out.begin());
  int status = compress2(reinterpret_cast<Bytef*>(out.data() + 8), &bound,
                         reinterpret_cast<const Bytef*>(payload.data()),
                         static_cast<uLong>(payload.size()), Z_DEFAULT_COMPRESSION);
  if (status != Z_OK) return {};  // cannot happen with a compressBound buffer
  out.resize(8 + bound);
  return out;
}

bool worth_deflating(std::span<const std::byte> payload) {
  constexpr std::size_t kSample = 64 * 1024;
  if (payload.size() <= 4 * kSample) return true;
  Bytes sample = compress_payload(payload.first(kSample));
  return !sample.empty() && sample.size() <= kSample / 8 * 7;
}

Result<Bytes> decompress_payload(std::span<const std::byte> wire, std::uint64_t max_bytes) {
  ByteReader reader(wire);
  auto length = reader.u64();
  if (!length) return Error{"compressed payload shorter than its length prefix"};
  if (*length > max_bytes) {
    return Error{"compressed payload claims " + std::to_string(*length) +
                 " bytes, above the limit of " + std::to_string(max_bytes)};
  }
  Bytes out(*length);
  uLongf produced = static_cast<uLongf>(*length);
  auto rest = reader.rest();
  int status =
      uncompress(reinterpret_cast<Bytef*>(out.data()), &produced,
                 reinterpret_cast<const Bytef*>(rest.data()), static_cast<uLong>(rest.size()));
  if (status != Z_OK || produced != *length) return Error{"corrupt compressed payload"};
  return out;
}

}  // namespace grove
