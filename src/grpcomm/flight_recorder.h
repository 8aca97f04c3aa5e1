// Keeps one engine's inputs, in order, within a byte budget: the driver
// hands each input here after the engine took it, with its effects, and the
// recorder encodes both into the newest of its chunks (64 KiB each; no
// allocation per input). Past the budget the oldest chunk is let go, and the
// recording says from which input it starts. docs/simulator.md, "Flight
// recordings".
#pragma once

#include <csignal>
#include <cstddef>
#include <deque>
#include <string>

#include "grpcomm/flight_record.h"

namespace grove {

class FlightRecorder {
 public:
  // budget_bytes 0: records nothing.
  explicit FlightRecorder(std::size_t budget_bytes = 0) : budget_(budget_bytes) {}

  bool on() const { return budget_ > 0; }
  // A new engine: a fresh DVM of `fresh_daemons`, or (0) one made from the
  // join seed `seed`. What was kept before is let go.
  void start(const EngineConfig& config, std::uint32_t fresh_daemons, Bytes seed = {});
  // Keeps `input` and what the engine did with it (`out`); does nothing if off.
  void record(const FlightInputHead& input, const Outbox& out);

  // The recording as a file (flight_record.h), with the engine's counts now.
  Bytes write(const std::string& build, const Accounting& accounting, const EngineStats& stats,
              TimeNs now) const;

  // For a fatal signal's handler (daemon/fatal_signal_dump.h): the file's
  // fixed start is made here, at each start(), for the build named once.
  void set_build(std::string build) { build_ = std::move(build); }
  // Hands the recording as a file, piece by piece, to `put` (which returns
  // false to stop), with nothing but CRC arithmetic in between, so a signal
  // handler may: no allocation, no lock. Its counts are not taken (taken_ns
  // 0, no accounting: flight_record.h). False, handing nothing, if the
  // signal came while an input was being kept (the chunks are then half
  // moved) or nothing is prepared.
  using PutPiece = bool (*)(void* context, const std::byte* data, std::size_t size);
  bool write_after_crash(PutPiece put, void* context) const noexcept;

  std::uint64_t inputs_total() const { return total_; }
  std::uint64_t inputs_kept() const { return total_ - first_; }
  std::size_t bytes_kept() const { return bytes_; }  // the chunks' capacity

 private:
  static constexpr std::size_t kChunkBytes = std::size_t{64} << 10;
  struct Chunk {
    Bytes bytes;  // inputs, encoded one after another
    std::uint64_t inputs = 0;
  };
  // A chunk with room for at least `need` more bytes, the oldest let go
  // while the budget would be passed.
  Chunk& room_for(std::size_t need);

  std::size_t budget_;
  FlightHeader header_;
  std::string build_;
  // The file up to the header's counts, for write_after_crash(); set while
  // record() runs, when the chunks are not whole.
  Bytes crash_prefix_;
  volatile std::sig_atomic_t recording_ = 0;
  std::deque<Chunk> chunks_;
  std::size_t bytes_ = 0;
  std::uint64_t total_ = 0;
  std::uint64_t first_ = 0;  // the number of the oldest input kept
};

}  // namespace grove
