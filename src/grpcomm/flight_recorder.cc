#include "grpcomm/flight_recorder.h"

#include <algorithm>
#include <atomic>

namespace grove {

namespace {

// Marks the chunks as not whole while it lives (a signal handler then
// writes nothing), however the scope ends.
class NotWhole {
 public:
  explicit NotWhole(volatile std::sig_atomic_t& flag) : flag_(flag) {
    flag_ = 1;
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
  ~NotWhole() {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    flag_ = 0;
  }
  NotWhole(const NotWhole&) = delete;
  NotWhole& operator=(const NotWhole&) = delete;

 private:
  volatile std::sig_atomic_t& flag_;
};

}  // namespace

void FlightRecorder::start(const EngineConfig& config, std::uint32_t fresh_daemons, Bytes seed) {
  const NotWhole changing(recording_);
  header_ = flight_header_for(config);
  header_.fresh_daemons = fresh_daemons;
  header_.seed = std::move(seed);
  chunks_.clear();
  bytes_ = 0;
  total_ = 0;
  first_ = 0;
  crash_prefix_.clear();
  if (on() && !build_.empty()) {
    // The header with its counts zero and no accounting: its encoding ends
    // with kCrashCountsBytes of them, which write_after_crash() writes itself.
    Bytes whole = encode_flight_file(build_, header_, 0, {});
    whole.resize(whole.size() - kCrashCountsBytes - 4 - 4);  // and the count, the CRC
    crash_prefix_ = std::move(whole);
  }
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
  // A fatal signal meanwhile finds the chunks half moved: it writes nothing.
  const NotWhole changing(recording_);
  Chunk& chunk = room_for(need);
  WireWriter writer(std::move(chunk.bytes));
  append_flight_input(writer, input, out);
  chunk.bytes = writer.take();
  ++chunk.inputs;
  ++total_;
}

namespace {

void put_be(std::byte*& at, std::uint64_t value, int bytes) noexcept {
  for (int i = bytes - 1; i >= 0; --i)
    *at++ = static_cast<std::byte>((value >> (8 * i)) & 0xff);
}

}  // namespace

bool FlightRecorder::write_after_crash(PutPiece put, void* context) const noexcept {
  if (crash_prefix_.empty() || recording_ != 0) return false;
  // The header's counts (first_input, inputs_total, taken_ns 0, an empty
  // accounting, the six stats 0), then the inputs' count: fixed widths,
  // big-endian (util/bytes.h).
  std::byte counts[kCrashCountsBytes + 4] = {};
  std::byte* at = counts;
  put_be(at, first_, 8);
  put_be(at, total_, 8);
  at += 8 + 4 + 6 * 8;
  put_be(at, total_ - first_, 4);
  std::uint32_t crc = flight_crc_update(0, crash_prefix_);
  crc = flight_crc_update(crc, std::span<const std::byte>(counts, sizeof counts));
  if (!put(context, crash_prefix_.data(), crash_prefix_.size()) ||
      !put(context, counts, sizeof counts)) {
    return false;
  }
  for (const Chunk& chunk : chunks_) {
    crc = flight_crc_update(crc, chunk.bytes);
    if (!put(context, chunk.bytes.data(), chunk.bytes.size())) return false;
  }
  std::byte trailer[4];
  at = trailer;
  put_be(at, crc, 4);
  return put(context, trailer, sizeof trailer);
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
