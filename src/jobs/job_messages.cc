#include "jobs/job_messages.h"

namespace grove {
namespace {

constexpr std::uint32_t kMaxEntries = 1u << 22;

void put_strings(ByteWriter& writer, const std::vector<std::string>& list) {
  writer.u32(static_cast<std::uint32_t>(list.size()));
  for (const auto& item : list)
    writer.text(item);
}

bool get_strings(ByteReader& reader, std::vector<std::string>& list) {
  auto count = reader.u32();
  if (!count || *count > kMaxEntries) return false;
  for (std::uint32_t i = 0; i < *count; ++i) {
    auto item = reader.text();
    if (!item) return false;
    list.push_back(std::move(*item));
  }
  return true;
}

void write_rounds(ByteWriter& writer, const std::vector<FenceRound>& rounds) {
  writer.u32(static_cast<std::uint32_t>(rounds.size()));
  for (const FenceRound& round : rounds)
    writer.text(round.signature).u64(round.round);
}

bool read_rounds(ByteReader& reader, std::vector<FenceRound>& rounds) {
  auto count = reader.u32();
  if (!count || *count > kMaxEntries) return false;
  for (std::uint32_t i = 0; i < *count; ++i) {
    auto signature = reader.text();
    auto round = reader.u64();
    if (!signature || !round) return false;
    rounds.push_back(FenceRound{std::move(*signature), *round});
  }
  return true;
}

}  // namespace

Bytes encode(const JobSpec& spec) {
  ByteWriter writer;
  writer.u32(spec.job).text(spec.nspace);
  put_strings(writer, spec.argv);
  put_strings(writer, spec.env);
  writer.text(spec.cwd);
  writer.u32(static_cast<std::uint32_t>(spec.ranks.size()));
  for (const auto& rank : spec.ranks) {
    writer.u32(rank.rank).u32(rank.daemon).u16(rank.local_rank).u16(rank.node_rank);
    writer.u32(rank.node_id);
  }
  put_strings(writer, spec.hostnames);
  return writer.take();
}

Result<JobSpec> decode_job_spec(std::span<const std::byte> payload) {
  ByteReader reader(payload);
  JobSpec spec;
  auto job = reader.u32();
  auto nspace = reader.text();
  if (!job || !nspace || !get_strings(reader, spec.argv) || !get_strings(reader, spec.env)) {
    return malformed_payload<JobSpec>("job launch");
  }
  auto cwd = reader.text();
  auto count = reader.u32();
  if (!cwd || !count || *count > kMaxEntries) return malformed_payload<JobSpec>("job launch");
  for (std::uint32_t i = 0; i < *count; ++i) {
    auto rank = reader.u32();
    auto daemon = reader.u32();
    auto local = reader.u16();
    auto node_rank = reader.u16();
    auto node = reader.u32();
    if (!rank || !daemon || !local || !node_rank || !node || *rank != i) {
      return malformed_payload<JobSpec>("job launch");
    }
    spec.ranks.push_back(RankPlacement{*rank, *daemon, *local, *node_rank, *node});
  }
  if (!get_strings(reader, spec.hostnames) || !reader.done() || spec.argv.empty()) {
    return malformed_payload<JobSpec>("job launch");
  }
  spec.job = *job;
  spec.nspace = *nspace;
  spec.cwd = *cwd;
  return spec;
}

Bytes encode(const JobOutput& output) {
  ByteWriter writer;
  writer.u32(output.job).u32(output.rank).u8(static_cast<std::uint8_t>(output.stream));
  writer.text(output.text);
  return writer.take();
}

Result<JobOutput> decode_job_output(std::span<const std::byte> payload) {
  ByteReader reader(payload);
  auto job = reader.u32();
  auto rank = reader.u32();
  auto stream = reader.u8();
  auto text = reader.text();
  if (!job || !rank || !stream || !text || !reader.done() || *stream < 1 || *stream > 2) {
    return malformed_payload<JobOutput>("job output");
  }
  return JobOutput{*job, *rank, static_cast<OutputStream>(*stream), std::move(*text)};
}

Bytes encode(const RankExit& exit) {
  ByteWriter writer;
  writer.u32(exit.job).u32(exit.rank).u8(static_cast<std::uint8_t>(exit.kind));
  writer.u32(static_cast<std::uint32_t>(exit.status)).text(exit.message);
  write_rounds(writer, exit.released);
  return writer.take();
}

Result<RankExit> decode_rank_exit(std::span<const std::byte> payload) {
  ByteReader reader(payload);
  auto job = reader.u32();
  auto rank = reader.u32();
  auto kind = reader.u8();
  auto status = reader.u32();
  auto message = reader.text();
  std::vector<FenceRound> released;
  if (!job || !rank || !kind || !status || !message || !read_rounds(reader, released) ||
      !reader.done() || *kind < 1 || *kind > 4) {
    return malformed_payload<RankExit>("rank exit");
  }
  return RankExit{*job,
                  *rank,
                  static_cast<ExitKind>(*kind),
                  static_cast<std::int32_t>(*status),
                  std::move(*message),
                  std::move(released)};
}

Bytes encode(const JobAbort& abort) {
  ByteWriter writer;
  writer.u32(abort.job).u32(abort.rank).u32(static_cast<std::uint32_t>(abort.status));
  writer.text(abort.message);
  return writer.take();
}

Result<JobAbort> decode_job_abort(std::span<const std::byte> payload) {
  ByteReader reader(payload);
  auto job = reader.u32();
  auto rank = reader.u32();
  auto status = reader.u32();
  auto message = reader.text();
  if (!job || !rank || !status || !message || !reader.done())
    return malformed_payload<JobAbort>("abort");
  return JobAbort{*job, *rank, static_cast<std::int32_t>(*status), std::move(*message)};
}

Bytes encode(const RanksGone& gone) {
  ByteWriter writer;
  writer.u32(gone.job).u32(static_cast<std::uint32_t>(gone.ranks.size()));
  for (const GoneRank& rank : gone.ranks) {
    writer.u32(rank.rank);
    write_rounds(writer, rank.released);
  }
  return writer.take();
}

Result<RanksGone> decode_ranks_gone(std::span<const std::byte> payload) {
  ByteReader reader(payload);
  RanksGone gone;
  auto job = reader.u32();
  auto count = reader.u32();
  // Each rank takes at least 8 bytes: a count the payload cannot hold is malformed.
  if (!job || !count || *count > payload.size() / 8)
    return malformed_payload<RanksGone>("ranks gone");
  gone.job = *job;
  for (std::uint32_t i = 0; i < *count; ++i) {
    auto rank = reader.u32();
    GoneRank entry;
    if (!rank || !read_rounds(reader, entry.released))
      return malformed_payload<RanksGone>("ranks gone");
    entry.rank = *rank;
    gone.ranks.push_back(std::move(entry));
  }
  if (!reader.done()) return malformed_payload<RanksGone>("ranks gone");
  return gone;
}

Bytes encode(const OutputAck& ack) {
  ByteWriter writer;
  writer.u32(ack.job).u64(ack.bytes);
  return writer.take();
}

Result<OutputAck> decode_output_ack(std::span<const std::byte> payload) {
  ByteReader reader(payload);
  auto job = reader.u32();
  auto bytes = reader.u64();
  if (!job || !bytes || !reader.done()) return malformed_payload<OutputAck>("output ack");
  return OutputAck{*job, *bytes};
}

}  // namespace grove
