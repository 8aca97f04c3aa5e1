// Communication accounting: every frame an engine emits, counted by frame
// type, tag and topology. For a given N, radix pair and payload these counts
// are deterministic facts; the simulator and the daemons both report them.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "rml/frame.h"
#include "util/flat_map.h"

namespace grove {

struct TrafficKey {
  FrameType type = FrameType::xcast_data;
  std::uint16_t tag = 0;
  TopologyKind topology = TopologyKind::routing;
  auto operator<=>(const TrafficKey&) const = default;

  static constexpr const char* wire_name = "traffic key";
  static auto wire_fields(auto& m) { return std::tie(m.type, m.tag, m.topology); }
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

  static constexpr const char* wire_name = "traffic count";
  static auto wire_fields(auto& m) { return std::tie(m.frames, m.bytes); }
};

class Accounting {
 public:
  void count(const TrafficKey& key, std::uint64_t bytes) { by_key_[key].add(bytes); }
  void add(const TrafficKey& key, const TrafficCount& count) { by_key_[key] += count; }
  // Counts a whole encoded frame by its header (frames that do not decode are not counted).
  void count_frame(std::span<const std::byte> frame);
  const FlatMap<TrafficKey, TrafficCount>& by_key() const { return by_key_; }
  TrafficCount total() const;
  // Sum over keys matching a frame type and tag (any topology).
  TrafficCount of(FrameType type, std::uint16_t tag) const;
  // Sum over keys matching a tag and topology (any frame type).
  TrafficCount of(std::uint16_t tag, TopologyKind topology) const;
  bool operator==(const Accounting& other) const { return by_key_ == other.by_key_; }
  Accounting& operator+=(const Accounting& other);

 private:
  // A handful of keys per engine: one block, not a node each (the simulator
  // holds a million of these).
  FlatMap<TrafficKey, TrafficCount> by_key_;
};

// On the wire: its (key, count) entries, keys strictly ascending.
template <>
struct WireCodec<Accounting> {
  using Entries = std::vector<std::pair<TrafficKey, TrafficCount>>;
  static constexpr std::size_t min_size = 4;
  static void put(WireWriter& writer, const Accounting& accounting) {
    writer.put(Entries(accounting.by_key().begin(), accounting.by_key().end()));
  }
  static bool get(WireReader& reader, Accounting& accounting) {
    Entries entries;
    if (!reader.get(entries)) return false;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (i > 0 && !(entries[i - 1].first < entries[i].first)) return false;  // as a map sends them
      accounting.add(entries[i].first, entries[i].second);
    }
    return true;
  }
};

}  // namespace grove
