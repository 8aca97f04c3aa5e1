// A deterministic discrete-event simulator that runs one grpcomm Engine per
// daemon over the modelled network, with injected faults. Virtual time, one
// seed split into a random stream per subsystem (util/random_stream.h, the
// same on every standard library), per-link FIFO delivery; every run replays
// bit for bit from its seed. Workload: back-to-back fences among the participants; invariants are
// checked on every step and liveness at the end (see invariant_checker.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "grpcomm/bruck_exchange.h"
#include "grpcomm/repair_rules.h"
#include "rml/topology.h"
#include "rml/traffic.h"
#include "sim/network_model.h"

namespace grove {

enum class FaultKind : std::uint8_t {
  at_time,        // the victim dies at a virtual time
  on_release,     // the victim dies as it delivers a fence release, mid-forward
  while_holding,  // the victim dies while holding a release (needs a release delay)
};

struct FaultSpec {
  std::uint32_t victim = 1;
  FaultKind kind = FaultKind::at_time;
  TimeNs at_ns = 0;         // at_time: when
  std::uint64_t round = 1;  // on_release / while_holding: which fence round
};

struct SimOptions {
  std::uint32_t daemons = 64;
  std::uint64_t payload_bytes = 1024;  // the release's aggregate, split among participants
  TopologyRadices radices{64, 4};
  bool low_radix_release = true;
  FenceTopology fence_topology = FenceTopology::tree;  // grpcomm_fence_topology
  std::uint32_t rounds = 1;                            // back-to-back fences
  std::string signature = "sim-job";  // the fence's name (its length is on the wire)
  // Ranks enter each round through their daemon's PMIx fence book (the PMIx
  // bridge's state machine, sim/pmix_fence_layer.h) and every answer is
  // checked; `signature` then names the job, whose fence is named as PMIx's.
  bool pmix_fences = false;
  std::uint32_t random_faults = 0;  // drawn from the seed when `faults` is empty
  std::vector<FaultSpec> faults;    // an explicit schedule
  // Elastic membership: this many of the daemons that die come back at their
  // vpid (each some time after its departure was declared), and this many
  // new daemons join past the end, at random times while the rounds run.
  // Neither hosts participants: the job was placed before they came.
  std::uint32_t returns = 0;
  std::uint32_t joins = 0;
  std::uint64_t seed = 1;
  NetworkModel network;
  TimeNs detect_min_ns = 50'000;  // the controller learns of a death this long after
  TimeNs detect_max_ns = 2'000'000;
  TimeNs release_delay_ns = 0;  // grpcomm_release_delay_ms
  // grpcomm_release_delay_target: -1 delays at every daemon; a vpid delays
  // only there; -2 delays only at the first fault's victim (its subtree then
  // finishes last, the window in which a repair must not be declared done).
  std::int64_t release_delay_target = -1;
  // grpcomm_release_ack_delay_us: fence-release acks share frames.
  TimeNs ack_delay_ns = 0;
  std::uint64_t compress_threshold = 4096;
  double participant_fraction = 1.0;  // daemons hosting fence participants (0 always does)
  bool check_engines = true;          // Engine::check_invariants after every input
  bool validate_trees = false;        // validate_tree after every repair (slow at scale)
  TimeNs time_limit_ns = 600'000'000'000ULL;
  RepairRules weakened_rules;  // tests only: see repair_rules.h
  std::size_t trace_lines = 80;
  // false: the run's memory is not freed when it ends but left to the
  // process's exit (grove sim's last run; tests and sweeps keep the default).
  bool free_memory = true;
  // Called every 65,536 events with the run's count so far; returning false
  // ends the run at once, marked interrupted (grove sim's Ctrl-C).
  std::function<bool(std::uint64_t events)> progress;
};

struct SimResult {
  bool ok = true;
  std::string violation;           // the first invariant broken
  std::vector<std::string> trace;  // the last events before it
  std::uint64_t seed = 0;
  std::uint64_t events = 0;
  TimeNs end_ns = 0;
  std::vector<std::uint32_t> killed;
  std::vector<std::uint32_t> returned;  // came back at their vpid, in order
  std::vector<std::uint32_t> joined;    // joined past the end, in order
  std::uint64_t rounds_completed = 0;   // rounds every living participant finished
  std::uint64_t rounds_failed = 0;      // rounds that ended with an error status
  std::vector<TimeNs> fence_ns;         // per round: first contribution to last completion
  std::vector<TimeNs> release_span_ns;  // per fence release: originator's start to last ack
  Accounting traffic;                   // every frame every daemon sent
  std::vector<TrafficCount> per_daemon;
  std::uint64_t parked = 0, replays = 0, rollup_resends = 0;
  std::uint64_t pmix_released = 0, pmix_failed = 0;  // with pmix_fences: answers by outcome
  bool interrupted = false;  // stopped by options.progress; nothing else holds
};

SimResult run_simulation(const SimOptions& options);

}  // namespace grove
