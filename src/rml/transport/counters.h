// What a transport has sent and received: frames and bytes (whole frames,
// header included), in total and per (tag, topology). These are the real
// daemon's side of the communication accounting that the simulator predicts.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <string>

#include "rml/topology.h"

namespace grove {

struct TrafficCount {
  std::uint64_t frames = 0;
  std::uint64_t bytes = 0;

  void add(std::uint64_t frame_bytes) {
    ++frames;
    bytes += frame_bytes;
  }
  bool operator==(const TrafficCount&) const = default;
};

struct TrafficKey {
  std::uint16_t tag = 0;
  TopologyKind topology = TopologyKind::routing;

  auto operator<=>(const TrafficKey&) const = default;
};

struct TransportCounters {
  // Frames accepted by send() for a peer (counted when queued; a frame queued
  // to a peer that is then lost is still counted as sent).
  TrafficCount sent;
  std::map<TrafficKey, TrafficCount> sent_by_key;
  // Frames from peers handed to on_frame.
  TrafficCount received;
  std::map<TrafficKey, TrafficCount> received_by_key;
  // Sends to this daemon itself: delivered without a socket, counted only here.
  TrafficCount loopback;
  // How many times on_peer_lost was called.
  std::uint64_t peers_lost = 0;
};

// One line per total and per key, e.g. "sent tag 3 topology release: 2 frames 194 bytes".
std::string format_counters(const TransportCounters& counters);

}  // namespace grove
