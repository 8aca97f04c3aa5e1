// What a transport has sent and received: frames and bytes (whole frames,
// header included), per (frame type, tag, topology) as rml/traffic.h counts them. These are the
// real daemon's side of the communication accounting that the simulator predicts.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "rml/topology.h"
#include "rml/traffic.h"

namespace grove {

struct TransportCounters {
  // Frames accepted by send() for a peer (counted when queued; a frame queued
  // to a peer that is then lost is still counted as sent).
  Accounting sent;
  // Frames from peers handed to on_frame.
  Accounting received;
  // Sends to this daemon itself: delivered without a socket, counted only here.
  TrafficCount loopback;
  // How many times on_peer_lost was called.
  std::uint64_t peers_lost = 0;
};

// One line per total and per key, e.g. "sent tag 3 topology release: 2 frames 194 bytes".
std::string format_counters(const TransportCounters& counters);

}  // namespace grove
