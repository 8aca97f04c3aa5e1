// The simulator's network: alpha per hop, c per forwarded copy spread over t
// worker lanes, and one NIC per daemon whose outgoing bytes leave at
// bandwidth B. This is the seed's cost model made mechanical, so fanout
// contention is real. How copies share the NIC is a choice: `fifo` sends r
// copies of M bytes one after another (the first child holds its copy after
// M/B); `fair` shares B among every copy in flight, as TCP connections
// through one bottleneck do, so r copies issued together all arrive after
// about r M/B. Measured on a namespace swarm, fair matches real daemons;
// fifo is what the model-ordering test and the walked model pin
// (docs/benchmarks.md, "The radix crossover").
#pragma once

#include <cstdint>
#include <list>
#include <optional>
#include <vector>

#include "util/clock.h"
#include "util/flat_map.h"
#include "util/small_vector.h"

namespace grove {

enum class NicSharing : std::uint8_t { fifo, fair };

struct NetworkModel {
  TimeNs alpha_ns = 100'000;              // a hop's latency
  TimeNs copy_ns = 25'000;                // c: software cost of one forwarded copy
  std::uint32_t threads = 8;              // t: lanes sharing the copies
  double bandwidth_bytes_per_s = 1.25e9;  // B: one NIC (10 GbE)
  // Each frame's latency is alpha plus a seeded random extra of up to this
  // fraction of alpha, so notices and replays race as they do in life.
  double jitter = 0.5;
  NicSharing sharing = NicSharing::fifo;
};

// One daemon's sending side.
class DaemonNic {
 public:
  explicit DaemonNic(std::uint32_t threads) : lanes_free_ns_(threads == 0 ? 1 : threads, 0) {}
  // A frame of `bytes` handed over at `now`: returns when its last byte leaves.
  TimeNs transmit(TimeNs now, std::uint64_t bytes, const NetworkModel& model);

 private:
  // In place up to the default 8 lanes: a million NICs were a million heap
  // blocks, and a cache miss more per frame sent.
  SmallVector<TimeNs, 8> lanes_free_ns_;
  TimeNs nic_free_ns_ = 0;
};

// One daemon's NIC shared fairly (processor sharing) among the frames on it.
// Pure bookkeeping in virtual time: the simulator adds frames and asks when
// the next one finishes; whoever changes the set must ask again. A frame
// becomes sendable at `ready_ns` (after its copy cost) and is done when its
// last byte left.
class SharedNic {
 public:
  explicit SharedNic(std::uint32_t threads) : lanes_free_ns_(threads == 0 ? 1 : threads, 0) {}
  // A frame of `bytes` handed over at `now`; `token` names it in done().
  void add(TimeNs now, std::uint64_t bytes, std::uint64_t token, const NetworkModel& model);
  // Moves time to `now` (never backwards past the last call) and returns the
  // tokens of frames whose last byte left by then, in the order they did.
  std::vector<std::uint64_t> advance(TimeNs now, const NetworkModel& model);
  // When the next frame finishes or becomes sendable, if any is held.
  std::optional<TimeNs> next_event(const NetworkModel& model) const;

 private:
  struct Transfer {
    TimeNs ready_ns = 0;
    double bytes_left = 0;
    std::uint64_t token = 0;
  };
  TimeNs finish_after(double share) const;  // until the smallest sending frame is done

  std::vector<TimeNs> lanes_free_ns_;
  std::list<Transfer> waiting_;  // not sendable yet (copy cost), by ready time
  std::list<Transfer> sending_;  // sharing the wire
  TimeNs last_ns_ = 0;
};

// Per-link FIFO: a frame never overtakes an earlier one on the same link.
// Kept per sender, beside the sender's other state: a daemon talks to its
// parents, children and askers, a handful of links, and a hash of every link
// in a million-daemon run was a cache miss per frame.
class LinkClock {
 public:
  TimeNs arrival(std::uint32_t from, std::uint32_t to, TimeNs earliest);

 private:
  std::vector<FlatMap<std::uint32_t, TimeNs>> last_arrival_ns_;  // by sender
};

}  // namespace grove
