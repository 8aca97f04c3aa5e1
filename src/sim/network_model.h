// The simulator's network: alpha per hop, c per forwarded copy spread over t
// worker lanes, and one NIC per daemon that serialises its outgoing bytes at
// bandwidth B. This is the seed's cost model made mechanical, so fanout
// contention is real: r copies of M bytes leave one NIC one after another.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "util/clock.h"

namespace grove {

struct NetworkModel {
  TimeNs alpha_ns = 100'000;              // a hop's latency
  TimeNs copy_ns = 25'000;                // c: software cost of one forwarded copy
  std::uint32_t threads = 8;              // t: lanes sharing the copies
  double bandwidth_bytes_per_s = 1.25e9;  // B: one NIC (10 GbE)
  // Each frame's latency is alpha plus a seeded random extra of up to this
  // fraction of alpha, so notices and replays race as they do in life.
  double jitter = 0.5;
};

// One daemon's sending side.
class DaemonNic {
 public:
  explicit DaemonNic(std::uint32_t threads) : lanes_free_ns_(threads == 0 ? 1 : threads, 0) {}
  // A frame of `bytes` handed over at `now`: returns when its last byte leaves.
  TimeNs transmit(TimeNs now, std::uint64_t bytes, const NetworkModel& model);

 private:
  std::vector<TimeNs> lanes_free_ns_;
  TimeNs nic_free_ns_ = 0;
};

// Per-link FIFO: a frame never overtakes an earlier one on the same link.
class LinkClock {
 public:
  TimeNs arrival(std::uint32_t from, std::uint32_t to, TimeNs earliest);

 private:
  std::unordered_map<std::uint64_t, TimeNs> last_arrival_ns_;
};

}  // namespace grove
