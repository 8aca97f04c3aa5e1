// Communication accounting: every frame an engine emits, counted by frame
// type, tag and topology. For a given N, radix pair and payload these counts
// are deterministic facts; the simulator and the daemons both report them.
#pragma once

#include <cstdint>
#include <map>
#include <span>

#include "rml/frame.h"

namespace grove {

struct TrafficKey {
  FrameType type = FrameType::xcast_data;
  std::uint16_t tag = 0;
  TopologyKind topology = TopologyKind::routing;
  auto operator<=>(const TrafficKey&) const = default;
};

struct TrafficCount {
  std::uint64_t frames = 0;
  std::uint64_t bytes = 0;  // whole frames, header included

  void add(std::uint64_t frame_bytes) {
    ++frames;
    bytes += frame_bytes;
  }
  TrafficCount& operator+=(const TrafficCount& other) {
    frames += other.frames;
    bytes += other.bytes;
    return *this;
  }
  bool operator==(const TrafficCount&) const = default;
};

class Accounting {
 public:
  void count(const TrafficKey& key, std::uint64_t bytes) { by_key_[key].add(bytes); }
  void add(const TrafficKey& key, const TrafficCount& count) { by_key_[key] += count; }
  // Counts a whole encoded frame by its header (frames that do not decode are not counted).
  void count_frame(std::span<const std::byte> frame);
  const std::map<TrafficKey, TrafficCount>& by_key() const { return by_key_; }
  TrafficCount total() const;
  // Sum over keys matching a frame type and tag (any topology).
  TrafficCount of(FrameType type, std::uint16_t tag) const;
  // Sum over keys matching a tag and topology (any frame type).
  TrafficCount of(std::uint16_t tag, TopologyKind topology) const;
  bool operator==(const Accounting& other) const { return by_key_ == other.by_key_; }
  Accounting& operator+=(const Accounting& other);

 private:
  std::map<TrafficKey, TrafficCount> by_key_;
};

}  // namespace grove
