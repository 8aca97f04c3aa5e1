#include "daemon/control_messages.h"

namespace grove {
namespace {

constexpr std::uint32_t kMaxEntries = 1u << 22;

void put_report(ByteWriter& writer, const DaemonReport& report) {
  writer.u32(report.vpid).text(report.endpoint).text(report.hostname);
  writer.u32(report.cores).u32(report.pid);
}

bool get_report(ByteReader& reader, DaemonReport& report) {
  auto vpid = reader.u32();
  auto endpoint = reader.text();
  auto hostname = reader.text();
  auto cores = reader.u32();
  auto pid = reader.u32();
  if (!vpid || !endpoint || !hostname || !cores || !pid) return false;
  report = DaemonReport{*vpid, *endpoint, *hostname, *cores, *pid};
  return true;
}

void put_accounting(ByteWriter& writer, const Accounting& accounting) {
  writer.u32(static_cast<std::uint32_t>(accounting.by_key().size()));
  for (const auto& [key, count] : accounting.by_key()) {
    writer.u8(static_cast<std::uint8_t>(key.type)).u16(key.tag);
    writer.u8(static_cast<std::uint8_t>(key.topology)).u64(count.frames).u64(count.bytes);
  }
}

bool get_accounting(ByteReader& reader, Accounting& accounting) {
  auto count = reader.u32();
  if (!count || *count > kMaxEntries) return false;
  for (std::uint32_t i = 0; i < *count; ++i) {
    auto type = reader.u8();
    auto tag = reader.u16();
    auto topology = reader.u8();
    auto frames = reader.u64();
    auto bytes = reader.u64();
    if (!type || !tag || !topology || !frames || !bytes || *type == 0 || *type > kFrameTypeMax ||
        *topology > static_cast<std::uint8_t>(TopologyKind::release)) {
      return false;
    }
    TrafficKey key{static_cast<FrameType>(*type), *tag, static_cast<TopologyKind>(*topology)};
    accounting.add(key, TrafficCount{*frames, *bytes});
  }
  return true;
}

}  // namespace

Bytes encode(const DaemonReport& report) {
  ByteWriter writer;
  put_report(writer, report);
  return writer.take();
}

Result<DaemonReport> decode_daemon_report(std::span<const std::byte> payload) {
  ByteReader reader(payload);
  DaemonReport report;
  if (!get_report(reader, report) || !reader.done())
    return malformed_payload<DaemonReport>("report");
  return report;
}

Bytes encode(const LaunchFailure& failure) {
  ByteWriter writer;
  writer.u32(failure.vpid).text(failure.reason);
  return writer.take();
}

Result<LaunchFailure> decode_launch_failure(std::span<const std::byte> payload) {
  ByteReader reader(payload);
  auto vpid = reader.u32();
  auto reason = reader.text();
  if (!vpid || !reason || !reader.done()) return malformed_payload<LaunchFailure>("launch failure");
  return LaunchFailure{*vpid, *reason};
}

Bytes encode(const EndpointTable& table) {
  ByteWriter writer;
  writer.u32(static_cast<std::uint32_t>(table.daemons.size()));
  for (const auto& report : table.daemons)
    put_report(writer, report);
  return writer.take();
}

Result<EndpointTable> decode_endpoint_table(std::span<const std::byte> payload) {
  ByteReader reader(payload);
  auto count = reader.u32();
  if (!count || *count > kMaxEntries) return malformed_payload<EndpointTable>("endpoint table");
  EndpointTable table;
  for (std::uint32_t i = 0; i < *count; ++i) {
    DaemonReport report;
    if (!get_report(reader, report)) return malformed_payload<EndpointTable>("endpoint table");
    table.daemons.push_back(std::move(report));
  }
  if (!reader.done()) return malformed_payload<EndpointTable>("endpoint table");
  return table;
}

Bytes encode(const CountersReply& reply) {
  ByteWriter writer;
  writer.u64(reply.request).u32(reply.vpid).u64(reply.epoch).u64(reply.tree_version);
  put_accounting(writer, reply.engine);
  put_accounting(writer, reply.transport_sent);
  put_accounting(writer, reply.transport_received);
  writer.u64(reply.footprint.ops)
      .u64(reply.footprint.open_fences)
      .u64(reply.footprint.fence_signatures);
  writer.u64(reply.controller_rtt_ns);
  return writer.take();
}

Result<CountersReply> decode_counters_reply(std::span<const std::byte> payload) {
  ByteReader reader(payload);
  CountersReply reply;
  auto request = reader.u64();
  auto vpid = reader.u32();
  auto epoch = reader.u64();
  auto version = reader.u64();
  if (!request || !vpid || !epoch || !version || !get_accounting(reader, reply.engine) ||
      !get_accounting(reader, reply.transport_sent) ||
      !get_accounting(reader, reply.transport_received)) {
    return malformed_payload<CountersReply>("counters reply");
  }
  auto ops = reader.u64();
  auto open_fences = reader.u64();
  auto signatures = reader.u64();
  auto rtt = reader.u64();
  if (!ops || !open_fences || !signatures || !rtt || !reader.done()) {
    return malformed_payload<CountersReply>("counters reply");
  }
  reply.footprint = EngineFootprint{*ops, *open_fences, *signatures};
  reply.controller_rtt_ns = *rtt;
  reply.request = *request;
  reply.vpid = *vpid;
  reply.epoch = *epoch;
  reply.tree_version = *version;
  return reply;
}

Bytes encode(const ShowHelpTopic& help) {
  ByteWriter writer;
  writer.text(help.file).text(help.topic).u32(static_cast<std::uint32_t>(help.args.size()));
  for (const auto& arg : help.args)
    writer.text(arg);
  return writer.take();
}

Result<ShowHelpTopic> decode_help(std::span<const std::byte> payload) {
  ByteReader reader(payload);
  auto file = reader.text();
  auto topic = reader.text();
  auto count = reader.u32();
  if (!file || !topic || !count || *count > 64)
    return malformed_payload<ShowHelpTopic>("help topic");
  ShowHelpTopic help{*file, *topic, {}};
  for (std::uint32_t i = 0; i < *count; ++i) {
    auto arg = reader.text();
    if (!arg) return malformed_payload<ShowHelpTopic>("help topic");
    help.args.push_back(*arg);
  }
  if (!reader.done()) return malformed_payload<ShowHelpTopic>("help topic");
  return help;
}

Bytes encode(const BenchBarrier& bench) {
  ByteWriter writer;
  writer.text(bench.signature).u32(static_cast<std::uint32_t>(bench.participants.ranges().size()));
  for (const VpidRange& range : bench.participants.ranges())
    writer.u32(range.first).u32(range.last);
  return writer.take();
}

Result<BenchBarrier> decode_bench_barrier(std::span<const std::byte> payload) {
  ByteReader reader(payload);
  auto signature = reader.text();
  auto count = reader.u32();
  if (!signature || !count || *count > kMaxEntries) return malformed_payload<BenchBarrier>("bench");
  std::vector<VpidRange> ranges;
  for (std::uint32_t i = 0; i < *count; ++i) {
    auto first = reader.u32();
    auto last = reader.u32();
    if (!first || !last) return malformed_payload<BenchBarrier>("bench");
    ranges.push_back({*first, *last});
  }
  BenchBarrier bench{*signature, {}};
  if (!bench.participants.assign_ranges(std::move(ranges)) || !reader.done()) {
    return malformed_payload<BenchBarrier>("bench");
  }
  return bench;
}

Bytes encode_u64(std::uint64_t value) {
  ByteWriter writer;
  writer.u64(value);
  return writer.take();
}

Result<std::uint64_t> decode_u64(std::span<const std::byte> payload) {
  ByteReader reader(payload);
  auto value = reader.u64();
  if (!value || !reader.done()) return Error{"malformed u64 payload"};
  return *value;
}

}  // namespace grove
