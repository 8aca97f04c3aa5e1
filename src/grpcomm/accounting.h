// Communication accounting: every frame an engine emits, counted by frame
// type, tag and topology. For a given N, radix pair and payload these counts
// are deterministic facts; the simulator and the daemons both report them.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>

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
  TrafficCount& operator+=(const TrafficCount& other) {
    frames += other.frames;
    bytes += other.bytes;
    return *this;
  }
};

class Accounting {
 public:
  void count(const TrafficKey& key, std::uint64_t bytes) {
    auto& entry = by_key_[key];
    ++entry.frames;
    entry.bytes += bytes;
  }
  const std::map<TrafficKey, TrafficCount>& by_key() const { return by_key_; }
  TrafficCount total() const;
  // Sum over keys matching a frame type and tag (any topology).
  TrafficCount of(FrameType type, std::uint16_t tag) const;
  Accounting& operator+=(const Accounting& other);

 private:
  std::map<TrafficKey, TrafficCount> by_key_;
};

}  // namespace grove
