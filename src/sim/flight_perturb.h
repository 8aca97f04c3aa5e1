// A real history, perturbed (`grove sim --replay DIR --perturb SEED`): the
// recorded schedule is kept up to a cut, then the simulator takes over.
// Every daemon's engine is replayed up to a consistent cut (no daemon has
// received a frame its sender had not sent by its own cut); the frames sent
// before it and not yet received are in flight; each armed timer still runs.
// After the cut the recorded inputs that did not come from the network
// (contributions, the controller's broadcasts and departures, the ends of
// fence scopes) come again at their recorded times, while frames travel
// with a latency drawn from the seed and a daemon drawn from the seed dies
// at a time drawn from it. The simulator's invariants are checked after
// every input, and liveness at the end: every broadcast completes, and every
// living daemon ends at least the fences it ended for real. So a real
// near-miss becomes a search around it. docs/simulator.md, "Perturbing a
// real history".
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "grpcomm/flight_record.h"
#include "grpcomm/repair_rules.h"
#include "util/clock.h"

namespace grove {

struct PerturbOptions {
  std::uint64_t seed = 1;
  // Where the recorded schedule ends: this fraction of each daemon's own
  // recorded span (each host's clock is its own), then moved back as far as
  // the cut must go to be consistent.
  double cut = 0.5;
  TimeNs base_latency_ns = 20'000;  // every frame's latency is this plus jitter
  TimeNs jitter_ns = 500'000;       // up to this much more, drawn per frame
  std::uint32_t kills = 1;          // daemons killed after the cut (never the controller)
  TimeNs detect_min_ns = 50'000;    // the controller learns of a death this long after
  TimeNs detect_max_ns = 2'000'000;
  RepairRules weakened;  // tests only: every engine with these rules in their naive forms
};

struct PerturbReport {
  std::uint64_t seed = 0;
  std::map<Vpid, std::uint64_t> kept;  // recorded inputs replayed, by daemon
  std::uint64_t in_flight = 0;         // frames sent before the cut, received after
  std::uint64_t simulated_inputs = 0;  // inputs after the cut
  std::vector<Vpid> killed;            // by the perturbation
  std::uint64_t dropped_inputs = 0;    // contributions including a daemon it killed
  std::vector<std::string> problems;   // broken invariants, liveness
  bool ok() const { return problems.empty(); }
};

// Refuses recordings it cannot perturb (one that does not replay exactly,
// no controller's, a daemon that returned or joined, a daemon with neither
// a recording nor a declared departure), saying which and why.
Result<PerturbReport> perturb_flights(const std::vector<FlightRecording>& recordings,
                                      const PerturbOptions& options);

std::vector<std::string> describe_perturb(const PerturbReport& report);

}  // namespace grove
