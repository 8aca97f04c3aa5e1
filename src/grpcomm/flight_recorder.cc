#include "grpcomm/flight_recorder.h"

#include <algorithm>

namespace grove {

void FlightRecorder::start(const EngineConfig& config, std::uint32_t fresh_daemons, Bytes seed) {
  header_ = flight_header_for(config);
  header_.fresh_daemons = fresh_daemons;
  header_.seed = std::move(seed);
  chunks_.clear();
  bytes_ = 0;
  total_ = 0;
  first_ = 0;
}

FlightRecorder::Chunk& FlightRecorder::room_for(std::size_t need) {
  if (!chunks_.empty()) {
    const Bytes& last = chunks_.back().bytes;
    if (last.capacity() - last.size() >= need) return chunks_.back();
  }
  const std::size_t size = std::max(need, std::min(kChunkBytes, budget_));
  // The oldest chunk let go lends its buffer to the new one: once the
  // budget is full a daemon touches no new memory (a first touch is a page
  // fault, dear on some VMs: docs/benchmarks.md).
  Bytes reused;
  while (!chunks_.empty() && bytes_ + size > budget_) {
    first_ += chunks_.front().inputs;
    bytes_ -= chunks_.front().bytes.capacity();
    if (reused.capacity() < size) reused = std::move(chunks_.front().bytes);
    chunks_.pop_front();
  }
  chunks_.emplace_back();
  Bytes& bytes = chunks_.back().bytes;
  if (reused.capacity() >= size) {
    reused.clear();
    bytes = std::move(reused);
  } else {
    bytes.reserve(size);
  }
  bytes_ += bytes.capacity();
  return chunks_.back();
}

void FlightRecorder::record(const FlightInputHead& input, const Outbox& out) {
  if (!on()) return;
  // At most what the input and its effects encode to (flight_record.h).
  const std::size_t need = 64 + input.text.size() + input.data.size() +
                           8 * input.participants.ranges().size() + 32 * out.effects().size();
  Chunk& chunk = room_for(need);
  WireWriter writer(std::move(chunk.bytes));
  append_flight_input(writer, input, out);
  chunk.bytes = writer.take();
  ++chunk.inputs;
  ++total_;
}

Bytes FlightRecorder::write(const std::string& build, const Accounting& accounting,
                            const EngineStats& stats, TimeNs now) const {
  FlightHeader header = header_;
  header.first_input = first_;
  header.inputs_total = total_;
  header.taken_ns = now;
  header.accounting = accounting;
  header.stats = stats;
  std::vector<ByteView> pieces;
  pieces.reserve(chunks_.size());
  for (const Chunk& chunk : chunks_)
    pieces.emplace_back(chunk.bytes);
  return encode_flight_file(build, header, total_ - first_, pieces);
}

}  // namespace grove
