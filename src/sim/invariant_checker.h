// Global invariants over every engine of a simulation, checked as effects
// appear (docs/simulator.md maps each to the engine rules it guards):
//   I1 exactly once: a daemon delivers each broadcast at most once.
//   I2 same bytes: every delivery of an op carries the originator's bytes.
//   I3 complete means everywhere: the originator completes an op only when
//      every living daemon has delivered it (a daemon that came back or
//      joined, in its current life).
//   I4 one ending: no op completes twice, or after its abort.
//   I5 one outcome: every participant ends a fence round the same way, with
//      the same data. With Bruck fences, every participant alive: each
//      daemon ends a round from what it holds, and one that dies may have
//      ended it otherwise (forget_fence_endings; docs/engine.md).
// (I6, each engine's check_invariants, and liveness are the simulator's.)
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "grpcomm/effects.h"
#include "util/result.h"

namespace grove {

class InvariantChecker {
 public:
  explicit InvariantChecker(std::size_t daemons) : daemons_(daemons) {}

  Status on_deliver(Vpid daemon, const DeliverBroadcast& deliver);
  // `alive` is ground truth at the moment of completion.
  Status on_broadcast_done(const BroadcastDone& done, const std::vector<bool>& alive);
  Status on_fence_done(Vpid daemon, const FenceDone& done);
  // The daemon at vpid starts a new life (it came back, or joined past the
  // end): what its predecessor delivered is not its own, and I3 asks it to
  // have every op completed from now on.
  void renew(Vpid vpid);
  // Bruck fences: the daemon died; how it ended rounds no longer binds the
  // living (they all ended them as one another did).
  void forget_fence_endings(Vpid vpid);

  // How many participants ended each fence round, and how.
  std::size_t fence_outcomes(const FenceKey& key) const;

 private:
  struct Delivery {
    SharedBytes bytes;
    std::vector<bool> delivered;
  };
  struct FenceOutcome {
    FenceStatus status = FenceStatus::ok;
    Vpid lost = 0;
    SharedBytes release;
    std::vector<bool> finished;  // by vpid (a node per daemon cost a million allocations)
    std::size_t finished_count = 0;
    bool reset = false;  // every finisher was forgotten: the next one sets it
  };

  std::size_t daemons_;
  std::map<std::pair<TopologyKind, std::uint64_t>, Delivery> deliveries_;
  std::set<std::pair<TopologyKind, std::uint64_t>> finished_ops_;
  std::map<FenceKey, FenceOutcome> fences_;
};

bool same_bytes(const SharedBytes& a, const SharedBytes& b);

}  // namespace grove
