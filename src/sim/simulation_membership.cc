// Who lives: deaths and their detection, daemons that come back at their
// vpid or join past the end, and the liveness checks when nothing is left to
// happen.
#include <algorithm>
#include <cstdio>
#include <memory>

#include "grpcomm/effect_driver.h"
#include "grpcomm/messages.h"
#include "grpcomm/tags.h"
#include "rml/tree_validate.h"
#include "sim/fault_schedule.h"
#include "sim/simulation.h"

namespace grove::sim_detail {

void Simulation::kill(Vpid victim, TimeNs now) {
  if (victim == kControllerVpid || !alive_[victim]) return;
  alive_[victim] = false;
  result_.killed.push_back(victim);
  if (options_.fence_topology == FenceTopology::bruck) checker_.forget_fence_endings(victim);
  trace([&] { return "d" + std::to_string(victim) + " killed"; });
  TimeNs delay = rng_.detect.uniform(options_.detect_min_ns, options_.detect_max_ns);
  schedule(now + delay, DetectEvent{victim});
}

void Simulation::plan_elastic() {
  faults_.returns_left = options_.returns;
  const TimeNs horizon = fault_horizon_ns(options_);
  for (std::uint32_t i = 0; i < options_.joins; ++i)
    schedule(rng_.elastic.uniform(0, horizon), JoinEvent{});
}

void Simulation::on_detected(Vpid victim) {
  if (faults_.returns_left == 0) return;
  --faults_.returns_left;
  // Restarted some time after it was declared lost (within a detection's span,
  // so it often lands while rounds still run).
  schedule(now_ + rng_.elastic.uniform(0, options_.detect_max_ns), ReturnEvent{victim});
}

void Simulation::bring_back(Vpid vpid) {
  if (alive_[vpid]) return;
  Outbox& out = outbox_;
  out.clear();
  if (!engines_[0].declare_return(now_, vpid, out)) return;
  trace([&] { return "d" + std::to_string(vpid) + " comes back"; });
  start_from_seed(vpid);
  result_.returned.push_back(vpid);
  drain(0, now_, out);
}

void Simulation::join() {
  const auto vpid = static_cast<Vpid>(engines_.size());
  Outbox& out = outbox_;
  out.clear();
  if (!engines_[0].declare_return(now_, vpid, out)) return;
  trace([&] { return "d" + std::to_string(vpid) + " joins"; });
  start_from_seed(vpid);
  result_.joined.push_back(vpid);
  drain(0, now_, out);
}

void Simulation::start_from_seed(Vpid vpid) {
  // Before the controller's effects are applied: its replays to the newcomer
  // must find it alive (in life, the newcomer connected before it was declared).
  config_.self = vpid;
  Engine engine(config_, engines_[0].join_seed());
  if (vpid == engines_.size()) {
    engines_.push_back(std::move(engine));
    alive_.push_back(true);
    life_.push_back(0);
    participants_.by_vpid.push_back(false);
    net_.nic_generation.push_back(0);
    if (options_.network.sharing == NicSharing::fair) {
      net_.shared_nics.emplace_back(options_.network.threads);
    } else {
      net_.nics.emplace_back(options_.network.threads);
    }
  } else {
    engines_[vpid] = std::move(engine);
    alive_[vpid] = true;
    ++life_[vpid];
    // Its predecessor's timers died with it.
    std::erase_if(timers_.armed, [&](const auto& entry) { return entry.first.first == vpid; });
  }
  checker_.renew(vpid);
}

void Simulation::check_liveness() {
  const Engine& controller = engines_[0];
  for (TopologyKind kind : {TopologyKind::routing, TopologyKind::release}) {
    if (controller.open_ops(kind) != 0) {
      fail("hang: the controller still holds " + std::to_string(controller.open_ops(kind)) + " " +
           std::string(topology_name(kind)) + " broadcasts with nothing left to happen");
      return;
    }
  }
  // A participant that came back is a new process: its ranks died with it.
  bool participant_lost = false;
  for (Vpid daemon : participants_.list)
    participant_lost = participant_lost || !alive_[daemon] || life_[daemon] != 0;
  const std::uint64_t released = controller.fence_generation(signature_);
  const bool bruck = options_.fence_topology == FenceTopology::bruck;
  for (Vpid daemon = 0; daemon < engines_.size(); ++daemon) {
    if (!alive_[daemon]) continue;
    if (engines_[daemon].open_bruck_exchanges() != 0) {
      fail("hang: daemon " + std::to_string(daemon) + " still has " +
           std::to_string(engines_[daemon].open_bruck_exchanges()) + " open Bruck exchange(s)");
      return;
    }
    // A Bruck exchange runs among the participants' daemons: only they, in
    // the life the job was placed in, learn its rounds.
    const bool hosts_job = daemon < participants_.by_vpid.size() && participants_.by_vpid[daemon] &&
                           life_[daemon] == 0;
    if (bruck && !hosts_job) continue;
    // Every release reaches every daemon, so every daemon knows every
    // signature's round: what lets a daemon stamp a round without asking.
    // A newcomer knows it from the controller's rounds at its join.
    if (engines_[daemon].fence_generation(signature_) != released) {
      fail("daemon " + std::to_string(daemon) + " knows fence round " +
           std::to_string(engines_[daemon].fence_generation(signature_)) +
           " as the last released, the controller " + std::to_string(released));
      return;
    }
    // Every contribution a living daemon made has ended, one way or another.
    if (engines_[daemon].open_fences() != 0) {
      fail("hang: daemon " + std::to_string(daemon) + " still has an open fence round " +
           std::to_string(engines_[daemon].fence_generation(signature_) + 1));
      return;
    }
    // With every participant alive, every round completes everywhere.
    if (!participant_lost && engines_[daemon].fence_generation(signature_) != options_.rounds) {
      fail("hang: daemon " + std::to_string(daemon) + " saw " +
           std::to_string(engines_[daemon].fence_generation(signature_)) + " of " +
           std::to_string(options_.rounds) + " fence rounds released");
      return;
    }
  }
  if (!participant_lost) {
    for (std::uint32_t round = 1; round <= options_.rounds; ++round) {
      std::size_t finished = checker_.fence_outcomes(FenceKey{signature_, round});
      if (finished != participants_.list.size()) {
        fail("hang: round " + std::to_string(round) + " finished at " + std::to_string(finished) +
             " of " + std::to_string(participants_.list.size()) + " participants");
        return;
      }
    }
    if (result_.rounds_failed != 0) fail("a round failed although no participant was lost");
  }
  for (std::uint32_t round = 1; round <= options_.rounds; ++round) {
    if (rounds_.end[round] != 0) ++result_.rounds_completed;
  }
  if (!pmix_) return;
  // Ranks wait only at daemons in their first life (a successor hosts none).
  std::vector<bool> first_life(options_.daemons);
  for (Vpid daemon = 0; daemon < options_.daemons; ++daemon)
    first_life[daemon] = alive_[daemon] && life_[daemon] == 0;
  if (auto status = pmix_->finish(first_life); !status) fail(status.error().message);
  result_.pmix_released = pmix_->released();
  result_.pmix_failed = pmix_->failed();
}

}  // namespace grove::sim_detail
